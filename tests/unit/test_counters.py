"""Counters (primbench/profile/counters.py, runfile/counters.py, report/counters_section.py) on real
ncu output: tests/data/ncu/ holds what `tools/probe/ncu_capture.py` captured on an H200 (README.md
there says how and when)."""

import gzip
import json
import shutil

import pytest

from primbench.errors import UserError
from primbench.profile import capture
from primbench.profile.counters import MARKER_NAME, cases_from_capture, parse_launches
from primbench.report import counters_section
from primbench.report.render import _environment
from primbench.report.selection import annotated_frame
from primbench.runfile import counters
from primbench.runfile.io import load_run
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "ncu"
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"


def captured(name):
    text = gzip.decompress((DATA / f"{name}.csv.gz").read_bytes()).decode()
    manifest = json.loads((DATA / f"{name}.manifest.json").read_text())
    return text, manifest, cases_from_capture(text, manifest, capture.METRICS)


def by_variant(cases, block=None):
    return {c.key.split("/")[1]: c for c in cases if block is None or f"/block={block}/" in c.key}


def test_every_case_of_the_progression_is_profiled_with_every_counter():
    _, manifest, cases = captured("progression")
    assert len(cases) == len(manifest["cases"]) == 20
    assert all(c.profiled and c.launches for c in cases)
    for case in cases:
        for launch in case.launches:
            assert MARKER_NAME not in launch.name
            missing = [name for name, value in launch.counters.items() if value is None]
            assert not missing, (case.key, launch.name, missing)


def test_the_markers_split_launches_by_case():
    # reduce0 at 2^25, block 256: the kernel, then partial passes of 512, 2 and 1 blocks
    cases = by_variant(captured("progression")[2])
    assert [launch.grid[0] for launch in cases["reduce0_interleaved_divergent"].launches] == [131072, 512, 2, 1]
    assert len(cases["vector_load_sum"].launches) == 1
    assert [launch.block[0] for launch in cases["reduce2_sequential"].launches] == [256] * 4


def test_the_strided_index_has_the_bank_conflicts_the_issue_measured():
    # issue 19: at 2^25 and block 64, reduce1 has 5.5 M shared-load conflicts, reduce0 0.18 M and reduce2 0.15 M
    cases = by_variant(captured("reduce-blocks")[2], block=64)
    conflicts = {name: case.total("shared_load_bank_conflicts") for name, case in cases.items()}
    assert 5.0e6 < conflicts["reduce1_interleaved_strided"] < 6.0e6
    assert conflicts["reduce0_interleaved_divergent"] < 0.3e6 and conflicts["reduce2_sequential"] < 0.3e6


def test_dram_bytes_of_the_fast_variants_are_within_3_percent_of_declared():
    fast = captured("fast-2-28")[2] + captured("topk")[2]
    assert len(fast) == 41
    for case in fast:
        assert abs(case.dram_bytes() / case.minimal_bytes - 1) < 0.03, case.key


def test_a_permission_error_is_one_clear_line():
    text = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
    with pytest.raises(UserError, match="ERR_NVGPUCTRPERM.*NVreg_RestrictProfilingToAdminUsers"):
        parse_launches(text, capture.METRICS)


def test_a_case_whose_kernels_ncu_skipped_gets_a_reason_and_the_others_go_on():
    text, manifest, _ = captured("reduce-blocks")
    lines = text.splitlines()
    marker_two = next(i for i, line in enumerate(lines) if '"primbench_case_marker"' in line and '"(2, 1, 1)"' in line)
    marker_three = next(i for i, line in enumerate(lines) if '"primbench_case_marker"' in line and '"(3, 1, 1)"' in line)
    cut = "\n".join(lines[: marker_two + 1] + lines[marker_three:])  # case 2's launches gone, its marker kept
    cases = cases_from_capture(cut, manifest, capture.METRICS)
    assert "no kernel" in cases[1].reason
    assert all(c.profiled for i, c in enumerate(cases) if i != 1)


def test_a_counter_ncu_did_not_write_is_none_not_zero():
    text, manifest, _ = captured("topk")
    metrics = {**capture.METRICS, "made_up": "not__a_metric.sum"}
    cases = cases_from_capture(text, manifest, metrics)
    assert all(launch.counters["made_up"] is None for c in cases for launch in c.launches)


def test_the_counters_file_round_trips_and_merges(tmp_path):
    _, _, cases = captured("progression")
    path = tmp_path / "run.counters.json"
    path.write_text(json.dumps(counters.document(cases[:5], about={"device": {"name": "x"}})))
    about, read = counters.load(path)
    assert about["device"] == {"name": "x"} and [c.key for c in read] == [c.key for c in cases[:5]]
    assert read[2].launches[0].counters == cases[2].launches[0].counters
    doc = counters.merged(json.loads(path.read_text()), cases[3:8], about)
    assert [c["key"] for c in doc["cases"]] == [c.key for c in cases[:3] + cases[3:8]]


