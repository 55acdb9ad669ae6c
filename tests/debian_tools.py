"""A command-line tool the tests need from a Debian package (xmllint from libxml2-utils): found on
PATH, or installed with apt-get where the tests run as root with apt, as CI does; None otherwise,
and the test then skips saying which package to install."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess


@functools.lru_cache(maxsize=None)
def debian_tool(command: str, package: str) -> str | None:
    found = shutil.which(command)
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", package], env=env,
                       capture_output=True, timeout=180, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return shutil.which(command)
