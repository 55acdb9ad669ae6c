"""The unit tests' `bench`: the command line in a forked child of the test process
(tests/hostile/harness.py), the same main() that bench.py calls, with its exit code and output,
without starting Python and importing primbench's libraries again for each of about 35 commands
(0.4 s against 0.7 s a command). tests/e2e keep tests/conftest.py's `bench`, a real
`python bench.py`."""

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.hostile import harness


@pytest.fixture(scope="session")
def bench(repo, tmp_path_factory):
    """Run `bench.py ARGS...` in the repository; returns a CompletedProcess, as the e2e one does."""
    import primbench.cli.main  # noqa: F401 - imported here once: each forked command then starts at once

    outputs = tmp_path_factory.mktemp("bench-output")

    def run(*args):
        argv = [str(a) for a in args]
        outcome = harness.run_cli(argv, repo, Path(tempfile.mkdtemp(dir=outputs)))
        assert outcome.code is not None, f"bench {' '.join(argv)}: still running after {harness.TIMEOUT_S:.0f} s"
        return subprocess.CompletedProcess([sys.executable, "bench.py", *argv], outcome.code, outcome.stdout, outcome.stderr)

    return run
