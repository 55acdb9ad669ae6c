"""Faults during a run, each from a deliberately broken variant that exists only here (registered
by a wrapper script around bench.py), on the GPU (marker `gpu`): a kernel that does not compile, one
that returns a wrong result, one that runs out of memory, one that needs more shared memory than the
GPU has, one that never returns, and SIGTERM in the middle of a run. In
every case the run file keeps every finished case and the other cases still run.
(The kernel that breaks the CUDA context is in gpu/test_runner.py.)"""

import signal
import subprocess
import sys
import time

import pytest

from primbench.runfile.io import load_run

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

SCRIPT = r'''
import sys
sys.path.insert(0, {repo!r})
from primbench import registry
from primbench.api import Plan, Variant, register_variant as register

BROKEN_SOURCE = {broken_source!r}


def wrong_sum(ctx):
    import cupy

    out = cupy.empty(1, dtype=cupy.float32)
    # A "sum" that forgets the last element: off by one element on the exact input.
    return Plan(run=lambda: cupy.sum(ctx.x[:-1], out=out.reshape(())), result=lambda: out, launches=[], depth=1, scratch=[out])


def out_of_memory(ctx):
    import cupy

    cupy.empty(2**50, dtype=cupy.uint8)  # a petabyte: no GPU has it
    raise AssertionError("unreachable")


def too_much_shared(ctx):
    ctx.dynamic_shared(None, ctx.shared_per_block_optin + 1024)  # 1 KB past what this GPU lets a block have
    raise AssertionError("unreachable")


def compiles(ctx):
    kernel = ctx.kernel("never_built")
    raise AssertionError("unreachable")


def slow_sum(ctx):
    import cupy

    out = cupy.empty(1, dtype=cupy.float32)
    def run():
        for _ in range(200):  # slow enough that SIGTERM lands mid-run
            cupy.sum(ctx.x, out=out.reshape(()))
    return Plan(run=run, result=lambda: out, launches=[], depth=ctx.n, scratch=[out])


SPIN = r"""extern "C" __global__ void spin_forever(int* flag) {{
    while (atomicAdd(flag, 0) == 0) {{ }}  // nothing ever sets it: a kernel that never returns
}}"""  # doubled braces: this script is a str.format template


def spins_forever(ctx):
    import cupy

    # The flag stays out of `scratch`: the runner poisons scratch to -1 before each checked run,
    # which would let the loop end at once and the case fail verification instead of hanging.
    flag = cupy.zeros(1, dtype=cupy.int32)
    out = cupy.empty(1, dtype=cupy.float32)  # never written: the kernel does not return
    kernel = cupy.RawKernel(SPIN, "spin_forever")
    return Plan(run=lambda: kernel((1,), (32,), (flag,)), result=lambda: out, launches=[], depth=1, scratch=[out])


registry.variants()
common = dict(op="reduce", series="test", order=0, block_sizes=(64,), bytes_model="n * itemsize", tolerance_model="-",
              deterministic_expected=False)
register(Variant(name="test_only_wrong_sum", origin="drops the last element", prepare=wrong_sum, **common))
register(Variant(name="test_only_out_of_memory", origin="allocates 1 PB", prepare=out_of_memory, **common))
register(Variant(name="test_only_compile_error", origin="a syntax error", prepare=compiles, source=BROKEN_SOURCE,
                 kernels=("never_built",), **common))
register(Variant(name="test_only_slow", origin="200 sums per run", prepare=slow_sum, **common))
register(Variant(name="test_only_too_much_shared", origin="1 KB more shared memory than the GPU allows", prepare=too_much_shared, **common))
register(Variant(name="test_only_spins_forever", origin="a kernel that never returns", prepare=spins_forever, **common))
from primbench.cli.main import main
sys.exit(main(sys.argv[1:]))
'''

TIMING = "timing: {min_samples: 5, max_time_s: 0.05, min_time_s: 0.0}\n"


def _script(tmp_path, repo):
    broken = tmp_path / "broken.cu"
    broken.write_text('extern "C" __global__ void never_built(float* x) { x[0] = undefined_name; }\n')
    script = tmp_path / "faulty_bench.py"
    script.write_text(SCRIPT.format(repo=str(repo), broken_source=str(broken)))  # an absolute source path
    return script


def _run(tmp_path, repo, variants, sizes="[1000]"):
    config = tmp_path / "c.yaml"
    config.write_text(TIMING + f"sweeps:\n  - op: reduce\n    variants: {variants}\n    sizes: {sizes}\n    block_sizes: [64]\n")
    result = subprocess.run([sys.executable, str(_script(tmp_path, repo)), "run", str(config), "--output", str(tmp_path),
                             "--no-report"], capture_output=True, text=True, timeout=300)
    return result, load_run(next(tmp_path.glob("*/*.jsonl")))


