"""The published site's history and GPU models pages, from the digest of a real run
(tests/data/runs/fixture-a: every op, 352 cases): which sizes a digest keeps, the charts' panels,
links, titles and captions. Histories of several runs are copies of that digest under other run
ids and dates, with test-only edits said where they are made. No publish, no browser: fast."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET

import pytest

from primbench.report import selection
from primbench.report.charts.history import MAX_LINES, panel_groups
from primbench.report.site import history
from primbench.report.site.digest import (
    DIGEST_NAME,
    DIGEST_SCHEMA,
    DigestCache,
    digest,
    history_sizes,
)
from tests.conftest import RUNS


@pytest.fixture(scope="module")
def fixture_run():
    from primbench.report import op_view
    from primbench.runfile.io import load_run

    run = load_run(RUNS / "fixture-a.jsonl.gz")
    views = op_view.build(run)
    return views.frame, digest(run, views, "runs/fixture-a.html")


def _copies(one: dict, count: int, edit=None) -> list[dict]:
    """`count` copies of a digest as runs a day apart (test-only: new ids, pages and dates), each
    passed to edit(digest, index) when given."""
    runs = []
    for index in range(count):
        d = copy.deepcopy(one)
        d["id"], d["page"] = f"test-run-{index}", f"runs/test-run-{index}.html"
        d["started"] = f"2030-01-{index + 1:02d}T03:00:00+00:00"
        if edit:
            edit(d, index)
        runs.append(d)
    return runs


def _svgs(page: dict):
    for section in page["sections"]:
        for chart in section["charts"]:
            yield section["op"], chart, ET.fromstring(str(chart["svg"]))


def test_a_digest_keeps_the_smallest_middle_and_largest_size_and_the_headline_ones():
    assert history_sizes([2**10, 2**16, 2**20, 2**25]) == [2**10, 2**16, 2**25]
    assert history_sizes([2**10, 2**20, 2**26, 2**27, 2**28]) == [2**10, 2**26, 2**28]
    assert history_sizes([2**10, 2**25, 2**26, 2**27]) == [2**10, 2**25, 2**27]  # the seed's size too
    assert history_sizes([64, 1]) == [1, 64] and history_sizes([512]) == [512] and history_sizes([]) == []


def test_every_op_of_the_run_is_in_the_history_with_three_sizes_where_it_measured_three(fixture_run):
    frame, one = fixture_run
    page = history.history(_copies(one, 2), "NVIDIA H200")
    shown = {section["op"]: section["sizes"] for section in page["sections"]}
    assert set(shown) == set(selection.ops_in(frame))
    for op, sizes in shown.items():
        dtype, distribution = selection.primary_slice(frame, op)
        cases = selection.slice_of(frame, op, dtype, distribution)
        measured = sorted({int(n) for n in cases.loc[cases["valid"], "n"]})
        assert len(sizes) >= min(3, len(measured)), (op, sizes, measured)
        assert sizes[0] == measured[0] and sizes[-1] == measured[-1], (op, sizes, measured)
    assert shown["topk"] == [1, 64]  # counted in rows: dropped without a word before


def test_no_panel_holds_more_than_eight_lines_and_every_variant_keeps_its_line(fixture_run):
    assert [len(g) for g in panel_groups(list(range(20)))] == [7, 7, 6]
    assert [len(g) for g in panel_groups(list(range(9)))] == [5, 4]
    assert [len(g) for g in panel_groups(list(range(8)))] == [8]
    page = history.history(_copies(fixture_run[1], 3), "NVIDIA H200")
    several = 0
    for op, chart, svg in _svgs(page):
        panels = svg.findall(".//g[@class='panel']")
        lines = [[p.get("data-series") for p in panel.iter("polyline")] for panel in panels]
        assert all(len(mine) <= MAX_LINES for mine in lines), (op, chart["n"], [len(m) for m in lines])
        variants = [v for mine in lines for v in mine]
        assert len(variants) == len(set(variants))  # each variant drawn once, in one panel
        legends = svg.findall(".//g[@class='legend']")
        assert len(legends) == len(panels)
        for legend in legends:  # no two lines of a panel share a colour
            colours = [line.get("stroke") for line in legend.iter("line")]
            assert len(colours) == len(set(colours)), (op, chart["n"], colours)
        several += len(panels) > 1
        tops = {(panel.find("rect").get("height"), tuple(t.text for t in panel.iter("text") if t.get("text-anchor") == "end"))
                for panel in panels}
        assert len(tops) == 1, (op, chart["n"])  # small multiples share one y scale: the same ticks
    assert several  # the run has ops of more than 8 variants: they did become small multiples


def test_a_history_line_has_its_series_colour_as_in_the_report_and_each_chart_names_its_series(fixture_run):
    from primbench.report.charts.series_styles import series_colour, shade, SHADES

    series_of = {p["variant"]: p["series"] for p in fixture_run[1]["points"]}
    assert set(series_of.values()) >= {"harris", "beyond", "library"}
    page = history.history(_copies(fixture_run[1], 2), "NVIDIA H200")
    for op, chart, svg in _svgs(page):
        named = {g.get("data-series") for key in svg.iter("g") if key.get("class") == "series-key" for g in key.iter("g")}
        for line in svg.iter("polyline"):
            series = series_of[line.get("data-series")]
            own = series_colour(series)  # a shade of it: on the line from its darkest to its lightest
            shades = {shade(own, -SHADES + 2 * SHADES * k / 100) for k in range(101)} | {own}
            assert _near(line.get("stroke"), shades), (op, line.get("data-series"), line.get("stroke"), series)
            assert series in named, (op, chart["n"], series)


def _near(colour: str, shades: set) -> bool:
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return any(max(abs(a - int(s[i:i + 2], 16)) for a, i in zip(rgb, (1, 3, 5))) <= 3 for s in shades)


def test_each_point_links_to_its_run_page_and_names_the_run_commit_variant_size_and_median(fixture_run):
    runs = _copies(fixture_run[1], 3)
    page = history.history(runs, "NVIDIA H200")
    pages = {d["page"]: d for d in runs}
    points = 0
    for op, chart, svg in _svgs(page):
        for link in svg.iter("a"):
            href, title = link.get("href"), link.find("title").text
            assert href in pages, href  # a page of the site, not a fragment of this one
            run = pages[href]
            assert f"run {run['id']}" in title and run["started"][:10] in title and run["git"][:7] in title
            assert re.search(r"· n = \S+ · median [\d.,]+ µs$", title), title
            points += 1
    assert points >= sum(len(d["points"]) for d in runs) * 0.9  # about one per case and run


def _slowed_copy(path, folder, key, factor):
    """The run file at `path` with case `key`'s samples `factor` x slower (test-only), in `folder`."""
    import gzip

    records = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    for record in records:
        if record.get("key") == key:
            samples = record["samples"]
            samples["cold_ms"] = [t * factor for t in samples["cold_ms"]]
            samples["batch_ms"] = [t * factor for t in samples["batch_ms"]]
    slowed = folder / "slowed.jsonl"
    slowed.write_text("".join(json.dumps(r) + "\n" for r in records))
    return slowed


