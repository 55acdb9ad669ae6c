"""An op's own report sections (primbench/ops/sections.py, report/op_sections.py): every kind of
column has a way to be shown, a column of another kind is refused when declared, a section built
wrong is refused in one line naming the field, and a plugin's report code that fails (raising,
exiting, never returning, or returning something else) is named in one line on its page and on
stderr, in its own place: the op's other sections, its older report_tables and the rest of the page
stand, and a plugin editing the frames it is given changes nothing else."""

import dataclasses
import os
import re
import signal
import time

import pandas as pd
import pytest

from primbench import ops, plugin_calls
from primbench.ops.sections import KINDS, Bar, Column, Section, from_table
from primbench.report import op_sections
from tests.conftest import REPO


def test_every_kind_of_column_has_a_cell_and_another_kind_is_refused():
    assert set(op_sections.CELLS) == set(KINDS)
    with pytest.raises(ValueError, match="kind 'money' is none of text, code"):
        Column("price", "price", "money")


def _view(cases=None):
    """Enough of an op view (report/op_view.py) for the op's own sections."""
    cases = pd.DataFrame({"variant": ["a", "b"], "n": [1024, 2048]}) if cases is None else cases
    return dataclasses.make_dataclass("View", ["op", "cases", "copy_gbps"])("reduce", cases, None)


def _declare(monkeypatch, **functions):
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(
        ops.checks("reduce"), **{"report_sections": None, "report_tables": None, **functions}))


def test_an_op_whose_sections_fail_is_named_on_its_page_and_its_older_tables_still_show(monkeypatch, capsys):
    def broken(view):
        raise RuntimeError("no such column")

    table = pd.DataFrame({"name": ["a", "b"], "count": [1, 2], "share": [0.5, float("nan")]})
    _declare(monkeypatch, report_sections=broken, report_tables=lambda frame, copy: {"mine": table})
    failed, shown = op_sections.op_sections(_view(), charts=None)
    line = "reduce: its report_sections failed (RuntimeError: no such column); its own sections are left out"
    assert failed["failed"] == line and capsys.readouterr().err == f"primbench: warning: {line}\n"
    assert [c.kind for c in from_table("mine", table).columns] == ["text", "count", "number"]
    assert not shown["failed"] and [[cell["text"] for cell in row] for row in shown["cells"]] == [["a", "1", "0.5"], ["b", "2", ""]]


def test_failing_report_tables_are_named_as_such_and_the_ops_own_sections_stay():
    good = Section("fine", "fine", "", (Column("a", "a"),), [{"a": "x"}])
    with pytest.MonkeyPatch.context() as patch:
        _declare(patch, report_sections=lambda view: [good], report_tables=lambda frame, copy: None)
        shown, failed = op_sections.op_sections(_view(), charts=None)
    assert shown["name"] == "fine" and not shown["failed"]
    assert failed["failed"] == ("reduce: its report_tables failed (TypeError: returned a NoneType, not a dict of "
                                "name -> DataFrame); its tables are left out")


def _sigint_then_wait(view):
    os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, arriving while the plugin's code runs
    time.sleep(5)


def _endless(view):
    while True:
        yield Section("x", "x", "", (Column("a", "a"),), ())


@pytest.mark.parametrize(("function", "words"), [
    (lambda view: exec("raise SystemExit(0)"), "it called sys.exit(0), which ends no report"),
    (lambda view: exec("raise KeyboardInterrupt"), "it raised KeyboardInterrupt, with no Ctrl-C pressed"),
    (lambda view: exec("class Mine(BaseException): pass\nraise Mine('odd')"), "Mine: odd"),
    (lambda view: {"a": 1}, "TypeError: returned a dict, not a list of primbench.api.Section"),
    (lambda view: ["a"], "TypeError: returned a str in its list, not a primbench.api.Section"),
    (_endless, "ValueError: returned more than 100 sections"),
    (lambda view: exec("raise RuntimeError('\\x1b[31mred\\nsecond' + 'M' * 5000)"),
     ("RuntimeError: \\x1b[31mred second" + "M" * 5000)[:op_sections.MAX_ERROR] + "..."),
])
def test_whatever_a_plugins_report_code_raises_or_returns_is_one_printable_line(monkeypatch, capsys, function, words):
    # SystemExit and a KeyboardInterrupt with no Ctrl-C behind it are the plugin's doing: the page
    # names them (the report is written, exit 0), as any other error; its text made printable and cut.
    _declare(monkeypatch, report_sections=function)
    (failed,) = op_sections.op_sections(_view(), charts=None)
    assert failed["failed"] == f"reduce: its report_sections failed ({words}); its own sections are left out"
    (warning,) = capsys.readouterr().err.splitlines()
    assert warning == f"primbench: warning: {failed['failed']}" and "\x1b" not in warning


