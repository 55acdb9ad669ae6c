"""The report against the best library (report/op_view.py libraries, story.py, headline.py):
at each size, every ratio is against the fastest library case there, named with the library the run
records; a library that beats our fastest kernel at an op's largest size is said so plainly; and
a library case far below its own light is flagged beside the case and in its op's line.

On the committed reference run (rendered once), and on copies of the committed nightly run with a
second library planted or a library case slowed (tests/run_copies.py; nothing under results/ changes)."""

from __future__ import annotations

import copy
import html as htmllib
import re
from pathlib import Path

import pytest

from primbench.report.context import build_context
from primbench.report.render import REPORT_TEMPLATE, render_page, story_published
from primbench.runfile.io import load_run
from primbench.runfile.libraries import FAR_WORDS, library_mask
from tests.run_copies import edited_copy

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
NIGHTLY = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"
SIXTY_FOUR_BIT_HISTOGRAM = "histogram/cub_histogram_even/uint8/n=268435456/block=lib/uniform/bins=256"
NEAR_ITS_LIGHT = "reduce/cub_device_reduce/float32/n=268435456/block=lib/uniform"  # 97 % of its light


def _report(path: Path):
    run = load_run(path)
    context = build_context(run, story_published())
    return run, context, render_page(REPORT_TEMPLATE, **context)


@pytest.fixture(scope="module")
def reference():
    return _report(REFERENCE)


