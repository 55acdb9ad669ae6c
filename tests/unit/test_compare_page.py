"""The compare page (`compare --html`), rendered from committed runs and read back as a tree: it
leads with what changed, folds the rest with stated counts, and its ratio chart's points name their
case and link to their row, op by op in the table's order. Nothing here needs a GPU or a browser
(tests/e2e/test_browser.py clicks and hovers in Chromium).

The test-only transformation is a copy of a real run with two cases' raw samples scaled (a reduce
case 10 % slower, a histogram case 30 % slower), written to tmp_path; nothing under results/ or
tests/data is modified."""

from __future__ import annotations

import gzip
import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from primbench.compare import digest, output, verdicts
from primbench.report.charts import compare as compare_charts
from primbench.report.compare_page import render_comparison
from primbench.runfile.io import load_run
from tests.run_copies import SLOWED_CASE, edited_copy, scale_samples

REPO = Path(__file__).resolve().parents[2]
SAME_COMMIT = ("tests/data/runs/fixture-a.jsonl.gz", "tests/data/runs/fixture-b.jsonl.gz")
BASELINE_VS_REFERENCE = ("results/baselines/nvidia-h200.jsonl.gz", "results/reference/nvidia-h200.jsonl.gz")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent=None):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    def classes(self) -> set:
        return set(self.attrs.get("class", "").split())

    def all(self, tag: str | None = None, cls: str | None = None) -> list["Node"]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (cls is None or cls in child.classes()):
                found.append(child)
            found += child.all(tag, cls)
        return found

    def one(self, tag=None, cls=None) -> "Node":
        found = self.all(tag, cls)
        assert len(found) == 1, (tag, cls, len(found))
        return found[0]

    def content(self) -> str:
        return self.text + "".join(child.content() for child in self.children)


class _Tree(HTMLParser):
    """The page as a tree of Nodes (the standard library's parser: no bs4 or lxml in the venv)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("#root", {})

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, {k: v or "" for k, v in attrs}, self.at))

    def handle_endtag(self, tag):
        node = self.at
        while node is not self.root and node.tag != tag:  # tolerate an unclosed element
            node = node.parent
        if node is not self.root:
            self.at = node.parent

    def handle_data(self, data):
        self.at.children.append(Node("#text", {}, self.at))
        self.at.children[-1].text = data


def _tree(html: str) -> Node:
    parser = _Tree()
    parser.feed(html)
    return parser.root


def _render(base_path, new_path, out: Path):
    base, new = verdicts.load_comparable(str(base_path)), verdicts.load_comparable(str(new_path))
    pairs = verdicts.compare_runs(base, new)
    page = render_comparison(base, [(new, pairs, verdicts.default_metric(base, new))], out)
    html = page.read_text(encoding="utf-8")
    return pairs, html, _tree(html)


def _slowest_histogram_case(run) -> str:
    # The histogram case with the largest cold median: 30 % slower is past its floor, and over
    # BATCH_BELOW_US its verdict is from the cold samples, the ones scaled.
    records = [r for r in run.cases if r.case.op == "histogram" and r.ok and r.cold_ms]
    return max(records, key=lambda r: float(np.median(r.cold_ms))).case.key


@pytest.fixture(scope="module")
def slowed(tmp_path_factory):
    """fixture-a against a copy with SLOWED_CASE (reduce) 10 % and one histogram case 30 % slower:
    the larger move leads, so the lead order (histogram first) differs from the ops' (reduce first)."""
    out = tmp_path_factory.mktemp("slowed")
    base = out / "base.jsonl"
    base.write_bytes(gzip.decompress((REPO / SAME_COMMIT[0]).read_bytes()))
    histogram = _slowest_histogram_case(load_run(base))

    def edit(record):
        scale_samples(record, SLOWED_CASE, 1.10)
        scale_samples(record, histogram, 1.30)

    new = edited_copy(base, out / "slowed.jsonl", edit)
    return (histogram, *_render(base, new, out / "slowed.html"))


@pytest.fixture(scope="module")
def same_commit(tmp_path_factory):
    return _render(*(REPO / p for p in SAME_COMMIT), tmp_path_factory.mktemp("same") / "same.html")