def test_a_real_ctrl_c_during_a_plugins_report_code_still_stops_the_command(monkeypatch):
    _declare(monkeypatch, report_sections=_sigint_then_wait)
    with pytest.raises(KeyboardInterrupt):
        op_sections.op_sections(_view(), charts=None)


def test_report_code_that_never_returns_is_stopped_at_its_limit_and_named(monkeypatch):
    def spins(view):
        while True:
            pass

    monkeypatch.setattr(plugin_calls, "LIMIT_S", 0.3)
    _declare(monkeypatch, report_sections=spins)
    started = time.monotonic()
    (failed,) = op_sections.op_sections(_view(), charts=None)
    assert time.monotonic() - started < 5
    assert failed["failed"] == ("reduce: its report_sections failed (it did not return within 0.3 s (a loop that never "
                                "ends?) and was stopped); its own sections are left out")
    assert plugin_calls.call(lambda: 7) == (7, None)  # the timer is off again: a quick call returns its value


def test_a_plugin_editing_the_frames_it_is_given_changes_nothing_else():
    def edits_view(view):
        del view.cases["n"]
        view.cases.loc[0, "variant"] = "changed"
        return []

    def edits_frame(frame, copy_gbps):
        frame["variant"] = "changed"
        return {}

    view = _view()
    with pytest.MonkeyPatch.context() as patch:
        _declare(patch, report_sections=edits_view, report_tables=edits_frame)
        assert op_sections.op_sections(view, charts=None) == []
    assert view.cases.to_dict("list") == {"variant": ["a", "b"], "n": [1024, 2048]}


def test_the_page_parts_a_section_may_not_be_named_are_the_templates_own():
    templates = "".join(path.read_text() for path in (REPO / "report_templates").glob("*.j2"))
    assert op_sections.PAGE_PARTS == set(re.findall(r'id="([a-z0-9-]+)-\{\{ id \}\}"', templates))


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
    assert Bar("a", None).time_us is None and Bar("a", 5e-9).time_us == 5e-9
    with pytest.raises(ValueError, match="bar 'a': time_us 0 is not a time .a finite number of µs above 0"):
        Bar("a", 0)  # a bar of no length would be left out of the chart without a word


def test_a_section_that_cannot_be_shown_is_named_alone_and_the_others_stand(monkeypatch, capsys):
    # A word in a column of times would show as a blank cell, unexplained; a second section of one
    # name would give two headings one id. Each is named in its place; the good sections are drawn.
    good = Section("fine", "fine", "", (Column("t", "time µs", "us"),), [{"t": 2.5}, {"t": float("nan")}, {}])
    word = Section("word", "word", "", (Column("t", "time µs", "us"),), [{"t": 1.0}, {"t": "slow"}])
    again = Section("fine", "fine again", "", COLUMN, [{"a": "x"}])
    part = Section("cases", "a part's name", "", COLUMN, [{"a": "x"}])
    sized = Section("sized", "sized", "", (Column("n", "n", "size"), Column("b", "block", "block")), [{"n": 2.5}])
    _declare(monkeypatch, report_sections=lambda view: [good, word, again, part, sized])
    shown = op_sections.op_sections(_view(), charts=None)
    assert [s["name"] for s in shown] == ["fine", "word", "fine-2", "cases-2", "sized"]  # each heading's id its own
    assert not shown[0]["failed"] and [[c["text"] for c in row] for row in shown[0]["cells"]] == [["2.5"], [""], [""]]
    assert shown[1]["failed"] == ("reduce: its section 'word' cannot be shown (TypeError: row 2's 't' is 'slow', not a "
                                  "number for a us column); it is left out; the op's other sections are shown")
    assert shown[2]["failed"].startswith("reduce: its section 'fine' cannot be shown (ValueError: another of its "
                                         "sections has that name ('fine' in the heading's id); give it its own)")
    assert shown[3]["failed"].startswith("reduce: its section 'cases' cannot be shown (ValueError: the page has a "
                                         "part of that name ('cases' in the heading's id)")
    assert shown[4]["failed"].startswith("reduce: its section 'sized' cannot be shown (ValueError: row 1's 'n' is 2.5, "
                                         "not a whole number for a size column)")  # 2.5 would show as 2^1
    assert capsys.readouterr().err.count("primbench: warning: reduce: its section") == 4


