"""primbench.ab's arguments, checked as `primbench ab` checks its options, before any GPU work.

The rules and their words are the CLI's: run/ab.py's for rounds, threshold and the two names,
config/subset.py's for sizes, block sizes and dtypes (its parsers read the CLI's text syntax here
too), run/ab_revision.py's for base. Only the name in front differs: "sizes -1: ..." where the
CLI says "--sizes -1: ...". The exception is Python's convention, as primbench.measure keeps it: a
value of the wrong type (a missing B, an argument of the other form of ab included) is a
TypeError, a value of the right type that a rule refuses a ValueError; each line starts
"primbench.ab: " and names the argument. A Python user's spellings count as the CLI's text does:
an int or a list of them where --sizes takes "2^20,2^25", NumPy integers and arrays, NumPy dtypes.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy

from primbench.config import numbers as whole_numbers
from primbench.config import subset
from primbench.errors import UserError
from primbench.run import ab

WHERE = "primbench.ab: "
FOR_VARIANTS = ("sizes", "blocks", "dtypes", "base")  # what only ab of two variant names takes
FOR_CALLABLES = ("setup_a", "setup_b", "label")  # what only ab of two callables takes


@dataclass(frozen=True)
class CallablesRequest:
    """ab(fn_a, fn_b, ...) once every argument is checked."""

    fn_a: object
    fn_b: object
    rounds: int
    threshold: float
    setup_a: object = None
    setup_b: object = None
    label: str | None = None

    def run(self) -> ab.ABResult:
        return ab.ab_callables(self.fn_a, self.fn_b, rounds=self.rounds, threshold=self.threshold, setup_a=self.setup_a,
                               setup_b=self.setup_b, label=self.label)


@dataclass(frozen=True)
class VariantsRequest:
    """ab("op/a", "op/b", ...) once every argument is checked: the config of its cases, and A at
    `base` where one was given."""

    a: str
    b: str
    config: object
    variant_a: object
    rounds: int
    threshold: float

    def run(self) -> list[ab.ABResult]:
        return ab.run_ab(self.config, self.a, self.b, rounds=self.rounds, threshold=self.threshold, variant_a=self.variant_a)


def checked(a, b, **arguments) -> CallablesRequest | VariantsRequest:
    """The request primbench.ab(a, b, **arguments) makes, every argument checked; nothing here
    touches the GPU (the variants' registry, their sweep and git are read)."""
    if callable(a):
        return _callables(a, b, **arguments)
    if isinstance(a, str):
        return _variants(a, b, **arguments)
    raise TypeError(f"{WHERE}a must be a callable (fn_a) or a variant name 'op/name', not {_shown(a)}")


def _callables(fn_a, fn_b, *, rounds, threshold, **rest) -> CallablesRequest:
    if fn_b is None:
        raise TypeError(f"{WHERE}b is missing: give fn_b, the callable to time against fn_a (ab(fn_a, fn_b))")
    if isinstance(fn_b, str):
        raise TypeError(f"{WHERE}b {_shown(fn_b)} is a variant name but a is a callable: give two callables "
                        "(ab(fn_a, fn_b)) or two variant names")
    for name, fn in (("b (fn_b)", fn_b), ("setup_a", rest["setup_a"]), ("setup_b", rest["setup_b"])):
        if fn is not None and not callable(fn):
            raise TypeError(f"{WHERE}{name} must be a callable taking no arguments, not {_shown(fn)}")
    if rest["label"] is not None and not isinstance(rest["label"], str):
        raise TypeError(f"{WHERE}label must be text (a name for the result), not {_shown(rest['label'])}")
    _none_of(rest, FOR_VARIANTS, "two variant names, not to callables (a callable holds its own input)")
    rounds, threshold = _rounds(rounds), _threshold(threshold)
    return CallablesRequest(fn_a, fn_b, rounds, threshold, rest["setup_a"], rest["setup_b"], rest["label"])


def _variants(a: str, b, *, rounds, threshold, **rest) -> VariantsRequest:
    if callable(b):
        raise TypeError(f"{WHERE}b is a callable but a is a variant name ({_shown(a)}): give two variant names "
                        "or two callables")
    base = rest["base"]
    if b is None and base is None:
        raise TypeError(f"{WHERE}b is missing: give b (op/variant), or base='REV' to time a at that git revision "
                        "against a now")
    for name, value in (("b", b), ("base", base)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{WHERE}{name} must be text ({'op/variant' if name == 'b' else 'a git revision'}), "
                            f"not {_shown(value)}")
    _none_of(rest, FOR_CALLABLES, "two callables, not to variant names (a variant's plan prepares its own input)")
    b = b or a
    rounds, threshold = _rounds(rounds), _threshold(threshold)
    sizes, blocks = _size_items(rest["sizes"], "sizes"), _size_items(rest["blocks"], "blocks")
    dtypes = _dtype_names(rest["dtypes"])
    try:
        return _looked_up(a, b, base, sizes, blocks, dtypes, rounds, threshold)
    except UserError as error:  # the CLI's parsers and lookups, worded with the argument's name
        raise ValueError(f"{WHERE}{error}") from None


def _looked_up(a, b, base, sizes, blocks, dtypes, rounds, threshold) -> VariantsRequest:
    """The names, sizes and dtypes held to the CLI's rules, the cases they make, and A at `base`:
    every UserError here is the user's value, refused as the CLI refuses it."""
    if problem := ab.names_problem(a, b, sides=("a", "b")):
        raise UserError(problem)
    for side, name in (("a", a), ("b", b)):
        subset.variant_names(name, where=f"{side} {ascii(name[:120])}")  # a look-alike letter shows as \u...
    sizes, blocks = _parsed(sizes, "sizes", blocks=False), _parsed(blocks, "blocks", blocks=True)
    subset.check_dtypes(a.partition("/")[0], dtypes, "dtypes")
    config = subset.variant_config((a, b), sizes=sizes, blocks=blocks, dtypes=dtypes)
    ab.pairs_of(config, a, b, narrowed_by="other sizes or blocks")
    variant_a, _label = ab.side_a_at(base, a, b, option="base")
    return VariantsRequest(a, b, config, variant_a, rounds, threshold)


def _parsed(items, name: str, *, blocks: bool) -> tuple[int, ...] | None:
    """sizes or blocks (_size_items) read by the CLI's parser: text as --sizes reads it, items one by one."""
    if items is None:
        return None
    if isinstance(items, str):
        return subset.parse_sizes(items, name, blocks=blocks)
    return subset.checked_sizes(items, name, blocks=blocks)


def _none_of(arguments: dict, names: tuple[str, ...], applies_to: str) -> None:
    for name in names:
        if arguments[name] is not None:
            raise TypeError(f"{WHERE}{name} applies to {applies_to}")


def _rounds(rounds) -> int:
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral):
        raise TypeError(f"{WHERE}rounds must be a whole number, not {_shown(rounds)}")
    if problem := ab.rounds_problem(rounds):
        raise ValueError(f"{WHERE}rounds {_shown(rounds)}: {problem}")
    return int(rounds)