def test_a_kernel_that_does_not_compile_fails_its_cases_with_the_nvrtc_log_and_the_run_goes_on(tmp_path, repo):
    result, run = _run(tmp_path, repo, "[test_only_compile_error, reduce2_sequential]")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert run.finished and [c.status for c in run.cases] == ["failed", "ok"]
    assert "NVRTC failed" in run.cases[0].reason and "undefined_name" in run.cases[0].log


def test_a_wrong_result_is_recorded_as_failed_never_timed_and_the_exit_status_says_so(tmp_path, repo):
    result, run = _run(tmp_path, repo, "[test_only_wrong_sum, reduce2_sequential]")
    assert result.returncode == 1, result.stderr
    wrong, good = run.cases
    assert wrong.status == "failed" and "exact check" in wrong.reason and wrong.cold_ms == ()
    assert good.ok and good.cold_ms
    frame = run.frame()
    assert not frame[frame["variant"] == "test_only_wrong_sum"]["median_ms"].notna().any()  # nothing to rank or plot


def test_a_case_that_runs_out_of_gpu_memory_is_skipped_with_the_reason_and_the_run_goes_on(tmp_path, repo):
    result, run = _run(tmp_path, repo, "[test_only_out_of_memory, reduce2_sequential]")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert [c.status for c in run.cases] == ["skipped", "ok"]
    assert "out of GPU memory" in run.cases[0].reason


def test_a_case_needing_more_shared_memory_than_the_gpu_allows_is_skipped_and_the_run_goes_on(tmp_path, repo):
    result, run = _run(tmp_path, repo, "[test_only_too_much_shared, reduce2_sequential]")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert [c.status for c in run.cases] == ["skipped", "ok"]
    assert "of shared memory per block; this GPU allows" in run.cases[0].reason


def test_sigterm_mid_run_keeps_every_finished_case_and_resume_completes_the_run(tmp_path, repo):
    config = tmp_path / "c.yaml"
    config.write_text(TIMING + "sweeps:\n  - op: reduce\n    variants: [test_only_slow]\n"
                      "    sizes: ['2^20', '2^20+1', '2^20+2', '2^20+3', '2^20+4', '2^20+5']\n    block_sizes: [64]\n")
    script = _script(tmp_path, repo)
    process = subprocess.Popen([sys.executable, str(script), "run", str(config), "--output", str(tmp_path), "--no-report"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while time.time() < deadline:  # until the header and two cases are on disk
        files = list(tmp_path.glob("*/*.jsonl"))
        if files and len(files[0].read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "Traceback" not in err, err
    assert "every finished case is kept" in err
    path = next(tmp_path.glob("*/*.jsonl"))
    run = load_run(path)
    assert not run.finished and 2 <= len(run.cases) < 6 and all(c.status == "ok" for c in run.cases)
    assert run.warnings == []  # SIGTERM between cases, or mid-case: never a half-written line
    resumed = subprocess.run([sys.executable, str(script), "run", "--resume", str(path), "--no-report"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    run = load_run(path)
    assert run.finished and len(run.cases) == 6 and len({c.key for c in run.cases}) == 6


def test_a_kernel_that_never_returns_fails_its_case_within_the_limit_and_the_run_finishes_the_rest(tmp_path, repo):
    config = tmp_path / "c.yaml"
    config.write_text("timing: {min_samples: 5, max_time_s: 0.05, min_time_s: 0.0, case_limit_s: 5}\n"
                      "sweeps:\n  - op: reduce\n    variants: [test_only_spins_forever, reduce2_sequential]\n"
                      "    sizes: [1000, 5000]\n    block_sizes: [64]\n")
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(_script(tmp_path, repo)), "run", str(config), "--output", str(tmp_path),
                             "--no-report"], capture_output=True, text=True, timeout=300)
    print(result.stderr[-2000:], f"{time.monotonic() - started:.1f} s")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    run = load_run(next(tmp_path.glob("*/*.jsonl")))
    cases = [(c.key, c.status, c.reason) for c in run.cases]  # why each failed, where the line below is missing
    assert "made no progress for 5 s (timing: case_limit_s) (recorded as failed); going on" in result.stderr, cases
    assert run.finished and len(run.cases) == 4 == len({c.key for c in run.cases})
    by_variant = {}
    for case in run.cases:
        by_variant.setdefault(case.case.variant, []).append(case)
    assert all(c.status == "failed" and c.reason.startswith("made no progress for 5 s") and 5 <= c.elapsed_s < 30
               for c in by_variant["test_only_spins_forever"])
    assert all(c.ok and c.cold_ms for c in by_variant["reduce2_sequential"])
