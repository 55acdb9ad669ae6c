"""The HTML report: rendered from the newest recorded run under results/, plus table arithmetic.

Tests that need a modified run build it in tmp_path from the real run; each such transformation
is test-only and says what it changes. Nothing here needs a GPU.
"""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

from primbench.report import formats, op_view, quality, sections, selection, story
from primbench.report.charts import op_charts
from primbench.report.render import render_report
from primbench.runfile.io import load_run
from primbench.runfile.published import load_published

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def real_report(newest_run, tmp_path_factory) -> tuple[Path, str]:
    """The real run rendered once (rendering draws every plot): its folder and its HTML."""
    out_dir = tmp_path_factory.mktemp("real_report")
    return out_dir, _render(newest_run, out_dir)


# --- helpers -----------------------------------------------------------------------------------


class _Page(HTMLParser):
    """Every start tag with its attributes, the text of every element id, and all <style> text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict, tuple[str, ...]]] = []  # (tag, attrs, ids of enclosing elements)
        self.text_by_id: dict[str, list[str]] = {}
        self.style = []
        self._stack: list[tuple[str, str | None]] = []

    VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "source", "wbr"}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs, tuple(i for _, i in self._stack if i)))
        if tag not in self.VOID:
            self._stack.append((tag, attrs.get("id")))

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, _ = self._stack.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self._stack and self._stack[-1][0] == "style":
            self.style.append(data)
        for _, element_id in self._stack:
            if element_id:
                self.text_by_id.setdefault(element_id, []).append(data)

    def inside(self, element_id: str, tag: str | None = None, **classes):
        """Start tags inside the element `element_id` (optionally of one tag / with a class)."""
        found = []
        for name, attrs, enclosing in self.tags:
            if element_id in enclosing and (tag is None or name == tag):
                if "cls" in classes and classes["cls"] not in (attrs.get("class") or "").split():
                    continue
                found.append(attrs)
        return found

    def text(self, element_id: str) -> str:
        return " ".join(" ".join(self.text_by_id.get(element_id, [])).split())


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _render(run_path: Path, out_dir: Path) -> str:
    out = render_report(run_path, out_dir / "report.html")
    return out.read_text(encoding="utf-8")


def _records(run_path: Path) -> list[dict]:
    return [json.loads(line) for line in run_path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_records(records: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- the report from the real run --------------------------------------------------------------


def test_the_report_renders_from_the_real_run_into_one_self_contained_file(newest_run, real_report):
    out_dir, html = real_report
    assert [p.name for p in out_dir.iterdir()] == ["report.html"]
    assert html.lstrip().lower().startswith("<!doctype html>")
    page = _parse(html)
    assert page.style and "table" in "".join(page.style)  # the stylesheet is inlined
    assert not [t for t, _, _ in page.tags if t in ("link", "iframe", "object", "embed", "img")]
    # One script, inline (the tables' sorting and filtering): nothing is fetched.
    scripts = [attrs for t, attrs, _ in page.tags if t == "script"]
    assert len(scripts) == 1 and "src" not in scripts[0]
    assert load_run(newest_run).header.run_id in html


def test_the_progression_table_lists_every_harris_variant_in_the_run(newest_run, real_report):
    run = load_run(newest_run)
    variants = run.header.variants
    harris = {
        c.case.variant
        for c in run.cases
        if c.case.op == "reduce" and variants.get(f"reduce/{c.case.variant}", {}).get("series") == "harris"
    }
    assert harris, "the real run should measure the Harris progression"
    page = _parse(real_report[1])
    rows = [a["data-variant"] for a in page.inside("progression", "tr") if "data-variant" in a]
    assert harris <= set(rows)
    # The library baseline follows the progression when it was measured.
    if any(c.case.variant == "cub_device_reduce" for c in run.cases):
        assert rows.index("cub_device_reduce") > max(rows.index(v) for v in harris)


def test_every_chart_is_inline_svg_with_hover_titles_and_nothing_points_at_the_network(real_report):
    import re

    html = real_report[1]
    charts = re.findall(r"<svg\b[^>]*>.*?</svg>", html, re.S)
    assert len(charts) >= 10, "the report should carry its charts"
    for chart in charts:
        label = re.search(r'aria-label="([^"]*)"', chart)
        assert label and label.group(1).strip(), chart[:200]
        titles = re.findall(r'class="point[^"]*"[^>]*><title>([^<]+)</title>', chart)
        assert titles and all(t.strip() for t in titles), f"a chart without hover titles: {label.group(1)}"
    page = _parse(html)
    for tag, attrs, _ in page.tags:
        for name, value in attrs.items():
            value = (value or "").strip().lower()
            assert "http://" not in value and "https://" not in value, f"<{tag} {name}> links out"
            assert not value.startswith("//"), f"<{tag} {name}> is a protocol-relative URL"
            if name in ("href", "src", "action", "srcset", "poster"):
                assert value.startswith(("#", "data:")), f"<{tag} {name}={value[:40]!r}> is not inline"
    style = "".join(page.style).lower()
    assert "@import" not in style and "url(" not in style and "http" not in style
    # Any http(s):// left on the page can only be text taken from the run (escaped), never markup.


def test_a_variant_name_with_a_script_tag_appears_as_text(newest_run, tmp_path):
    # Test-only transformation of the real run: one Harris variant is renamed, in the header and
    # in every one of its cases, to a name carrying markup.
    records = _records(newest_run)
    header = records[0]
    target = next(
        c["variant"]
        for c in records[1:]
        if c["kind"] == "case" and header["variants"].get(f"{c['op']}/{c['variant']}", {}).get("series") == "harris"
    )
    hostile = target + "<script>alert(1)</script>"
    info = header["variants"].pop(f"reduce/{target}")
    header["variants"][f"reduce/{hostile}"] = {**info, "name": hostile}
    for record in records[1:]:
        if record["kind"] == "case" and record["variant"] == target:
            record["variant"] = hostile
            record["key"] = record["key"].replace(f"/{target}/", f"/{hostile}/")
    html = _render(_write_records(records, tmp_path / newest_run.name), tmp_path)
    # One script: the page's own (sorting), inlined verbatim; the name's is text everywhere,
    # in table cells, row ids, chart titles and point links alike.
    from primbench.resources import TEMPLATE_DIR

    assert html.lower().count("<script") == 1
    assert "<script>\n" + (TEMPLATE_DIR / "tables.js").read_text(encoding="utf-8") in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    rows = [a["data-variant"] for a in _parse(html).inside("progression", "tr") if "data-variant" in a]
    assert hostile in rows  # the attribute round-trips as the plain name


def test_a_failed_case_is_listed_with_its_reason_and_never_ranked(newest_run, real_report, tmp_path):
    original = _parse(real_report[1])
    ranked = [a["data-key"] for a in original.inside("ranking", "tr", cls="ranked")]
    assert ranked, "the real run should have valid cases at the progression size"
    victim = ranked[0]
    # Test-only transformation of the real run: the fastest ranked case is marked failed (its
    # samples are kept, so the report must exclude it by status alone).
    records = _records(newest_run)
    reason = "test-only: marked failed to check that failures are never ranked"
    for record in records:
        if record.get("kind") == "case" and record["key"] == victim:
            record["status"], record["reason"] = "failed", reason
        if record.get("kind") == "end":  # the end record counts what its cases say
            record["ok"], record["failed"] = record["ok"] - 1, record["failed"] + 1
    page = _parse(_render(_write_records(records, tmp_path / newest_run.name), tmp_path))
    assert victim not in [a["data-key"] for a in page.inside("ranking", "tr", cls="ranked")]
    op = victim.split("/")[0]
    assert victim in [a["data-key"] for a in page.inside(f"failures-{op}", "tr", cls="failure")]
    assert reason in page.text(f"failures-{op}")


def test_a_run_without_an_end_record_is_reported_as_interrupted(newest_run, tmp_path):
    # Test-only transformation of the real run: its end record is dropped, as when a run is killed.
    records = [r for r in _records(newest_run) if r.get("kind") != "end"]
    page = _parse(_render(_write_records(records, tmp_path / newest_run.name), tmp_path))
    assert page.text("run-status") == "interrupted"


# --- published reference data ------------------------------------------------------------------


def test_published_figures_are_marked_as_quotes_and_map_to_real_variants():
    raw = json.loads((REPO / "results" / "reference" / "published.json").read_text(encoding="utf-8"))
    assert raw["schema"] == 1 and raw["kind"] == "published" and raw["raw_samples"] is False
    from primbench import registry

    names = {v.name for v in registry.variants("reduce")}
    progressions = {p.id: p for p in load_published()}
    assert set(progressions) == {"seed002_rtx3080", "harris_g80"}
    for progression in progressions.values():
        assert progression.citation
        assert {e.variant for e in progression.entries} <= names
    assert progressions["seed002_rtx3080"].time_ms("reduce5_complete_unroll_volatile") is None
    assert progressions["harris_g80"].time_ms("reduce6_grid_stride_shuffle") == 0.268


def test_the_report_package_never_imports_cupy():
    # The report runs in CI and on laptops without a GPU (DESIGN.md: report never imports CuPy).
    import re

    for source in (REPO / "primbench" / "report").glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+cupy\b", source.read_text(encoding="utf-8"), re.M), source.name


# --- table arithmetic on hand-made frames ------------------------------------------------------


def _frame(rows):
    import pandas as pd

    defaults = {
        "op": "reduce", "dtype": "float32", "distribution": "uniform", "status": "ok", "reason": None,
        "series": "harris", "order": 0, "noise": 0.001, "gbps": 1.0, "pct_peak": 1.0, "pct_copy": 1.0,
        "l2_resident": False, "stop": "converged", "flags": "", "exact_ok": True, "random_ok": True,
        "error": 0.0, "tolerance": 1.0, "bitwise_equal": True, "launches": 1, "result_hex": None,
        "grids_bitwise_equal": None, "grids_probed": True, "got": None, "expected": None, "serial_float32": None,
    }
    full = []
    for row in rows:
        row = {**defaults, "variant_name": row["variant"], "params": "", **row}
        row.setdefault("param_items", _items(row["params"]))
        row.setdefault("key", f"{row['op']}/{row['variant']}/{row['dtype']}/{row['n']}/{row['block']}/{row['distribution']}")
        full.append(row)
    variants = {
        f"{r['op']}/{r['variant']}": {"origin": "", "hazard": None, "notes": "", "deterministic_expected": True}
        for r in full
    }
    return selection.annotate(pd.DataFrame(full), variants)


def test_step_speedup_is_over_the_previous_timed_row_and_cumulative_over_the_first():
    times = [8.0, 4.0, math.nan, 2.0, 4.0]
    step = story.step_speedups(times)
    cumulative = story.cumulative_speedups(times)
    assert math.isnan(step[0]) and step[1] == 2.0 and math.isnan(step[2]) and step[3] == 2.0 and step[4] == 0.5
    assert cumulative[0] == 1.0 and cumulative[1] == 2.0 and math.isnan(cumulative[2]) and cumulative[3] == 4.0


def test_cumulative_speedup_starts_at_the_first_row_that_has_a_time():
    assert story.cumulative_speedups([math.nan, 6.0, 3.0])[1:] == [1.0, 2.0]


def test_block_256_is_chosen_when_present_else_the_most_measured_block():
    frame = _frame(
        [
            {"variant": "a", "n": 1024, "block": 128, "median_ms": 1.0},
            {"variant": "a", "n": 1024, "block": 256, "median_ms": 2.0},
            {"variant": "b", "n": 1024, "block": 128, "median_ms": 1.0},
            {"variant": "b", "n": 2048, "block": 128, "median_ms": 1.0},
            {"variant": "b", "n": 1024, "block": 512, "median_ms": 1.0},
            {"variant": "cub", "n": 1024, "block": None, "median_ms": 1.0},
        ]
    )
    assert selection.choose_block(frame[frame["variant"] == "a"], 1024) == 256
    assert selection.choose_block(frame[frame["variant"] == "b"], 1024) == 128
    assert selection.choose_block(frame[frame["variant"] == "cub"], 1024) is None


def test_the_l2_edge_is_the_largest_n_at_which_every_drawn_case_fits_in_l2_by_its_own_bytes():
    import pandas as pd

    lines = pd.DataFrame({"n": [1024, 4096, 8192], "bytes": [4096.0, 65536.0, float("nan")]})
    # 1024 elements in 4 KiB fill 1 MiB at 2^18; 4096 in 64 KiB at 2^16: the smaller edge holds for both.
    assert sections.l2_edge(lines, 2**20) == 2**16
    assert sections.l2_edge(lines.iloc[2:], 2**20) is None  # no case with a byte count: nothing is shaded
    assert sections.l2_edge(lines, None) is None  # a GPU whose L2 the run did not record


def test_the_progression_falls_back_to_the_largest_size_when_2_to_the_25_is_absent():
    frame = _frame([{"variant": "a", "n": n, "block": 256, "median_ms": 1.0} for n in (2**20, 2**24)])
    assert selection.choose_progression_size(frame, "reduce") == (2**24, False)
    frame = _frame([{"variant": "a", "n": n, "block": 256, "median_ms": 1.0} for n in (2**25, 2**28)])
    assert selection.choose_progression_size(frame, "reduce") == (2**25, True)


def test_progression_rows_follow_the_harris_order_then_the_baseline_with_speedups():
    frame = _frame(
        [
            {"variant": "cub_device_reduce", "series": "baseline", "order": 90, "n": 2**25, "block": None, "median_ms": 0.5},
            {"variant": "r1", "order": 11, "n": 2**25, "block": 256, "median_ms": 2.0},
            {"variant": "r0", "order": 10, "n": 2**25, "block": 256, "median_ms": 4.0},
            {"variant": "seed", "series": "seed000", "order": 30, "n": 2**25, "block": 256, "median_ms": 0.1},
        ]
    )
    table = story.progression_table(op_view.of(frame, "reduce"), 2**25)
    assert list(table["variant"]) == ["r0", "r1", "cub_device_reduce"]
    assert list(table["time_us"]) == [4000.0, 2000.0, 500.0]
    assert list(table["cumulative_speedup"]) == [1.0, 2.0, 8.0]
    assert list(table["step_speedup"])[1:] == [2.0, 4.0]


def test_an_ordering_difference_is_found_where_a_published_progression_went_the_other_way():
    from primbench.runfile.published import PublishedEntry, PublishedProgression

    rng_seed = PublishedProgression(
        id="seed", label="seed", op="reduce", device="RTX 3080", dtype="float32", n=2**25, peak_gbps=760,
        citation="test", url=None,
        entries=(PublishedEntry("r0", "reduce0", 5.7, None), PublishedEntry("r1", "reduce1", 6.9, None),
                 PublishedEntry("r2", "reduce2", 4.7, None)),
    )
    frame = _frame(
        [
            {"variant": "r0", "order": 10, "n": 2**25, "block": 256, "median_ms": 0.39},
            {"variant": "r1", "order": 11, "n": 2**25, "block": 256, "median_ms": 0.21},
            {"variant": "r2", "order": 12, "n": 2**25, "block": 256, "median_ms": 0.16},
        ]
    )
    table = story.progression_table(op_view.of(frame, "reduce"), 2**25, [rng_seed])
    assert table["seed_cumulative"].round(3).tolist() == [1.0, round(5.7 / 6.9, 3), round(5.7 / 4.7, 3)]
    differences = story.ordering_differences(table, [rng_seed])
    assert [(d.earlier, d.later) for d in differences] == [("r0", "r1")]
    assert differences[0].here_verdict() == "faster" and differences[0].source_verdict() == "slower"


def test_failed_cases_are_not_ranked_and_the_ratio_is_to_the_fastest_library():
    frame = _frame(
        [
            {"variant": "fast_but_wrong", "n": 2**25, "block": 256, "median_ms": 0.01, "status": "failed", "reason": "x"},
            {"variant": "a", "n": 2**25, "block": 256, "median_ms": 0.2},
            {"variant": "a", "n": 2**25, "block": 512, "median_ms": 0.1},
            {"variant": "cub_device_reduce", "series": "baseline", "n": 2**25, "block": None, "median_ms": 0.08},
            {"variant": "slower_library", "series": "library", "n": 2**25, "block": None, "median_ms": 0.09},
        ]
    )
    view = op_view.of(frame, "reduce")
    ranking = story.ranking_table(view, 2**25)
    assert list(ranking["variant"]) == ["cub_device_reduce", "slower_library", "a"]
    assert int(ranking.loc[2, "block"]) == 512  # each variant at its fastest block
    assert ranking.loc[2, "ratio_to_library"] == pytest.approx(1.25)  # the faster library's, whatever its series' spelling
    assert list(ranking["is_best_library"]) == [True, False, False]
    assert list(story.unranked_cases(view, 2**25)["variant"]) == ["fast_but_wrong"]


def test_determinism_is_yes_no_or_mixed_across_a_variants_cases():
    assert quality.determinism_verdict([True, True]) == "yes"
    assert quality.determinism_verdict([False, False]) == "no"
    assert quality.determinism_verdict([True, False, None]) == "mixed"
    assert quality.determinism_verdict([None]) == ""


def test_a_case_over_100_percent_of_peak_is_reported_as_a_bytes_model_problem():
    frame = _frame(
        [
            {"variant": "a", "n": 2**25, "block": 256, "median_ms": 0.1, "pct_peak": 130.0},
            {"variant": "b", "n": 2**25, "block": 256, "median_ms": 0.1, "pct_peak": 50.0, "flags": "throttled"},
        ]
    )
    timing = quality.timing_quality(frame)
    assert list(timing.over_peak["variant"]) == ["a"]
    assert timing.flags == {"throttled": 1}


def test_the_timing_section_counts_l2_resident_cases_per_size_and_spreads_the_sm_clocks():
    frame = _frame(
        [
            {"variant": "a", "n": 2**20, "block": 256, "median_ms": 0.1, "l2_resident": True, "sm_clock_mhz": 1700.0},
            {"variant": "b", "n": 2**20, "block": 256, "median_ms": 0.1, "l2_resident": True, "sm_clock_mhz": 1980.0},
            {"variant": "a", "n": 2**28, "block": 256, "median_ms": 2.0, "sm_clock_mhz": 1980.0},
        ]
    )
    section = quality.timing_section(frame)
    assert section["measured"] == 3 and section["l2_resident_by_size"] == [(2**20, 2)]
    assert [r["variant"] for r in section["l2_resident"]] == ["a", "b"]  # records, for the page
    assert section["clock"]["cases"] == 3 and section["clock"]["median"] == 1980.0
    assert section["clock"]["p05"] == pytest.approx(1700.0 + 0.1 * 280.0)
    assert quality.timing_section(frame.drop(columns="sm_clock_mhz"))["clock"] is None  # a run without clocks


def test_the_accuracy_study_gives_relative_errors_against_the_exact_sum_with_the_serial_loop_and_the_floor():
    exact = 1000.0 + 2.0**-15  # below float32 resolution at 1000 (2^-14): its own rounding is the floor
    rows = [
        {"variant": "plain", "series": "beyond", "order": 1, "n": 2**20, "block": 256, "median_ms": 0.1,
         "distribution": "ill_conditioned", "got": exact + 0.5, "expected": exact, "serial_float32": exact + 40.0},
        {"variant": "compensated", "series": "accuracy", "order": 2, "n": 2**20, "block": 256, "median_ms": 0.1,
         "distribution": "ill_conditioned", "got": exact + 0.01, "expected": exact, "serial_float32": exact + 40.0},
        {"variant": "plain", "series": "beyond", "order": 1, "n": 2**20, "block": 256, "median_ms": 0.1,
         "distribution": "uniform", "got": 5.0, "expected": 9.0},  # not the accuracy input: ignored
    ]
    frame = _frame(rows)
    study = sections.accuracy_study(op_view.of(frame, "reduce"))
    by_label = {row["label"]: row for row in study.rows}
    assert study.sizes == [2**20]
    assert by_label["plain"]["errors"] == [pytest.approx(0.5 / exact)]
    assert by_label["compensated"]["errors"] == [pytest.approx(0.01 / exact)]
    serial = next(row for row in study.rows if row["kind"] == "serial")
    assert serial["errors"] == [pytest.approx(40.0 / exact)]
    floor = next(row for row in study.rows if row["kind"] == "floor")
    assert floor["errors"] == [pytest.approx(2.0**-15 / exact)]
    frame = frame.assign(variant=frame["variant"].replace({"plain": "vector_load_sum", "compensated": "vector_compensated_sum"}))
    headline = sections.accuracy_study(op_view.of(frame, "reduce")).headline
    assert headline["ratio"] == pytest.approx(0.02) and headline["verdict"] == "50 times smaller"
    assert sections._accuracy_verdict(0.0, 1e-7) == "the compensated sum is exact"
    assert sections._accuracy_verdict(1e-9, 0.0) == "the plain tree is exact here"  # not "exact" for the compensated
    assert sections._accuracy_verdict(2e-9, 1e-9) == "2.0 times larger"
    assert sections._accuracy_verdict(1e-9, 1e-9) == "about the same"  # never "1 times smaller"
    assert sections._accuracy_verdict(1e-9, 3e-9) == "3.0 times smaller"


def test_reproducibility_compares_one_inputs_results_across_block_sizes_and_reads_the_grid_probe():
    frame = _frame([
        {"variant": "fixed", "n": 2**20, "block": 128, "median_ms": 0.1, "result_hex": "aa", "grids_bitwise_equal": True},
        {"variant": "fixed", "n": 2**20, "block": 256, "median_ms": 0.1, "result_hex": "aa", "grids_bitwise_equal": True},
        {"variant": "tree", "n": 2**20, "block": 128, "median_ms": 0.1, "result_hex": "aa", "grids_bitwise_equal": False},
        {"variant": "tree", "n": 2**20, "block": 256, "median_ms": 0.1, "result_hex": "ab", "grids_bitwise_equal": False},
        {"variant": "tree", "n": 2**21, "block": 256, "median_ms": 0.1, "result_hex": "cc"},  # one block only: not compared
        {"variant": "library", "n": 2**20, "block": None, "median_ms": 0.1, "result_hex": "aa"},
    ])
    table = quality.reproducibility_table(frame, "reduce").set_index("variant")
    assert table.loc["fixed", "across_blocks"] == "yes" and table.loc["fixed", "across_grids"] == "yes"
    assert table.loc["tree", "across_blocks"] == "no" and table.loc["tree", "inputs_compared"] == 1
    assert table.loc["tree", "across_grids"] == "no"
    assert table.loc["library", "across_blocks"] == "not tried" and table.loc["library", "across_grids"] == "not tried"
    old_run = quality.reproducibility_table(frame.drop(columns=["grids_probed"]).assign(result_hex=None, grids_bitwise_equal=None), "reduce")
    assert set(old_run["across_blocks"]) == set(old_run["across_grids"]) == {"not recorded"}


def test_the_dtype_table_compares_each_dtype_with_the_best_library_in_the_same_dtype():
    frame = _frame([
        {"variant": "v", "series": "beyond", "dtype": "float32", "n": 2**28, "block": 256, "median_ms": 0.25},
        {"variant": "v", "series": "beyond", "dtype": "float16", "n": 2**28, "block": 256, "median_ms": 0.13},
        {"variant": "cub_device_reduce", "series": "baseline", "dtype": "float32", "n": 2**28, "block": None, "median_ms": 0.26},
        {"variant": "v", "series": "beyond", "dtype": "float32", "n": 2**20, "block": 256, "median_ms": 0.01},
    ])
    table, where = sections.dtype_table(op_view.of(frame, "reduce"))
    assert where["n"] == 2**28 and where["libraries"] == ["cub_device_reduce"]
    rows = table.set_index(["variant", "dtype"])
    assert rows.loc[("v", "float32"), "ratio_to_library"] == pytest.approx(0.25 / 0.26)
    assert math.isnan(rows.loc[("v", "float16"), "ratio_to_library"])  # no float16 library case


def test_the_accuracy_input_is_never_the_headline_slice_when_the_run_has_another():
    rows = [{"variant": f"v{i}", "n": 2**20, "block": 256, "median_ms": 0.1, "distribution": "ill_conditioned"} for i in range(5)]
    rows.append({"variant": "v0", "n": 2**20, "block": 256, "median_ms": 0.1, "distribution": "uniform"})
    assert selection.primary_slice(_frame(rows), "reduce") == ("float32", "uniform")


def test_the_real_run_has_the_accuracy_reproducibility_and_dtype_sections(newest_run, real_report):
    _out_dir, html = real_report
    frame = selection.annotate(load_run(newest_run).frame(), load_run(newest_run).header.variants)
    if "ill_conditioned" not in set(frame["distribution"]):
        pytest.skip("the newest run has no accuracy sweep")
    page = _Page()
    page.feed(html)
    ids = {attrs.get("id") for _tag, attrs, _ in page.tags}
    assert {"accuracy", "reproducibility-reduce", "dtypes-reduce"} <= ids
    study = sections.accuracy_study(op_view.of(frame, "reduce"))
    assert study.headline is not None and study.headline["ratio"] < 1
    fixed = quality.reproducibility_table(frame, "reduce").set_index("variant").loc["vector_fixed_tree_deterministic"]
    assert (fixed["across_runs"], fixed["across_blocks"], fixed["across_grids"]) == ("yes", "yes", "yes")


def test_tables_hold_a_parameter_fixed_but_keep_the_variants_that_have_none():
    import pandas as pd

    frame = pd.DataFrame({
        "op": ["histogram"] * 4 + ["reduce"],
        "variant": ["cub", "replicated[replicas=8]", "replicated[replicas=8]", "replicated[replicas=2]", "x"],
        "params": ["", "replicas=8", "replicas=8", "replicas=2", ""],
        "param_items": [(), (("replicas", 8),), (("replicas", 8),), (("replicas", 2),), ()],
        "dtype": ["uint8"] * 4 + ["float32"],
        "distribution": ["uniform"] * 5,
        "valid": [True] * 5,
    })
    assert selection.primary_params(frame, "histogram", "uint8", "uniform") == {"replicas": 8}
    kept = selection.with_params(frame, "histogram", {"replicas": 8})
    assert list(kept["variant"]) == ["cub", "replicated[replicas=8]", "replicated[replicas=8]", "x"]
    assert selection.primary_params(frame, "reduce", "float32", "uniform") is None


def _items(text: str) -> tuple:
    """A hand-made row's parameter text as the (name, value) pairs results.to_frame gives every row."""
    return tuple(sorted((name, int(value)) for name, value in (part.split("=") for part in text.split(",") if part)))


