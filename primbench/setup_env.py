"""Install what is missing, and only that: `python -m primbench.setup_env [--gpu | --test | --report]`.

Standard library only, since it runs before anything is installed. On a GPU box with no network
where everything is present (the device image), it installs nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys

# import name -> pip package
BASE = {"numpy": "numpy", "pandas": "pandas", "matplotlib": "matplotlib", "jinja2": "jinja2", "yaml": "pyyaml",
        "scipy": "scipy", "rich": "rich", "pynvml": "nvidia-ml-py"}
NO_GPU = "primbench: no NVIDIA GPU here (nvidia-smi finds none); to see a real run, render the bundled one: make report"
# CI compiles every kernel with NVRTC and no GPU: CuPy's wheel for CUDA 13 plus NVRTC from pip.
CI_CUDA_MAJOR = 13


def driver_cuda_major() -> int | None:
    """The CUDA major version the driver supports, from nvidia-smi; None without a GPU."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        text = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"CUDA Version:\s*(\d+)", text)
    return int(match.group(1)) if match and "NVIDIA" in text else None


def _missing(modules: dict[str, str]) -> list[str]:
    return [package for module, package in modules.items() if importlib.util.find_spec(module) is None]


def _nvrtc_works() -> bool:
    probe = "from cupy.cuda import nvrtc; nvrtc.getVersion()"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def _install(packages: list[str]) -> int:
    if not packages:
        return 0
    print(f"primbench: installing {' '.join(packages)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *packages])
    if result.returncode:
        print(f"primbench: could not install {' '.join(packages)}; install them by hand (pip install ...)", file=sys.stderr)
    return result.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--gpu", action="store_true", help="for `make bench`: needs an NVIDIA GPU")
    mode.add_argument("--test", action="store_true", help="for `make test`: no GPU, but NVRTC to compile kernels")
    mode.add_argument("--report", action="store_true", help="for `make report`: no GPU")
    args = parser.parse_args()

    wanted = dict(BASE)
    if args.gpu:
        major = driver_cuda_major()
        if major is None:
            print(NO_GPU, file=sys.stderr)
            return 3
        wanted["cupy"] = f"cupy-cuda{major}x"
        return _install(_missing(wanted))
    if args.test:
        wanted["pytest"] = "pytest"
        wanted["cupy"] = f"cupy-cuda{CI_CUDA_MAJOR}x"
        status = _install(_missing(wanted))
        if status == 0 and not _nvrtc_works():
            status = _install([f"nvidia-cuda-nvrtc=={CI_CUDA_MAJOR}.*"])
        return status
    return _install(_missing(wanted))


if __name__ == "__main__":
    sys.exit(main())