def test_a_slowdown_is_marked_with_its_size_and_linked_to_the_run_where_it_began(fixture_run, tmp_path):
    one = fixture_run[1]
    largest = max(q["n"] for q in one["points"] if q["op"] == "scan")
    slowed = next(p for p in one["points"] if p["op"] == "scan" and p["n"] == largest)
    slowed_file = _slowed_copy(RUNS / "fixture-a.jsonl.gz", tmp_path, slowed["key"], 1.2)

    def slower_from_the_fourth(d, index):  # test-only: one case 20 % slower from run 3 on, in its run file too
        d["source"] = str(slowed_file if index >= 3 else RUNS / "fixture-a.jsonl.gz")
        for p in d["points"]:
            if p["key"] == slowed["key"] and index >= 3:
                p["median_us"] *= 1.2
                p["judged_us"] *= 1.2

    page = history.history(_copies(one, 6, slower_from_the_fourth), "NVIDIA H200")
    assert [(r["op"], r["n"], r["variant"], r["run"]) for r in page["regressions"]] == [
        ("scan", slowed["n"], slowed["variant"], "test-run-3")]
    (chart,) = [c for op, c, _ in _svgs(page) if op == "scan" and c["n"] == slowed["n"]]
    svg = ET.fromstring(str(chart["svg"]))
    (mark,) = [a for a in svg.iter("a") if a.get("data-slowdown")]
    assert mark.get("href") == "runs/test-run-3.html" and mark.find("polygon").get("fill") == "#c0392b"
    assert "+20 %" in [t.text for t in svg.iter("text")]
    assert "1 slowdown(s) marked" in chart["caption"]