def _histogram_frame():
    import pandas as pd

    rows = []
    for distribution, scale in (("uniform", 1.0), ("all_equal", 0.5)):
        for block in (128, 256):
            for k in (2, 8, 32):
                rows.append(("seed004_replicated", f"bins=256,replicas={k}", block, distribution, 100.0 * k * scale))
            rows.append(("vector_per_warp", "bins=256", block, distribution, 2000.0 * scale))
        rows.append(("cub_histogram_even", "bins=256", None, distribution, 250.0 * scale))
    rows.append(("vector_per_warp", "bins=1024", 256, "uniform", 1.0))  # another bin count: not compared
    return pd.DataFrame([{
        "op": "histogram", "variant": f"{name}[{params}]", "variant_name": name, "params": params,
        "param_items": _items(params), "block": block,
        "dtype": "uint8", "distribution": distribution, "n": 2**26, "valid": True, "gbps": gbps,
        "median_ms": 2**26 / gbps / 1e6, "order": {"seed004_replicated": 30, "vector_per_warp": 40}.get(name, 90),
        "series": "baseline" if block is None else "beyond",
    } for name, params, block, distribution, gbps in rows])


def test_parameters_are_held_one_by_one_so_variants_with_fewer_parameters_stay():
    frame = _histogram_frame()
    params = selection.primary_params(frame, "histogram", "uint8", "uniform")
    assert params.text == "bins=256,replicas=2"  # each parameter's most measured value (a tie: the first seen)
    kept = selection.with_params(frame, "histogram", params)
    assert set(kept["variant"]) == {"seed004_replicated[bins=256,replicas=2]", "vector_per_warp[bins=256]",
                                    "cub_histogram_even[bins=256]"}


