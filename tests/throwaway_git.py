"""Git in a throwaway repository of a test's own: an identity, and HOME and PATH of the test's, so
that no user's git configuration (signing, hooks, templates) reaches the commits a test makes."""

from __future__ import annotations

import shutil
import subprocess


def git(repo, *args) -> str:
    """`git -C repo ARGS...`, checked; its standard output, stripped."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run([shutil.which("git") or "git", "-C", str(repo), *map(str, args)], check=True, env=env,
                          capture_output=True, text=True).stdout.strip()
