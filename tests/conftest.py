"""Shared fixtures. GPU tests (marker `gpu`) skip with a reason where no NVIDIA GPU is usable."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# A user's own reduce kernel. Tests run plugins through the CLI in a child process: a plugin loaded
# here would join every glob of every config the other tests expand.
EXAMPLE_PLUGIN = REPO / "examples" / "my_reduce" / "my_reduce.py"


def _gpu_available() -> tuple[bool, str]:
    try:
        from primbench.device import require_gpu

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


@pytest.fixture(scope="session")
def newest_run(repo) -> Path:
    """The newest recorded run under results/ (names sort by start time)."""
    runs = sorted((repo / "results").glob("*.jsonl"))
    if not runs:
        pytest.skip("no recorded run under results/ yet")
    return runs[-1]


@pytest.fixture(scope="session")
def published_site(bench, tmp_path_factory) -> Path:
    """`bench.py publish results/` once for the session (every run's report: minutes): the site folder."""
    site = tmp_path_factory.mktemp("published") / "site"
    result = bench("publish", "results", "-o", site)
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