def test_distribution_bars_hold_every_variant_on_every_distribution_at_its_block():
    frame = selection.with_params(_histogram_frame(), "histogram", {"bins": 256, "replicas": 8})
    bars = sections.distribution_bars(op_view.of(frame, "histogram"))
    assert set(bars["distribution"]) == {"uniform", "all_equal"}
    assert set(bars["block"].dropna()) == {256} and bars["block"].isna().sum() == 2  # CUB chooses its own
    fast = bars[(bars["variant"] == "vector_per_warp[bins=256]") & (bars["distribution"] == "all_equal")]
    assert fast["gbps"].item() == 1000.0
    chart = op_charts.distribution_bars_chart(bars.to_dict("records"), title="t")
    # A mark per bar of the table: bars from 0, or dots on a log axis where GB/s span more than 20 times.
    marks = chart.count('class="point bar vertical"') + chart.count('class="point dot"')
    assert chart.startswith("<svg") and marks == len(bars)
    single = frame[frame["distribution"] == "uniform"]
    assert sections.distribution_bars(op_view.of(single, "histogram")).empty


def test_a_parameter_swept_with_all_else_fixed_is_one_line_per_variant_and_block():
    view = op_view.of(_histogram_frame(), "histogram")
    sweeps = sections.param_sweeps(view, "uint8", "uniform")
    by_param = {s["param"]: s for s in sweeps}
    assert set(by_param) == {"replicas"}  # bins has two values here: a check, not a sweep
    line = by_param["replicas"]["lines"]["seed004_replicated[bins=256], block 128"]
    assert [(value, gbps) for value, gbps, _ in line] == [(2, 200.0), (8, 800.0), (32, 3200.0)]
    assert all(case["variant_name"] == "seed004_replicated" for _, _, case in line)  # each point knows its case
    assert len(sections.param_sweeps(view, "uint8", "uniform", min_values=2)) == 2
    chart = op_charts.param_sweep_chart(by_param["replicas"], title="t")
    assert chart.startswith("<svg") and chart.count("<title>") == sum(len(v) for v in by_param["replicas"]["lines"].values())