@pytest.fixture(scope="module")
def baseline_vs_reference(tmp_path_factory):
    return _render(*(REPO / p for p in BASELINE_VS_REFERENCE), tmp_path_factory.mktemp("ref") / "ref.html")


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    return _render("ref:seed002_rtx3080", REPO / SAME_COMMIT[0], tmp_path_factory.mktemp("pub") / "pub.html")


def _rows(tree: Node) -> list[Node]:
    return tree.one("table", "compare-pairs").one("tbody").all("tr")


def _points(tree: Node) -> list[Node]:
    return tree.one("svg", "ratio-chart").all("a", "point")


def _fold_checks(pairs, tree: Node) -> None:
    """The fold rows state counts (each class's, summing to the row's cases) that sum to the pairs
    not shown one by one; the toggle states that number; each fold's link reaches a row."""
    rows, folds = _rows(tree), tree.one("table", "compare-folds").all("tr", "fold")
    folded = [row for row in rows if "folded" in row.classes()]
    assert len(folds) == len(digest.folds(pairs))
    assert sum(int(f.attrs["data-cases"]) for f in folds) == len(folded) == len(pairs) - len(output.rows(pairs))
    for fold in folds:
        counts = [int(badge.attrs["data-count"]) for badge in fold.all("span", "badge")]
        assert counts and sum(counts) == int(fold.attrs["data-cases"]), fold.content()
        assert fold.one("a").attrs["href"][1:] in {row.attrs["id"] for row in folded}
    assert f"({len(folded)} folded)" in tree.one("div", "table-controls").content()


def _chart_checks(pairs, tree: Node, metric: str = "time") -> None:
    """Every point has a <title> naming its case and links to an existing row of that case; the
    chart's ops come in the table's order (the pairs' order, which the per-op summary keeps)."""
    rows = {row.attrs["id"]: row for row in _rows(tree)}
    points = _points(tree)
    assert points
    for point in points:
        title = point.one("title").content()
        target = rows[point.attrs["href"][1:]]  # KeyError: a link to no row
        case = target.one("code").content()
        assert title.split("\n")[0] == case == point.attrs["data-case"], (title, case)
    table_ops = [row.attrs["data-op"] for row in tree.one("table", "compare-summary").one("tbody").all("tr")]
    assert table_ops == list(dict.fromkeys(p.op for p in pairs))
    chart_ops = [group.attrs["data-op"] for group in tree.one("svg", "ratio-chart").all("g", "op-row")]
    assert chart_ops == [op for op in table_ops if op in chart_ops] and len(set(chart_ops)) == len(chart_ops)
    # The points are the cases the table shows by default, or, where none, the folded ones.
    shown = [row for row in rows.values() if "lead" in row.classes()] or list(rows.values())
    expected = sum(1 for p in (output.rows(pairs) or digest.folded(pairs))
                   if math.isfinite(output.headline_ratio(p, metric)))
    assert len(points) == expected and {p.attrs["href"][1:] for p in points} <= {r.attrs["id"] for r in shown}


def test_changed_pairs_lead_the_table_and_the_chart_in_the_tables_op_order(slowed):
    histogram, pairs, html, tree = slowed
    lead = digest.lead(pairs)
    assert [p.text for p in lead] == [histogram, SLOWED_CASE]  # the larger move first
    rows = _rows(tree)
    kinds = ["lead" if "lead" in row.classes() else "folded" for row in rows]
    assert kinds == ["lead"] * 2 + ["folded"] * (len(pairs) - 2)
    assert [row.one("code").content() for row in rows[:2]] == [histogram, SLOWED_CASE]
    assert all(row.one("span", "badge").content() == "SLOWER" for row in rows[:2])
    assert "2 pairs changed" in tree.one("p", "lead-line").content()
    _fold_checks(pairs, tree)
    _chart_checks(pairs, tree)
    # Reduce above histogram, as in the table, though the histogram case leads.
    assert [g.attrs["data-op"] for g in tree.one("svg", "ratio-chart").all("g", "op-row")] == ["reduce", "histogram"]
    assert "greyed" not in tree.one("svg", "ratio-chart").classes()