def test_a_same_code_series_marks_nothing_that_compare_calls_same():
    # fixture-a then fixture-b: the same code on one H200. Step detection alone (a 5 % step of cold
    # medians) flagged 4 of their steps (reduce2 and reduce3 at 2^16, cub_device_max at 2^20, a top-k
    # case), which compare calls SAME or BELOW_FLOOR; the verdict engine marks none.
    from primbench.compare import verdicts
    from primbench.report import op_view
    from primbench.runfile.io import load_run

    runs = [load_run(RUNS / f"fixture-{side}.jsonl.gz") for side in "ab"]
    digests = [dict(digest(run, op_view.build(run), f"runs/{side}.html"), source=str(run.path))
               for run, side in zip(runs, "ab")]
    page = history.history(digests, "NVIDIA H200")
    assert page["regressions"] == []
    assert not any(p.verdict == verdicts.SLOWER for p in verdicts.compare_runs(*runs))


def test_every_caption_is_filled(fixture_run):
    def a_day_without_commit(d, index):  # test-only: the second run has no commit and no start time
        if index == 1:
            d["git"], d["started"] = None, None

    page = history.history(_copies(fixture_run[1], 2, a_day_without_commit), "NVIDIA H200")
    captions = [chart["caption"] for _, chart, _ in _svgs(page)]
    assert captions
    for caption in captions:
        assert caption.strip() and not re.search(r"None|nan|\bn = [;,.]|\(\)|  | [,;.]", caption), caption
        assert re.search(r"n = \S+ on NVIDIA H200: the median time of \d+ variant\(s\) in \d+ run\(s\)", caption), caption


def test_the_gpu_models_page_draws_a_bar_per_figure_linked_to_its_row(fixture_run):
    one = fixture_run[1]
    other = dict(copy.deepcopy(one), id="test-other-gpu", gpu="Another GPU", page="runs/test-other-gpu.html")
    page = history.cross_gpu({one["gpu"]: [one], other["gpu"]: [other]})
    rows = {row["anchor"]: row for row in page["rows"]}
    assert {row["op"] for row in page["rows"]} == {p["op"] for p in one["points"]}  # top-k too
    assert len(rows) == len(page["rows"])  # the anchors are unique
    svg = ET.fromstring(str(page["chart"]))
    bars = list(svg.iter("a"))
    figures = sum(1 for row in page["rows"] for cell in row["cells"] if cell and cell["pct_peak"] is not None)
    assert len(bars) == figures and all(bar.get("href")[1:] in rows for bar in bars)
    assert all("% of peak" in bar.find("title").text for bar in bars)
    assert page["caption"] and "None" not in page["caption"]


def test_a_digest_cache_of_the_former_schema_is_read_again(tmp_path):
    (tmp_path / DIGEST_NAME).write_text(json.dumps({"schema": DIGEST_SCHEMA - 1, "digests": {"k": {"id": "old"}}}))
    assert DigestCache(tmp_path).get("k") is None


def test_the_gpu_models_page_takes_per_op_the_newest_run_that_covers_the_ops_largest_size(fixture_run):
    # A full run, then a nightly subset of it (test-only: reduce kept below 2^20 only), then one cut short.
    full, nightly, cut = _copies(fixture_run[1], 3)
    nightly["points"] = [p for p in nightly["points"] if p["op"] != "reduce" or p["n"] < 2**20]
    for p in nightly["points"]:
        p["pct_peak"] = 2.0  # the nightly's figures, told apart from the full run's
    cut["finished"] = False
    page = history.cross_gpu({"NVIDIA H200": [full, nightly, cut]})
    largest = max(p["n"] for p in full["points"] if p["op"] == "reduce")
    sources = {source["op"]: source["runs"][0]["id"] for source in page["sources"]}
    assert sources.pop("reduce") == full["id"]  # the nightly does not reach reduce's largest size
    assert set(sources.values()) == {nightly["id"]}  # every other op: the newest run, which covers it
    reduce_rows = [row for row in page["rows"] if row["op"] == "reduce"]
    assert reduce_rows and {row["n"] for row in reduce_rows} >= {largest}
    assert all(row["cells"][0]["run"] == full["id"] and row["cells"][0]["pct_peak"] != 2.0 for row in reduce_rows)
    assert all(row["cells"][0]["pct_peak"] == 2.0 for row in page["rows"] if row["op"] != "reduce")

