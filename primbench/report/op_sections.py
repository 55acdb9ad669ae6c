"""An op's own sections (ops/sections.py, from its OpChecks.report_sections) as its page shows
them: each cell formatted by its column's kind, the bars drawn as a chart. A plugin's sections are
its author's code: a report_sections that raises, or returns something else than sections, is named
on the page in one line, as is a section that cannot be shown (a word in a column of times, a
second section of the same name); a warning line on stderr says so too, and the rest of the report
stands."""

from __future__ import annotations

import math
from dataclasses import asdict

import pandas as pd

from primbench import ops, progress
from primbench.ops.sections import Section, is_figure
from primbench.report import formats


def _text(value) -> str:
    return "" if value is None else str(value)


# Each kind of column (ops/sections.py KINDS): its formatter, whether it is a number (right-aligned),
# and whether its cell carries the number for sorting (where the text is words: "6.9× faster").
CELLS = {
    "text": (_text, False, False),
    "code": (_text, False, False),
    "count": (formats.format_value, True, False),
    "number": (formats.format_figure, True, False),
    "size": (formats.format_size, True, False),
    "block": (formats.format_block, True, False),
    "us": (formats.format_us, True, False),
    "gbps": (formats.format_gbps, True, False),
    "pct": (formats.format_pct, True, False),
    "times": (formats.format_times, True, True),
    "faster": (formats.format_faster_cell, True, True),
    "time_ratio": (formats.format_time_ratio_cell, True, True),
}


def op_sections(view, charts) -> list[dict]:
    """The op's own sections, ready for report_templates/_op.html.j2."""
    try:
        sections = ops.report_sections(view.op, view)
        wrong = [s for s in sections if not isinstance(s, Section)]
        if wrong:
            raise TypeError(f"returned a {type(wrong[0]).__name__}, not a primbench.api.Section")
    except Exception as error:  # noqa: BLE001 - a plugin's code: any failure is named, never fatal
        return [_failed(view.op, "sections", "its own sections", error,
                        "its report_sections failed", "its own sections are left out")]
    shown, ids = [], set()
    for section in sections:
        try:
            if formats.slug(section.name) in ids:  # two headings of one id: a link would find the first
                raise ValueError(f"another of its sections is named {section.name!r} already; give each its own name")
            entry = _shown(section, view, charts)
        except Exception as error:  # noqa: BLE001 - as above: this section is named, the others stand
            entry = _failed(view.op, section.name, section.title, error, f"its section {section.name!r} "
                            "cannot be shown", "it is left out; the op's other sections are shown")
        entry["name"] = _unique(entry["name"], ids)
        shown.append(entry)
    return shown


def _unique(name: str, ids: set) -> str:
    """`name`, or 'name-2', 'name-3', ... where a section of the page has its id already."""
    candidate, count = name, 1
    while formats.slug(candidate) in ids:
        count += 1
        candidate = f"{name}-{count}"
    ids.add(formats.slug(candidate))
    return candidate


def _failed(op: str, name: str, title: str, error: Exception, what: str, consequence: str) -> dict:
    """A failed section's place on the page: its heading and one line saying what went wrong."""
    line = f"{op}: {what} ({type(error).__name__}: {error}); {consequence}"
    progress.say(f"warning: {line}")
    return {"name": name, "title": title, "failed": line}


def _shown(section: Section, view, charts) -> dict:
    rows = [{key: (None if _missing(value) else value) for key, value in row.items()} for row in section.rows]
    chart = None
    if section.bars:
        chart = charts.timing_bars([asdict(bar) for bar in section.bars],
                                   title=section.bars_title or f"{view.op}: {section.title}")
    return {
        "name": section.name, "title": section.title, "caption": section.caption, "failed": None,
        "headings": [{"text": c.heading, "title": c.title, "num": CELLS[c.kind][1]} for c in section.columns],
        "rows": rows,  # as the op gave them (tools/doc_figures quotes them)
        "cells": [[_cell(column, row.get(column.key), number) for column in section.columns]
                  for number, row in enumerate(rows, 1)],
        "chart": chart, "bars_caption": section.bars_caption,
        "linked": any(bar.anchor for bar in section.bars),  # its marks link to their cases' rows
    }


def _missing(value) -> bool:
    """None, NaN, infinity, pd.NA or NaT: shown blank."""
    if is_figure(value):
        return not math.isfinite(value)
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))  # a list is a value, never missing


def _cell(column, value, row_number: int) -> dict:
    format_value, number, sorted_by_value = CELLS[column.kind]
    if number and value is not None and not is_figure(value):  # else it would show blank, unexplained
        raise TypeError(f"row {row_number}'s {column.key!r} is {value!r}, not a number for a {column.kind} column")
    return {"text": format_value(value), "num": number, "code": column.kind == "code",
            "sort": formats.format_number(value) if sorted_by_value else None}
