"""primbench's pytest plugin (primbench/pytest_plugin.py) in pytest sessions of its own, with a
stand-in GPU: the fixture times and records, --gpubench-save writes a run file every primbench
reader takes, --gpubench-compare fails a test the verdict engine calls SLOWER (or, given
explicitly, one past --gpubench-fail) with a clear line, and without a GPU the fixture skips in
one line. Replayed real H200 runs show the engine's gate; another GPU model, a changed protocol,
pytest-xdist, unwritable outputs and --gpubench-disable each get the behaviour a user relies on."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from primbench.resources import IMPORT_ROOT
from primbench.runfile import protocol
from primbench.runfile.io import load_run

# The inner session's conftest: a stand-in GPU whose sum takes 250 us, times STAND_IN_SLOW.
STAND_IN = '''
import contextlib, os
import numpy as np
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


def test_compare_judges_by_the_verdict_engine_and_fails_a_slower_test_in_one_line(session, pytester):
    session("--gpubench-save", "main").assert_outcomes(passed=2)
    saved = load_run(pytester.path / ".gpubench" / "main.jsonl")
    assert saved.header.protocol == protocol.declared()  # what a later comparison sets beside its own
    assert all(case.timing == {"stop": "converged", "batch_method": None} for case in saved.cases)
    same = session("--gpubench-compare", "main")
    same.assert_outcomes(passed=2)
    assert "gpubench: against baseline main: 3 SAME (README: \"The verdict rule\")" in same.outlines
    slower = session("--gpubench-compare", "main", STAND_IN_SLOW="1.1")
    slower.assert_outcomes(failed=2)
    lines = [line for line in slower.outlines if line.startswith("gpubench: test_kernels.py::test_sum[sum] is SLOWER")]
    assert lines == ["gpubench: test_kernels.py::test_sum[sum] is SLOWER than baseline main: cold 250.5 -> 275.6 us, "
                     "x1.100 (95 % interval [1.099, 1.101]), past the 5.0% threshold (Mann-Whitney p 2.4e-11)"], slower.outlines
    # 4 % is within the rule's 5 %; 25 us more on 250 is past it whatever its noise
    session("--gpubench-compare", "main", STAND_IN_SLOW="1.04").assert_outcomes(passed=2)


def test_an_explicit_gpubench_fail_replaces_the_engine_with_its_own_rule(session):
    session("--gpubench-save", "main").assert_outcomes(passed=2)
    slower = session("--gpubench-compare", "main", "--gpubench-fail=median:5%", STAND_IN_SLOW="1.1")
    slower.assert_outcomes(failed=2)
    lines = [line for line in slower.outlines if "is slower than baseline main" in line]
    assert lines and "+10.0%" in lines[0] and "past --gpubench-fail=median:5%" in lines[0], slower.outlines
    assert "gpubench: gated by --gpubench-fail=median:5%, not the verdict rule" in slower.outlines
    session("--gpubench-compare", "main", "--gpubench-fail=median:15%", STAND_IN_SLOW="1.1").assert_outcomes(passed=2)
    session("--gpubench-compare", "main", "--gpubench-fail=median:20us", STAND_IN_SLOW="1.1").assert_outcomes(failed=2)
    session("--gpubench-compare", "main", "--gpubench-fail=median:2%", STAND_IN_SLOW="1.04").assert_outcomes(failed=2)


def test_without_a_gpu_the_fixture_skips_in_one_line(session):
    result = session("-rs", STAND_IN_NO_GPU="1")
    result.assert_outcomes(skipped=2)
    assert any("gpubench: no NVIDIA GPU here" in line for line in result.outlines), result.outlines


def test_bad_options_are_usage_errors(session):
    assert session("--gpubench-fail=fast").ret == 4  # pytest's usage-error exit code
    missing = session("--gpubench-compare", "nothing")
    assert missing.ret == 4 and any("no baseline" in line for line in missing.errlines + missing.outlines)


def _edit_header(path, **fields):
    """A saved baseline with header fields replaced (a test-only edit of a copy the session wrote)."""
    lines = path.read_text().splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), **fields}) + "\n"
    path.write_text("".join(lines))


def test_a_baseline_from_another_gpu_model_is_refused_in_one_line_before_timing(session, pytester):
    session("--gpubench-save", "main").assert_outcomes(passed=2)
    baseline = pytester.path / ".gpubench" / "main.jsonl"
    _edit_header(baseline, device={**load_run(baseline).device, "name": "NVIDIA H100 80GB HBM3"})
    result = session("--gpubench-compare", "main", "--gpubench-json", "run.jsonl", STAND_IN_SLOW="0.5")
    result.assert_outcomes(failed=2)  # twice as fast, and still refused: no verdict is given across models
    refusal = (f"gpubench: this GPU is Stand-in GPU, baseline main ({baseline.relative_to(pytester.path)}) was measured "
               "on NVIDIA H100 80GB HBM3; times are not comparable (save a baseline on this GPU model: --gpubench-save NAME)")
    assert result.outlines.count(refusal) == 3, result.outlines  # each timing test's failure, and the summary once
    assert "Traceback" not in result.stdout.str() and not (pytester.path / "run.jsonl").exists()  # nothing was timed


def test_a_changed_measuring_protocol_marks_verdicts_fails_none_and_says_so_once(session, pytester):
    session("--gpubench-save", "main").assert_outcomes(passed=2)
    baseline = pytester.path / ".gpubench" / "main.jsonl"
    older = protocol.declared()
    older["parts"]["cold"]["revision"] = 1
    _edit_header(baseline, protocol=older)
    result = session("--gpubench-compare", "main", STAND_IN_SLOW="1.1")
    result.assert_outcomes(passed=2)  # 10 % slower, but the cold samples' protocol changed: not gated
    lines = [line for line in result.outlines if line.startswith("gpubench: protocol changed")]
    assert lines == ["gpubench: protocol changed since the baseline: cold r1 -> r2; verdicts on batch and cold figures "
                     "are marked and not gated; renew the baseline: pytest --gpubench-save main"], result.outlines
    assert ("gpubench: against baseline main: 3 SLOWER (protocol changed: not gated) (README: \"The verdict rule\")"
            in result.outlines), result.outlines
    bare = session("--gpubench-compare", "main", "--gpubench-fail=median:5%", STAND_IN_SLOW="1.1")
    bare.assert_outcomes(failed=2)  # the user's own rule gates whatever measured the samples, and says so
    assert "gpubench: protocol changed since the baseline (cold r1 -> r2); --gpubench-fail gates all the same" in bare.outlines


def test_under_xdist_every_workers_timings_reach_the_files(session, pytester):
    pytester.makepyfile(test_many="""
