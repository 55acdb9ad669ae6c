"""primbench's pytest plugin (primbench/pytest_plugin.py) in pytest sessions of its own, with a
stand-in GPU: the fixture times and records, --gpubench-save writes a run file every primbench
reader takes, --gpubench-compare fails a test past --gpubench-fail with a clear line, and without
a GPU the fixture skips in one line."""

import json
import subprocess
import sys

import pytest

from primbench.resources import IMPORT_ROOT
from primbench.runfile.io import load_run

# The inner session's conftest: a stand-in GPU whose sum takes 250 us, times STAND_IN_SLOW.
STAND_IN = '''
import contextlib, os
import pytest
from primbench.measuring import device, measure
from primbench.measuring.timing import Measurement

class Timer:
    def measure(self, operation, policy, setup=None):
        operation()
        slow = float(os.environ.get("STAND_IN_SLOW", "1"))
        return Measurement(cold_ms=[0.25 * slow * (1 + 0.001 * (i % 5)) for i in range(30)], stop="converged")

class Device:
    info = {"name": "Stand-in GPU", "uuid": "GPU-stand-in", "peak_gbps": 4800.0, "sm_count": 132, "l2_bytes": 50 << 20}

@pytest.fixture(autouse=True)
def stand_in_gpu(monkeypatch):
    if os.environ.get("STAND_IN_NO_GPU"):
        return
    monkeypatch.setattr(device, "require_gpu", lambda: None)
    monkeypatch.setattr(measure, "_callers_gpu_and_stream", lambda: contextlib.nullcontext(0))
    monkeypatch.setitem(measure._SHARED, 0, (Device(), Timer()))
'''
TESTS = '''
def test_sum(gpubench):
    result = gpubench(lambda: None, bytes=1 << 30, label="sum")
    assert result.converged

def test_twice_in_one_test(gpubench):
    gpubench(lambda: None)
    gpubench(lambda: None)
'''


@pytest.fixture
def session(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the plugin by -p below, installed or not
    monkeypatch.setenv("PYTHONPATH", str(IMPORT_ROOT))
    pytester.makeconftest(STAND_IN)
    pytester.makepyfile(test_kernels=TESTS)

    def run(*args, **env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        result = pytester.runpytest_subprocess("-p", "primbench.pytest_plugin", "-p", "no:cacheprovider", *args)
        for name in env:
            monkeypatch.delenv(name)
        return result

    return run


def test_save_writes_a_run_file_that_report_compare_check_and_export_read(session, pytester):
    result = session("--gpubench-save", "main", "--gpubench-json", "run.jsonl")
    result.assert_outcomes(passed=2)
    saved = pytester.path / ".gpubench" / "main.jsonl"
    run = load_run(saved)
    assert [c.case.variant for c in run.cases] == ["test_kernels.py::test_sum[sum]", "test_kernels.py::test_twice_in_one_test",
                                              "test_kernels.py::test_twice_in_one_test#2"]
    assert run.finished and run.cases[0].bytes == 2**30 and len(run.cases[0].cold_ms) == 30
    assert run.device["name"] == "Stand-in GPU" and (pytester.path / "run.jsonl").read_text() == saved.read_text()
    for command in (["report", str(saved), "-o", "page.html"], ["compare", str(saved), "run.jsonl"],
                    ["check", "run.jsonl", "--baseline", str(saved)], ["export", str(saved), "--format", "csv"]):
        done = subprocess.run([sys.executable, "-m", "primbench", *command], cwd=pytester.path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    assert "test_sum" in (pytester.path / "page.html").read_text()


def test_compare_fails_a_test_past_the_limit_with_one_clear_line(session):
    session("--gpubench-save", "main").assert_outcomes(passed=2)
    session("--gpubench-compare", "main").assert_outcomes(passed=2)  # the same timings pass
    slower = session("--gpubench-compare", "main", "--gpubench-fail=median:5%", STAND_IN_SLOW="1.1")
    slower.assert_outcomes(failed=2)
    lines = [line for line in slower.outlines if "is slower than baseline main" in line]
    assert lines and "+10.0%" in lines[0] and "past --gpubench-fail=median:5%" in lines[0], slower.outlines
    session("--gpubench-compare", "main", "--gpubench-fail=median:15%", STAND_IN_SLOW="1.1").assert_outcomes(passed=2)
    session("--gpubench-compare", "main", "--gpubench-fail=median:20us", STAND_IN_SLOW="1.1").assert_outcomes(failed=2)


def test_without_a_gpu_the_fixture_skips_in_one_line(session):
    result = session("-rs", STAND_IN_NO_GPU="1")
    result.assert_outcomes(skipped=2)
    assert any("gpubench: no NVIDIA GPU here" in line for line in result.outlines), result.outlines


def test_bad_options_are_usage_errors(session):
    assert session("--gpubench-fail=fast").ret == 4  # pytest's usage-error exit code
    missing = session("--gpubench-compare", "nothing")
    assert missing.ret == 4 and any("no baseline" in line for line in missing.errlines + missing.outlines)


def test_the_plugin_is_registered_as_a_pytest11_entry_point(repo):
    import tomllib

    entry_points = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert entry_points == {"primbench": "primbench.pytest_plugin"}
    json.dumps(entry_points)
