"""NVIDIA's readers of NVBench JSON (pip package cuda-bench, its compare and plot extras:
nvbench-compare-robust, nvbench-json-summary, nvbench-walltime, nvbench-histogram), installed from
the package index into a venv under build/ (git-ignored) that later test runs reuse, so that
repeated `make test` runs pay the install (about 30 s) once.

The install can start in the background when a test module is collected (`start_install`), so it
overlaps the other tests. It runs as this file's own `main()` in a child process, under a lock:
pytest-xdist's workers each ask, one installs, the others find it done. Where it cannot be done
(no network, no venv module), `reader` returns None and `why_not` says why in one line.

Run `python tests/readers/install.py` to install (or check) by hand."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

# The version the exports were checked against (tests/readers/test_nvbench_readers.py).
READERS = "cuda-bench[compare,plot]==0.3.0"
BUILD = Path(__file__).resolve().parents[2] / "build"
VENV = BUILD / "readers-venv"
DONE = VENV / "installed.txt"  # what was installed with which Python, written last: a venv without it is unfinished
LOCK = BUILD / "readers-venv.lock"
LOG = BUILD / "readers-venv.log"
INSTALL_TIMEOUT_S = 300
_install: subprocess.Popen | None = None
_why_not = ""


def _installed_text() -> str:
    return f"{READERS} python{sys.version_info.major}.{sys.version_info.minor}"


def installed() -> bool:
    return DONE.is_file() and DONE.read_text().strip() == _installed_text()


def start_install() -> None:
    """Begin installing the readers in the background, unless they are installed or on their way."""
    global _install
    if installed() or _install is not None:
        return
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(LOG, "ab") as log:  # pip's output goes to a file: a pipe nobody reads yet could fill and stall it
        _install = subprocess.Popen([sys.executable, __file__], stdout=log, stderr=subprocess.STDOUT)


def reader(command: str) -> Path | None:
    """The path of the reader `command` in the readers' venv, installing them first where needed."""
    global _why_not
    start_install()
    if _install is not None and _install.poll() is None:
        try:
            _install.wait(timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _install.kill()
            _why_not = f"pip install {READERS} took over {INSTALL_TIMEOUT_S} s"
            return None
    path = VENV / "bin" / command
    if installed() and path.is_file():
        return path
    lines = LOG.read_text(errors="replace").strip().splitlines() if LOG.is_file() else []
    _why_not = f"pip install {READERS} failed ({(lines or ['no output'])[-1].strip()[:200]}; log: {LOG})"
    return None


def why_not() -> str:
    """Why `reader` found no reader (after it returned None)."""
    return _why_not or "unknown"


def main() -> int:
    """Install the readers into VENV (once: under LOCK, and only where DONE is missing)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return 0
        shutil.rmtree(VENV, ignore_errors=True)  # an unfinished venv from an interrupted install
        if subprocess.run([sys.executable, "-m", "venv", str(VENV)]).returncode:
            print(f"{sys.executable} -m venv {VENV} failed (is the venv module installed?)", flush=True)
            return 1
        # One retry and a short timeout: without a network the test skips in seconds, not minutes.
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--retries", "1", "--timeout", "20", READERS]
        result = subprocess.run(pip)
        if result.returncode == 0:
            DONE.write_text(_installed_text() + "\n")
        return result.returncode


if __name__ == "__main__":
    sys.exit(main())
