"""The command line end to end on the real recorded run, and its one-line errors."""

import json
import shutil
import subprocess
import sys

import pytest

from primbench.errors import NoGPUError
from primbench.measuring.device import require_gpu
from primbench.runfile.records import SCHEMA_VERSION
from tests.run_copies import SCHEMA_1_ARCHIVED_RUN


def _has_gpu() -> bool:
    try:
        require_gpu()
        return True
    except NoGPUError:
        return False


def bench(repo, *args):
    return subprocess.run([sys.executable, "bench.py", *args], cwd=repo, capture_output=True, text=True)


def assert_one_line_error(result, code, *words):
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("primbench: ")
    for word in words:
        assert word in lines[0]


def test_report_renders_the_recorded_run_into_one_html_file(repo, newest_run, tmp_path):
    out = tmp_path / "report.html"
    result = bench(repo, "report", str(newest_run), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    html = out.read_text()
    assert "reduce0_interleaved_divergent" in html and '<svg class="chart' in html


def test_make_report_renders_the_reference_run_and_make_check_compares_it_with_the_baseline(repo, reference_run):
    # What a fresh clone can do with no GPU: the tracked reference run end to end, and the gate's
    # plumbing (make check, its Markdown and JUnit). The gate is given the reference itself as
    # baseline: the tracked baseline is a nightly run from another H200, and the verdicts between
    # two machines' runs are data (docs/perf-notes.md), not what this test is about.
    report = subprocess.run(["make", "--no-print-directory", "report"], cwd=repo, capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    html = reference_run.with_name("nvidia-h200.html")
    assert report.stdout.strip().splitlines()[-1] == str(html.relative_to(repo))
    assert "reduce0_interleaved_divergent" in html.read_text() and '<svg class="chart' in html.read_text()
    check = subprocess.run(["make", "--no-print-directory", "check", f"RUN={reference_run}",
                            f"CHECK_FLAGS=--baseline {reference_run}"], cwd=repo, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "check: 0 regression(s)" in check.stdout


def test_the_reference_run_is_a_clean_h200_run_of_the_code_as_it_is(reference_run):
    # Its variant hashes cover the GPU work only (tests/unit/test_variant_identity.py), so this holds
    # across Python-only changes; a kernel change needs `make gpu-check` and `make reference`.
    from primbench import registry
    from primbench.runfile.io import load_run

    run = load_run(reference_run)
    assert run.finished and "H200" in run.device["name"] and all(c.status == "ok" for c in run.cases)
    kernels_of_ours = {key: info for key, info in run.header.variants.items() if info.get("source")}
    stale = [key for key, info in kernels_of_ours.items() if registry.get(*key.split("/", 1)).hash() != info["hash"]]
    assert len(kernels_of_ours) >= 35 and not stale, f"{stale}: record it again with make gpu-check, then make reference"


def test_a_missing_results_file_is_one_line_and_exit_2(repo, tmp_path):
    assert_one_line_error(bench(repo, "report", str(tmp_path / "missing.jsonl")), 2, "no such run file")


def test_resuming_a_finished_run_is_refused_in_one_line(repo, newest_run, tmp_path):
    run = shutil.copy(newest_run, tmp_path / newest_run.name)
    assert_one_line_error(bench(repo, "run", "--resume", str(run)), 2, "already finished")


def test_report_into_a_folder_asks_for_a_file(repo, newest_run, tmp_path):
    assert_one_line_error(bench(repo, "report", str(newest_run), "-o", str(tmp_path)), 2, "is a folder")


def test_resume_refuses_options_that_do_not_apply(repo, newest_run):
    assert_one_line_error(bench(repo, "run", "--resume", str(newest_run), "--dry-run"), 2, "do not apply")


def test_resuming_a_run_written_in_an_older_schema_is_refused_in_one_line(repo, tmp_path):
    # Test-only transformation of a real schema-1 run: drop its end record, as if it had been interrupted.
    import gzip

    archived = repo / SCHEMA_1_ARCHIVED_RUN
    interrupted = tmp_path / "2026-12-01-061005-nvidia-h200-e27064.jsonl"
    with gzip.open(archived, "rt", encoding="utf-8") as handle:
        interrupted.write_text("".join(handle.read().splitlines(keepends=True)[:-1]))
    assert_one_line_error(bench(repo, "run", "--resume", str(interrupted)), 2, "schema 1", "start a new run")


def test_resuming_a_compressed_run_is_refused_in_one_line(repo, newest_run, tmp_path):
    import gzip

    lines = newest_run.read_text().splitlines(keepends=True)[:-1]  # unfinished: no end record
    packed = tmp_path / (newest_run.name + ".gz")
    packed.write_bytes(gzip.compress("".join(lines).encode()))
    assert_one_line_error(bench(repo, "run", "--resume", str(packed)), 2, "is compressed", "gunzip")


def test_resuming_a_missing_run_is_one_line(repo, tmp_path):
    assert_one_line_error(bench(repo, "run", "--resume", str(tmp_path / "gone.jsonl")), 2, "no such run file")


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
def test_bench_run_without_a_gpu_says_so_and_points_to_make_report(repo):
    assert_one_line_error(bench(repo, "run", "configs/progression.yaml"), 3, "no NVIDIA GPU", "make report")


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
def test_resuming_an_interrupted_run_checks_the_file_then_needs_the_gpu(repo, newest_run, tmp_path):
    # Test-only transformation of a real run: drop its end record, as an interrupted run lacks it,
    # and number it with the current schema (the schema-2 fixture differs from schemas 3 and 4 only
    # in that number).
    # It is also given this primbench's protocol: a run measured by another is not continued (below).
    from primbench.runfile import protocol

    interrupted = tmp_path / newest_run.name
    lines = newest_run.read_text().splitlines(keepends=True)[:-1]
    lines[0] = json.dumps(dict(json.loads(lines[0]), schema=SCHEMA_VERSION, protocol=protocol.declared())) + "\n"
    interrupted.write_text("".join(lines))
    assert_one_line_error(bench(repo, "run", "--resume", str(interrupted)), 3, "no NVIDIA GPU")


def test_resuming_a_run_measured_by_another_protocol_is_refused_in_one_line(repo, newest_run, tmp_path):
    # fixture-a predates the wait for the L2 flush: its remaining cases would be timed otherwise.
    interrupted = tmp_path / newest_run.name
    lines = newest_run.read_text().splitlines(keepends=True)[:-1]
    lines[0] = json.dumps(dict(json.loads(lines[0]), schema=SCHEMA_VERSION)) + "\n"
    interrupted.write_text("".join(lines))
    before = interrupted.read_bytes()
    assert_one_line_error(bench(repo, "run", "--resume", str(interrupted)), 2, "measured by another protocol",
                          "cold r1 -> r2", "start a new run")
    assert interrupted.read_bytes() == before


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
def test_make_bench_without_a_gpu_fails_with_one_clear_line(repo):
    result = subprocess.run(["make", "--no-print-directory", "bench"], cwd=repo, capture_output=True, text=True)
    assert result.returncode != 0
    ours = [line for line in result.stderr.splitlines() if line.startswith("primbench:")]
    assert ours == ["primbench: no NVIDIA GPU here (nvidia-smi finds none); to see a real run, render the bundled one: make report"]


def test_a_dry_run_validates_and_lists_every_case_without_a_gpu(repo):
    from primbench import registry

    result = bench(repo, "run", "configs/progression.yaml", "--dry-run")
    assert result.returncode == 0
    every_float32_sum = [v for v in registry.variants("reduce") if "float32" in v.dtypes]
    assert len(every_float32_sum) >= 20
    assert result.stdout.strip().splitlines()[-1].endswith(f"{len(every_float32_sum)} cases in 1 sweeps")


def test_list_names_every_reduce_variant_and_flags_the_hazards(repo):
    result = bench(repo, "list")
    assert result.returncode == 0
    assert "reduce/cub_device_reduce" in result.stdout
    # The two volatile last-warp kernels end their lines with the mark; the key under the listing says what it means.
    assert sum(line.endswith("[hazard]") for line in result.stdout.splitlines()) == 2
    assert any(line.split()[:1] == ["[hazard]"] for line in result.stdout.splitlines())


@pytest.mark.parametrize("arch, says", [("sm_999", "NVRTC"), ("compute_90", "real GPUs")])
def test_compile_names_an_architecture_it_cannot_build_for_in_one_line(repo, arch, says):
    # Every kernel for sm_90 and sm_80 is compiled in-process by test_kernels_compile.py, and
    # test_install.py checks that the installed package holds those sources; here, the CLI's answer
    # to a target NVRTC does not know, and to a virtual one (PTX only: no cubin to check).
    result = bench(repo, "compile", "--arch", arch)
    assert_one_line_error(result, 2, f"--arch {arch}", says)


def test_the_recorded_run_is_a_real_finished_h200_run_with_raw_samples(newest_run):
    from primbench.runfile.io import load_run

    run = load_run(newest_run)
    assert run.finished and run.warnings == []
    assert "H200" in run.device["name"] and run.copy_gbps > 1000
    ok = [c for c in run.cases if c.status == "ok"]
    assert ok and all(len(c.cold_ms) >= run.header.timing["min_samples"] for c in ok)


def test_the_commit_given_in_the_environment_wins_over_a_stale_git_checkout(monkeypatch):
    # The device's copy of the tree can carry an old .git; the caller's PRIMBENCH_GIT_SHA is the truth.
    from primbench.run.runner import git_state

    monkeypatch.setenv("PRIMBENCH_GIT_SHA", "abc123")
    monkeypatch.setenv("PRIMBENCH_GIT_DIRTY", "0")
    assert git_state() == {"sha": "abc123", "dirty": False, "source": "environment"}
    monkeypatch.delenv("PRIMBENCH_GIT_SHA")
    assert git_state()["source"] in ("git", "none")


def test_a_case_too_large_for_the_free_gpu_memory_is_skipped_before_anything_is_allocated():
    # The runner's memory check, with a stand-in device that has 1 GiB free: a 2^30-element float32
    # sum needs about 12 GiB, so the case is skipped with the reason, and no GPU work is attempted.
    from primbench.run import runner
    from primbench.runfile.case_id import CaseId

    class OneGiBFree:
        def free_memory(self):
            return 1 << 30

    gpu_less = object.__new__(runner.Runner)
    gpu_less.device, gpu_less._inputs = OneGiBFree(), {}
    record = gpu_less.run_case(CaseId("reduce", "reduce2_sequential", "float32", 2**30, 256, "uniform"), rng_seed=1)
    assert record.status == "skipped" and "GiB of GPU memory" in record.reason and "1.0 GiB free" in record.reason


def test_another_process_on_the_gpu_is_named_in_a_warning(capsys):
    # The real Device.other_processes over a stand-in NVML: our own pid is left out, and an NVML
    # that cannot list processes means no warning (not a failed run).
    import os
    import types

    from primbench.measuring.device import Device
    from primbench.run import runner

    class NVMLError(Exception):
        pass

    def nvml_listing(pids):
        def listing(handle):
            if pids is None:
                raise NVMLError("not supported")
            return [types.SimpleNamespace(pid=pid) for pid in pids]
        return types.SimpleNamespace(NVMLError=NVMLError, nvmlDeviceGetComputeRunningProcesses=listing)

    device = object.__new__(Device)
    device.handle = None
    stand = types.SimpleNamespace(device=device)
    device.pynvml = nvml_listing([4242, os.getpid(), 4343])
    runner._warn_other_processes(stand)
    warning = capsys.readouterr().err
    assert "warning: other processes use this GPU (pids 4242, 4343)" in warning and "disturb the timings" in warning
    device.pynvml = nvml_listing(None)
    runner._warn_other_processes(stand)
    assert capsys.readouterr().err == ""


def test_a_baseline_of_two_runs_states_their_spread_and_check_reads_it(repo, tmp_path):
    runs = [str(repo / "tests" / "data" / "runs" / f"fixture-{side}.jsonl.gz") for side in "ab"]
    made = bench(repo, "baseline", *runs, "--folder", str(tmp_path))
    assert made.returncode == 0, made.stderr
    first, second = made.stdout.strip().splitlines()
    assert first.startswith(f"baseline for NVIDIA H200: {tmp_path / 'nvidia-h200.jsonl.gz'} (from 2 runs: ")
    assert second.startswith("spread across the 2 runs: median ") and second.endswith("at least 2 x its spread")
    check = bench(repo, "check", runs[1], "--baseline", str(tmp_path / "nvidia-h200.jsonl.gz"))
    assert check.returncode == 0 and "check: 0 regression(s)" in check.stdout, check.stdout + check.stderr
    assert "another GPU" not in check.stdout  # the baseline has seen this run's board


def test_runs_of_two_protocols_make_no_baseline(repo, tmp_path):
    fixture = str(repo / "tests" / "data" / "runs" / "fixture-a.jsonl.gz")
    refused = bench(repo, "baseline", fixture, "results/baselines/nvidia-h200.jsonl.gz", "--folder", str(tmp_path))
    assert_one_line_error(refused, 2, "measured by another protocol", "cold r1 -> r2")
    assert not list(tmp_path.iterdir())


def test_check_confirm_without_a_gpu_leaves_every_suspect_unconfirmed_and_fails(repo, tmp_path):
    # fixture-b with one case of 200 us or more planted 30 % slower: a suspect no GPU here can time again.
    import gzip

    lines = gzip.decompress((repo / "tests" / "data" / "runs" / "fixture-b.jsonl.gz").read_bytes()).decode().splitlines()
    records = [json.loads(line) for line in lines]
    case = next(r for r in records if r.get("kind") == "case" and sorted(r["samples"]["cold_ms"])[len(r["samples"]["cold_ms"]) // 2] > 0.2)
    case["samples"]["cold_ms"] = [t * 1.3 for t in case["samples"]["cold_ms"]]
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in records))
    base = str(repo / "tests" / "data" / "runs" / "fixture-a.jsonl.gz")
    checked = bench(repo, "check", str(new), "--baseline", base, "--confirm", "--junit", str(tmp_path / "check.xml"))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "confirm: 1 suspect(s), timed again on this GPU interleaved against the baseline's code at 985bc394" in checked.stdout
    assert "(unconfirmed: 1 no GPU here)" in checked.stdout and f"regression: {case['key'][:60]}" in checked.stdout
    assert "unconfirmed: no GPU here" in (tmp_path / "check.xml").read_text()


@pytest.mark.parametrize("flags, words", [
    (["--confirm-limit", "3"], "give --confirm too"),
    (["--confirm", "--confirm-limit", "0"], "--confirm-limit 0: give 1 to 10000"),
    (["--confirm", "--confirm-seconds", "nan"], "--confirm-seconds nan: give 1 to 3600"),
])
def test_confirm_bounds_out_of_range_are_one_line(repo, flags, words):
    run = str(repo / "tests" / "data" / "runs" / "fixture-b.jsonl.gz")
    assert_one_line_error(bench(repo, "check", run, "--baseline", run, *flags), 2, words)
