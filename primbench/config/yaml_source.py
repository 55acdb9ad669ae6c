"""Reading a YAML config with the line of every key, so that each error can name file, line and key.

Standard YAML through PyYAML's SafeLoader; `read_yaml` returns the parsed mapping and its `Source`.
Only plain YAML is read: a tag that names a Python type (`!!python/tuple`) is refused on a list or
mapping as on a value, and an integer of more than numbers.MAX_DIGITS digits before int() reads it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from primbench.config import numbers
from primbench.errors import ConfigError
from primbench.text_safety import printable


class Source:
    """The text being validated and where each key sits in it, for error lines."""

    def __init__(self, label: str, lines: dict[tuple, int] | None = None, recorded_explicit: dict | None = None,
                 folder: Path | None = None):
        self.label = label
        self.lines = lines or {}
        self._folder = folder
        # A run header's sweeps list every variant by name, globs expanded: which of them the user
        # named (and so must fit the sweep) is recorded beside them, by sweep index.
        self.recorded_explicit = recorded_explicit

    @property
    def folder(self) -> Path:
        """What relative paths in it (plugins) are relative to: its file's folder, else the working
        folder, asked only then (an option's text needs none, and the working folder may be gone)."""
        return self._folder or Path.cwd()

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
        # Keys and values are the file's text: shown printable, so that no escape sequence reaches a terminal.
        return ConfigError(printable(f"{where}: {key + ': ' if key else ''}{message}"))


def _path_text(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


MAX_MESSAGE = 300  # characters of a message about the input (it may quote a value)
MAX_NODES = 100_000  # values after aliases are expanded: a config is a few hundred; an alias bomb is billions
MAX_DEPTH = 32  # nesting levels; a config has five
MERGE_TAG = "tag:yaml.org,2002:merge"
STANDARD_TAG = "tag:yaml.org,2002:"
COLLECTION_TAGS = {yaml.MappingNode: STANDARD_TAG + "map", yaml.SequenceNode: STANDARD_TAG + "seq"}


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor, but an integer's digits are counted before int() reads them."""

    def construct_yaml_int(self, node):
        digits = self.construct_scalar(node).lstrip("+-").replace("_", "")
        if len(digits) > numbers.MAX_DIGITS:
            raise _LongNumber(len(digits), node.start_mark.line + 1)
        return super().construct_yaml_int(node)


_Constructor.add_constructor(STANDARD_TAG + "int", _Constructor.construct_yaml_int)


class _TooBig(Exception):
    """The YAML expands past what any config needs (an alias bomb, or nesting without end)."""


class _Walk:
    """What composing one document has used: values left in the budget, and the lists and
    mappings being composed (one met again inside itself is an alias that refers to itself)."""

    def __init__(self):
        self.left = MAX_NODES
        self.open: set[int] = set()


def _compose(node, path: tuple, lines: dict, constructor, walk: _Walk | None = None):
    """The node as Python values, each key's line recorded; aliases expand within MAX_NODES values
    and MAX_DEPTH levels, and merge keys (`<<: *defaults`) merge, explicit keys winning."""
    walk = _Walk() if walk is None else walk
    walk.left -= 1
    if walk.left < 0:
        raise _TooBig(f"expands to more than {MAX_NODES} values (an alias repeated inside aliases?); write the values out")
    if id(node) in walk.open:
        raise _TooBig("nests without end: an alias refers to itself (a list or mapping holds its own anchor); "
                      "write the values out")
    if len(path) > MAX_DEPTH:
        raise _TooBig(f"nests deeper than {MAX_DEPTH} levels, and a config needs a few; flatten it")
    lines.setdefault(path, node.start_mark.line + 1)
    _refuse_an_unknown_tag(node, constructor)
    if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        return constructor.construct_object(node, deep=True)
    walk.open.add(id(node))
    try:
        if isinstance(node, yaml.MappingNode):
            return _compose_mapping(node, path, lines, constructor, walk)
        return [_compose(item, path + (i,), lines, constructor, walk) for i, item in enumerate(node.value)]
    finally:
        walk.open.discard(id(node))


def _refuse_an_unknown_tag(node, constructor) -> None:
    """Lists and mappings are composed here, not by the constructor, so their tags are checked
    here: only the standard ones. A value's tag must be one the safe constructor knows."""
    known = COLLECTION_TAGS.get(type(node))
    if known is not None and node.tag != known or known is None and node.tag not in constructor.yaml_constructors:
        raise _BadTag(node.tag, node.start_mark.line + 1)


def _compose_mapping(node, path: tuple, lines: dict, constructor, walk: _Walk) -> dict:
    """A mapping: keys are names, each written once; a merge key's mappings come first (earlier ones
    winning), explicit keys over them, and every merged value counts against the budget."""
    merged, result = {}, {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE_TAG:
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in reversed(sources):  # the first mapping in a merge list wins
                if not isinstance(source, yaml.MappingNode):
                    raise _BadMerge(source.start_mark.line + 1)
                merged.update(_compose(source, path, lines, constructor, walk))
            continue
        if not isinstance(key_node, yaml.ScalarNode):  # built only as a name: a list or mapping key is refused unbuilt
            raise _BadKey(f"a {'list' if isinstance(key_node, yaml.SequenceNode) else 'mapping'}", key_node.start_mark.line + 1)
        key = constructor.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise _BadKey(repr(key)[:60], key_node.start_mark.line + 1)
        lines[path + (key,)] = key_node.start_mark.line + 1
        if key in result:
            raise _DuplicateKey(path + (key,))
        result[key] = _compose(value_node, path + (key,), lines, constructor, walk)
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


class _BadTag(Exception):
    def __init__(self, tag, line):
        self.tag = "!!" + tag[len(STANDARD_TAG):] if tag.startswith(STANDARD_TAG) else tag
        self.line = line


class _LongNumber(Exception):
    def __init__(self, digits, line):
        self.digits, self.line = digits, line


def _one_line(text) -> str:
    return " ".join(str(text).split())[:200]


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
        raw = _compose(node, (), lines, _Constructor())
    except yaml.reader.ReaderError as exc:  # PyYAML's own words take three lines
        line = text.count("\n", 0, exc.position) + 1
        character = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise ConfigError(printable(f"{label}:{line}: the character {character!r} is not allowed in YAML (a control "
                                    "character); remove it")) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        raise ConfigError(printable(f"{where}: YAML syntax error: {_one_line(exc.problem or exc.context)}; "
                                    "fix the YAML at that line")) from None
    except yaml.YAMLError as exc:
        raise ConfigError(printable(f"{label}: YAML error: {_one_line(exc)}")) from None
    except _DuplicateKey as dup:
        raise Source(label, lines).error(dup.path, "appears twice; keep one") from None
    except _BadKey as bad:
        raise ConfigError(f"{label}:{bad.line}: key {bad.key} is not a name; keys are words like 'sizes'") from None
    except _BadMerge as bad:
        raise ConfigError(f"{label}:{bad.line}: a merge key (<<) must name a mapping or a list of mappings") from None
    except _BadTag as bad:
        raise ConfigError(printable(f"{label}:{bad.line}: the tag {bad.tag[:60]} is not plain YAML; a config holds "
                                    "only lists, mappings, strings and numbers: remove the tag")) from None
    except _LongNumber as long:
        raise ConfigError(f"{label}:{long.line}: a number of {long.digits} digits is a value no config needs "
                          f"(at most {numbers.MAX_DIGITS} digits); write a smaller one") from None
    except ValueError as exc:  # a value PyYAML cannot build, e.g. the date 2024-13-45
        raise ConfigError(printable(f"{label}: a value no config needs ({str(exc)[:120]}); write the values out")) from None
    except _TooBig as exc:
        raise ConfigError(f"{label}: the YAML {exc}") from None
    except RecursionError:
        raise ConfigError(f"{label}: the YAML nests too deep (brackets or indentation hundreds of levels in); "
                          "a config needs a few levels") from None
    return raw, Source(label, lines, folder=path.parent)
