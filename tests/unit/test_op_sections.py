"""An op's own report sections (primbench/ops/sections.py, report/op_sections.py): every kind of
column has a way to be shown, a column of another kind is refused when declared, an op whose
sections fail is named in one line on its page, and the older report_tables still show."""

import dataclasses
import types

import pandas as pd
import pytest

from primbench import ops
from primbench.ops.sections import KINDS, Column, from_table
from primbench.report import op_sections


def test_every_kind_of_column_has_a_cell_and_another_kind_is_refused():
    assert set(op_sections.CELLS) == set(KINDS)
    with pytest.raises(ValueError, match="kind 'money' is none of text, code"):
        Column("price", "price", "money")


def test_an_op_whose_sections_fail_is_named_on_its_page_and_older_tables_still_show(monkeypatch):
    def broken(view):
        raise RuntimeError("no such column")

    table = pd.DataFrame({"name": ["a", "b"], "count": [1, 2], "share": [0.5, float("nan")]})
    view = types.SimpleNamespace(op="reduce", cases=None, copy_gbps=None)
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(ops.checks("reduce"), report_sections=broken))
    (failed,) = op_sections.op_sections(view, charts=None)
    assert failed["failed"] == "RuntimeError: no such column"
    monkeypatch.setitem(ops._CHECKS, "reduce", dataclasses.replace(ops.checks("reduce"), report_sections=None,
                                                                 report_tables=lambda frame, copy: {"mine": table}))
    (shown,) = op_sections.op_sections(view, charts=None)
    assert [c.kind for c in from_table("mine", table).columns] == ["text", "count", "number"]
    assert [[cell["text"] for cell in row] for row in shown["cells"]] == [["a", "1", "0.5"], ["b", "2", ""]]
