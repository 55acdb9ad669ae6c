"""Errors a user can fix, and the exit codes every command and worker ends with.

A UserError becomes one line on stderr and its exit code, never a traceback. The codes are stated
here once: the CLI, the GPU workers and the CI gate all return these.
"""

EXIT_OK = 0
EXIT_FAILED = 1  # a case failed verification, or `check` found a regression (or a flagged replica)
EXIT_BAD_INPUT = 2  # what the user gave cannot be used: one line says why
EXIT_NO_GPU = 3
EXIT_CONTEXT_LOST = 75  # EX_TEMPFAIL: a kernel broke this process's CUDA context; a fresh process can go on
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


class UserError(Exception):
    """Bad input or environment; the message is the whole line the user sees (what, where, how to fix)."""

    exit_code = EXIT_BAD_INPUT


class NoGPUError(UserError):
    """No NVIDIA GPU (or no driver) on this machine."""

    exit_code = EXIT_NO_GPU


class ConfigError(UserError):
    """A config (a YAML file, a run header's config, or command-line filters) that cannot be run as written."""
