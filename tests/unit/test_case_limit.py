"""A case's time limit (`timing: case_limit_s`, measuring/case_limit.py): a case that makes no
progress for that long is hung, and the run records it as failed and goes on in a fresh process; a
case that keeps sampling is never cut short. The GPU side (a plugin kernel that spins forever) is
checked on the device; here the watching thread, the policy and the runner's flow, without a GPU."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from primbench.measuring.case_limit import DEFAULT_CASE_LIMIT_S, CaseLimit, hung_reason
from primbench.measuring.policy import TimingPolicy, policy_problem
from tests.conftest import REPO


class Beating:
    """A Timer's sign of life: last_progress, moved on by the test."""

    last_progress = 0.0


def test_a_case_silent_past_its_limit_expires_once_with_its_seconds():
    expired, done = [], threading.Event()
    limit = CaseLimit(0.2, lambda case, seconds: (expired.append((case, seconds)), done.set()), poll_s=0.02)
    with limit.watching("case-a"):
        assert done.wait(5)
    ((case, seconds),) = expired
    assert case == "case-a" and 0.2 < seconds < 2


def test_a_case_that_keeps_sampling_is_not_cut_short_and_a_finished_one_is_forgotten():
    expired, timer = [], Beating()
    limit = CaseLimit(0.2, lambda case, seconds: expired.append(case), timer, poll_s=0.02)
    with limit.watching("long but alive"):
        for _ in range(30):  # 0.6 s in all, three limits: a chunk of samples every 0.02 s
            time.sleep(0.02)
            timer.last_progress = time.monotonic()
    time.sleep(0.4)  # past the limit with no case watched
    assert expired == []


def test_the_default_limit_is_stated_and_a_limit_under_a_second_is_refused():
    assert TimingPolicy().case_limit_s == DEFAULT_CASE_LIMIT_S == 60.0
    assert policy_problem(TimingPolicy(case_limit_s=0.5))[0] == "case_limit_s"
    assert policy_problem(TimingPolicy(case_limit_s=1)) is None


# The runner's own loop (run/runner.py _run_cases) with a runner whose second case never returns: the
# case limit's thread records it as failed in the run file and calls on_hang, which replaces the
# process in the CLI (run/restart.py); here it ends the process after saying what it was given.
RUN = """
import os, sys, time
from types import SimpleNamespace
from primbench.measuring.policy import TimingPolicy
from primbench.run import runner
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import RunWriter
from primbench.runfile.records import CaseRecord, RunHeader, Samples

class Hanging:
    config = SimpleNamespace(timing=TimingPolicy(case_limit_s=1))
    device = SimpleNamespace(info={"name": "Stand-in GPU", "peak_gbps": 1000.0})
    timer = SimpleNamespace(last_progress=0.0)
    def run_case(self, case, seed):
        if case.n == 2048:
            time.sleep(3600)  # a kernel that never returns
        return CaseRecord(case, status="ok", bytes=4.0 * case.n, samples=Samples(cold_ms=(0.01, 0.011, 0.012)))

cases = [CaseId("reduce", "reduce2_sequential", "float32", n, 256, "uniform") for n in (1024, 2048, 4096)]
with RunWriter(sys.argv[1], create=True) as writer:
    writer.append(RunHeader(run_id="r", device={"name": "Stand-in GPU"}))
    def on_hang(path, key, limit_s):
        print(f"on_hang {path} {key} {limit_s}", flush=True)
        os._exit(0)
    runner._run_cases(Hanging(), writer, "r", cases, done=set(), on_hang=on_hang)
"""


def test_a_hung_case_is_recorded_failed_then_the_process_is_replaced(tmp_path):
    path = tmp_path / "run.jsonl"
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", RUN, str(path)], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0 and time.monotonic() - started < 30, result.stderr
    key = "reduce/reduce2_sequential/float32/n=2048/block=256/uniform"
    assert result.stdout.strip().splitlines()[-1] == f"on_hang {path} {key} 1"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["header", "case", "case"]  # no end record: --resume runs the rest
    hung = records[-1]
    assert hung["key"] == key and hung["status"] == "failed" and hung["reason"] == hung_reason(1)
    assert 1 <= hung["elapsed_s"] < 10


@pytest.mark.parametrize("value", ["0", "-5", "1e400", "true"])
def test_a_config_with_a_case_limit_it_cannot_keep_is_one_line(tmp_path, value):
    config = tmp_path / "c.yaml"
    config.write_text(f"timing:\n  case_limit_s: {value}\nsweeps:\n  - op: reduce\n    variants: [reduce2_sequential]\n"
                      "    sizes: [2^10]\n")
    result = subprocess.run([sys.executable, "bench.py", "run", str(config), "--dry-run"], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "case_limit_s" in lines[0], result.stderr


# primbench.measure (and so the pytest fixture) and primbench.ab run in their caller's process: a
# call that makes no progress ends it with one line, as pytest-timeout's thread method does.
MEASURE = """
import contextlib, sys, time
from types import SimpleNamespace
from primbench.measuring import measure

class Stuck:
    last_progress = 0.0
    def measure(self, operation, policy, setup=None):
        time.sleep(3600)  # the host held inside the driver by a kernel that never returns

measure._callers_gpu_and_stream = lambda: contextlib.nullcontext(0)
measure._SHARED[0] = (SimpleNamespace(info={"name": "Stand-in GPU"}), Stuck())
measure.measure(lambda: None, label="my_kernel", case_limit_s=1)
print("returned")
"""


def test_a_measure_that_never_returns_ends_its_process_with_one_line():
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "returned" not in result.stdout and time.monotonic() - started < 30
    assert len(lines) == 1 and lines[0].startswith(
        "primbench: primbench.measure(my_kernel) made no progress for 1 s (timing: case_limit_s): a kernel that never "
        "returns?"), result.stderr


def test_a_case_that_returns_just_after_its_limit_is_written_once(tmp_path):
    # The case comes back 0.5 s past its limit, while the hang's handler is still replacing the
    # process (2 s here): the watcher owns the case from the moment it calls it hung, so the main
    # thread writes nothing more, and the file holds the failed record alone (twice, no reader could
    # take the file).
    script = RUN.replace("time.sleep(3600)  # a kernel that never returns", "time.sleep(1.6)  # back past its limit") \
                .replace('print(f"on_hang {path} {key} {limit_s}", flush=True)',
                         'print(f"on_hang {path} {key} {limit_s}", flush=True); time.sleep(2)')
    path = tmp_path / "run.jsonl"
    result = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0, result.stderr
    keys = [json.loads(line).get("key") for line in path.read_text().splitlines()[1:]]
    assert keys == ["reduce/reduce2_sequential/float32/n=1024/block=256/uniform",
                    "reduce/reduce2_sequential/float32/n=2048/block=256/uniform"]
    assert json.loads(path.read_text().splitlines()[-1])["status"] == "failed"


def test_the_gpu_fault_script_template_formats_into_python_that_compiles():
    """tests/gpu/test_faults.py's SCRIPT is a str.format template holding CUDA source: a brace left
    single there failed all six fault tests on the H200 (2026-12-05). CI formats and compiles it."""
    from tests.gpu import test_faults

    script = test_faults.SCRIPT.format(repo="/repo", broken_source="/broken.cu")
    compile(script, "faulty_bench.py", "exec")
    assert "while (atomicAdd(flag, 0) == 0) { }" in script
