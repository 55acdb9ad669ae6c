"""Each case's speed of light (frame.py: sol_us, pct_sol; issue 20): its declared minimal bytes at
the run's ceiling for its kind of traffic, the pure-read probe's rate or the copy's. On a copy of a
real run (tests/data/runs/fixture-a) given, test-only, a read probe of 250 ms for 1 GiB
(4.29 GB/ms) and each variant's traffic as its op declares it today."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from primbench import registry
from primbench.runfile.io import load_run
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "runs" / "fixture-a.jsonl.gz"
READ_MS = 0.25  # 2^28 float32s read in 250 us: 4,294.97 GB/s


def _with_read_probe(tmp_path, *, probe=True):
    lines = []
    for line in gzip.decompress(FIXTURE.read_bytes()).decode().splitlines():
        record = json.loads(line)
        if record["kind"] == "header":
            record["schema"] = 4
            if probe:
                record["read"] = {"n": 2**28, "bytes": 2**30, "method": "test", "samples_ms": [READ_MS] * 5}
            for name, info in record["variants"].items():
                info["traffic"] = registry.get(*name.split("/", 1)).traffic
        lines.append(json.dumps(record))
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return load_run(path)


def test_a_read_case_is_timed_against_the_read_probe_and_a_scan_against_the_copy(tmp_path):
    run = _with_read_probe(tmp_path)
    frame = run.frame().set_index("key")
    read_gbps = 2**30 / (READ_MS * 1e-3) / 1e9
    assert run.read_gbps == pytest.approx(read_gbps)
    reduce = frame.loc["reduce/vector_load_sum/float32/n=1048576/block=256/uniform"]
    assert reduce["sol_us"] == pytest.approx(reduce["bytes"] / (read_gbps * 1e9) * 1e6)
    assert reduce["pct_sol"] == pytest.approx(100 * reduce["sol_us"] / (reduce["median_ms"] * 1e3))
    scan = frame.loc["scan/decoupled_lookback/int32/n=1048576/block=256/uniform"]
    assert scan["sol_us"] == pytest.approx(scan["bytes"] / (run.copy_gbps * 1e9) * 1e6)
    ok = frame[frame["status"] == "ok"]
    assert ok["pct_sol"].notna().all() and (ok["pct_sol"] > 0).all()


def test_a_run_without_a_read_probe_has_no_speed_of_light_for_read_cases(tmp_path):
    frame = _with_read_probe(tmp_path, probe=False).frame()
    reads = frame[frame["op"].isin(["reduce", "histogram"])]
    writes = frame[frame["op"] == "scan"]
    assert reads["sol_us"].isna().all() and writes["sol_us"].notna().all()


def test_a_run_from_before_the_read_probe_reads_as_4_with_no_speed_of_light():
    # tests/data's fixture run was written in schema 2, before the read probe (schema 4).
    run = load_run(REPO / "tests" / "data" / "runs" / "fixture-a.jsonl.gz")
    assert run.written_schema < 4
    assert run.header.schema == 4 and math.isnan(run.read_gbps) and run.frame()["sol_us"].isna().all()


def test_the_reference_run_has_a_speed_of_light_for_every_case():
    run = load_run(REPO / "results" / "reference" / "nvidia-h200.jsonl.gz")
    ok = run.frame().query("status == 'ok'")
    assert run.read_gbps > 0 and ok["sol_us"].notna().all() and (ok["pct_sol"] > 0).all()


def test_the_report_shows_percent_of_light_and_a_line_per_op(tmp_path):
    from primbench.report.render import write_report

    run = _with_read_probe(tmp_path)
    html = write_report(run, tmp_path / "report.html").read_text()
    assert "% light</th>" in html and "% copy</th>" not in html
    assert "% of its speed of light" in html


def test_a_run_without_ceilings_keeps_percent_of_copy(tmp_path):
    from primbench.report.render import write_report

    html = write_report(_with_read_probe(tmp_path, probe=False), tmp_path / "report.html").read_text()
    assert "% copy</th>" in html and "% light</th>" not in html and "of its speed of light" not in html


def test_a_variant_that_declares_no_traffic_has_no_speed_of_light(tmp_path):
    """A plugin that does not say whether it writes (Variant.traffic None) is not priced at a
    guessed ceiling."""
    run = _with_read_probe(tmp_path)
    run.header.variants["reduce/vector_load_sum"]["traffic"] = None
    frame = run.frame()
    mine = frame[frame["variant_name"] == "vector_load_sum"]
    others = frame[(frame["op"] == "reduce") & (frame["variant_name"] != "vector_load_sum") & (frame["status"] == "ok")]
    assert mine["sol_us"].isna().all() and others["sol_us"].notna().all()
