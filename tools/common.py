"""What the tools/tune_*.py scripts share: the GPU, its L2-flushing timer with one sampling policy,
and one checked, timed result line per form. They compile with primbench.build.load_module.
Not part of a run: these scripts time kernel forms the registry does not hold."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Tuner:
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


def print_ptxas(source: str, names, archs=("sm_90", "sm_80")) -> None:
    """One line per kernel and architecture: registers, stack frame and spills, from ptxas through
    NVRTC (primbench.build.ptxas_usage; no GPU needed)."""
    from primbench.build import ptxas_usage

    for arch in archs:
        usage, _log = ptxas_usage(source, names, arch)
        for name, kernel in usage.items():
            print(f"{arch} {name:58} {kernel.registers} registers; {kernel.stack_bytes} bytes stack frame, "
                  f"{kernel.spill_stores} bytes spill stores, {kernel.spill_loads} bytes spill loads")


def gbps_of(nbytes: int, us: float) -> float:
    """GB/s for `nbytes` moved in `us` microseconds (primbench.runfile.stats.bandwidth_gbps takes milliseconds)."""
    from primbench.runfile.stats import bandwidth_gbps

    return bandwidth_gbps(nbytes, us * 1e-3)
