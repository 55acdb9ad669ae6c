"""An op's own report sections (primbench/ops/sections.py, report/op_sections.py): every kind of
column has a way to be shown, a column of another kind is refused when declared, a section built
wrong is refused in one line naming the field, an op whose sections fail (or one section that
cannot be shown) is named in one line on its page and on stderr, and the older report_tables still
show."""

import dataclasses
import types

import pandas as pd
import pytest

from primbench import ops
from primbench.ops.sections import KINDS, Bar, Column, Section, from_table
from primbench.report import op_sections


def test_every_kind_of_column_has_a_cell_and_another_kind_is_refused():
    assert set(op_sections.CELLS) == set(KINDS)
    with pytest.raises(ValueError, match="kind 'money' is none of text, code"):
        Column("price", "price", "money")


def test_an_op_whose_sections_fail_is_named_on_its_page_and_older_tables_still_show(monkeypatch, capsys):
    def broken(view):
        raise RuntimeError("no such column")

    table = pd.DataFrame({"name": ["a", "b"], "count": [1, 2], "share": [0.5, float("nan")]})
    view = types.SimpleNamespace(op="reduce", cases=None, copy_gbps=None)
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(ops.checks("reduce"), report_sections=broken))
    (failed,) = op_sections.op_sections(view, charts=None)
    line = "reduce: its report_sections failed (RuntimeError: no such column); its own sections are left out"
    assert failed["failed"] == line and capsys.readouterr().err == f"primbench: warning: {line}\n"
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(ops.checks("reduce"), report_sections=None,
                                                                 report_tables=lambda frame, copy: {"mine": table}))
    (shown,) = op_sections.op_sections(view, charts=None)
    assert [c.kind for c in from_table("mine", table).columns] == ["text", "count", "number"]
    assert [[cell["text"] for cell in row] for row in shown["cells"]] == [["a", "1", "0.5"], ["b", "2", ""]]


COLUMN = (Column("a", "a"),)


@pytest.mark.parametrize(("fields", "words"), [
    ({"name": 3}, "a section: name is 3 (int), not text"),
    ({"name": " "}, "a section's name is empty"),
    ({"title": None}, "section 'x': title is None (NoneType), not text"),
    ({"columns": ("a",)}, "section 'x': columns[0] is a str, not a Column"),
    ({"columns": ()}, "section 'x': no columns; a section's table needs at least one"),
    ({"columns": (Column("a", "a"), Column("a", "again"))}, "section 'x': two columns show the key 'a'"),
    ({"rows": "abc"}, "section 'x': rows is a str, not a list (of dicts)"),
    ({"rows": [[1, 2]]}, "section 'x': rows[0] is a list, not a dict"),
    ({"bars": [("a", 1.0)]}, "section 'x': bars[0] is a tuple, not a Bar"),
])
def test_a_section_built_wrong_is_refused_in_one_line_naming_the_field(fields, words):
    with pytest.raises((TypeError, ValueError)) as refused:
        Section(**{"name": "x", "title": "x", "caption": "", "columns": COLUMN, "rows": (), **fields})
    assert str(refused.value).startswith(words), refused.value


@pytest.mark.parametrize(("fields", "words"), [
    ({"time_us": "slow"}, "bar 'a': time_us 'slow' is not a time"),
    ({"time_us": float("inf")}, "bar 'a': time_us inf is not a time"),
    ({"time_us": -1.0}, "bar 'a': time_us -1.0 is not a time"),
    ({"time_us": True}, "bar 'a': time_us True is not a time"),
    ({"series": object}, "bar 'a': series is <class 'object'> (type), not text"),
    ({"anchor": 7}, "bar 'a': anchor is 7 (int), not text"),
    ({"label": None}, "bar None: label is None (NoneType), not text"),
])
def test_a_bar_built_wrong_is_refused_and_one_without_a_time_is_kept(fields, words):
    with pytest.raises((TypeError, ValueError)) as refused:
        Bar(**{"label": "a", "time_us": 1.0, **fields})
    assert str(refused.value).startswith(words), refused.value
    assert Bar("a", None).time_us is None and Bar("a", 0).time_us == 0


def test_a_section_that_cannot_be_shown_is_named_alone_and_the_others_stand(monkeypatch, capsys):
    # A word in a column of times would show as a blank cell, unexplained; a second section of one
    # name would give two headings one id. Each is named in its place; the good sections are drawn.
    good = Section("fine", "fine", "", (Column("t", "time µs", "us"),), [{"t": 2.5}, {"t": float("nan")}, {}])
    word = Section("word", "word", "", (Column("t", "time µs", "us"),), [{"t": 1.0}, {"t": "slow"}])
    again = Section("fine", "fine again", "", COLUMN, [{"a": "x"}])
    view = types.SimpleNamespace(op="reduce", cases=None, copy_gbps=None)
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(ops.checks("reduce"), report_tables=None,
                                                                 report_sections=lambda view: [good, word, again]))
    shown = op_sections.op_sections(view, charts=None)
    assert [s["name"] for s in shown] == ["fine", "word", "fine-2"]  # each heading's id its own
    assert not shown[0]["failed"] and [[c["text"] for c in row] for row in shown[0]["cells"]] == [["2.5"], [""], [""]]
    assert shown[1]["failed"] == ("reduce: its section 'word' cannot be shown (TypeError: row 2's 't' is 'slow', not a "
                                  "number for a us column); it is left out; the op's other sections are shown")
    assert shown[2]["failed"].startswith("reduce: its section 'fine' cannot be shown (ValueError: another of its "
                                         "sections is named 'fine' already; give each its own name)")
    assert capsys.readouterr().err.count("primbench: warning: reduce: its section") == 2