def test_the_dtype_table_compares_each_row_with_the_library_at_its_own_parameters():
    import pandas as pd

    rows = [("cub_histogram_even", "int32", "bins=32", 2.0), ("cub_histogram_even", "int32", "bins=1024", 8.0),
            ("cub_histogram_even", "uint8", "bins=256", 4.0), ("vector_per_warp", "int32", "bins=32", 1.0),
            ("vector_per_warp", "int32", "bins=1024", 1.0), ("vector_per_warp", "uint8", "bins=256", 1.0)]
    frame = pd.DataFrame([{
        "op": "histogram", "variant": f"{name}[{params}]", "variant_name": name, "params": params, "param_items": _items(params), "dtype": dtype,
        "n": 2**26, "distribution": "uniform", "valid": True, "median_ms": ms, "gbps": 1.0, "pct_peak": 1.0,
        "block": None if name.startswith("cub") else 256, "order": 90 if name.startswith("cub") else 40,
        "series": "baseline" if name.startswith("cub") else "beyond",
    } for name, dtype, params, ms in rows])
    table, where = sections.dtype_table(op_view.of(frame, "histogram"))
    assert where["libraries"] == ["cub_histogram_even[bins=1024]", "cub_histogram_even[bins=256]", "cub_histogram_even[bins=32]"]
    ratios = {(r.variant, r.dtype): r.ratio_to_library for r in table.itertuples()}
    assert ratios[("vector_per_warp[bins=32]", "int32")] == 0.5
    assert ratios[("vector_per_warp[bins=1024]", "int32")] == 0.125
    assert ratios[("vector_per_warp[bins=256]", "uint8")] == 0.25