@pytest.mark.parametrize("content, words", [
    (b"{not json", "not JSON"), (b'{"format": "other"}', "not a primbench counters file"),
    (b'{"format": "primbench-counters", "schema": 99, "cases": []}', "schema 99"),
    (b'{"format": "primbench-counters", "schema": 1, "cases": [{"nokey": 1}]}', "damaged"),
])
def test_a_bad_counters_file_is_one_line(tmp_path, content, words):
    path = tmp_path / "x.counters.json"
    path.write_bytes(content)
    with pytest.raises(UserError, match=words):
        counters.load(path)


@pytest.fixture(scope="module")
def report_section(tmp_path_factory):
    """The reference run with the captured counters beside it, as `primbench profile RUN` leaves them."""
    folder = tmp_path_factory.mktemp("run")
    run_path = folder / REFERENCE.name
    shutil.copy(REFERENCE, run_path)
    doc = None
    for name in ("progression", "reduce-blocks", "fast-2-28", "topk"):
        text, manifest, cases = captured(name)
        doc = counters.merged(doc, cases, {"device": manifest["device"], "ncu": {"version": "2025.3.1.0"}})
    counters.counters_path_for(run_path).write_text(json.dumps(doc))
    run = load_run(run_path)
    return counters_section.build(run, annotated_frame(run))


def test_the_report_names_the_bank_conflict_drop_and_the_divergence_change(report_section):
    steps = {step["variant"]: step for step in report_section["steps"]}
    assert steps["reduce2_sequential"]["most"]["counter"] == "shared-load bank conflicts"
    assert steps["reduce2_sequential"]["claim"]["shown"] == "yes"
    assert steps["reduce2_sequential"]["values"]["shared_load_bank_conflicts"] < 0.02 * \
        steps["reduce1_interleaved_strided"]["values"]["shared_load_bank_conflicts"]
    # reduce0 -> reduce1: fewer idle lanes (divergence), and (as seed 002 says) far more bank conflicts
    divergence = steps["reduce1_interleaved_strided"]["claim"]
    assert divergence["counter"].startswith("idle lane slots") and divergence["after"] < divergence["before"]
    assert steps["reduce1_interleaved_strided"]["most"]["counter"] == "shared-load bank conflicts"
    html = _environment().get_template("_counters.html.j2").render(counters=report_section)
    assert "shared-load bank conflicts changed most (÷105" in html and "idle lane slots" in html


def test_the_bytes_check_covers_every_profiled_case_and_flags_none_here(report_section):
    assert len(report_section["bytes"]) >= 60
    assert not [row["key"] for row in report_section["bytes"] if row["flag"]]
    roofline = str(report_section["roofline"])
    assert roofline.startswith("<svg") and roofline.count("<title>") >= 10  # every point says which case it is


def test_counters_of_a_changed_kernel_are_left_out(tmp_path):
    run_path = tmp_path / REFERENCE.name
    shutil.copy(REFERENCE, run_path)
    text, manifest, cases = captured("progression")
    for case in cases:
        case.variant_hash = "0000000000000000"
    counters.counters_path_for(run_path).write_text(json.dumps(counters.document(cases, about={})))
    run = load_run(run_path)
    section = counters_section.build(run, annotated_frame(run))
    assert section["stale"] == 20 and not section["steps"] and not section["bytes"]


def test_no_dram_roof_means_no_roofline(tmp_path):
    run_path = tmp_path / REFERENCE.name
    shutil.copy(REFERENCE, run_path)
    text, manifest, cases = captured("fast-2-28")
    counters.counters_path_for(run_path).write_text(json.dumps(counters.document(cases, about={})))
    run = load_run(run_path)
    run.header.device["peak_gbps"] = None  # a GPU whose NVML gave no peak

    section = counters_section.build(run, annotated_frame(run))
    assert section["roofline"] is None and section["bytes"]
    assert "<svg" not in _environment().get_template("_counters.html.j2").render(counters=section)


@pytest.mark.parametrize("edit", [
    lambda case: case.update(key=["x"]), lambda case: case.update(minimal_bytes="1e9"),
    lambda case: case["launches"][0]["counters"].update(dram_read_bytes="many"),
    lambda case: case["launches"][0].update(name=7),
])
def test_a_counters_file_with_wrong_types_is_one_line(tmp_path, edit):
    doc = counters.document(captured("topk")[2], about={})
    edit(doc["cases"][0])
    path = tmp_path / "x.counters.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="damaged counters file"):
        counters.load(path)
