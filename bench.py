#!/usr/bin/env python3
"""primbench command line: `python bench.py --help`. Parsing and dispatch live in primbench/cli/main.py."""

import sys

from primbench.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
