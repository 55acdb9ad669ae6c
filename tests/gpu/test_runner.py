"""The runner end to end on the GPU: a tiny sweep into a run file, and --resume after an interruption."""

import json

import pytest

from primbench.config import loading
from primbench.run import runner
from primbench.runfile.io import load_run

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

TINY = ("name: tiny\ntiming: {min_samples: 5, max_time_s: 0.05, min_time_s: 0.0}\n"
        "sweeps:\n  - op: reduce\n    variants: [reduce2_sequential, cub_device_reduce]\n"
        "    sizes: [1000, '2^20+3']\n    block_sizes: [128]\n")


@pytest.fixture
def tiny_run(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return runner.run(loading.load_config(path), output=str(tmp_path)).path


def test_a_tiny_run_writes_a_complete_run_file(tiny_run):
    run = load_run(tiny_run)
    assert run.finished and len(run.cases) == 4
    assert all(c.status == "ok" and len(c.cold_ms) >= 5 for c in run.cases)
    assert all(c.verify["exact"]["ok"] and c.determinism["runs"] == 3 for c in run.cases)
    assert run.header.device["peak_gbps"] > 0 and run.copy_gbps > 0
    # The compiled kernel's machine code is recorded for this GPU's architecture; the library's is not.
    compiled, library = run.header.variants["reduce/reduce2_sequential"], run.header.variants["reduce/cub_device_reduce"]
    major, minor = run.header.device["compute_capability"].split(".")
    assert compiled["machine_code"]["arch"] == f"sm_{major}{minor}" and len(compiled["machine_code"]["hash"]) == 16
    assert "machine_code" not in library


def test_resume_finishes_an_interrupted_run_without_rerunning_finished_cases(tiny_run):
    lines = tiny_run.read_text().splitlines()
    kept = lines[:-2]  # drop the end record and the last case ...
    tiny_run.write_text("\n".join(kept) + "\n" + lines[-2][:40])  # ... and leave half a line, as a kill mid-write would
    finished_before = [json.loads(line)["key"] for line in kept[1:]]
    samples_before = [json.loads(line)["samples"] for line in kept[1:]]

    summary = runner.resume(tiny_run)

    run = load_run(tiny_run)
    assert run.finished and summary.ok == 4 and len(run.cases) == 4 and len(run.resumes) == 1
    assert [c.key for c in run.cases[:3]] == finished_before
    assert [c.samples.to_json() for c in run.cases[:3]] == samples_before  # kept, not re-measured
    assert run.warnings == []


BROKEN = r'''
import sys
sys.path.insert(0, {repo!r})
from primbench import registry
from primbench.api import Plan, Variant, register_variant as register


def write_to_nowhere(ctx):
    import cupy

    kernel = cupy.RawKernel('extern "C" __global__ void k(float* out) {{ ((float*)16)[threadIdx.x] = out[0]; }}', "k")
    out = cupy.empty(1, dtype=cupy.float32)
    return Plan(run=lambda: kernel((1,), (32,), (out,)), result=lambda: out, launches=[], depth=1, scratch=[out])


registry.variants()
register(Variant(op="reduce", name="test_only_illegal_address", origin="a test-only broken kernel", series="test",
                 order=0, prepare=write_to_nowhere, block_sizes=(64,), bytes_model="n * itemsize",
                 tolerance_model="-", deterministic_expected=True))
from primbench.cli.main import main
sys.exit(main(sys.argv[1:]))
'''


def _broken_run(tmp_path, repo, *options):
    """`bench.py run` (through a script that also registers a test-only kernel writing to address 16)
    on that kernel and a good one, in a fresh process."""
    import subprocess
    import sys

    script = tmp_path / "broken.py"
    script.write_text(BROKEN.format(repo=str(repo)))
    config = tmp_path / "c.yaml"
    config.write_text("timing: {min_samples: 5, max_time_s: 0.05, min_time_s: 0.0}\nsweeps:\n  - op: reduce\n"
                      "    variants: [test_only_illegal_address, reduce2_sequential]\n    sizes: [1000]\n    block_sizes: [64]\n")
    result = subprocess.run([sys.executable, str(script), "run", str(config), "--output", str(tmp_path), "--no-report", *options],
                            capture_output=True, text=True, timeout=300)
    # (pytest's own process holds the GPU too, so the run also warns about another process.)
    ours = [line for line in result.stderr.splitlines() if line.startswith("primbench: reduce/")]
    return script, result, ours, next(tmp_path.glob("*/*.jsonl"))


def test_a_kernel_that_breaks_the_cuda_context_fails_its_case_and_the_run_goes_on_in_a_fresh_process(tmp_path, repo):
    _script, result, ours, path = _broken_run(tmp_path, repo)
    assert result.returncode == 1, result.stderr  # a failed case
    assert "Traceback" not in result.stderr
    assert len(ours) == 1 and ours[0].startswith("primbench: reduce/test_only_illegal_address") and "fresh process" in ours[0]
    run = load_run(path)
    assert run.finished and [c.status for c in run.cases] == ["failed", "ok"] and len(run.resumes) == 1
    assert "illegal memory access" in run.cases[0].reason.lower()
    assert "cases: 1 ok, 1 failed, 0 skipped" in result.stdout


def test_with_no_restart_the_run_stops_at_a_broken_context_and_resume_runs_the_rest(tmp_path, repo):
    import subprocess
    import sys

    script, first, ours, path = _broken_run(tmp_path, repo, "--no-restart")
    assert first.returncode == 1, first.stderr
    assert "Traceback" not in first.stderr
    assert len(ours) == 1 and "the run stopped" in ours[0] and "--resume" in ours[0]
    run = load_run(path)
    assert not run.finished and [c.status for c in run.cases] == ["failed"]

    second = subprocess.run([sys.executable, str(script), "run", "--resume", str(path), "--no-report"],
                            capture_output=True, text=True, timeout=300)
    assert second.returncode == 1, second.stderr  # the broken case is still a failed case of the run
    run = load_run(path)
    assert run.finished and [c.status for c in run.cases] == ["failed", "ok"]


PARAMS = ("name: params\ntiming: {min_samples: 5, max_time_s: 0.05, min_time_s: 0.0}\n"
          "sweeps:\n  - op: stencil\n    variants: [blur1d_vector_shared_halo]\n    sizes: [1000]\n    params: {radius: [1, 16]}\n"
          "  - op: topk\n    variants: [two_stage_b8]\n    sizes: [3]\n    distributions: [max_in_last_group]\n"
          "    params: {vocab: [129287]}\n")


def test_a_sweep_over_variant_parameters_records_and_resumes_each_value(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS)
    run_path = runner.run(loading.load_config(path), output=str(tmp_path)).path
    run = load_run(run_path)
    # top-k's k, not named in the sweep, takes its first value (8), as every parameter does
    assert [dict(c.case.params) for c in run.cases] == [{"radius": 1}, {"radius": 16}, {"vocab": 129287, "k": 8}]
    assert all(c.status == "ok" for c in run.cases)
    assert run.cases[2].bytes == 3 * 129287 * 4  # the bytes model uses the parameter
    lines = run_path.read_text().splitlines()
    run_path.write_text("\n".join(lines[:-2]) + "\n")  # the last case and the end record lost
    assert runner.resume(run_path).ok == 3
    assert [c.key for c in load_run(run_path).cases] == [c.key for c in run.cases]
