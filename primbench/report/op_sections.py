"""An op's own sections (ops/sections.py, from its OpChecks.report_sections) as its page shows
them: each cell formatted by its column's kind, the bars drawn as a chart. A plugin's sections are
its author's code: a report_sections that raises, or returns something else than sections, is named
on the page in one line, as is a section that cannot be shown (a word in a column of times, a
second section of the same name); a warning line on stderr says so too, and the rest of the report
stands."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from dataclasses import asdict

import pandas as pd

from primbench import ops, plugin_calls, progress
from primbench.ops.sections import Section, from_table, is_figure
from primbench.report import formats
from primbench.text_safety import printable


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


# The ids the op's page gives its own parts ('<part>-<op>', report_templates/_op.html.j2 and
# _energy.html.j2; a test holds this list to the templates): a section of one of these names would
# give its heading an id that is already there, and its links would reach the other.
PAGE_PARTS = frozenset({"bandwidth", "cases", "cases-table", "distributions", "dtypes", "energy", "failures", "far",
                        "op", "progression", "reproducibility", "sweeps", "verification"})
MAX_SECTIONS = 100  # more is no page a reader reads, or a generator that never ends
MAX_ERROR = 300  # characters of a plugin's error shown on the page and in the warning


def op_sections(view, charts, run_plugins=()) -> list[dict]:
    """The op's own sections, ready for report_templates/_op.html.j2: what its report_sections
    returns, then each table of its report_tables. Each is a plugin's function, called with copies
    of the view's frames (one that edits their rows and columns changes nothing else of the page)
    under plugin_calls' rules; one that fails, or returns something else, is named in its place.
    `run_plugins`: the plugins the run's config names, for an op none of the loaded ones declares."""
    if view.op not in ops.declared_ops():
        if not run_plugins:  # pytest's timings, or an op primbench no longer has: no sections to miss
            return []
        named = ", ".join(printable(str(path))[:100] for path in list(run_plugins)[:3])
        return [{"name": "sections", "title": "its own sections", "failed": None,
                 "note": f"{view.op} is declared by none of the plugins this report loaded (the run names {named}), so "
                         "its own sections, if it has any, are left out (report or publish with --plugin FILE draws them)"}]
    found = []  # each section, or the failed entry of a function that gave none, in the page's order
    report_sections, report_tables = ops.declared(view.op, "report_sections"), ops.declared(view.op, "report_tables")
    if report_sections is not None:
        sections, error = plugin_calls.call(_sections_of, report_sections, copy.deepcopy(view))
        found += sections if error is None else [_failed(view.op, "sections", "its own sections", error,
                                                         "its report_sections failed", "its own sections are left out")]
    if report_tables is not None:
        tables, error = plugin_calls.call(_tables_of, report_tables, view.cases.copy(deep=True), view.copy_gbps)
        found += [_table_section(view.op, name, table) for name, table in tables] if error is None else \
            [_failed(view.op, "tables", "its own tables", error, "its report_tables failed", "its tables are left out")]
    entries, ids = [], set(PAGE_PARTS)
    for section in found:
        if isinstance(section, dict):  # a function that failed, named already
            section["name"] = _unique(section["name"], ids)
            entries.append(section)
            continue
        try:
            if formats.slug(section.name) in ids:  # two headings of one id: a link would find the first
                taken = "the page has a part of that name" if formats.slug(section.name) in PAGE_PARTS \
                    else "another of its sections has that name"
                raise ValueError(f"{taken} ({formats.slug(section.name)!r} in the heading's id); give it its own")
            entry = _shown(section, view, charts)
        except Exception as error:  # noqa: BLE001 - as above: this section is named, the others stand
            entry = _failed(view.op, section.name, section.title, error, f"its section {section.name!r} "
                            "cannot be shown", "it is left out; the op's other sections are shown")
        entry["name"] = _unique(entry["name"], ids)
        entries.append(entry)
    return entries


def _sections_of(report_sections, view) -> list[Section]:
    """What report_sections returned, checked to be a list of sections."""
    returned = report_sections(view)
    if isinstance(returned, (str, bytes, dict)) or not hasattr(returned, "__iter__"):
        raise TypeError(f"returned a {type(returned).__name__}, not a list of primbench.api.Section")
    sections = list(itertools.islice(returned, MAX_SECTIONS + 1))
    if len(sections) > MAX_SECTIONS:
        raise ValueError(f"returned more than {MAX_SECTIONS} sections")
    wrong = next((s for s in sections if not isinstance(s, Section)), None)
    if wrong is not None:
        raise TypeError(f"returned a {type(wrong).__name__} in its list, not a primbench.api.Section")
    # Rows as plain dicts, and the values of text columns as text, here under the time limit: a row
    # may be any Mapping and a value any object, whose own code (iteration, str()) would otherwise
    # run later, unguarded.
    return [dataclasses.replace(s, rows=tuple(_plain(row, s.columns) for row in s.rows)) for s in sections]


