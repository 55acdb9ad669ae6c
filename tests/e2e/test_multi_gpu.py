"""`run --gpus` end to end with stand-in GPUs (tests/stand_in/): the real command line, scheduler
and worker loop, with workers that write case records without a GPU. Splitting, merging, replicas,
a worker that crashes, a worker whose CUDA context breaks, and an interrupted run finished by
--resume."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from primbench.runfile.io import load_run
from primbench.runfile.lines import RunFileError
from primbench.runfile.records import SCHEMA_VERSION
from tests.conftest import REPO
from tests.hostile import harness
from tests.run_copies import edited_copy

DRIVER = REPO / "tests" / "stand_in" / "cli.py"
CONFIG = """sweeps:
  - op: reduce
    variants: [reduce2_sequential, reduce3_first_add_during_load]
    sizes: [2^10, 2^12, 2^14, 2^16, 2^18, 2^20]
"""
KEYS = 12  # 2 variants x 6 sizes


def _bench(tmp_path, *args, env=None, **popen):
    """The stand-in command line; CompletedProcess, or a Popen with popen arguments."""
    environment = dict(os.environ, **(env or {}))
    command = [sys.executable, str(DRIVER), *map(str, args)]
    if popen.pop("popen", False):
        return subprocess.Popen(command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, **popen)
    return subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    return path


def _runs(tmp_path) -> list[Path]:
    return sorted((tmp_path / "out").glob("*/*.jsonl"))


def _whole_lines(path: Path) -> list[dict]:
    """Every line of a run file, each a whole JSON record (a half line fails here)."""
    data = path.read_text()
    assert data.endswith("\n")
    return [json.loads(line) for line in data.splitlines()]


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_shard_merges_every_gpus_cases_into_one_run_file_each_naming_its_gpu(tmp_path, config):
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report")
    assert result.returncode == 0, result.stderr
    [path] = _runs(tmp_path)
    run = load_run(path)
    assert run.finished and run.header.schema == SCHEMA_VERSION and run.header.gpus["mode"] == "shard"
    assert run.header.config_path == str(config)  # as the one-GPU run records it
    assert [d["device"]["uuid"] for d in run.header.gpus["devices"]] == ["GPU-stand-in-0", "GPU-stand-in-1"]
    assert len(run.cases) == KEYS and len({c.key for c in run.cases}) == KEYS
    by_gpu = {uuid: [c for c in run.cases if c.device_uuid == uuid] for uuid in ("GPU-stand-in-0", "GPU-stand-in-1")}
    assert all(len(cases) == KEYS // 2 for cases in by_gpu.values()), {u: len(c) for u, c in by_gpu.items()}
    assert {t.device_uuid for t in run.telemetry} == set(by_gpu) and all(t.temperature_c for t in run.telemetry)
    assert run.end.ok == KEYS and "12 ok, 0 failed, 0 skipped, 0 not run" in result.stdout


def test_a_shards_energy_above_idle_takes_the_idle_draw_of_the_gpu_that_measured_the_case(tmp_path, config):
    # The merged file has one header, GPU 0's; GPU 1 idles 20 W higher, and its cases must say so.
    result = _bench(tmp_path, "run", config, "--gpus", "0,1", "--output", tmp_path / "out",
                    env={"STAND_IN_IDLE_W": "0:120,1:140"})
    assert result.returncode == 0, result.stderr
    [path] = _runs(tmp_path)
    run = load_run(path)
    assert [d["energy"]["idle_w"] for d in run.header.gpus["devices"]] == [120.0, 140.0]
    frame = run.frame()
    above = dict(zip(frame["key"], frame["energy_above_idle_mj"]))
    # Each stand-in case draws 200 W for 0.5 ms an operation: (200 - idle) W x 0.5 ms.
    expected = {"GPU-stand-in-0": (200 - 120) * 0.5, "GPU-stand-in-1": (200 - 140) * 0.5}
    assert {c.device_uuid for c in run.cases} == set(expected)
    for case in run.cases:
        assert above[case.key] == pytest.approx(expected[case.device_uuid]), case.key
    page = path.with_suffix(".html").read_text(encoding="utf-8")
    assert "the GPUs drew 120–140 W idle at the start of the run" in page
    # A GPU's idle draw is checked as the header's is: a damaged one is refused in one line.
    damaged = edited_copy(path, tmp_path / "damaged.jsonl", lambda r: r.get("kind") == "header" and
                          r["gpus"]["devices"][1]["energy"].update(idle_w=-3.0))
    with pytest.raises(RunFileError, match=r"gpus\.devices\[1\]\.energy\.idle_w"):
        load_run(damaged)
    # A shard file written before each GPU's draw was kept: GPU 1's cases get none, not GPU 0's.
    older = edited_copy(path, tmp_path / "older.jsonl", lambda r: r.get("kind") == "header" and
                        [device.pop("energy") for device in r["gpus"]["devices"]])
    frame = load_run(older).frame()
    above = dict(zip(frame["key"], frame["energy_above_idle_mj"]))
    for case in run.cases:
        if case.device_uuid == "GPU-stand-in-0":
            assert above[case.key] == pytest.approx(expected["GPU-stand-in-0"]), case.key
        else:
            assert math.isnan(above[case.key]), case.key


def test_replicate_runs_every_case_on_every_gpu_and_flags_the_slow_one(tmp_path, config, capsys):
    result = _bench(tmp_path, "run", config, "--gpus", "0,1", "--mode", "replicate", "--output", tmp_path / "out",
                    "--no-report", env={"STAND_IN_SLOW": "1:1.2"})
    assert result.returncode == 0, result.stderr
    paths = _runs(tmp_path)
    runs = [load_run(p) for p in paths]
    assert len(runs) == 2 and all(r.finished and len(r.cases) == KEYS for r in runs)
    assert runs[0].header.gpus["group"] == runs[1].header.gpus["group"]
    seeds = [{c.key: c.seed for c in run.cases} for run in runs]
    assert seeds[0] == seeds[1]  # the same inputs on each GPU: only the GPU differs
    assert {r.device["uuid"] for r in runs} == {"GPU-stand-in-0", "GPU-stand-in-1"}
    slow = [line for line in result.stdout.splitlines() if "SLOW" in line]
    assert len(slow) == 1 and "GPU 1" in slow[0] and re.search(r"\+(19\.[5-9]|20\.[0-4]) % vs siblings", slow[0]), result.stdout
    from primbench.cli import main as cli_main

    assert cli_main.main(["replicas", *map(str, paths)]) == 1 and "SLOW" in capsys.readouterr().out
    assert cli_main.main(["replicas", *map(str, paths), "--threshold", "0.25"]) == 0  # 20 % is inside 25 %
    assert "SLOW" not in capsys.readouterr().out


def test_a_crashed_worker_loses_only_its_own_cases_and_resume_finishes_them(tmp_path, config):
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report",
                    env={"STAND_IN_CRASH": "1:2"})
    assert result.returncode == 1
    line = _one_line(result.stderr)
    assert "GPU 1 (GPU-stand-in-1) was killed by SIGKILL early; its 4 unfinished case(s) were not run" in line, line
    assert "--resume" in line
    [path] = _runs(tmp_path)
    records = _whole_lines(path)  # the half line the worker left in its pipe never reached the file
    cases = [r for r in records if r["kind"] == "case"]
    assert records[-1]["kind"] != "end" and len(cases) == KEYS - 4
    assert sum(1 for c in cases if c["device_uuid"] == "GPU-stand-in-0") == KEYS // 2
    finished = _bench(tmp_path, "run", "--resume", path, "--no-report")
    assert finished.returncode == 0, finished.stderr
    run = load_run(path)
    assert run.finished and len({c.key for c in run.cases}) == KEYS == len(run.cases) and len(run.resumes) == 1


def test_a_replica_finished_by_resume_draws_the_same_inputs_as_its_siblings(tmp_path, config):
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--mode", "replicate", "--output", tmp_path / "out",
                    "--no-report", env={"STAND_IN_CRASH": "1:2"})
    assert result.returncode == 1 and "GPU 1" in _one_line(result.stderr)
    whole, cut = _runs(tmp_path)
    assert load_run(whole).finished and not load_run(cut).finished
    finished = _bench(tmp_path, "run", "--resume", cut, "--no-report")  # on the GPU its header names
    assert finished.returncode == 0, finished.stderr
    seeds = [{c.key: c.seed for c in load_run(path).cases} for path in (whole, cut)]
    assert len(seeds[1]) == KEYS and seeds[0] == seeds[1]
    assert {c.device_uuid for c in load_run(cut).cases} == {"GPU-stand-in-1"}


def test_a_broken_cuda_context_gets_a_fresh_worker_for_the_rest(tmp_path, config):
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report",
                    env={"STAND_IN_LOSE_CONTEXT": "0:1", "STAND_IN_MARKS": str(tmp_path)})
    assert result.returncode == 1, result.stderr  # one failed case
    assert "fresh worker" in result.stderr
    run = load_run(_runs(tmp_path)[0])
    assert run.finished and len(run.cases) == KEYS
    assert [c.status for c in run.cases].count("failed") == 1 and run.end.failed == 1


def test_a_case_that_never_returns_fails_within_its_limit_and_a_fresh_worker_runs_the_rest(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG + "timing:\n  case_limit_s: 1\n")
    started = time.monotonic()
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report",
                    env={"STAND_IN_HANG": "0:1", "STAND_IN_MARKS": str(tmp_path)})
    assert result.returncode == 1, result.stderr  # the hung case failed; every other case ran
    assert "fresh worker" in result.stderr and time.monotonic() - started < 30
    run = load_run(_runs(tmp_path)[0])
    assert run.finished and len(run.cases) == KEYS == len({c.key for c in run.cases})
    (hung,) = [c for c in run.cases if c.status == "failed"]
    assert hung.reason.startswith("made no progress for 1 s (timing: case_limit_s): a kernel that never returns?")
    assert 1 <= hung.elapsed_s < 5 and run.end.failed == 1


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_every_worker_cleanly_and_resume_finishes_the_run(tmp_path, config, signum):
    # The signal goes to the parent alone (a scheduler's kill, not a terminal's whole group): it
    # passes it on to its workers.
    process = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report",
                     env={"STAND_IN_DELAY": "0.3"}, popen=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (_runs(tmp_path) and _runs(tmp_path)[0].read_text().count('"case"') >= 2):
        time.sleep(0.05)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted; every finished case is kept" in _one_line(stderr)
    with pytest.raises(ProcessLookupError):  # no worker is left running
        os.killpg(process.pid, 0)
    [path] = _runs(tmp_path)
    records = _whole_lines(path)
    done = [r["key"] for r in records if r["kind"] == "case"]
    assert 2 <= len(done) < KEYS and records[-1]["kind"] != "end"
    finished = _bench(tmp_path, "run", "--resume", path, "--no-report")
    assert finished.returncode == 0, finished.stderr
    run = load_run(path)
    assert run.finished and len(run.cases) == KEYS == len({c.key for c in run.cases})
    assert [c.key for c in run.cases][: len(done)] == done  # what was kept stayed as it was


def test_resume_refuses_gpus_the_run_did_not_start_on_and_changes_nothing(tmp_path, config):
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report",
                    env={"STAND_IN_CRASH": "1:0"})
    assert result.returncode == 1
    [path] = _runs(tmp_path)
    before = path.read_bytes()
    refused = _bench(tmp_path, "run", "--resume", path, env={"STAND_IN_UUID_PREFIX": "GPU-other-host-"})
    assert refused.returncode == 2
    assert "the run was started on GPU-stand-in-0, GPU-stand-in-1" in _one_line(refused.stderr)
    assert path.read_bytes() == before


def test_shard_refuses_gpus_of_two_models(tmp_path, config, monkeypatch):
    # One host with two models: the header's device is one GPU's, so a shard would misname half its cases.
    from primbench.errors import UserError
    from primbench.run import gpu_runs

    class Stub:
        def __init__(self, name):
            from primbench.runfile.records import RunHeader

            self.header, self.cases = RunHeader(run_id="", device={"name": name}), []

    with pytest.raises(UserError, match="needs GPUs of one model"):
        gpu_runs._new_files([Stub("NVIDIA H200"), Stub("NVIDIA A100")], [], "shard", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, says", [
    (["--gpus", "2"], "GPU 2 does not exist here; this host shows 2 GPU(s), 0 to 1"),
    (["--gpus", "99"], "GPU 99 does not exist here"),
    (["--gpus", "1,1"], "named twice"),
])
def test_a_gpu_this_host_lacks_gets_one_line_and_exit_2(tmp_path, config, argv, says):
    # In a forked child (the hostile corpus's harness) with the stand-in GPUs installed.
    from tests.stand_in import cli as stand_in

    previous = stand_in.gpus.visible_devices, stand_in.scheduler.worker_command
    stand_in.install()
    try:
        outcome = harness.run_cli(["run", str(config), *argv], tmp_path, tmp_path / "captured")
    finally:
        stand_in.gpus.visible_devices, stand_in.scheduler.worker_command = previous
    assert outcome.code == 2 and says in _one_line(outcome.stderr), outcome.stderr
    assert not (tmp_path / "results").exists()


def test_gpus_0_is_the_one_gpu_run_of_before(tmp_path, config):
    plain = _bench(tmp_path, "run", config, "--dry-run")
    zero = _bench(tmp_path, "run", config, "--dry-run", "--gpus", "0", "--mode", "shard")
    assert plain.returncode == zero.returncode == 0 and plain.stdout == zero.stdout
    sharded = _bench(tmp_path, "run", config, "--dry-run", "--gpus", "0,1")
    assert sharded.stdout.splitlines()[-2] == "shard: GPU 0 runs 6, GPU 1 runs 6"


def test_a_fleets_runs_in_one_shared_folder_publish_by_gpu_model(tmp_path, config):
    # Two hosts (stand-in GPUs with UUIDs of their own) write into one shared folder, one of them
    # over two GPUs; publish sets every run under its GPU model, with one history for the model.
    shared = tmp_path / "out"
    for host, gpus in (("GPU-host-a-", "all"), ("GPU-host-b-", "1")):
        result = _bench(tmp_path, "run", config, "--gpus", gpus, "--output", shared, "--no-report",
                        env={"STAND_IN_UUID_PREFIX": host})
        assert result.returncode == 0, result.stderr
    runs = _runs(tmp_path)
    assert len(runs) == 2 and {p.parent.name for p in runs} == {"stand-in-gpu"}
    site = tmp_path / "site"
    published = _bench(tmp_path, "publish", shared, "-o", site)
    assert published.returncode == 0, published.stderr
    assert sorted(p.name for p in site.glob("history-*.html")) == ["history-stand-in-gpu.html"]
    assert sorted(p.stem for p in (site / "runs").glob("*.html")) == sorted(load_run(p).header.run_id for p in runs)


def test_a_run_stopped_after_its_last_case_is_finished_by_resume_without_a_gpu_worker(tmp_path, config):
    """A stop that lands after the last case but before the end record (replicas on GPUs of
    different speeds, under Slurm's --signal) leaves a complete file without its end."""
    result = _bench(tmp_path, "run", config, "--gpus", "all", "--output", tmp_path / "out", "--no-report")
    assert result.returncode == 0, result.stderr
    [path] = _runs(tmp_path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["kind"] == "end"
    path.write_text("\n".join(lines[:-1]) + "\n")
    resumed = _bench(tmp_path, "run", "--resume", path, "--no-report")
    assert resumed.returncode == 0, resumed.stderr
    run = load_run(path)
    assert run.finished and run.end.ok == KEYS and len(run.cases) == KEYS and len(run.resumes) == 1


@pytest.mark.parametrize("visible, gpus", [("0,1,2", "all"), ("0,1", "1")])
def test_no_gpu_is_one_line_even_when_cuda_visible_devices_lists_some(tmp_path, config, visible, gpus):
    # Review finding: with CUDA_VISIBLE_DEVICES set (Slurm, CI runners) and no GPU, each worker
    # printed its own "no NVIDIA GPU" line and the scheduler one more.
    from primbench.errors import NoGPUError
    from primbench.measuring.device import require_gpu

    try:
        require_gpu()
        pytest.skip("this machine has a GPU")
    except NoGPUError:
        pass
    result = subprocess.run([sys.executable, str(REPO / "bench.py"), "run", str(config), "--gpus", gpus],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES=visible))
    assert result.returncode == 3 and "no NVIDIA GPU" in _one_line(result.stderr)
