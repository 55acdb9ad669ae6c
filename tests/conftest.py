"""Shared fixtures. GPU tests (marker `gpu`) skip with a reason where no NVIDIA GPU is usable."""

import signal
import sys
from pathlib import Path

import pytest

# The tests that press Ctrl-C on a child need the child to hear it. A shell's background job (a
# CI step run with `&`, `make test &`) starts with SIGINT ignored, and an ignored signal stays
# ignored through exec, so those children would finish as if never interrupted. Python's own
# handler here is reset to the default in every child, which then hears SIGINT as at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["pytester"]  # tests/e2e/test_pytest_plugin.py runs pytest sessions of its own

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# A user's own reduce kernel. Tests run plugins through the CLI in a child process: a plugin loaded
# here would join every glob of every config the other tests expand.
EXAMPLE_PLUGIN = REPO / "examples" / "my_reduce" / "my_reduce.py"


def _gpu_available() -> tuple[bool, str]:
    try:
        from primbench.measuring.device import require_gpu

        require_gpu()
        import cupy  # noqa: F401
    except Exception as exc:  # noqa: BLE001 (any reason means: no GPU tests here)
        return False, str(exc)
    return True, ""


def pytest_collection_modifyitems(config, items):
    if not any("gpu" in item.keywords for item in items):
        return
    available, why = _gpu_available()
    if available:
        return
    skip = pytest.mark.skip(reason=f"no usable NVIDIA GPU ({why}); run `make gpu-test` on the device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


RUNS = REPO / "tests" / "data" / "runs"  # small real H200 runs (tests/data/README.md)
REFERENCE_RUN = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"


@pytest.fixture(scope="session")
def newest_run(tmp_path_factory) -> Path:
    """A small real run (tests/data/fixture.yaml on the H200: every op, 352 cases), uncompressed
    into a folder of its own so that tests may copy and edit it; nothing under tests/data changes."""
    import gzip

    from primbench.runfile.io import load_run

    packed = RUNS / "fixture-a.jsonl.gz"
    run_id = load_run(packed).header.run_id
    path = tmp_path_factory.mktemp("fixture-run") / f"{run_id}.jsonl"
    path.write_bytes(gzip.decompress(packed.read_bytes()))
    return path


@pytest.fixture(scope="session")
def reference_run() -> Path:
    """The H200's reference run (configs/default.yaml, 1296 cases), as committed."""
    return REFERENCE_RUN


@pytest.fixture(scope="session")
def published_site(bench, tmp_path_factory) -> Path:
    """`primbench publish tests/data/runs` once for the session: the site folder."""
    site = tmp_path_factory.mktemp("published") / "site"
    result = bench("publish", RUNS, "-o", site)
    assert result.returncode == 0, result.stderr
    return site


@pytest.fixture(scope="session")
def sm_count() -> int:
    """The GPU's SM count, for the GPU tests' launch contexts (cupy imported only when asked)."""
    import cupy

    return cupy.cuda.Device().attributes["MultiProcessorCount"]


@pytest.fixture(scope="session")
def bench(repo):
    """Run `bench.py ARGS...` in the repository; returns the CompletedProcess."""
    import subprocess

    def run(*args):
        return subprocess.run([sys.executable, "bench.py", *map(str, args)], cwd=repo, capture_output=True, text=True)

    return run
