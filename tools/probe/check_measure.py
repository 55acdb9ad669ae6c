"""Check that primbench.measure times a case as the CLI does.

CUB's sum at 2^28 float32 is timed twice in one process: (a) through the runner, exactly as
`bench.py run` times the case reduce/cub_device_reduce; (b) through primbench.measure, on a callable
doing the same sum on an input of the same size, dtype and distribution. Prints both cold medians
and their ratio; exits 1 if they differ by more than 1 %, 2 if either could not run.

Usage (on the GPU machine): python -m tools.probe.check_measure [--n N] [--tolerance 0.01] [--json OUT]
"""

import argparse
import json
import sys
from pathlib import Path

VARIANT = "cub_device_reduce"
DTYPE = "float32"
DISTRIBUTION = "uniform"
SEED = 11


def cli_way(n: int) -> dict:
    """The case as the CLI runs it: verification first, then Timer.measure with the config's policy."""
    from primbench.config.loading import config_from_dict
    from primbench.errors import UserError
    from primbench.run.runner import Runner
    from primbench.runfile import stats

    config = config_from_dict({"sweeps": [{"op": "reduce", "variants": [VARIANT], "sizes": [n],
                                           "dtypes": [DTYPE], "distributions": [DISTRIBUTION]}]}, "check_measure")
    (case,) = config.cases()
    record = Runner(config).run_case(case, SEED)
    if not record.ok:
        raise UserError(f"the CLI's case {case.key} did not run: {record.status} {record.reason}")
    cold = stats.summarize(record.cold_ms)
    return {"key": case.key, "bytes": record.bytes, "median_us": cold.median_us, "noise": cold.noise,
            "cold_samples": cold.count, "stop": record.timing["stop"], "policy": config.timing.as_dict()}


def measure_way(n: int) -> dict:
    """The same sum through primbench.measure (its default policy is the CLI's)."""
    from cupy.cuda import cub

    from primbench import measure
    from primbench.verify.inputs import random_input

    x = random_input(n, DTYPE, DISTRIBUTION, SEED + 1)  # the runner times its random input, seed + 1
    # The call the registry's CUB plan makes: dtype given, so int32 would not be promoted either.
    result = measure(lambda: cub.cub_reduction(x, cub.CUPY_CUB_SUM, dtype=x.dtype), bytes=x.nbytes)
    return {"median_us": result.median_us, "noise": result.noise, "cold_samples": len(result.cold_ms),
            "stop": result.stop, "gbps": result.gbps, "pct_of_peak": result.pct_of_peak, "device": result.device,
            "summary": str(result)}


def _line(label: str, figures: dict) -> str:
    return (f"{label:22} {figures['median_us']:10.2f} us ±{figures['noise'] * 100:.2f} %, "
            f"{figures['cold_samples']} cold samples ({figures['stop']})")


def main() -> int:
    from primbench.errors import UserError

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2**28, help="elements (default 2^28)")
    parser.add_argument("--tolerance", type=float, default=0.01, help="largest relative difference allowed (0.01 = 1 %%)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()

    try:
        cli = cli_way(args.n)
        fresh = measure_way(args.n)
    except UserError as exc:  # no GPU, no CuPy: one line, and not the exit code of a disagreement
        print(f"check_measure: {exc}", file=sys.stderr)
        return 2
    ratio = fresh["median_us"] / cli["median_us"]
    agree = abs(ratio - 1.0) <= args.tolerance
    print(_line("CLI (runner.run_case)", cli))
    print(_line("primbench.measure", fresh))
    print(f"measure / CLI          {ratio:10.4f}  {'within' if agree else 'OUTSIDE'} ±{args.tolerance * 100:g} %")
    print(f"measure says: {fresh['summary']}")
    if args.json:
        figures = {"n": args.n, "dtype": DTYPE, "distribution": DISTRIBUTION, "cli": cli, "measure": fresh,
                   "ratio": ratio, "tolerance": args.tolerance, "agree": agree}
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
