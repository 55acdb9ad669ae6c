"""How the report writes numbers, sizes and table rows: one place, so that every table, caption and
chart rounds the same way. The Jinja filters of every page are these functions (render.py)."""

from __future__ import annotations

import json
import math

from primbench.report import selection
from primbench.runfile.case_id import size_text
from primbench.runfile.frame import is_number

__all__ = ["annotated_frame", "as_records", "format_block", "format_gbps", "format_number", "format_pct", "format_ratio",
           "format_ratio3", "format_sci", "format_size", "format_speedup", "format_us", "format_value", "size_text", "slug"]


def _missing(value) -> bool:
    return not is_number(value)


def _number_format(spec: str, suffix: str = "", doc: str = ""):
    """A Jinja filter printing a number with `spec` (and `suffix`); blank when missing."""

    def format_number(value) -> str:
        return "" if _missing(value) else f"{float(value):{spec}}{suffix}"

    format_number.__doc__ = doc
    return format_number


format_us = _number_format(",.1f", doc="Microseconds with one decimal.")
format_gbps = _number_format(",.0f", doc="GB/s as an integer.")
format_pct = _number_format(".1f", doc="A percentage with one decimal.")
format_speedup = _number_format(".2f", "\u00d7", doc="A speedup as '2.34x'.")
format_ratio = _number_format(".2f", doc="A plain ratio with two decimals.")
format_ratio3 = _number_format(".3g", doc="A ratio to three significant digits: top-k's 0.0031 of a sort is not 0.00.")
format_sci = _number_format(".2e", doc="A small quantity in scientific notation.")
format_number = _number_format(".6g", doc="A number for a data-value attribute (sorting), blank when missing.")


def format_size(n):
    """n as 2<sup>k</sup> when it is a power of two, else with thousands separators."""
    from markupsafe import Markup

    if _missing(n):
        return ""
    n = int(n)
    if n > 0 and n & (n - 1) == 0:
        return Markup(f"2<sup>{n.bit_length() - 1}</sup>")  # only an int goes into the markup
    return f"{n:,}"


def format_block(block) -> str:
    """A block size, or 'library' where the library chooses."""
    return "library" if _missing(block) else str(int(block))


def format_value(value) -> str:
    """Any header value as text: nested data as JSON, booleans as yes/no, null as a dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def slug(text) -> str:
    """A string safe inside an HTML id (letters, digits, '-')."""
    return "".join(c if c.isalnum() else "-" for c in str(text)).strip("-") or "x"


def as_records(frame) -> list[dict]:
    """DataFrame rows as dicts with every missing value (NaN, NA, NaT) turned into None."""
    import pandas as pd

    if frame is None or len(frame) == 0:
        return []
    records = []
    for record in frame.to_dict("records"):
        clean = {}
        for key, value in record.items():
            if type(value) in (str, int, bool):  # most values: never missing, no numpy scalar to unwrap
                pass
            elif type(value) is float:
                value = None if math.isnan(value) else value
            elif not isinstance(value, (list, tuple, dict)) and pd.isna(value):
                value = None
            elif hasattr(value, "item"):  # numpy scalars
                value = value.item()
            clean[key] = value
        records.append(clean)
    return records


def annotated_frame(run):
    """The run's case frame with each variant's declared facts (series, order, notes) beside it."""
    return selection.annotate(run.frame(), run.header.variants)