import pytest

@pytest.mark.parametrize("i", range(12))
def test_each(gpubench, i):
    gpubench(lambda: None, label=f"call {i}")
""")
    result = session("-p", "xdist", "-n", "2", "--gpubench-save", "main", "--gpubench-json", "run.jsonl")
    result.assert_outcomes(passed=14)
    for written in (pytester.path / "run.jsonl", pytester.path / ".gpubench" / "main.jsonl"):
        variants = sorted(case.case.variant for case in load_run(written).cases)
        assert len(variants) == 15 and variants[0] == "test_kernels.py::test_sum[sum]", variants
        assert {f"test_many.py::test_each[{i}][call {i}]" for i in range(12)} <= set(variants)
    assert "gpubench: 15 timings from 2 workers" in result.outlines, result.outlines
    compared = session("-p", "xdist", "-n", "2", "--gpubench-compare", "main", STAND_IN_SLOW="1.1")
    compared.assert_outcomes(failed=14)  # each worker judges its own tests against the baseline
    # 14: test_twice_in_one_test fails at its first timing
    assert "gpubench: against baseline main: 14 SLOWER (README: \"The verdict rule\")" in compared.outlines


@pytest.mark.parametrize("option", [["--gpubench-json", "a-file/run.jsonl"],
                                    ["--gpubench-storage", "a-file/baselines", "--gpubench-save", "main"]])
def test_an_output_that_cannot_be_written_is_refused_before_any_test_runs(session, pytester, option):
    (pytester.path / "a-file").write_text("a regular file, not a folder\n")
    result = session(*option)
    assert result.ret == 4  # pytest's usage error
    errors = [line for line in result.errlines if line.strip()]
    assert errors == [f"ERROR: {option[-2]}: {option[-1]}: a-file is a file, not a folder; give another path"
                      if option[0] == "--gpubench-json" else
                      "ERROR: --gpubench-save: a-file/baselines/main.jsonl: a-file is a file, not a folder; give another path"], errors
    assert not any("passed" in line or "failed" in line for line in result.outlines), result.outlines


def test_a_write_that_fails_at_the_end_is_one_line_and_spares_the_other_output(session, pytester):
    pytester.makepyfile(test_takes_the_folder="""
