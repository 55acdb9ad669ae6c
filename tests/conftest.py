"""Shared fixtures. GPU tests (marker `gpu`) skip with a reason where no NVIDIA GPU is usable."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


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
