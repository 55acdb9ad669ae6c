#!/usr/bin/env python3
"""primbench command line: `python bench.py --help`. Parsing and dispatch live in primbench/cli.py."""

import sys

from primbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