def test_each_dtype_gets_its_own_slice_for_the_parameter_sweeps():
    import pandas as pd

    frame = _histogram_frame()
    other = frame[frame["distribution"] == "all_equal"].assign(dtype="int32")  # fewer cases than uint8, uniform
    both = pd.concat([frame, other], ignore_index=True)
    assert selection.slices_by_dtype(both, "histogram", selection.primary_slice(both, "histogram")) == [("uint8", "uniform"), ("int32", "all_equal")]


# --- the top of the report: the story in one sentence and one chart, one line per op -----------


def test_the_report_opens_with_the_story_sentence_its_time_chart_and_one_line_per_op(newest_run, real_report):
    html = real_report[1]
    import re

    page = _parse(html)
    start = html.index('id="summary"')
    sentence = " ".join(re.sub(r"<[^>]+>", "", html[start:html.index("</p>", start)]).split())
    frame = selection.annotated_frame(load_run(newest_run))
    table = story.progression_table(op_view.of(frame, "reduce"), 2**25, load_published())
    seeds = table[(table["series"] == "harris") & table["time_us"].notna()]
    first, last = seeds["time_us"].iloc[0], seeds["time_us"].iloc[-1]
    assert f"takes {first:,.1f} µs with the seeds' first kernel and {last:,.1f} µs with warp shuffles ({formats.format_faster(first / last)})" in sentence
    assert "seed 002, RTX 3080 went from 5.7 ms to 1.01 ms (5.6× faster)" in sentence  # the published figures
    # The chart comes before any table: the story is at the top, not 3,000 px down.
    assert html.index('id="story-chart"') < html.index('id="progression"') < html.index('<table')
    (chart,) = page.inside("story-chart", "svg")
    assert "story" in chart["class"].split() and chart["aria-label"]
    ops_measured = sorted(set(frame["op"]))
    start = html.index('id="headlines"')
    lines = " ".join(re.sub(r"<[^>]+>", "", html[start:html.index("</section>", start)]).split())
    assert [op for op in ops_measured if f"{op} at n =" in lines] == ops_measured
    assert "% of peak" in lines and "faster than the best library, cub_device_reduce" in lines