import pathlib

def test_leaves_a_file_where_the_output_folder_would_go():
    pathlib.Path("out").write_text("not a folder")
""")
    result = session("--gpubench-json", "out/run.jsonl", "--gpubench-save", "main")
    result.assert_outcomes(passed=3)
    assert result.ret == 1  # the session passed, but the run file it was asked for is missing
    assert "gpubench: --gpubench-json not written: out/run.jsonl: out is a file, not a folder; give another path" in \
        result.outlines, result.outlines
    assert len(load_run(pytester.path / ".gpubench" / "main.jsonl").cases) == 3
    assert "Traceback" not in result.stdout.str()


def test_disable_runs_each_callable_once_untimed_and_writes_nothing(session, pytester):
    pytester.makepyfile(test_correct="""
calls = []

def test_runs_setup_then_the_callable_once(gpubench):
    result = gpubench(lambda: calls.append("fn") or 42, setup=lambda: calls.append("setup"), label="answer")
    assert calls == ["setup", "fn"] and result.value == 42
    assert result.converged and not result.timed and result.cold_ms == [] and str(result) == "answer: not timed (--gpubench-disable)"
""")
    result = session("--gpubench-disable", "--gpubench-save", "main", "--gpubench-json", "run.jsonl",
                     "--gpubench-compare", "no-such-baseline", STAND_IN_SLOW="1000")
    result.assert_outcomes(passed=3)
    assert not (pytester.path / "run.jsonl").exists() and not (pytester.path / ".gpubench").exists()
    assert "gpubench: 4 calls ran once, untimed (--gpubench-disable): nothing recorded or written" in result.outlines


def test_the_plugin_is_registered_as_a_pytest11_entry_point(repo):
    import tomllib

    entry_points = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert entry_points == {"gpubench": "primbench.pytest_plugin"}  # `-p no:gpubench` names it


# -- replaying real H200 runs: the gate of `primbench check`, not a bare 5 % -----------------------
# Two real runs of configs/default.yaml on two H200 machines (tests/data/README.md): 8edbb6 (code
# 1edb74d) is the baseline, fbe56e (code 4241d24) the new session; 1,095 of their 1,266 common
# cases have the same variant hash, the same code.
DEFAULT_RUNS = IMPORT_ROOT / "tests" / "data" / "default-runs"
BASE_RUN, NEW_RUN = DEFAULT_RUNS / "8edbb6.jsonl.gz", DEFAULT_RUNS / "fbe56e.jsonl.gz"

# The inner session's conftest: one test per case of REPLAY_RUN, whose stand-in timer returns that
# case's recorded samples (times 1.3 for the keys in REPLAY_SLOWER), as primbench.measure's Timer would.
REPLAY = '''
import contextlib, os
import numpy as np
import pytest
from primbench.measuring import device, measure
from primbench.measuring.timing import Measurement
from primbench.runfile.io import load_run

RUN = load_run(os.environ["REPLAY_RUN"])
SLOWER = set(filter(None, os.environ.get("REPLAY_SLOWER", "").split(",")))

class Recorded:
    def __init__(self, record):
        self.record = record
    def __call__(self):
        return None

class Timer:
    def measure(self, operation, policy, setup=None):
        record = operation.record
        scale = 1.3 if record.key in SLOWER else 1.0
        return Measurement(cold_ms=[t * scale for t in record.cold_ms], batch_ms=[t * scale for t in record.samples.batch_ms],
                           batch_size=record.samples.batch_size, batch_method=record.timing.get("batch_method"),
                           stop=record.timing.get("stop") or "converged")

class Device:
    info = RUN.device

device.require_gpu = lambda: None
measure._callers_gpu_and_stream = lambda: contextlib.nullcontext(0)
measure._SHARED[0] = (Device(), Timer())

def pytest_generate_tests(metafunc):
    if "recorded" in metafunc.fixturenames:
        metafunc.parametrize("recorded", [Recorded(r) for r in RUN.cases], ids=[r.key for r in RUN.cases])
'''
REPLAY_TESTS = '''
def test_case(gpubench, recorded):
    gpubench(recorded, bytes=int(recorded.record.bytes))
'''


@pytest.fixture
def replay(pytester, monkeypatch):
    """run(run file, *args, slower=keys): one inner session replaying that run; (its outcome, the
    case keys of its failed tests, the seconds it took)."""
    import time
    import xml.etree.ElementTree as ET

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTHONPATH", str(IMPORT_ROOT))
    pytester.makeconftest(REPLAY)
    pytester.makepyfile(test_replay=REPLAY_TESTS)

    def run(run_file, *args, slower=()):
        monkeypatch.setenv("REPLAY_RUN", str(run_file))
        monkeypatch.setenv("REPLAY_SLOWER", ",".join(slower))
        start = time.perf_counter()
        result = pytester.runpytest_subprocess("-p", "primbench.pytest_plugin", "-p", "no:cacheprovider", "-q",
                                               "--junitxml=replay.xml", *args)
        seconds = time.perf_counter() - start
        cases = ET.parse(pytester.path / "replay.xml").getroot().iter("testcase")
        failed = {c.get("name").removeprefix("test_case[")[:-1]: c.find("failure").get("message")
                  for c in cases if c.find("failure") is not None}
        return result, failed, seconds

    return run


def test_replayed_h200_runs_fail_no_test_of_unchanged_code_and_fail_a_planted_30_percent(replay):
    base, new = load_run(BASE_RUN), load_run(NEW_RUN)
    base_cases = {r.key: r for r in base.cases}
    same_code = {r.key for r in new.cases if r.key in base_cases and base_cases[r.key].variant_hash == r.variant_hash}
    assert len(new.cases) == 1296 and len(same_code) == 1095
    saved, _, save_s = replay(BASE_RUN, "--gpubench-save", "h200")
    saved.assert_outcomes(passed=1296)

    # pytest-benchmark's bare rule on the cold medians fails dozens of unchanged small kernels ...
    bare, bare_failed, bare_s = replay(NEW_RUN, "--gpubench-compare", "h200", "--gpubench-fail=median:5%")
    small = {key for key in bare_failed if float(np.median(base_cases[key].cold_ms)) * 1e3 < 30}
    assert len(bare_failed) == 58 and len(set(bare_failed) & same_code) == 56 and small == set(bare_failed)

    # ... the verdict engine none; 30 % more on three kernels of 50 us or more fails exactly those.
    big = [r.key for r in new.cases if r.key in same_code and np.median(r.cold_ms) * 1e3 >= 50]
    planted = big[::len(big) // 3][:3]  # spread over the ops
    gated, failed, gate_s = replay(NEW_RUN, "--gpubench-compare", "h200", slower=planted)
    assert sorted(failed) == sorted(planted) and len(planted) == 3, sorted(failed)[:5]
    message = failed[planted[0]].removeprefix("Failed: ")  # the one line, as the test's report shows it
    assert re.fullmatch(r"gpubench: test_replay\.py::test_case\[\S+\] is SLOWER than baseline h200: cold [\d.,]+ -> "
                        r"[\d.,]+ us, x1\.3\d\d \(95 % interval \[1\.\d+, 1\.\d+\]\), past the \d+\.\d% threshold "
                        r"\(Mann-Whitney p [\d.e-]+\)", message), message
    assert any(line.startswith("gpubench: against baseline h200: 3 SLOWER") for line in gated.outlines), "\n".join(l for l in gated.outlines if l.startswith("gpubench"))
    assert any("not in baseline h200: 30" in line for line in gated.outlines), gated.outlines[-20:]
    print(f"replay of 1,296 tests: save {save_s:.1f} s, bare rule {bare_s:.1f} s, engine {gate_s:.1f} s")


def test_the_plugin_is_installed_as_gpubench_so_that_p_no_gpubench_turns_it_off(pytester, monkeypatch):
    # pytest's `-p no:NAME` takes the entry point's name and ignores a name it does not know: the
    # plugin's name is the one its fixture and options carry.
    from importlib.metadata import entry_points

    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.value == "primbench.pytest_plugin"]
    assert plugin.name == "gpubench"
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makepyfile(test_it="def test_it(gpubench):\n    pass\n")
    off = pytester.runpytest_subprocess("-p", "no:gpubench", "-p", "no:cacheprovider")
    assert "fixture 'gpubench' not found" in off.stdout.str()
    on = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--gpubench-disable")  # loaded by its entry point
    outcomes = on.parseoutcomes()
    assert "not found" not in on.stdout.str() and outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 1  # skipped: no GPU


FLOOR_TESTS = '''
import pytest
from primbench.measuring import light

CALLS = []

@pytest.fixture(autouse=True)
def stand_in_light(monkeypatch):
    def light_ms(nbytes, traffic="read"):
        CALLS.append((nbytes, traffic))
        return 0.2  # the stand-in sum takes 0.25 ms: 80 % of its light
    monkeypatch.setattr(light, "light_ms", light_ms)

@pytest.mark.parametrize("floor", [0.75, 0.9])
def test_floor(gpubench, floor):
    gpubench(lambda: None, bytes=1 << 30, min_light=floor, label=f"floor {floor}")

def test_light_measured_once_per_bytes_and_traffic(gpubench):
    gpubench(lambda: None, bytes=1 << 30, min_light=0.5)
    gpubench(lambda: None, bytes=1 << 30, min_light=0.5, label="again")
    gpubench(lambda: None, bytes=1 << 30, min_light=0.5, traffic="read_write", label="copy")
    assert CALLS.count((1 << 30, "read")) <= 1 and CALLS.count((1 << 30, "read_write")) == 1

@pytest.mark.parametrize("arguments,error", [
    (dict(bytes=1 << 30, min_light=2), ValueError), (dict(min_light=0.9), TypeError),
    (dict(bytes=1 << 30, min_light="90%"), TypeError), (dict(bytes=1 << 30, min_light=0.9, traffic="write"), ValueError),
])
def test_bad_floor(gpubench, arguments, error):
    with pytest.raises(error):
        gpubench(lambda: None, **arguments)
'''


def test_min_light_fails_a_timing_under_that_share_of_its_speed_of_light_in_one_line(session, pytester):
    pytester.makepyfile(test_floor=FLOOR_TESTS)
    result = session("test_floor.py")
    result.assert_outcomes(passed=6, failed=1)
    lines = [line for line in result.outlines if line.startswith("gpubench: ") and "speed of light" in line]
    assert lines == ["gpubench: test_floor.py::test_floor[0.9][floor 0.9] runs at 79.8 % of its speed of light (200.0 us "
                     "for a cold read of 1,073,741,824 bytes on this GPU; 250.5 us), under min_light=0.9 (90 %)"], lines