def _text(fragment: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _headline(page: str, op: str) -> str:
    lines = page[page.index('<ul class="headlines">'):page.index("</ul>", page.index('<ul class="headlines">'))]
    (line,) = [_text(li) for li in lines.split("<li>")[1:] if f'href="#op-{op}"' in li]
    return line


def _row(page: str, anchor: str) -> str:
    start = page.index(f'<tr id="{anchor}">')
    return page[start:page.index("</tr>", start)]


def _fastest_library(frame, op, n, dtype, distribution, params):
    """Independently of the report: the fastest valid library case of the raw frame at this slice."""
    cases = frame[(frame["op"] == op) & (frame["n"] == n) & (frame["dtype"] == dtype) & (frame["status"] == "ok")
                  & library_mask(frame) & (frame["distribution"] == distribution)]
    if params:
        cases = cases[[all(dict(params).get(k, v) == v for k, v in items) for items in cases["param_items"]]]
    return cases.loc[cases["median_ms"].idxmin()] if len(cases) else None


def test_each_size_of_each_op_names_its_fastest_library_case_and_every_ratio_is_against_it(reference):
    run, context, _page = reference
    frame = run.frame()
    checked = 0
    for op in context["ops"]:
        params = dict(p.split("=") for p in op["params"].split(",")) if op["params"] else {}
        params = {k: int(v) for k, v in params.items()}
        for row in op["best_per_size"]:
            best = _fastest_library(frame, op["name"], row["n"], op["dtype"], op["distribution"], params)
            if best is None:
                assert row["library"] is None and row["ratio_to_library"] is None
                continue
            assert row["library"] == best["variant"], (op["name"], row["n"])
            assert row["library_us"] == pytest.approx(best["median_ms"] * 1e3)
            assert row["ratio_to_library"] == pytest.approx(row["time_us"] / row["library_us"])
            checked += 1
        line = op["headline"]
        if line and line["library"]:
            at_n = next(r for r in op["best_per_size"] if r["n"] == line["n"])
            assert (line["library"], line["ratio"]) == (at_n["library"], pytest.approx(at_n["ratio_to_library"]))
    assert checked == 46  # every size of every op but the stencil (no library) in its primary slice


def test_the_storys_ranking_and_sentence_are_against_the_best_library_at_its_size(reference):
    run, context, page = reference
    story = context["story"]
    best = _fastest_library(run.frame(), "reduce", story["n"], story["dtype"], story["distribution"], {})
    assert story["library"]["library"] == best["variant"] == "cub_device_reduce"
    for row in story["ranking"]:
        assert row["ratio_to_library"] == pytest.approx(row["median_ms"] / best["median_ms"])
    opening = story["opening"]["library"]
    assert opening["variant"] == best["variant"] and opening["speedup"] == pytest.approx(best["median_ms"] * 1e3 / opening["ours_us"])
    sentence = _text(page[page.index('id="summary"'):page.index("</p>", page.index('id="summary"'))])
    assert "The best library at this size, cub_device_reduce (via cupy 14.2.0), takes 45.5 µs: vector_load_sum is 1.14× faster than it." in sentence
    assert "1.16× faster than the best library, cub_device_reduce (via cupy 14.2.0), at 45.5 µs" in _headline(page, "reduce")


def test_the_64_bit_counter_histogram_is_flagged_beside_its_case_and_in_its_ops_line(reference):
    _run, context, page = reference
    cases = {c["key"]: c for op in context["ops"] for c in op["cases"]}
    flagged = _row(page, cases[SIXTY_FOUR_BIT_HISTOGRAM]["anchor"])
    assert ">far<" in flagged and FAR_WORDS in htmllib.unescape(flagged)  # the badge, its hover text the rule
    assert FAR_WORDS not in htmllib.unescape(_row(page, cases[NEAR_ITS_LIGHT]["anchor"]))
    assert sum(c["far_from_light"] for c in cases.values()) == 23
    histogram = _headline(page, "histogram")
    assert f"18 library cases under 50 % of their light (the furthest: cub_histogram_even[bins=256], uint8 skewed at n = 228, 1.8 %): {FAR_WORDS}" in histogram
    assert "cub_histogram_even[bins=256] (via cupy 14.2.0) far from light, at 1,062.2 µs" in histogram
    assert FAR_WORDS not in _headline(page, "reduce") and FAR_WORDS not in _headline(page, "scan")
    assert 'id="far-histogram"' in page and 'id="far-reduce"' not in page


# --- planted libraries, in copies of the nightly run -------------------------------------------------


def _second_library(factors: dict):
    """An `add` for edited_copy: each cub_device_reduce case again as the library `other_library`
    (cuda-cccl 0.4.1), its samples times factors[n] (1.5 where n is not named)."""
    def add(record):
        if record.get("variant") != "cub_device_reduce":
            return []
        other = copy.deepcopy(record)
        other["variant"] = "other_library"
        scale = factors.get(other["n"], 1.5)
        other["samples"]["cold_ms"] = [t * scale for t in other["samples"]["cold_ms"]]
        other["samples"]["batch_ms"] = [t * scale for t in other["samples"].get("batch_ms") or []]
        return [other]

    return add


def _declare_other_library(record):
    if record.get("kind") == "header":
        info = dict(record["variants"]["reduce/cub_device_reduce"], name="other_library", order=91,
                    origin="DeviceReduce through cuda.compute", library={"package": "cuda-cccl", "version": "0.4.1"})
        record["variants"]["reduce/other_library"] = info


def test_a_second_library_is_the_best_where_it_is_faster_and_beating_our_kernel_is_said_plainly(tmp_path):
    # Faster than CuPy's CUB at 2^25 (the line's size), twice as fast at 2^28 (faster than ours), slower elsewhere.
    path = edited_copy(NIGHTLY, tmp_path / "two-libraries.jsonl", _declare_other_library,
                       add=_second_library({2**25: 0.9, 2**28: 0.5}))
    _run, context, page = _report(path)
    (reduce,) = [op for op in context["ops"] if op["name"] == "reduce"]
    named = {row["n"]: row["library"] for row in reduce["best_per_size"]}
    assert named[2**25] == named[2**28] == "other_library" and named[2**20] == "cub_device_reduce"
    line = _headline(page, "reduce")
    assert "than the best library, other_library (cuda-cccl 0.4.1)" in line
    assert "at n = 228, its largest size, the best library beats our fastest kernel: other_library (cuda-cccl 0.4.1)" in line


def test_a_library_case_slowed_under_half_its_light_is_flagged_in_the_report(tmp_path):
    def slowed(record):  # CUB's reduce of 2^28 floats, 97.6 % of its light, made 3 times slower (33 %)
        if record.get("kind") == "case" and record["key"] == NEAR_ITS_LIGHT:
            record["samples"]["cold_ms"] = [t * 3 for t in record["samples"]["cold_ms"]]

    _run, context, page = _report(edited_copy(NIGHTLY, tmp_path / "slowed.jsonl", slowed))
    _run, before, page_before = _report(NIGHTLY)
    for ctx, html, flagged in ((context, page, True), (before, page_before, False)):
        (case,) = [c for op in ctx["ops"] for c in op["cases"] if c["key"] == NEAR_ITS_LIGHT]
        assert (FAR_WORDS in htmllib.unescape(_row(html, case["anchor"]))) is flagged
        assert (FAR_WORDS in _headline(html, "reduce")) is flagged
        assert ('id="far-reduce"' in html) is flagged
