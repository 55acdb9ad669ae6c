"""Command-line tools the tests need from Debian packages (xmllint from libxml2-utils, chromium):
found on PATH, or installed with apt-get where the tests run as root with apt AND the run asked for
it: under CI (CI=true, as GitHub Actions, GitLab and most CIs set, and .ci/run sets), or with
PRIMBENCH_INSTALL_TEST_TOOLS=1. `make test` on a user's machine changes nothing outside the
project, as the README promises: there the test skips in one line saying how to get the tool.

An install (chromium is ~100 MB) can start in the background when the test module is collected
(`start_install`), so it overlaps the other tests instead of adding to the suite's time. Installs
take a lock: pytest-xdist's workers each ask, apt runs one at a time."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "primbench-tests-apt.lock"
INSTALL_TIMEOUT_S = 300
_installs: dict[str, subprocess.Popen] = {}
_why_not: dict[str, str] = {}


ASK = "PRIMBENCH_INSTALL_TEST_TOOLS"
TRUE = {"1", "true", "yes"}


def asked_to_install() -> bool:
    """Whether this run may install system packages: a CI job, or a user who asked."""
    return os.environ.get("CI", "").strip().lower() in TRUE or os.environ.get(ASK, "").strip().lower() in TRUE


def can_install() -> str | None:
    """None where apt-get can and may install here, else why not."""
    if not asked_to_install():
        return f"the tests install system packages only under CI=true or {ASK}=1 (as root, with apt)"
    if os.geteuid() != 0:
        return "not root"
    if not shutil.which("apt-get"):
        return "no apt-get"
    if not shutil.which("flock"):
        return "no flock (util-linux)"
    return None


def start_install(command: str, package: str) -> None:
    """Begin installing `package` in the background, where `command` is missing and apt can."""
    if shutil.which(command) or can_install() or package in _installs:
        return
    # The package lists of a fresh container may be empty: update them only if the install fails.
    install = f"apt-get install -y --no-install-recommends {package}"
    script = f"{install} || (apt-get update && {install})"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _installs[package] = subprocess.Popen(["flock", str(LOCK), "sh", "-c", script], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True)


@functools.lru_cache(maxsize=None)
def debian_tool(command: str, package: str) -> str | None:
    """The path of `command`, installing `package` first where it is missing and apt can."""
    found = shutil.which(command)
    if found:
        return found
    reason = can_install()
    if reason:
        _why_not[package] = reason
        return None
    start_install(command, package)
    process = _installs[package]
    try:
        _, stderr = process.communicate(timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _why_not[package] = f"apt-get install {package} took over {INSTALL_TIMEOUT_S} s"
        return None
    found = shutil.which(command)
    if found is None:
        _why_not[package] = f"apt-get install {package} failed: {(stderr or '').strip().splitlines()[-1:]}"
    return found


def why_not(package: str) -> str:
    """Why `debian_tool` found no tool of `package` (after it returned None)."""
    return _why_not.get(package, "unknown")