def _threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"{WHERE}threshold must be a number, a relative change (0.01 is 1 %), not {_shown(threshold)}")
    if problem := ab.threshold_problem(threshold):  # NaN, infinities and huge ints included
        raise ValueError(f"{WHERE}threshold {_shown(threshold)}: {problem}")
    return float(threshold)


def _size_items(value, name: str):
    """sizes or blocks as given: None, text in the CLI's syntax ("2^20,2^25"), or a list of items
    (ints, or text like "2^20") from one int or any sequence of them."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, numpy.ndarray) and value.ndim == 0:  # numpy.array(2**20): the number it holds
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)]
    items = _sequence(value, name, "whole numbers or text like '2^20'")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (numbers.Integral, str)):
            raise TypeError(f"{WHERE}{name} must hold whole numbers or text like '2^20', not {_shown(item)}")
    if not items:
        raise ValueError(f"{WHERE}{name} is empty: give at least one, or leave it out for the op's usual sweep")
    return [item if isinstance(item, str) else int(item) for item in items]


def _dtype_names(value) -> tuple[str, ...] | None:
    """dtypes as given: None, text ("float32" or "float32,int32", as --dtypes), a NumPy dtype or
    scalar type, or a sequence of those; as the names the ops declare."""
    if value is None:
        return None
    if isinstance(value, str):
        names = subset.parse_dtypes(value)
        if not names:
            raise ValueError(f"{WHERE}dtypes '': give a dtype, e.g. 'float32' or ['float32', 'int32']")
        return names
    if _numpy_dtype_name(value) is not None:
        return (_numpy_dtype_name(value),)
    names = []
    for item in _sequence(value, "dtypes", "dtype names like 'float32'"):
        name = item.strip() if isinstance(item, str) else _numpy_dtype_name(item)
        if name is None:
            raise TypeError(f"{WHERE}dtypes must hold dtype names like 'float32', not {_shown(item)}")
        names.append(name)
    if not names:
        raise ValueError(f"{WHERE}dtypes is empty: give at least one, or leave it out for the op's first")
    return tuple(names)


def _numpy_dtype_name(value) -> str | None:
    """numpy.float32 or numpy.dtype('float32') (CuPy's are NumPy's) as 'float32'; None for anything else."""
    if isinstance(value, numpy.dtype) or (isinstance(value, type) and issubclass(value, numpy.generic)):
        return numpy.dtype(value).name
    return None


def _sequence(value, name: str, holding: str) -> list:
    """The items of a list, tuple, range, NumPy array or other sequence; text, bytes and mappings
    are not read item by item."""
    if isinstance(value, (bytes, bytearray, Mapping)) or not hasattr(value, "__iter__") \
            or getattr(value, "ndim", 1) == 0:
        raise TypeError(f"{WHERE}{name} must be {holding} or a list of them, not {_shown(value)}")
    return list(value)


def _shown(value) -> str:
    """A value as the line quotes it: short text and numbers as written (an int of any length
    without str(), which refuses past 4,300 digits), anything else by its type."""
    if isinstance(value, str):
        return repr(value[:60]) + ("..." if len(value) > 60 else "")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return whole_numbers.shown(int(value))
    if isinstance(value, (bool, float)) or (isinstance(value, numbers.Real) and hasattr(value, "dtype")):
        return repr(value)
    return f"a {type(value).__name__}"
