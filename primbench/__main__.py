"""`python -m primbench ...`: the same command line as the `primbench` script."""

import sys

from primbench.cli.main import main

sys.exit(main())
