"""What `register_variant` and `register_op` accept, checked when a variant or an op is declared
(a built-in one or a plugin's), so that a bad declaration is one line naming the plugin and its
line, not a case with block -1 or a name that breaks a path, a glob or a terminal later.

Names: 1 to 64 ASCII letters, digits, `_`, `-` and `.`, starting with a letter, a digit or `_`. A
name is part of a case key (`op/variant/...`), a glob's target, a file name in exports and the
site, and a CLI argument: no `/`, no glob character, no space or control character, no leading `-`
(an option) or `.` (`..`). ASCII only, so no Unicode look-alike (a Cyrillic `о`) of a built-in name
can be registered beside it. Two ASCII names can still look alike to a reader: those equal once
case is folded and `-`, `.` are read as `_` (`Vector-Load-Sum`, `vector_load_sum`). They are
allowed (they are distinct keys), with a one-line warning at registration. NFKC folding adds
nothing once names are ASCII, so it is not done.

Block sizes: the rule of a config's `block_sizes` and of `--blocks` (powers of two from 32 to 1024),
so that every block size a variant declares can be asked for, and no case has block 0 or -1.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
import re
import sys
from pathlib import Path

from primbench import cuda_source, pathnames
from primbench.runfile.fields import INT64_MAX, ORDER_HIGH, ORDER_LOW
from primbench.text_safety import printable

MAX_NAME = 64
NAME = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9_.-]{{0,{MAX_NAME - 1}}}")
NAME_RULE = f"1 to {MAX_NAME} ASCII letters, digits, _, - and ., starting with a letter, a digit or _"
MIN_BLOCK, MAX_BLOCK = 32, 1024  # the config's block sizes (config/loading.py reads these)


class DeclarationError(ValueError):
    """A variant or an op declared with a name, block size or source primbench cannot use. The plugin
    loader reports it as one line naming the plugin and the line of the register call."""


def check_name(what: str, name) -> str:
    """`name` if it is in the alphabet above; else a DeclarationError saying the rule."""
    if not isinstance(name, str):
        raise DeclarationError(f"{what} name must be text, not {type(name).__name__}")
    if not NAME.fullmatch(name):
        raise DeclarationError(f"{what} name {ascii(name)[:80]} is not {NAME_RULE}; rename it")
    return name


def folded(name: str) -> str:
    return name.casefold().replace("-", "_").replace(".", "_")


def warn_if_alike(what: str, name: str, existing, where: str = "") -> None:
    """One warning line on stderr when `name` looks like one of `existing` (see the module's note)."""
    other = next((e for e in sorted(existing) if e != name and folded(e) == folded(name)), None)
    if other is not None:
        print(printable(f"primbench: warning: {where}{what} {name} looks like {other}, which is declared already "
                        "(they differ only in upper/lower case or in -, _ and .); rename it unless you mean both"),
              file=sys.stderr)


def check_block_sizes(blocks) -> tuple[int, ...]:
    """The declared block sizes as a tuple of ints, each a block size a config can ask for."""
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, (tuple, list)):
        raise DeclarationError(f"block_sizes must be a tuple such as (128, 256), or () for a library that chooses; "
                               f"not {ascii(blocks)[:60]}")
    for block in blocks:
        if isinstance(block, bool) or not isinstance(block, numbers.Integral) \
                or not MIN_BLOCK <= block <= MAX_BLOCK or block & (block - 1):
            raise DeclarationError(f"block size {ascii(block)[:40]} is not a power of two from {MIN_BLOCK} to "
                                   f"{MAX_BLOCK}; a config and --blocks can ask only for those")
    if len(set(blocks)) != len(blocks):
        raise DeclarationError(f"block_sizes {ascii(tuple(blocks))[:80]} names a block size twice")
    return tuple(int(block) for block in blocks)


def resolve_source(source, plugin: Path | None, kernel_dir: Path) -> str | None:
    """Where a variant's CUDA file is, checked (a regular file, looked at without opening it).
    Absolute: as given. Relative, from a plugin: beside the plugin file, else primbench's kernels/
    (a plugin may reuse a built-in kernel), as an #include is looked up; from a built-in module:
    kernels/. A plugin's own file comes back absolute, a built-in one as the name it was given."""
    if source is None:
        return None
    if not isinstance(source, (str, os.PathLike)) or not os.fspath(source):
        raise DeclarationError(f"source must name the .cu file (a path), or be None for a library variant; "
                               f"not {ascii(source)[:60]}")
    source = os.fspath(source)
    beside = plugin.parent / source if plugin is not None and not Path(source).is_absolute() else None
    if beside is not None and pathnames.kind_of(beside) is not None:
        source = str(beside)
    elif beside is not None and pathnames.kind_of(kernel_dir / source) is None:
        raise DeclarationError(f"source {pathnames.shown(source)} is neither beside the plugin ({pathnames.shown(beside)}) "
                               "nor in primbench's kernels/; give a path relative to the plugin file, or an absolute one")
    why = cuda_source.problem(kernel_dir / source)
    if why is not None:
        raise DeclarationError(f"source {pathnames.shown(kernel_dir / source)}: {why}; give the .cu file itself")
    return source


