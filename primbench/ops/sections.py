"""An op's own sections of its report page, typed: a heading, a caption, columns that say what
their values are, rows, and optional bars. `OpChecks.report_sections(view)` returns them and the
report draws every one on the op's page, a plugin op's too (report/op_sections.py formats each
column by its kind; report_templates/_op.html.j2 loops over the sections).

Plain data, no markup: the report escapes every string, and a source a caption names ("seed 004",
"Harris") links to the page's key of sources.
"""

from __future__ import annotations

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
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "bars", tuple(self.bars))


def from_table(name: str, table) -> Section:
    """A section of a table in the older form (an OpChecks' report_tables: {name: DataFrame}): its
    columns as they are, integers as counts, other numbers to 3 figures."""
    import pandas as pd

    def kind(column) -> str:
        if pd.api.types.is_bool_dtype(table[column]) or not pd.api.types.is_numeric_dtype(table[column]):
            return "text"
        return "count" if pd.api.types.is_integer_dtype(table[column]) else "number"

    columns = tuple(Column(str(c), str(c), kind(c)) for c in table.columns)
    rows = [{str(k): (None if pd.isna(v) else v) if not isinstance(v, (list, dict, tuple)) else v for k, v in row.items()}
            for row in table.to_dict("records")]
    return Section(name=name, title=name, caption="", columns=columns, rows=rows)
