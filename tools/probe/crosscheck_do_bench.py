"""Cross-check primbench's timing of CUB at 2^28 against triton.testing.do_bench (which also flushes L2).

Usage (on a GPU box with torch and triton): python -m tools.probe.crosscheck_do_bench RUN.jsonl [--json OUT]
Prints the run's recorded CUB median, a fresh primbench measurement, and do_bench's median, with ratios.
"""

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a run file holding reduce/cub_device_reduce at n = 2^28")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--n", type=int, default=2**28)
    args = parser.parse_args()

    import cupy
    import torch
    from cupy.cuda import cub
    from triton.testing import do_bench

    from primbench.measuring.device import Device
    from primbench.measuring.policy import TimingPolicy
    from primbench.measuring.timing import Timer
    from primbench.runfile import stats
    from primbench.runfile.io import load_run
    from primbench.verify import inputs

    run = load_run(args.run)
    recorded = [r for r in run.cases if r.case.variant == "cub_device_reduce" and r.case.n == args.n and r.ok]
    recorded_ms = stats.summarize(recorded[0].cold_ms).median if recorded else None

    device = Device()
    x = inputs.random_input(args.n, "float32", "uniform", rng_seed=3)
    operation = lambda: cub.cub_reduction(x, cub.CUPY_CUB_SUM)  # noqa: E731
    fresh = Timer(device.l2_bytes).measure(operation, TimingPolicy(min_samples=100, max_time_s=5.0))
    fresh_ms = stats.summarize(fresh.cold_ms).median
    # do_bench times on torch's current stream: the legacy default stream, which CuPy uses too.
    assert cupy.cuda.get_current_stream().ptr == 0 and torch.cuda.current_stream().cuda_stream == 0
    do_bench_ms = do_bench(operation, warmup=100, rep=500, return_mode="median")
    xt = torch.rand(args.n, device="cuda", dtype=torch.float32)
    torch_sum_ms = do_bench(lambda: xt.sum(), warmup=100, rep=500, return_mode="median")

    figures = {
        "n": args.n,
        "recorded_run": str(args.run),
        "recorded_median_us": recorded_ms * 1e3 if recorded_ms else None,
        "fresh_primbench_median_us": fresh_ms * 1e3,
        "do_bench_median_us": do_bench_ms * 1e3,
        "torch_sum_do_bench_median_us": torch_sum_ms * 1e3,
        "recorded_over_do_bench": recorded_ms / do_bench_ms if recorded_ms else None,
        "fresh_over_do_bench": fresh_ms / do_bench_ms,
    }
    for key, value in figures.items():
        print(f"{key:32} {value:.4f}" if isinstance(value, float) else f"{key:32} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