def test_an_older_table_with_a_column_twice_is_named_and_an_array_cell_is_a_value():
    import numpy as np

    with pytest.raises(ValueError, match="table 'dup': two columns are named 'a'"):
        from_table("dup", pd.DataFrame([[1, 2]], columns=["a", "a"]))  # to_dict would drop one, with a warning
    arrays = from_table("arr", pd.DataFrame({"a": [np.array([1, 2]), None]}))
    assert [list(row["a"]) if row["a"] is not None else None for row in arrays.rows] == [[1, 2], None]


def test_a_plugin_op_read_without_its_plugin_says_its_own_sections_are_left_out():
    view = dataclasses.replace(_view(), op="unloaded_op")  # as a run of a plugin's op, its plugin not loaded
    assert "unloaded_op" not in ops.declared_ops()
    (note,) = op_sections.op_sections(view, charts=None, run_plugins=["plugins/mine.py"])
    assert note["note"] == ("unloaded_op is declared by none of the plugins this report loaded (the run names "
                            "plugins/mine.py), so its own sections, if it has any, are left out (report or publish with "
                            "--plugin FILE draws them)") and not note["failed"]
    # pytest's timings (op "pytest"), or an op primbench no longer has, in a run that names no plugin
    assert op_sections.op_sections(dataclasses.replace(_view(), op="pytest"), charts=None, run_plugins=[]) == []


def test_a_row_is_made_a_dict_under_the_guard_and_one_bad_table_leaves_the_others():
    from collections.abc import Mapping

    class Exits(Mapping):  # a Mapping whose own code runs when its row is read
        def __getitem__(self, key):
            return 1

        def __len__(self):
            return 1

        def __iter__(self):
            raise SystemExit(3)

    class Says:  # a value whose text is its own code
        def __str__(self):
            raise SystemExit(4)

    odd = Section("odd", "odd", "", (Column("a", "a"),), [Exits()])
    odder = Section("odder", "odder", "", (Column("a", "a"),), [{"a": Says()}])
    good = pd.DataFrame({"a": [1]})
    twice = pd.DataFrame([[1, 2]], columns=["b", "b"])
    with pytest.MonkeyPatch.context() as patch:
        _declare(patch, report_sections=lambda view: [odd],
                 report_tables=lambda frame, copy: {"good": good, "twice": twice, "also": good})
        failed, *tables = op_sections.op_sections(_view(), charts=None)
        _declare(patch, report_sections=lambda view: [odder])
        (failed_too,) = op_sections.op_sections(_view(), charts=None)
    assert failed["failed"].startswith("reduce: its report_sections failed (it called sys.exit(3)")
    assert failed_too["failed"].startswith("reduce: its report_sections failed (it called sys.exit(4)")
    assert [t["name"] for t in tables] == ["good", "twice", "also"]
    assert not tables[0]["failed"] and not tables[2]["failed"]
    assert tables[1]["failed"] == ("reduce: its table 'twice' cannot be shown (ValueError: table 'twice': two columns "
                                   "are named 'b'); it is left out; the op's other sections are shown")
