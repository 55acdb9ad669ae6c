"""Reading a YAML config with the line of every key, so that each error can name file, line and key.

Standard YAML through PyYAML's SafeLoader; `read_yaml` returns the parsed mapping and its `Source`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from primbench.errors import ConfigError


class Source:
    """The text being validated and where each key sits in it, for error lines."""

    def __init__(self, label: str, lines: dict[tuple, int] | None = None, recorded_explicit: dict | None = None,
                 folder: Path | None = None):
        self.label = label
        self.lines = lines or {}
        self.folder = folder or Path.cwd()  # what relative paths in it (plugins) are relative to
        # A run header's sweeps list every variant by name, globs expanded: which of them the user
        # named (and so must fit the sweep) is recorded beside them, by sweep index.
        self.recorded_explicit = recorded_explicit

    def error(self, path: tuple, message: str) -> ConfigError:
        where = self.label
        probe = path
        while probe and probe not in self.lines:
            probe = probe[:-1]
        if probe in self.lines:
            where = f"{self.label}:{self.lines[probe]}"
        key = _path_text(path)[:120]
        if len(message) > MAX_MESSAGE:  # a 1 MB value is not echoed back whole
            message = message[:MAX_MESSAGE] + "..."
        return ConfigError(f"{where}: {key + ': ' if key else ''}{message}")


def _path_text(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


MAX_MESSAGE = 300  # characters of a message about the input (it may quote a value)
MAX_NODES = 100_000  # values after aliases are expanded: a config is a few hundred; an alias bomb is billions
MAX_DEPTH = 32  # nesting levels; a config has five
MERGE_TAG = "tag:yaml.org,2002:merge"


class _TooBig(Exception):
    """The YAML expands past what any config needs (an alias bomb, or nesting without end)."""


def _compose(node, path: tuple, lines: dict, constructor, budget: list | None = None):
    """The node as Python values, each key's line recorded; aliases expand within MAX_NODES values
    and MAX_DEPTH levels, and merge keys (`<<: *defaults`) merge, explicit keys winning."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig(f"expands to more than {MAX_NODES} values (an alias repeated inside aliases?)")
    if len(path) > MAX_DEPTH:
        raise _TooBig(f"nests deeper than {MAX_DEPTH} levels (an alias that refers to itself, or nesting no config needs)")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        return _compose_mapping(node, path, lines, constructor, budget)
    if isinstance(node, yaml.SequenceNode):
        return [_compose(item, path + (i,), lines, constructor, budget) for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)


def _compose_mapping(node, path: tuple, lines: dict, constructor, budget: list) -> dict:
    """A mapping: keys are names, each written once; a merge key's mappings come first (earlier ones
    winning), explicit keys over them, and every merged value counts against the budget."""
    merged, result = {}, {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE_TAG:
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in reversed(sources):  # the first mapping in a merge list wins
                if not isinstance(source, yaml.MappingNode):
                    raise _BadMerge(source.start_mark.line + 1)
                merged.update(_compose(source, path, lines, constructor, budget))
            continue
        if not isinstance(key_node, yaml.ScalarNode):  # built only as a name: a list or mapping key is refused unbuilt
            raise _BadKey(f"a {'list' if isinstance(key_node, yaml.SequenceNode) else 'mapping'}", key_node.start_mark.line + 1)
        key = constructor.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise _BadKey(repr(key)[:60], key_node.start_mark.line + 1)
        lines[path + (key,)] = key_node.start_mark.line + 1
        if key in result:
            raise _DuplicateKey(path + (key,))
        result[key] = _compose(value_node, path + (key,), lines, constructor, budget)
    return {**merged, **result}


class _BadMerge(Exception):
    def __init__(self, line):
        self.line = line


class _BadKey(Exception):
    def __init__(self, key, line):
        self.key, self.line = key, line


class _DuplicateKey(Exception):
    def __init__(self, path):
        self.path = path


def read_yaml(path: Path, label: str):
    """The YAML file parsed (keys must be names, each once), and its Source; ConfigError otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{label}: cannot read it ({exc})") from None
    lines: dict[tuple, int] = {}
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is None:
            raise ConfigError(f"{label}: the file is empty; start from configs/default.yaml")
        raw = _compose(node, (), lines, yaml.constructor.SafeConstructor())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        raise ConfigError(f"{where}: YAML syntax error: {exc.problem or exc.context}; fix the YAML at that line") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{label}: YAML error: {exc}") from None
    except _DuplicateKey as dup:
        raise Source(label, lines).error(dup.path, "appears twice; keep one") from None
    except _BadKey as bad:
        raise ConfigError(f"{label}:{bad.line}: key {bad.key} is not a name; keys are words like 'sizes'") from None
    except _BadMerge as bad:
        raise ConfigError(f"{label}:{bad.line}: a merge key (<<) must name a mapping or a list of mappings") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise ConfigError(f"{label}: a value no config needs ({str(exc)[:120]}); write the values out") from None
    except _TooBig as exc:
        raise ConfigError(f"{label}: the YAML {exc}; write the values out") from None
    except RecursionError:
        raise ConfigError(f"{label}: the YAML nests too deep (an alias that refers to itself?); write the values out") from None
    return raw, Source(label, lines, folder=path.parent)
