"""A JSON document checked against a spec of its fields: their types, whether they must be there,
and what their values must meet (the fields of an object, the items of an array, the values of a
map, a rule). A spec is compiled once into closures, so a document costs one Python step per field
present; the first field that breaks its spec is named as a dotted path
('determinism.across_grids[0].grids'). Fields the spec does not name are let through.

A rule is a plain function (value, path) -> what is wrong, or None; the helpers below also say
what they let through as attributes a reader other than the walk can use (runfile/schema.py writes
them into the JSON Schema): `bounds` (a number's), `item_bounds` (each number of an array's),
`choices` (a text's) and `texts` (an array of that many texts). A rule without them is stated by
its function alone. The walk never reads them: the function decides, and words the message.

runfile/records.py and runfile/fields.py hold the run file's specs; runfile/counters.py the counters file's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_PYTHON = {"string": (str,), "integer": (int,), "number": (int, float), "object": (dict,), "array": (list,),
           "null": (type(None),), "boolean": (bool,)}  # exact types: a bool is neither integer nor number
_FLOAT_MAX = 1.7976931348623157e308  # an integer past it has no float, and every reader converts to one


class Field:
    """One JSON field: the types it may hold, whether it must be present, and what its value must
    meet: the fields of an object, the items of an array, the values of a map, or a rule."""

    def __init__(self, kinds, *, required=False, fields=None, items=None, values=None, rule=None, holds=None):
        self.kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        self.required, self.fields, self.items, self.values, self.rule = required, fields, items, values, rule
        self.holds = holds  # for an array: its items in words ("objects"), named when one is of another type


def F(kinds, **options) -> Field:
    return Field(kinds, **options)


# -- rules: (value, path) -> what is wrong, or None --------------------------------------------------
@dataclass(frozen=True)
class Bounds:
    """The numbers a rule lets through: low to high, low itself excluded where `low_open`, and 0
    besides where `or_zero`."""

    low: float
    high: float
    low_open: bool = False
    or_zero: bool = False


def bounded(rule, low, high, *, low_open: bool = False, or_zero: bool = False):
    """`rule` (a function of its own wording) stating the numbers it lets through as `rule.bounds`."""
    rule.bounds = Bounds(low, high, low_open, or_zero)
    return rule


def shown(value) -> str:
    return repr(value)[:40]


def between(low, high, words):
    def rule(value, path):
        if not low <= value <= high:  # False for NaN, and decided exactly for integers of any size
            return f"'{path}' must be {words}, not {shown(value)}"
        return None
    return bounded(rule, low, high)


def above_zero_to(ceiling, words):
    def rule(value, path):
        return None if 0 < value <= ceiling else f"'{path}' must be {words}, not {shown(value)}"
    return bounded(rule, 0, ceiling, low_open=True)


def zero_or_between(floor, ceiling, unit):
    def rule(value, path):
        if value == 0 or floor <= value <= ceiling:
            return None
        return f"'{path}' must be 0 (unknown) or {floor:g} to {ceiling:g} {unit}, not {shown(value)}"
    return bounded(rule, floor, ceiling, or_zero=True)


def one_of(choices):
    def rule(value, path):
        return None if value in choices else f"'{path}' must be one of {', '.join(choices)}, not {value[:40]!r}"
    rule.choices = tuple(choices)
    return rule


def two_texts(words):
    def rule(value, path):
        return None if len(value) == 2 and all(type(t) is str for t in value) else f"'{path}' must be two texts ({words})"
    rule.texts = 2
    return rule


def numbers_from(floor, ceiling, unit):
    """An array's rule: every item a number from floor to ceiling (`numbers_between`)."""
    def rule(values, path):
        return numbers_between(values, path, floor, ceiling, unit)
    rule.item_bounds = Bounds(floor, ceiling)
    return rule


def numbers_between(values, path, floor, ceiling, unit) -> str | None:
    """Every item a number from floor to ceiling. Decided in C loops (a run holds about 400
    samples per case; one Python call per sample made loading the reference run take a second);
    only a list that fails is looked at one by one, to name its first bad item."""
    if not values:
        return None
    if set(map(type, values)) <= {float, int}:
        try:
            total = sum(values)  # NaN anywhere makes it NaN, which equals nothing
        except OverflowError:  # an int past any float (2**1024) beside a float: the walk below names it
            total = math.nan
        # values of at least floor (> 0) are each at most their total: max() only when that says nothing
        if total == total and min(values) >= floor and (total <= ceiling or max(values) <= ceiling):
            return None
    for index, value in enumerate(values):
        if type(value) not in (int, float) or not floor <= value <= ceiling:
            if type(value) in (int, float) and value < floor:
                why = f"below the {floor:g} {unit} floor"
            elif type(value) in (int, float) and value > ceiling:
                why = f"above the {ceiling:g} {unit} ceiling"
            else:
                why = f"not a finite number of {unit}"
            return f"'{path}' holds {shown(value)} at [{index}], {why}; every value must be {floor:g} to {ceiling:g} {unit}"
    return None


