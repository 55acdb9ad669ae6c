"""python -m tools.doc_figures [--write] [--root DIR]: check (or rewrite) the docs' figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.doc_figures import WRITE_COMMAND, check, computed, pictures, write
from tools.doc_figures.facts import REPO, Facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.doc_figures", description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite every figure from the runs under results/")
    parser.add_argument("--root", type=Path, default=REPO, help="the docs to check (default: this repository's)")
    args = parser.parse_args(argv)
    figures = computed(Facts())
    if args.write:
        changed = write(args.root, figures)
        print("\n".join(f"rewrote {path}" for path in changed) or "every figure was already the run's")
    stale = check(args.root, figures)
    for line in stale:
        print(line, file=sys.stderr)
    if any(not line.endswith(pictures.COMMAND) for line in stale) and not args.write:
        print(f"stale: run {WRITE_COMMAND}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
