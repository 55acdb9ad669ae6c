"""What more than one tool uses: the GPU with its L2-flushing timer and one sampling policy, and one
checked, timed result line per form (Tuner); ptxas's registers and spills per kernel; the scan's
exact input and the exact checks of its outputs; and one case made ready as the runner makes it.

Kept in one module so that a tool never imports another tool: a tuner or probe is a script to
change freely, and what two of them share lives here. The tools compile with
primbench.build.load_module and time the harness's way; none of this is part of a run."""

from pathlib import Path

# Outputs of one plan checked in a row: a persistent scan's ticket counter and status epochs must
# come back ready for the next call, which the first call alone does not show.
CALLS_IN_A_ROW = 3


class Tuner:
    """The GPU in hand, the harness's L2-flushing timer, one sampling policy for every form, and the
    lines measured so far (what --json writes)."""

    def __init__(self, max_samples: int = 300):
        from primbench.measuring.device import Device
        from primbench.measuring.policy import TimingPolicy
        from primbench.measuring.timing import Timer

        self.device = Device()
        self.timer = Timer(self.device.l2_bytes)
        self.policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=max_samples)
        self.rows: list[dict] = []

    def cold_median_us(self, operation) -> float:
        """The cold median of `operation` (L2 flushed before each sample), the harness's way."""
        from primbench.runfile import stats

        return stats.summarize(self.timer.measure(operation, self.policy).cold_ms).median * 1e3

    def measure(self, label: str, operation, correct, n: int, nbytes: int, copy_gbps: float | None = None, **extra) -> dict:
        """Run `operation` once and ask `correct()` whether its output is right, then time it cold and
        keep and print its line: time, GB/s for `nbytes` of traffic, % of the NVML peak (and of copy)."""
        operation()
        ok = bool(correct())
        us = self.cold_median_us(operation)
        gbps = gbps_of(nbytes, us)
        row = dict(label=label, n=n, us=round(us, 2), gbps=round(gbps), pct_peak=round(100 * gbps / self.device.info["peak_gbps"], 1),
                   pct_copy=round(100 * gbps / copy_gbps, 1) if copy_gbps else None, ok=ok, **extra)
        self.rows.append(row)
        copy = f" {row['pct_copy']}% copy" if copy_gbps else ""
        print(f"{label:62} n=2^{n.bit_length() - 1:<3} {row['us']:9.2f} us {row['gbps']:5d} GB/s {row['pct_peak']:5.1f}% peak{copy} "
              f"{'ok' if ok else 'WRONG'} {extra or ''}", flush=True)
        return row

    def write_json(self, path: str | None) -> None:
        if path:
            import json

            Path(path).write_text(json.dumps({"device": self.device.info["name"], "rows": self.rows}, indent=1))


def print_ptxas(source: str, names, archs=("sm_90", "sm_80")) -> dict:
    """One line per kernel and architecture: registers, stack frame and spills, from ptxas through
    NVRTC (primbench.build.ptxas_usage; no GPU needed). `source`: a name under kernels/, or an
    absolute path (an experiment's own .cu). Returns {(arch, name): its KernelUsage}."""
    from primbench.build import ptxas_usage

    usages = {}
    for arch in archs:
        usage, _log = ptxas_usage(source, names, arch)
        for name, kernel in usage.items():
            usages[arch, name] = kernel
            print(f"{arch} {name:58} {kernel.registers} registers; {kernel.stack_bytes} bytes stack frame, "
                  f"{kernel.spill_stores} bytes spill stores, {kernel.spill_loads} bytes spill loads")
    return usages


def gbps_of(nbytes: int, us: float) -> float:
    """GB/s for `nbytes` moved in `us` microseconds (primbench.runfile.stats.bandwidth_gbps takes milliseconds)."""
    from primbench.runfile.stats import bandwidth_gbps

    return bandwidth_gbps(nbytes, us * 1e-3)


def exact_case(dtype: str, n: int):
    """The scan op's exact input and its prefix sums in the dtype (int32 wrapped, float32 integers),
    so that any scan's output can be checked for equality, whatever its order of additions."""
    from primbench import ops
    from primbench.runfile.case_id import CaseId

    x, expected = ops.checks("scan").exact_input(CaseId("scan", "tune", dtype, n, None, "uniform"), 7)
    return x, expected.astype(x.dtype)


def first_wrong(result, wanted) -> str:
    """"" if `result` equals `wanted` everywhere, else how many elements differ and the first."""
    import cupy

    wrong = cupy.flatnonzero(result != wanted)
    if wrong.size == 0:
        return ""
    i = int(wrong[0])
    return f"{int(wrong.size)} wrong, first at {i}: {result[i].item()} for {wanted[i].item()}"


def check_calls(plan, wanted, what: str, calls: int = CALLS_IN_A_ROW) -> tuple[int, int]:
    """Run `plan` `calls` times in a row, checking each output exactly against `wanted`; prints one
    line per wrong output (`what` names the form). Returns (outputs checked, wrong)."""
    wrong = 0
    for call in range(calls):
        plan.run()
        problem = first_wrong(plan.result(), wanted)
        if problem:
            wrong += 1
            launch = plan.launches[0]
            print(f"small WRONG {what} grid {launch['grid']} tiles {launch['tiles']} call {call + 1}: {problem}", flush=True)
    return calls, wrong


def prepared(variant_key: str, n: int, dtype: str | None = None, seed_name: str = "jitter"):
    """(runner, case, variant, module, x) for `variant_key` at size n and dtype (None: the op's
    default), made exactly as the runner makes them, for a probe that times one case its own way."""
    from primbench import registry
    from primbench.build import load_module
    from primbench.config import subset
    from primbench.run.runner import Runner, input_key, rng_seed_for

    config = subset.variant_config((variant_key,), sizes=(n,), blocks=None, dtypes=(dtype,) if dtype else None)
    case = config.cases()[0]
    runner = Runner(config)
    variant = registry.get(case.op, case.variant)
    module = load_module(variant.source, variant.kernels) if variant.source else None
    x = runner._inputs_for(case, rng_seed_for(seed_name, input_key(case)))[2]
    return runner, case, variant, module, x