# -- the walk ---------------------------------------------------------------------------------------
def compiled(fields: dict[str, Field], prefix: str = "") -> tuple:
    """A spec ({name: Field}) as the walk takes it: ({name: how to check it}, the required fields'
    (name, path)); `prefix` starts each field's dotted path."""
    by_name = {name: (_types(f), " or ".join(f.kinds), _check(f, prefix + name), prefix + name, "number" in f.kinds)
               for name, f in fields.items()}
    return by_name, tuple((name, prefix + name) for name, f in fields.items() if f.required)


def _types(field: Field) -> frozenset:
    return frozenset(t for kind in field.kinds for t in _PYTHON[kind])


def _check(field: Field, path: str):
    """The check of a value already of one of the field's types: (value) -> problem or None."""
    steps = []  # a number's finiteness is checked in the walk itself (object_problem): most fields are numbers
    if field.rule is not None:
        rule = field.rule
        steps.append(lambda value: rule(value, path))
    if field.fields is not None:
        inner = compiled(field.fields, path + ".")
        steps.append(lambda value: object_problem(value, inner) if type(value) is dict else None)
    if field.items is not None:
        item = field.items
        item_types, item_check = _types(item), _element_check(item, path + "[]")
        holds = field.holds or " or ".join(item.kinds)
        steps.append(lambda value: _items_problem(value, item_types, item_check, holds, path) if type(value) is list else None)
    if field.values is not None:
        value_field = field.values
        value_types, value_check = _types(value_field), _element_check(value_field, path + ".*")
        words = " or ".join(value_field.kinds)
        steps.append(lambda value: _map_problem(value, value_types, value_check, words, path) if type(value) is dict else None)
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    return lambda value: next((problem for step in steps if (problem := step(value))), None)


def _element_check(field: Field, path: str):
    """The check of an array's item or a map's value: `_check`'s, after finiteness for a number."""
    check = _check(field, path)
    if "number" not in field.kinds:
        return check

    def finite_then(value):
        if not -_FLOAT_MAX <= value <= _FLOAT_MAX:
            return f"'{path}' is {shown(value)}; it must be a finite number"
        return None if check is None else check(value)
    return finite_then


def object_problem(obj: dict, spec: tuple) -> str | None:
    """The first field of `obj` that breaks its spec (from `compiled`), or None. The walk goes over
    the fields present, in their order, so a field the spec names but the object lacks costs nothing."""
    by_name, required = spec
    for name, path in required:
        if name not in obj:
            return f"lacks '{path}'"
    for name, value in obj.items():
        entry = by_name.get(name)
        if entry is None:  # a field no reader uses (a later primbench's, say): let through
            continue
        types, words, check, path, number = entry
        if type(value) not in types:
            return f"'{path}' must be {words}, not {type(value).__name__}"
        if number and type(value) is not type(None) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:  # NaN, inf, 1e400
            return f"'{path}' is {shown(value)}; it must be a finite number"
        if check is not None and value is not None:
            problem = check(value)
            if problem:
                return problem
    return None


def _items_problem(values: list, types, check, holds: str, path: str) -> str | None:
    for index, value in enumerate(values):
        if type(value) not in types:
            return f"'{path}' must hold {holds} ([{index}] is {type(value).__name__})"
        if check is not None and value is not None:
            problem = check(value)
            if problem:
                return problem.replace(f"'{path}[]", f"'{path}[{index}]", 1)
    return None


def _map_problem(mapping: dict, types, check, words: str, path: str) -> str | None:
    for key, value in mapping.items():
        where = f"{path}.{str(key)[:80]}"
        if type(value) not in types:
            return f"'{where}' must be {words}, not {type(value).__name__}"
        if check is not None and value is not None:
            problem = check(value)
            if problem:
                return problem.replace(f"'{path}.*", f"'{where}", 1)
    return None
