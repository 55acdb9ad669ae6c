"""What the tools/tune_*.py scripts share: the GPU, its L2-flushing timer with one sampling policy,
a kernel source compiled once for every form a script times, and one result line per form.
Not part of a run: these scripts time kernel forms the registry does not hold."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Tuner:
    def __init__(self, max_samples: int = 300):
        from primbench.config import TimingPolicy
        from primbench.device import Device
        from primbench.timing import Timer

        self.device = Device()
        self.timer = Timer(self.device.l2_bytes)
        self.policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=max_samples)
        self.rows: list[dict] = []

    def cold_median_us(self, operation) -> float:
        """The cold median of `operation` (L2 flushed before each sample), the harness's way."""
        from primbench import stats

        return stats.summarize(self.timer.measure(operation, self.policy).cold_ms).median * 1e3

    def record(self, label: str, n: int, us: float, nbytes: int, ok: bool, copy_gbps: float | None = None, **extra) -> dict:
        """Keep and print one form's line: time, GB/s for `nbytes` of traffic, % of the NVML peak (and of copy)."""
        gbps = nbytes / (us * 1e-6) / 1e9
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


def compile_source(source: str, names):
    """kernels/<source> compiled once, the harness's way (primbench.build.load_module), for every name."""
    from primbench.build import load_module

    return load_module(source, tuple(sorted(set(names))))