def test_two_runs_of_one_commit_fold_everything_and_below_floor_has_its_own_colour(same_commit):
    pairs, html, tree = same_commit
    assert not output.rows(pairs) and all("folded" in row.classes() for row in _rows(tree))
    assert "Nothing changed" in tree.one("p", "lead-line").content()
    _fold_checks(pairs, tree)
    _chart_checks(pairs, tree)
    assert "greyed" in tree.one("svg", "ratio-chart").classes()  # folded cases, drawn faded, and the caption says so
    assert "Nothing changed, so the chart shows the 352 folded cases" in tree.one("figure", "ratio-figure").content()
    below = [row for row in _rows(tree) if "verdict-BELOW-FLOOR" in row.classes()]
    assert len(below) == sum(p.verdict == verdicts.BELOW_FLOOR for p in pairs) > 0
    assert all("verdict-BELOW-FLOOR" in row.one("span", "badge").classes() for row in below)
    fold_badges = tree.one("table", "compare-folds").all("span", "verdict-BELOW-FLOOR")
    assert any("BELOW_FLOOR" in badge.content() for badge in fold_badges)
    # Its colour: a CSS rule of its own, and a chart colour unlike the speed verdicts' and SAME's.
    assert ".badge.verdict-BELOW-FLOOR {" in html
    colour = compare_charts.VERDICT_COLOURS["BELOW_FLOOR"]
    assert colour not in [compare_charts.VERDICT_COLOURS[v] for v in ("SLOWER", "FAILED", "FASTER", "UNSURE", "SAME")]
    assert all(c.attrs["fill"] == colour for p in _points(tree) if "verdict-BELOW-FLOOR" in p.classes()
               for c in p.all("circle") if "target" not in c.classes())
    # The page's explanation says what it means.
    assert "BELOW_FLOOR" in html and "by fewer microseconds than the absolute floor" in html


def test_a_baseline_with_cases_on_one_side_only_folds_them_with_their_counts(baseline_vs_reference):
    pairs, html, tree = baseline_vs_reference
    _fold_checks(pairs, tree)
    _chart_checks(pairs, tree)
    badges = " ".join(b.content() for b in tree.one("table", "compare-folds").all("span", "badge"))
    assert "only in the new run" in badges
    # MISSING pairs have no ratio: they are not drawn, and the caption's key does not list them.
    assert "MISSING" not in tree.one("figure", "ratio-figure").one("figcaption").content()


def test_published_figures_are_set_side_by_side_with_the_peak_chart(published):
    pairs, html, tree = published
    assert {p.verdict for p in pairs} == {verdicts.PUBLISHED}
    assert all("lead" in row.classes() for row in _rows(tree)) and len(_rows(tree)) == len(pairs)
    _chart_checks(pairs, tree, metric="pct_peak")
    images = tree.all("img")
    assert len(images) == 1 and images[0].attrs["src"].startswith("data:image/svg+xml;base64,")  # the peak chart


def test_a_case_name_with_markup_is_escaped_in_the_charts_titles():
    hostile = '<script>alert("x")</script>'
    point = {"id": "pair-1-1", "text": f"reduce/{hostile}/float32/n=1", "op": "reduce", "verdict": "SLOWER",
             "ratio": 1.2, "interval": "[1.1, 1.3]", "ci_low": 1.1, "ci_high": 1.3}
    svg = str(compare_charts.ratio_chart({"reduce": [point]}, "time"))
    assert "<script" not in svg and "&lt;script&gt;" in svg
    assert compare_charts.ratio_chart({"reduce": [dict(point, ratio=math.nan)]}, "time") is None


def test_the_compare_page_carries_the_one_shared_table_script_and_no_copy_of_its_own(same_commit):
    from primbench.resources import TEMPLATE_DIR

    _, html, _ = same_commit
    script = (TEMPLATE_DIR / "tables.js").read_text(encoding="utf-8")
    assert html.count("<script") == 1 and script in html  # sorting, filtering and the folded rows: tables.js
    assert "createElement(\"button\")" in script and "aria-sort" in script  # its headings sort from the keyboard