def test_each_step_of_the_story_chart_has_its_reason_and_its_published_times():
    from primbench.report import headline
    from primbench.runfile.published import load_published

    published = load_published()
    rows = [{"variant": "reduce0_interleaved_divergent", "series": "harris", "time_us": 400.0, "origin": "o0"},
            {"variant": "reduce6_grid_stride_shuffle", "series": "harris", "time_us": 80.0, "origin": "o6"},
            {"variant": "my_kernel", "series": "beyond", "time_us": 40.0, "origin": "a user's kernel"},
            {"variant": "cub_device_reduce", "series": "baseline", "time_us": 50.0, "origin": "o"}]
    steps = headline.story_steps(rows, published, "reduce")
    assert "divergence" in steps[0]["reason"] and steps[2]["reason"] == "a user's kernel"  # undeclared: its origin
    assert steps[0]["times"] == [400.0, 5700.0, pytest.approx(8054.0)]  # here, RTX 3080, G80 (µs)
    assert steps[2]["times"] == [40.0, None, None]
    assert [s["group"] for s in steps] == ["the seeds' steps", "the seeds' steps", "past the seeds", "the libraries"]
    opening = headline.opening(rows, published, 2**25, "float32")
    assert opening["last"]["speedup"] == 5.0 and opening["beyond"]["step"] == 2.0 and opening["library"]["us"] == 50.0
    assert [(p["label"], p["speedup"], p["same_size"]) for p in opening["published"]] == [
        ("seed 002, RTX 3080", pytest.approx(5.7 / 1.01), True), ("Harris, G80", pytest.approx(8.054 / 0.268), False)]
    assert headline.opening(rows[2:], published, 2**25, "float32") is None  # no seeds' steps: no sentence