def _check_numbers(variant) -> None:
    """The order and the parameter values within what a run file may hold (runfile/fields.py): else
    primbench would write a run it then refuses to read."""
    order = variant.order
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or not ORDER_LOW <= order <= ORDER_HIGH:
        raise DeclarationError(f"order {ascii(order)[:40]} is not an integer from -2^31 to 2^31 - 1 "
                               "(the variant's place in its op's progression)")
    for entry in variant.params:
        try:
            name, values = entry
            values = tuple(values)
        except (TypeError, ValueError):  # not ((name, values), ...): the config says so where it reads them
            continue
        for value in values:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not -INT64_MAX - 1 <= value <= INT64_MAX:
                raise DeclarationError(f"parameter {ascii(name)[:40]}: value {ascii(value)[:40]} is not an integer "
                                       "within int64")


def checked_variant(variant, plugin: Path | None, kernel_dir: Path):
    """`variant` with its names, block sizes and source checked (block sizes as a tuple, a plugin's
    relative source as the absolute path it names); a DeclarationError says what is wrong."""
    check_name("op", variant.op)
    check_name("variant", variant.name)
    _check_numbers(variant)
    blocks = check_block_sizes(variant.block_sizes)
    source = resolve_source(variant.source, plugin, kernel_dir)
    if blocks == variant.block_sizes and source == variant.source:
        return variant
    return dataclasses.replace(variant, block_sizes=blocks, source=source)


# The OpChecks fields that are functions primbench calls (None where it may be left out).
OP_FUNCTIONS = ("exact_input", "random_input", "reference", "check_exact", "check_random", "failure_reason",
                "working_bytes", "refuses")
OP_OPTIONAL_FUNCTIONS = ("report_sections", "report_tables")


def checked_op(checks):
    """`checks` (an OpChecks) with every field checked where it is declared, its sequences as
    tuples: a wrong one is a DeclarationError naming the field, not a traceback when the report, a
    config or a run reads it later."""
    where = f"op {checks.op}"
    names = {field: _names(where, field, getattr(checks, field), empty_ok=field == "input_params")
             for field in ("dtypes", "distributions", "input_params")}
    for field in OP_FUNCTIONS:
        if not callable(getattr(checks, field)):
            raise DeclarationError(f"{where}: {field} must be a function, not {_shown_value(getattr(checks, field))}")
    for field in OP_OPTIONAL_FUNCTIONS:
        value = getattr(checks, field)
        if value is not None and not callable(value):
            raise DeclarationError(f"{where}: {field} must be a function or None, not {_shown_value(value)}")
    if not isinstance(checks.story, bool):
        raise DeclarationError(f"{where}: story must be True or False, not {_shown_value(checks.story)}")
    if not isinstance(checks.size_unit, str) or not checks.size_unit.strip():
        raise DeclarationError(f"{where}: size_unit must be a word such as 'elements' or 'rows', "
                               f"not {_shown_value(checks.size_unit)}")
    if checks.baseline is not None and not isinstance(checks.baseline, str):
        raise DeclarationError(f"{where}: baseline must be a variant's name or None, not {_shown_value(checks.baseline)}")
    pair = checks.accuracy_pair
    if pair is not None:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(isinstance(name, str) for name in pair):
            raise DeclarationError(f"{where}: accuracy_pair must be two variant names (compensated, plain) or None, "
                                   f"not {_shown_value(pair)}")
        pair = tuple(pair)
    reasons = checks.step_reasons
    if reasons is not None and (not isinstance(reasons, dict)
                                or not all(isinstance(k, str) and isinstance(v, str) for k, v in reasons.items())):
        raise DeclarationError(f"{where}: step_reasons must be a dict of variant name -> one line, or None, "
                               f"not {_shown_value(reasons)}")
    return dataclasses.replace(checks, **names, accuracy_pair=pair)


def _names(where: str, field: str, value, *, empty_ok: bool) -> tuple[str, ...]:
    """A tuple of names (a dtype, a distribution, a parameter): each part of a case key, so each
    meets the name rule; a lone string is refused, as ('float32',) was likely meant."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise DeclarationError(f"{where}: {field} must be a tuple of names such as ('float32',), not {_shown_value(value)}")
    if not value and not empty_ok:
        raise DeclarationError(f"{where}: {field} is empty; name at least one (the first is a sweep's default)")
    for name in value:
        check_name(f"{where}: {field[:-1]}", name)
    if len(set(value)) != len(value):
        raise DeclarationError(f"{where}: {field} {ascii(tuple(value))[:80]} names one twice")
    return tuple(value)


def _shown_value(value) -> str:
    """A wrong value as an error line shows it: its type, and its text where that is short."""
    try:
        text = ascii(value)
    except Exception:  # noqa: BLE001 - a plugin's object whose repr raises
        text = ""
    return f"{type(value).__name__} {text}" if text and len(text) <= 60 else type(value).__name__
