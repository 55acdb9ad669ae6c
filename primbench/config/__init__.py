"""Stage 1, the config: YAML -> a validated, frozen `Config` -> the `CaseId`s it expands to.

loading reads and validates a file, sweep holds the values, subset narrows them from the command
line, values and yaml_source name every bad key by file and line, compare_block reads `compare:`,
numbers checks whole numbers written as text before int() reads them.
"""

# The names `from primbench.config import ...` gave before config/ was a package, looked up on
# first use so that importing a module of this package loads nothing else.
_MOVED = {"load_config": "primbench.config.loading", "config_from_dict": "primbench.config.loading",
          "config_from_header": "primbench.config.loading", "parse_size": "primbench.config.loading",
          "Config": "primbench.config.sweep", "Sweep": "primbench.config.sweep",
          "TimingPolicy": "primbench.measuring.policy", "ConfigError": "primbench.errors"}


def __getattr__(name):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