def test_tick_labels_never_meet_1000_gets_none_beside_1024():
    from primbench.report.charts.svg import Axis, log2_ticks

    wide = Axis(900, 2**21, 0, 1000, log=True)
    assert log2_ticks([1000, 1024, 2048, 2**20], wide) == [1024, 2048, 2**20]
    narrow = Axis(2**10, 2**28, 0, 330, log=True)
    crowded = log2_ticks([2**k for k in range(10, 29)], narrow)
    assert len(crowded) < 10 and crowded[0] == 1024 and all(narrow(b) - narrow(a) >= 42 for a, b in zip(crowded, crowded[1:]))


def test_each_headline_names_the_library_whose_time_it_quotes():
    # The histogram line once quoted cub_histogram_even[bins=256]'s time under the name of the
    # bins=1024 case: the label came from the whole run, the time from the headline's slice.
    from primbench.report import headline

    frame = selection.annotated_frame(load_run(REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"))
    for op in sorted(set(frame["op"])):
        view = op_view.of(frame, op)
        rows = formats.as_records(story.best_per_size(view))  # as the page hands them: a missing value is None
        line = headline.op_headline(op, rows, None)
        if line["library_us"] is None:
            continue
        cases = view.primary  # best_per_size's slice
        timed = cases[(cases["variant"] == line["library"]) & (cases["n"] == line["n"]) & cases["valid"]]
        assert line["library_us"] == pytest.approx(timed["median_ms"].min() * 1e3), op


def test_a_ratio_far_below_one_keeps_its_digits():
    assert formats.format_ratio3(0.0031094) == "0.00311" and formats.format_ratio3(0.89) == "0.89"


def test_a_report_builds_one_view_per_op_and_selects_each_ops_slice_once(monkeypatch, tmp_path):
    """The op view (report/op_view.py) answers the slice, parameters and libraries once per op;
    no section asks selection.py again for what the view holds."""
    calls = {"frame": 0, "view": [], "primary_params": []}
    real = {"frame": selection.annotated_frame, "view": op_view._view, "params": selection.primary_params}

    def counted_frame(run):
        calls["frame"] += 1
        return real["frame"](run)

    def counted_view(cases, op, *args):
        calls["view"].append(op)
        return real["view"](cases, op, *args)

    def counted_params(cases, op, *args):
        calls["primary_params"].append(op)
        return real["params"](cases, op, *args)

    monkeypatch.setattr(selection, "annotated_frame", counted_frame)
    monkeypatch.setattr(op_view, "_view", counted_view)
    monkeypatch.setattr(selection, "primary_params", counted_params)
    run_path = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
    render_report(run_path, tmp_path / "report.html")
    run_ops = sorted(real["frame"](load_run(run_path))["op"].unique())
    assert calls["frame"] == 1 and len(run_ops) == 6
    assert sorted(calls["view"]) == run_ops and sorted(calls["primary_params"]) == run_ops
