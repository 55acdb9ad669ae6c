"""primbench/libraries.py and what depends on it without a GPU: a library's version from its package
metadata, the one-line skip reason naming the pip package when it is missing or broken, the
runner recording such a case as skipped before it makes any input, and the header's software
versions."""

import json
import sys
import types

import pytest

from primbench import libraries
from primbench.libraries import CUDA_CCCL, CUPY, Library
from primbench.runfile.case_id import CaseId


def test_the_version_comes_from_the_first_installed_distribution_without_importing_it(monkeypatch):
    versions = {"cupy-cuda12x": "14.2.0"}

    def version(name):
        if name not in versions:
            raise libraries.importlib.metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(libraries.importlib.metadata, "version", version)
    monkeypatch.setitem(sys.modules, "cupy", None)  # importing it would fail: metadata alone answers
    assert CUPY.version() == "14.2.0" and CUPY.identity() == "cupy 14.2.0"
    assert CUPY.describe() == {"package": "cupy-cuda13x", "version": "14.2.0"}
    assert CUDA_CCCL.version() is None and CUDA_CCCL.identity() == "cuda-cccl missing"
    assert CUDA_CCCL.describe() == {"package": "cuda-cccl", "version": None}


def test_the_cupy_variants_keep_the_hash_they_had_before_libraries_were_declared():
    # variant.library_version(op) was what a library variant's hash covered: "cupy <version>".
    from primbench.variant import library_version

    assert CUPY.identity() == library_version("reduce")


def test_a_missing_library_says_which_package_to_install_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.compute", None)
    monkeypatch.setattr(Library, "version", lambda self: None)
    reason = CUDA_CCCL.unavailable()
    assert reason == ("cuda-cccl is not installed, so its baselines are skipped: pip install 'cuda-cccl[minimal-cu13]' "
                      "(CUDA 12: [minimal-cu12]), or primbench[cuda13]")


def test_an_installed_library_that_does_not_import_says_what_failed(monkeypatch):
    # cuda.compute imports without CUDA bindings, but has none of its algorithms (its __getattr__ raises).
    broken = types.ModuleType("cuda.compute")

    def no_bindings(name):
        raise AttributeError(f"Cannot access 'cuda.compute.{name}' because CUDA bindings are not available.")

    broken.__getattr__ = no_bindings
    monkeypatch.setitem(sys.modules, "cuda.compute", broken)
    monkeypatch.setattr(Library, "version", lambda self: "1.2.1")
    reason = CUDA_CCCL.unavailable()
    assert reason.startswith("cuda-cccl 1.2.1 does not import cuda.compute (AttributeError: Cannot access") and "\n" not in reason


def test_the_current_stream_is_read_at_each_call(monkeypatch):
    pointers = iter([11, 22])
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(get_current_stream=lambda: types.SimpleNamespace(ptr=next(pointers))))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    stream = libraries.CurrentStream()
    assert stream.__cuda_stream__() == (0, 11) and stream.__cuda_stream__() == (0, 22)


def test_the_header_lists_the_optional_libraries_installed(monkeypatch):
    monkeypatch.setattr(Library, "version", lambda self: {"cuda-cccl": "1.2.1"}.get(self.package))
    assert libraries.installed_versions() == {"cuda-cccl": "1.2.1"}


class _Device:
    def free_memory(self):
        return 1 << 40


def test_the_runner_skips_a_missing_librarys_case_before_making_its_inputs(monkeypatch):
    pytest.importorskip("cupy", reason="the runner's case path imports CuPy (make test-floors has none; make test does)")
    from primbench.run.runner import Runner
    from primbench.runfile.io import record_line
    from primbench.runfile.validate import record_problem

    monkeypatch.setitem(sys.modules, "cuda.compute", None)
    monkeypatch.setattr(Library, "version", lambda self: None)
    runner = Runner.__new__(Runner)  # no GPU: only what _run_case reads before a library variant's plan
    runner._inputs, runner.device = {}, _Device()
    runner._inputs_for = lambda case, seed: pytest.fail("made inputs for a case whose library is missing")
    case = CaseId("reduce", "cccl_reduce", "float32", 2**28, None, "uniform")
    record = runner.run_case(case, rng_seed=1)
    assert record.status == "skipped" and record.reason.startswith("cuda-cccl is not installed, so its baselines are skipped")
    assert record_problem(json.loads(record_line(record))) is None
