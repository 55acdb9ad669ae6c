#!/usr/bin/env python3
"""Do two runs of the same config agree? Prints, for every case both ran whose median is at least
--min-us, the ratio of medians, and exits 1 if any differs by more than --max-diff.

Usage: python tools/repro_check.py RUN_A.jsonl RUN_B.jsonl [--min-us 100] [--max-diff 0.02]
(`bench.py compare` will do this with significance tests; this is the plain acceptance check.)
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from primbench.results import load_run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--min-us", type=float, default=100.0)
    parser.add_argument("--max-diff", type=float, default=0.02)
    args = parser.parse_args()
    a = load_run(args.run_a).frame().set_index("key")
    b = load_run(args.run_b).frame().set_index("key")
    both = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
    both = both[(both.status_a == "ok") & (both.status_b == "ok")]
    long_cases = both[(both.median_ms_a * 1e3 >= args.min_us) | (both.median_ms_b * 1e3 >= args.min_us)].copy()
    long_cases["ratio"] = long_cases.median_ms_b / long_cases.median_ms_a
    long_cases["diff"] = (long_cases.ratio - 1).abs()
    worst = long_cases.sort_values("diff", ascending=False)
    for key, row in worst.head(15).iterrows():
        print(f"{key:80} {row.median_ms_a * 1e3:9.1f} us {row.median_ms_b * 1e3:9.1f} us  {100 * (row.ratio - 1):+.2f} %")
    over = worst[worst["diff"] > args.max_diff]
    print(f"{len(long_cases)} cases of {args.min_us:g} us or more in both runs; largest difference "
          f"{100 * worst['diff'].max():.2f} %; {len(over)} over {100 * args.max_diff:g} %")
    return 1 if len(over) else 0


if __name__ == "__main__":
    sys.exit(main())
