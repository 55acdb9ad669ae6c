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


def forked_cli(cwd, *args) -> subprocess.CompletedProcess:
    """`bench.py ARGS...` run in `cwd` in a forked child; a CompletedProcess, as subprocess.run gives."""
    import primbench.cli.main  # noqa: F401 - imported once in this process: each forked command starts at once

    argv = [str(a) for a in args]
    outcome = harness.run_cli(argv, Path(cwd), Path(tempfile.mkdtemp(prefix="primbench-cli-")))
    assert outcome.code is not None, f"bench {' '.join(argv)}: still running after {harness.TIMEOUT_S:.0f} s"
    return subprocess.CompletedProcess([sys.executable, "bench.py", *argv], outcome.code, outcome.stdout, outcome.stderr)


@pytest.fixture(scope="session")
def bench(repo):
    """Run `bench.py ARGS...` in the repository; returns a CompletedProcess, as the e2e one does."""
    return lambda *args: forked_cli(repo, *args)