def _plain(row, columns) -> dict:
    texts = {column.key for column in columns if column.kind in ("text", "code")}
    return {key: None if _missing(value) else str(value) if key in texts else value for key, value in dict(row).items()}


def _tables_of(report_tables, cases, copy_gbps) -> list[tuple]:
    """The (name, DataFrame) pairs report_tables returned ({name: DataFrame})."""
    returned = report_tables(cases, copy_gbps)
    if not isinstance(returned, dict):
        raise TypeError(f"returned a {type(returned).__name__}, not a dict of name -> DataFrame")
    wrong = next(((name, table) for name, table in returned.items() if not isinstance(table, pd.DataFrame)), None)
    if wrong is not None:
        raise TypeError(f"its table {wrong[0]!r} is a {type(wrong[1]).__name__}, not a DataFrame")
    return list(itertools.islice(returned.items(), MAX_SECTIONS))


def _table_section(op: str, name, table):
    """One of report_tables' tables as a section, or, where it cannot be one (a column named twice),
    its failed entry: the op's other tables stand."""
    try:
        return from_table(name, table)
    except Exception as error:  # noqa: BLE001 - the plugin's data
        return _failed(op, str(name), str(name), error, f"its table {printable(str(name))[:60]!r} cannot be shown",
                       "it is left out; the op's other sections are shown")


def _unique(name: str, ids: set) -> str:
    """`name`, or 'name-2', 'name-3', ... where a part of the page has its id already."""
    candidate, count = name, 1
    while formats.slug(candidate) in ids:
        count += 1
        candidate = f"{name}-{count}"
    ids.add(formats.slug(candidate))
    return candidate


def _failed(op: str, name: str, title: str, error: BaseException, what: str, consequence: str) -> dict:
    """A failed section's place on the page: its heading and one line saying what went wrong (also
    a warning on stderr), printable and cut short: the error's text is the plugin's."""
    cause = printable(plugin_calls.described(error))
    cause = cause if len(cause) <= MAX_ERROR else cause[:MAX_ERROR] + "..."
    line = printable(f"{op}: {what} ({cause}); {consequence}")
    progress.say(f"warning: {line}")
    return {"name": name, "title": title, "failed": line, "note": None}


def _shown(section: Section, view, charts) -> dict:
    rows = [{key: (None if _missing(value) else value) for key, value in row.items()} for row in section.rows]
    chart = None
    if section.bars:
        chart = charts.timing_bars([asdict(bar) for bar in section.bars],
                                   title=section.bars_title or f"{view.op}: {section.title}")
    return {
        "name": section.name, "title": section.title, "caption": section.caption, "failed": None, "note": None,
        "headings": [{"text": c.heading, "title": c.title, "num": CELLS[c.kind][1]} for c in section.columns],
        "rows": rows,  # as the op gave them (tools/doc_figures quotes them)
        "cells": [[_cell(column, row.get(column.key), number) for column in section.columns]
                  for number, row in enumerate(rows, 1)],
        "chart": chart, "bars_caption": section.bars_caption,
        "linked": any(bar.anchor for bar in section.bars),  # its marks link to their cases' rows
    }


WHOLE = {"count", "size", "block"}  # the kinds whose values are whole numbers


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _missing(value) -> bool:
    """None, NaN, infinity, pd.NA or NaT: shown blank."""
    if is_figure(value):
        return not math.isfinite(value)
    return pd.api.types.is_scalar(value) and bool(pd.isna(value))  # a list is a value, never missing


def _cell(column, value, row_number: int) -> dict:
    format_value, number, sorted_by_value = CELLS[column.kind]
    if number and value is not None and not is_figure(value):  # else it would show blank, unexplained
        raise TypeError(f"row {row_number}'s {column.key!r} is {_short(value)}, not a number for a {column.kind} column")
    if column.kind in WHOLE and value is not None and not float(value).is_integer():  # 2.5 would show as 2
        raise ValueError(f"row {row_number}'s {column.key!r} is {_short(value)}, not a whole number for a {column.kind} column")
    return {"text": format_value(value), "num": number, "code": column.kind == "code",
            "sort": formats.format_number(value) if sorted_by_value else None}
