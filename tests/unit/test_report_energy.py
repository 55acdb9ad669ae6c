"""Energy in the HTML report: the story's energy per step, an op's GB/J against GB/s, the headline's
least-energy variant, and why energy is missing where it was asked for; a run without energy
renders with no word of it.

The runs are real ones (tests/data/runs) with stand-in energy written into a copy in tmp_path
(tests/energy_standin.py); the expected figures are read from the run's own frame, never typed in.
Nothing here needs a GPU.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from primbench.report.formats import format_gb_per_j, format_mj, format_watts
from primbench.report.render import render_report
from primbench.runfile.io import load_run
from tests.conftest import RUNS
from tests.energy_standin import with_energy

PROGRESSION = RUNS / "progression.jsonl.gz"  # every float32 reduce variant at 2^25: the seed story
FIXTURE = RUNS / "fixture-a.jsonl.gz"  # every op at small sizes
NOTE = ("points on one line through the origin spend the same power: their energy only follows time; "
        "a point above it does the same work for less energy")
REASON = "the energy counter did not step within 2 s (test-only reason)"


# --- helpers -----------------------------------------------------------------------------------


class _Node:
    """An element of the page: its tag, attributes, and the text and elements inside it in order."""

    def __init__(self, tag: str, attrs: dict, parent=None):
        self.tag, self.attrs, self.parent, self.children, self.parts = tag, attrs, parent, [], []

    def text(self) -> str:
        return " ".join("".join(part if isinstance(part, str) else part.text() for part in self.parts).split())

    def find_all(self, tag: str, cls: str | None = None) -> list:
        """Every element `tag` below this one (with the class `cls`), in page order."""
        found = []
        for child in self.children:
            if child.tag == tag and (cls is None or cls in child.attrs.get("cls", "").split()):
                found.append(child)
            found.extend(child.find_all(tag, cls))
        return found


class _Tree(HTMLParser):
    """The page as a tree of elements (enough of one: void tags closed, stray end tags skipped)."""

    VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = _Node("root", {})

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        attrs["cls"] = attrs.pop("class", "")
        node = _Node(tag, attrs, self.current)
        self.current.children.append(node)
        self.current.parts.append(node)
        if tag not in self.VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.parts.append(data)


def _page(html: str) -> _Node:
    tree = _Tree()
    tree.feed(html)
    return tree.root


def _by_id(root: _Node, element_id: str) -> _Node:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.attrs.get("id") == element_id:
            return node
        stack.extend(node.children)
    raise AssertionError(f"no element with id {element_id!r}")


def _column(table: _Node, heading: str) -> list[_Node]:
    """The cells under `heading` in each body row of `table` (its last header row names the cells)."""
    headings = [th.text() for th in table.find_all("thead")[0].find_all("tr")[-1].find_all("th")]
    index = headings.index(heading)
    return [row.find_all("td")[index] for row in table.find_all("tbody")[0].find_all("tr")]


def _charts(html: str) -> dict[str, ET.Element]:
    charts = [ET.fromstring(svg) for svg in re.findall(r"<svg\b.*?</svg>", html, re.S)]
    return {chart.get("aria-label"): chart for chart in charts}


def _points(chart: ET.Element) -> list[ET.Element]:
    return [a for a in chart.iter() if a.tag in ("a", "g") and "point" in (a.get("class") or "").split()]


def _render(run_path: Path, tmp_path: Path) -> str:
    return render_report(run_path, tmp_path / "report.html").read_text(encoding="utf-8")


def _records(path: Path) -> list[dict]:
    data = path.read_bytes()
    text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _write(records: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _valid_with_energy(frame, op: str, dtype: str, distribution: str):
    cases = frame[(frame["op"] == op) & (frame["dtype"] == dtype) & (frame["distribution"] == distribution)
                  & (frame["status"] == "ok") & frame["energy_mj"].notna()]
    return cases[cases["n"] == cases["n"].max()]


# --- the story ---------------------------------------------------------------------------------


def test_the_story_gives_each_steps_energy_per_sum_in_its_chart_and_its_table(tmp_path):
    run_path = with_energy(PROGRESSION, tmp_path / "progression.jsonl")
    frame = load_run(run_path).frame()
    mj_of = dict(zip(frame["variant"], frame["energy_mj"]))
    html = _render(run_path, tmp_path)

    table = _by_id(_page(html), "progression").find_all("table", cls="progression")[0]
    variants = [row.attrs["data-variant"] for row in table.find_all("tbody")[0].find_all("tr")]
    cells = _column(table, "mJ")
    assert len(variants) >= 10 and len(cells) == len(variants)
    for variant, cell in zip(variants, cells):
        assert cell.text() == format_mj(mj_of[variant]), variant
        assert f"{format_watts(frame.loc[frame['variant'] == variant, 'energy_w'].iloc[0])} W" in cell.attrs["title"]
    assert len({cell.text() for cell in cells}) > 5  # each step its own figure, not one value repeated

    (chart,) = [c for label, c in _charts(html).items() if label.startswith("Summing 2")]
    assert "time and energy per step" in chart.get("aria-label")
    bars = {float(bar.get("data-mj")): bar for bar in _points(chart) if bar.get("data-mj")}
    assert sorted(bars) == pytest.approx(sorted(mj_of[v] for v in variants), rel=1e-5)
    texts = {t.text for t in chart.iter("text")}
    assert all(f"{format_mj(mj_of[v])} mJ" in texts for v in variants)


# --- an op's section ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_with_energy(tmp_path_factory):
    """fixture-a with energy on every ok case but reduce0's, whose watts make vector_load_sum, the
    fastest reduce, spend more than some slower variant: so "least energy" is not "fastest"."""
    folder = tmp_path_factory.mktemp("energy_report")
    watts = lambda key, i: 900.0 if "/vector_load_sum/" in key else 300.0 + 5.0 * (i % 50)  # noqa: E731
    run_path = with_energy(FIXTURE, folder / "fixture-a.jsonl", watts=watts,
                           only=lambda key: "/reduce0_interleaved_divergent/" not in key)
    html = render_report(run_path, folder / "report.html").read_text(encoding="utf-8")
    return load_run(run_path).frame(), html


def test_the_op_section_draws_gb_per_j_against_gb_s_one_point_per_variant_with_energy(fixture_with_energy):
    frame, html = fixture_with_energy
    expected = _valid_with_energy(frame, "reduce", "float32", "uniform")
    cheapest = expected.sort_values("energy_mj").drop_duplicates("variant")
    assert "reduce0_interleaved_divergent" not in set(cheapest["variant"])  # it has no energy: no point

    section = _by_id(_page(html), "energy-reduce")
    assert NOTE in section.text().lower()
    (chart,) = [c for label, c in _charts(html).items() if label.startswith("reduce: energy against speed")]
    points = {p.get("data-key"): p for p in _points(chart)}
    assert set(points) == set(cheapest["key"])
    for key, gb_per_j, watts in zip(cheapest["key"], cheapest["gb_per_j"], cheapest["energy_w"]):
        assert float(points[key].get("data-gb-per-j")) == pytest.approx(gb_per_j, rel=1e-5)
        assert float(points[key].get("data-gbps")) == pytest.approx(gb_per_j * watts, rel=1e-5)  # GB/J = GB/s / W
    labels = [t.text for t in chart.iter("text") if t.get("class") == "point-label"]
    assert sorted(labels) == sorted(cheapest["variant"])
    (line,) = [e for e in chart.iter("line") if e.get("class") == "constant-power"]
    assert float(line.get("data-watts")) == pytest.approx(statistics.median(cheapest["energy_w"]))
    # The table beside it has the same figures.
    table = section.find_all("table", cls="energy")[0]
    assert [c.text() for c in _column(table, "mJ")] == [format_mj(v) for v in
                                                       cheapest.sort_values(["order", "variant"])["energy_mj"]]


def test_the_headline_names_the_variant_with_the_least_energy_and_its_mj(fixture_with_energy):
    frame, html = fixture_with_energy
    at_n = _valid_with_energy(frame, "reduce", "float32", "uniform")
    best = at_n.sort_values("energy_mj").iloc[0]
    fastest = at_n.sort_values("median_ms").iloc[0]
    assert best["variant"] != fastest["variant"]  # the stand-in's watts make them differ

    (line,) = [li for li in _by_id(_page(html), "headlines").find_all("li") if li.text().startswith("reduce at")]
    assert (f"least energy: {best['variant']}, {format_mj(best['energy_mj'])} mJ per operation "
            f"({format_gb_per_j(best['gb_per_j'])} GB/J, {format_watts(best['energy_w'])} W)") in line.text()


# --- without energy, and energy asked for but not measured ----------------------------------------


def test_a_run_without_energy_shows_no_word_of_it(tmp_path):
    html = _render(FIXTURE, tmp_path)
    assert not re.search(r"energy|\bmJ\b|GB/J|\bnan\b", html, re.I)
    assert "constant-power" not in html and 'id="energy-' not in html


def test_a_case_asked_for_energy_but_not_measured_shows_why_where_its_energy_would_be(tmp_path):
    victim = "reduce3_first_add_during_load"
    records = _records(with_energy(PROGRESSION, tmp_path / "with.jsonl", only=lambda key: f"/{victim}/" not in key))
    (case,) = [r for r in records if r.get("kind") == "case" and r["variant"] == victim]
    case["energy"] = {"reason": REASON}
    html = _render(_write(records, tmp_path / "progression.jsonl"), tmp_path)
    page = _page(html)

    note = " ".join(p.text() for p in _by_id(page, "energy-reduce").find_all("p", cls="energy-reason"))
    assert f"Energy was asked for but not measured: {REASON} (1 case: {victim} at n = 225)" in note
    # The story's mJ cell and the every-case table's say so, the reason in their hover text.
    table = _by_id(page, "progression").find_all("table", cls="progression")[0]
    rows = [row.attrs["data-variant"] for row in table.find_all("tbody")[0].find_all("tr")]
    cell = _column(table, "mJ")[rows.index(victim)]
    assert cell.text() == "not measured" and REASON in cell.find_all("span")[0].attrs["title"]
    every_case = _by_id(page, "cases-table-reduce")
    (mine,) = [c for c, v in zip(_column(every_case, "mJ"), _column(every_case, "variant")) if v.text() == victim]
    assert REASON in mine.find_all("span")[0].attrs["title"]
    (chart,) = [c for label, c in _charts(html).items() if label.startswith("Summing 2")]
    assert any(REASON in (t.text or "") for t in chart.iter("title"))


def test_a_gpu_without_an_energy_counter_says_why_and_draws_no_energy_chart(tmp_path):
    records = _records(PROGRESSION)
    reason = "NVML has no total-energy counter on this GPU (test-only)"
    records[0]["energy"] = {"available": False, "reason": reason, "idle_w": None, "counter_step_s": None,
                            "method": None, "policy": {}}
    html = _render(_write(records, tmp_path / "progression.jsonl"), tmp_path)
    assert _by_id(_page(html), "energy-unavailable").text() == f"Energy was asked for but not measured: {reason}"
    assert 'id="energy-reduce"' not in html and "constant-power" not in html
    assert not any("energy" in label for label in _charts(html))


# --- a real energy run (configs/energy.yaml on an H200: tests/data/runs/energy-a.jsonl.gz) -------


REAL = RUNS / "energy-a.jsonl.gz"


@pytest.fixture(scope="module")
def real_energy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("energy_real")
    return load_run(REAL).frame(), render_report(REAL, folder / "report.html").read_text(encoding="utf-8")


def test_a_real_energy_runs_story_gives_every_steps_measured_mj_and_the_naive_kernel_the_most(real_energy):
    frame, html = real_energy
    at_25 = frame[(frame["op"] == "reduce") & (frame["n"] == 2**25)]
    mj_of = dict(zip(at_25["variant"], at_25["energy_mj"]))
    assert len(mj_of) == 12 and all(v > 0 for v in mj_of.values())
    table = _by_id(_page(html), "progression").find_all("table", cls="progression")[0]
    variants = [row.attrs["data-variant"] for row in table.find_all("tbody")[0].find_all("tr")]
    assert set(variants) == set(mj_of)
    assert [cell.text() for cell in _column(table, "mJ")] == [format_mj(mj_of[v]) for v in variants]
    # What the measurement showed (docs/perf-notes.md): the naive kernel spends the most per sum,
    # but less than its time ratio predicts, since it draws less power.
    times = dict(zip(at_25["variant"], at_25["median_ms"]))
    assert max(mj_of, key=mj_of.get) == "reduce0_interleaved_divergent"
    naive, fast = "reduce0_interleaved_divergent", "vector_load_sum"
    assert mj_of[naive] / mj_of[fast] < times[naive] / times[fast]


def test_a_real_energy_run_draws_a_scatter_and_names_the_least_energy_variant_for_every_op(real_energy):
    frame, html = real_energy
    page = _page(html)
    for op in ("reduce", "reduce_max", "scan", "stencil", "topk", "histogram"):
        mine = frame[(frame["op"] == op) & frame["energy_mj"].notna()]
        at_n = mine[mine["n"] == mine["n"].max()]
        best = at_n.sort_values("energy_mj").iloc[0]
        section = _by_id(page, f"energy-{op.replace('_', '-')}")
        assert NOTE in section.text().lower(), op
        (chart,) = [c for label, c in _charts(html).items() if label.startswith(f"{op}: energy against speed")]
        assert len(_points(chart)) == at_n["variant"].nunique(), op
        (line,) = [li for li in _by_id(page, "headlines").find_all("li") if li.text().startswith(f"{op} at")]
        # "at n = ..." follows the name where the headline's own size is another
        assert re.search(rf"least energy: {re.escape(best['variant'])}(?: at n = [^,]+)?, "
                         rf"{re.escape(format_mj(best['energy_mj']))} mJ per operation", line.text()), (op, line.text())


def test_energy_measured_on_another_input_than_the_charts_still_gets_its_section_named_by_its_slice():
    # The reference config times top-k on every input but measures energy on normal logits only,
    # while the op's charts show the input with the most cases: the section must still be drawn.
    import pandas as pd

    from primbench.report import energy, op_view
    from primbench.report.selection import annotate, primary_slice

    run = load_run(REAL)
    frame = annotate(run.frame(), run.header.variants)
    topk = frame[frame["op"] == "topk"]
    untimed = [topk.assign(distribution="many_ties", energy_mj=float("nan"), block=block) for block in (64, 128)]
    both = pd.concat([frame, *untimed], ignore_index=True)
    charted = primary_slice(both, "topk")
    assert charted == ("float32", "many_ties")
    section = energy.op_energy(op_view.of(both, "topk"))
    measured = topk[topk["energy_mj"].notna()]
    assert section["distribution"] == "normal" and section["dtype"] == "float32"
    assert sorted(p["variant"] for p in section["points"]) == sorted(measured["variant"].unique())
    best = measured.sort_values("energy_mj").iloc[0]
    line = energy.headline_energy(section)
    assert line["variant"] == best["variant"] and line["mj"] == pytest.approx(best["energy_mj"])
    assert line["slice"] == "float32, normal"  # the headline says which input its energy is on
    # Where the charted slice has energy, nothing changes and the headline names no slice.
    assert energy.headline_energy(energy.op_energy(op_view.of(frame, "topk")))["slice"] is None


def test_past_sixty_points_the_scatter_names_them_on_hover_only():
    # Placing each name against every earlier one grew with the square: 1,000 variants took 42 s
    # (0.07 s without names).
    import random

    from primbench.report.charts.energy import MAX_NAMED_POINTS, energy_scatter

    rng = random.Random(1)

    def points(count):
        return [{"variant": f"v{i}", "window_gbps": rng.uniform(10, 4000), "gb_per_j": rng.uniform(1, 20), "key": f"k{i}",
                 "mj": 1.0, "anchor": f"a{i}", "n": 1024, "energy": {"mj_per_op": 1.0, "avg_w": 300.0}}
                for i in range(count)]

    named = energy_scatter(points(MAX_NAMED_POINTS), median_w=300, title="t")
    assert named.count('class="point-label"') == MAX_NAMED_POINTS and "hover a point for its name" not in named
    crowded = energy_scatter(points(3000), median_w=300, title="t")
    assert 'class="point-label"' not in crowded and "3000 variants: hover a point for its name" in crowded
    assert crowded.count("<title>v") == 3000  # every point still names its variant
