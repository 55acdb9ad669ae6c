"""An op's own sections of its report page, typed: a heading, a caption, columns that say what
their values are, rows, and optional bars. `OpChecks.report_sections(view)` returns them and the
report draws every one on the op's page, a plugin op's too (report/op_sections.py formats each
column by its kind; report_templates/_op.html.j2 loops over the sections).

Plain data, no markup: the report escapes every string, and a source a caption names ("seed 004",
"Harris") links to the page's key of sources.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

# What a column's values are, and so how the report shows them.
KINDS = {
    "text": "words, as given",
    "code": "a name (a variant, an input), in code type",
    "count": "an integer, as it is",
    "number": "any other figure, to 3 significant figures",
    "size": "a size n: 2^k, or its digits",
    "block": "a block size ('library' where None: the library chooses)",
    "us": "a time in µs",
    "gbps": "a bandwidth in GB/s",
    "pct": "a percentage (12.5 for 12.5 %)",
    "times": "a multiple, '152×' (a reduction, or a time over a floor)",
    "faster": "a speedup, the old time over the new: '6.9× faster'",
    "time_ratio": "a time over a baseline's: 0.5 reads '2× faster'",
}


@dataclass(frozen=True)
class Column:
    """One column: the rows' field it shows, its heading, and what its values are (KINDS)."""

    key: str
    heading: str
    kind: str = "text"
    title: str = ""  # the heading's hover text, where the heading alone is terse

    def __post_init__(self):
        _text_fields(self, f"column {self.key!r}", "key", "heading", "title")
        if self.kind not in KINDS:
            raise ValueError(f"column {self.key!r}: kind {self.kind!r} is none of {', '.join(KINDS)}")


@dataclass(frozen=True)
class Bar:
    """One mark of a section's chart: a median time, the series it is coloured by, and the case
    it links to (the `anchor` column of the view's cases)."""

    label: str
    time_us: float | None
    series: str | None = None
    anchor: str | None = None

    def __post_init__(self):
        _text_fields(self, f"bar {self.label!r}", "label")
        for name in ("series", "anchor"):
            if getattr(self, name) is not None:
                _text_fields(self, f"bar {self.label!r}", name)
        time = self.time_us  # None: a case without a time, drawn without a mark
        if time is not None and not (is_figure(time) and math.isfinite(time) and time > 0):  # 0 has no length to draw
            raise ValueError(f"bar {self.label!r}: time_us {time!r} is not a time (a finite number of µs above 0, or None)")


@dataclass(frozen=True)
class Section:
    """One section of an op's page. `name`: short, unique within the op (the section's HTML id is
    '<name>-<op>', its table's class the name); `title` follows '<op>: ' in the heading. With
    bars, the chart comes first and the table folds under it."""

    name: str
    title: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[dict, ...]  # one dict per row, keyed by the columns' keys (a missing key shows blank)
    bars: tuple[Bar, ...] = ()
    bars_title: str = ""  # the chart's title
    bars_caption: str = ""  # what a mark is, under the chart

    def __post_init__(self):
        # A plugin's author builds these: a wrong field is refused here, in one line naming it, so that
        # the op's page can say what is wrong (report/op_sections.py) rather than draw it half-right.
        _text_fields(self, "a section", "name")
        where = f"section {self.name!r}"
        _text_fields(self, where, "title", "caption", "bars_title", "bars_caption")
        if not self.name.strip():
            raise ValueError("a section's name is empty; give it a short one of its own ('per-size')")
        for field, kind in (("columns", Column), ("rows", Mapping), ("bars", Bar)):
            items, wanted = getattr(self, field), "dict" if kind is Mapping else kind.__name__
            if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
                raise TypeError(f"{where}: {field} is a {type(items).__name__}, not a list (of {wanted}s)")
            items = tuple(items)
            wrong = next((i for i, item in enumerate(items) if not isinstance(item, kind)), None)
            if wrong is not None:
                raise TypeError(f"{where}: {field}[{wrong}] is a {type(items[wrong]).__name__}, not a {wanted}")
            object.__setattr__(self, field, items)
        if not self.columns:
            raise ValueError(f"{where}: no columns; a section's table needs at least one")
        keys = [column.key for column in self.columns]
        twice = next((key for key in keys if keys.count(key) > 1), None)
        if twice is not None:
            raise ValueError(f"{where}: two columns show the key {twice!r}")


def is_figure(value) -> bool:
    """A number a numeric column or a bar can show: an int or float (numpy's too), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _text_fields(record, where: str, *names: str) -> None:
    for name in names:
        value = getattr(record, name)
        if not isinstance(value, str):
            raise TypeError(f"{where}: {name} is {value!r} ({type(value).__name__}), not text")


def from_table(name: str, table) -> Section:
    """A section of a table in the older form (an OpChecks' report_tables: {name: DataFrame}): its
    columns as they are, integers as counts, other numbers to 3 figures."""
    import pandas as pd

    def kind(column) -> str:
        if pd.api.types.is_bool_dtype(table[column]) or not pd.api.types.is_numeric_dtype(table[column]):
            return "text"
        return "count" if pd.api.types.is_integer_dtype(table[column]) else "number"

    columns = tuple(Column(str(c), str(c), kind(c)) for c in table.columns)
    if not table.columns.is_unique:  # to_dict would keep one of each, with a warning
        twice = table.columns[table.columns.duplicated()][0]
        raise ValueError(f"table {name!r}: two columns are named {twice!r}")
    rows = [{str(k): None if pd.api.types.is_scalar(v) and pd.isna(v) else v for k, v in row.items()}  # an array is a value
            for row in table.to_dict("records")]
    return Section(name=name, title=name, caption="", columns=columns, rows=rows)
