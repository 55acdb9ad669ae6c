"""Errors a user can fix: each becomes one line on stderr and a non-zero exit, never a traceback."""


class UserError(Exception):
    """Bad input or environment; the message is the whole line the user sees (what, where, how to fix)."""

    exit_code = 2


class NoGPUError(UserError):
    """No NVIDIA GPU (or no driver) on this machine."""

    exit_code = 3


class ConfigError(UserError):
    """A config (a YAML file, a run header's config, or command-line filters) that cannot be run as written."""
