"""An op's own sections (ops/sections.py, from its OpChecks.report_sections) as its page shows
them: each cell formatted by its column's kind, the bars drawn as a chart. A plugin's sections are
its author's code: one that raises, or returns something else than sections, is named on the page
in one line, and the rest of the report stands."""

from __future__ import annotations

from dataclasses import asdict

from primbench import ops
from primbench.ops.sections import Section
from primbench.report import formats
from primbench.runfile.frame import is_number


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
        return [{"name": "sections", "title": "its own sections", "failed": f"{type(error).__name__}: {error}"}]
    return [_shown(section, view, charts) for section in sections]


def _shown(section: Section, view, charts) -> dict:
    rows = [{key: (None if isinstance(value, float) and not is_number(value) else value) for key, value in row.items()}
            for row in section.rows]
    chart = None
    if section.bars:
        chart = charts.timing_bars([asdict(bar) for bar in section.bars],
                                   title=section.bars_title or f"{view.op}: {section.title}")
    return {
        "name": section.name, "title": section.title, "caption": section.caption, "failed": None,
        "headings": [{"text": c.heading, "title": c.title, "num": CELLS[c.kind][1]} for c in section.columns],
        "rows": rows,  # as the op gave them (tools/doc_figures quotes them)
        "cells": [[_cell(column, row.get(column.key)) for column in section.columns] for row in rows],
        "chart": chart, "bars_caption": section.bars_caption,
        "linked": any(bar.anchor for bar in section.bars),  # its marks link to their cases' rows
    }


def _cell(column, value) -> dict:
    format_value, number, sorted_by_value = CELLS[column.kind]
    return {"text": format_value(value), "num": number, "code": column.kind == "code",
            "sort": formats.format_number(value) if sorted_by_value else None}
