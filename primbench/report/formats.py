"""How the report writes numbers, sizes and table rows: one place, so that every table, caption and
chart rounds the same way. The Jinja filters of every page are these functions (render.py)."""

from __future__ import annotations

import json
import math
import re

from primbench.runfile.case_id import size_text
from primbench.runfile.frame import is_number

__all__ = ["as_records", "breakable", "format_block", "format_faster", "format_faster_cell", "format_gbps",
           "format_figure", "format_gb_per_j", "format_mj", "format_number", "format_pct", "format_ratio", "format_ratio3", "format_sci",
           "format_size", "format_speedup", "format_time_ratio", "format_time_ratio_cell", "format_times",
           "format_us", "format_value", "format_watts", "link_sources", "size_text", "slug"]


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
format_watts = _number_format(",.0f", doc="Watts as an integer.")


def _three_figures(doc: str):
    """A Jinja filter printing a number with 3 significant figures, never in exponent form for
    what energy gives (0.00173 GB/J at 4 KiB, 180 mJ for a slow sum): the counter's windows agree
    to about 1 %, so a fourth figure would be noise and a fixed decimal would print 0.00."""

    def format_number(value) -> str:
        return "" if _missing(value) else _rounded(float(value), ((".3g", 1), (".2f", 10), (".1f", 100), (",.0f", 1e15)))

    format_number.__doc__ = doc
    return format_number


format_mj = _three_figures("Millijoules per operation to 3 significant figures: '0.62', '15.6', '180'.")
format_gb_per_j = _three_figures("GB per joule to 3 significant figures: '0.00173', '8.60'.")
format_figure = _three_figures("Any other figure to 3 significant figures (an op's own section's 'number' column).")


# How fast one time is against another, one convention for every page: a speedup s
# (the other time / this time) of 1.1 or more reads "s× faster"; between 1 and 1.1, "N % faster"
# (the other takes N % longer); below 1, "N % slower" (this takes N % longer), or "t× slower" once
# this takes twice the time or more. Figures keep 2-3 significant digits and never print 0.00.
# A difference under 0.01 % (equal times, or float rounding of them) is no difference.
SAME_BELOW_PCT = 0.01
_NBSP = "\u00a0"


def _rounded(value: float, steps) -> str:
    """`value` in the first (format, limit) of `steps` whose printed figure stays under the limit:
    the figure as printed decides, so 1.996 is "2.0", never "2.00"."""
    for spec, limit in steps:
        text = f"{value:{spec}}"
        if float(text.replace(",", "")) < limit:
            return text
    return f"{value:.3g}"  # past every step: only absurd data gets here


def format_times(value) -> str:
    """A multiple as '1.38×', '13.9×', '322×' (2-3 significant digits), and one below 1 with three
    ('0.00314×'): a reduction (top-k's pruning), or a time against a floor (one read of the input).
    Blank when missing or negative."""
    if _missing(value) or float(value) < 0:  # no count or time is below zero
        return ""
    value = float(value) + 0.0  # -0.0 prints as 0
    small = f"{value:.3g}"
    if float(small) < 1:
        return small + "\u00d7"
    return _rounded(value, ((".2f", 2), (".1f", 100), (",.0f", 1e6))) + "\u00d7"


def _pct(pct: float) -> str:
    return _rounded(pct, (("#.2g", 1), (".1f", 10), (",.0f", 1e6)))  # "0.10 %", "4.0 %", "75 %"


def _speed_words(speedup) -> tuple[str, str] | None:
    """(figure, 'faster' or 'slower') for a speedup; ("", "") for no difference; None where there is
    no speedup to state (missing, infinite, zero or negative: no time is zero or below)."""
    if _missing(speedup) or float(speedup) <= 0:
        return None
    faster = float(speedup) >= 1
    longer = float(speedup) if faster else 1 / float(speedup)  # the longer time over the shorter
    if not math.isfinite(longer):
        return None
    direction = "faster" if faster else "slower"
    pct = (longer - 1) * 100
    if pct < SAME_BELOW_PCT:
        return "", ""
    text = _pct(pct)
    # A multiple from 10 % faster (1.1x) or 100 % slower (2x), as printed: 9.96 % is "1.10x faster".
    if float(text.replace(",", "")) >= (10 if faster else 100):
        return format_times(longer), direction
    return f"{text} %", direction


def format_faster(speedup) -> str:
    """A speedup (the other time / this time; above 1: this is faster) in words, ready for " than
    X": '13.9× faster', '4.0 % faster', '7.5 % slower', '4.0× slower', and 'neither faster nor
    slower' for equal times. Blank when there is no speedup to state."""
    words = _speed_words(speedup)
    if words is None:
        return ""
    figure, direction = words
    return f"{figure} {direction}" if figure else "neither faster nor slower"


def format_time_ratio(ratio) -> str:
    """A time over another (below 1: faster) in format_faster's words: 0.0722 -> '13.9× faster'."""
    return "" if _missing(ratio) or float(ratio) <= 0 else format_faster(1 / float(ratio))


def format_faster_cell(speedup) -> str:
    """format_faster for a table cell: 'same time' for equal times, and spaces that never break
    (a cell reads '7.5 % slower' on one line, never '7.5' over '% slower')."""
    words = _speed_words(speedup)
    if words is None:
        return ""
    figure, direction = words
    return f"{figure} {direction}".replace(" ", _NBSP) if figure else f"same{_NBSP}time"


def format_time_ratio_cell(ratio) -> str:
    """format_faster_cell of a time over another (a "÷ baseline" column): 0.0722 -> '13.9× faster'."""
    return "" if _missing(ratio) or float(ratio) <= 0 else format_faster_cell(1 / float(ratio))


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


_CITATION = re.compile(r"\bseed ?(000|002|004)\b|\bHarris\b")


def link_sources(text):
    """Text that cites a source ("seed 004 (its scan section)", "Harris kernel 3") with each
    citation linked to the report's key to sources (#source-seed004, #source-harris). The text is
    escaped first, so only the links are markup."""
    from markupsafe import Markup, escape

    if text is None:
        return ""

    def link(match) -> str:
        target = f"seed{match.group(1)}" if match.group(1) else "harris"
        return f'<a class="cite" href="#source-{target}">{match.group(0)}</a>'

    return Markup(_CITATION.sub(link, str(escape(str(text)))))


def breakable(text):
    """A case key that may wrap only between its parts ('reduce/<wbr>vector_load_sum/<wbr>...'), never
    inside a name or a size: escaped first, so only the break points are markup."""
    from markupsafe import Markup, escape

    return Markup(str(escape("" if text is None else str(text))).replace("/", "/<wbr>"))


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
