"""Each case's speed of light (frame.py: sol_us, pct_sol): its declared minimal bytes at the rate
of a pure read (or a copy, for a variant that writes as much as it reads) of those very bytes,
measured at run start (measuring/ceilings.py measure_sized); and its % of the peak read
(pct_peak_read: the same bytes at the 1 GiB probe's rate). On a copy of a real run
(tests/data/runs/fixture-a) given, test-only, a read probe of 250 us for 1 GiB (4,295 GB/s), sized
probes at 3,000 GB/s (read) and 2,500 GB/s (copy), and each variant's traffic as its op declares
it today."""

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
SIZED_GBPS = {"read": 3000.0, "read_write": 2500.0}


def _with_read_probe(tmp_path, *, probe=True, sized=True):
    records = [json.loads(line) for line in gzip.decompress(FIXTURE.read_bytes()).decode().splitlines()]
    header = records[0]
    header["schema"] = 4
    if probe:
        header["read"] = {"n": 2**28, "bytes": 2**30, "method": "test", "samples_ms": [READ_MS] * 5}
    for name, info in header["variants"].items():
        info["traffic"] = registry.get(*name.split("/", 1)).traffic
    if sized:
        moved = {"read": set(), "read_write": set()}
        for record in records[1:]:
            traffic = header["variants"].get(f"{record.get('op')}/{record.get('variant')}", {}).get("traffic")
            if record["kind"] == "case" and traffic in moved and record.get("bytes"):
                moved[traffic].add(record["bytes"])
        # at least 1 us, as a launch takes: the reader refuses a time under 1 ns (a few bytes at these rates)
        header["ceilings"] = {kind: [{"bytes": b, "samples_ms": [max(b / (SIZED_GBPS[traffic] * 1e6), 1e-3)] * 3}
                                     for b in sorted(moved[traffic])]
                              for kind, traffic in (("read", "read"), ("copy", "read_write"))}
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n")
    return load_run(path)


def test_a_read_case_is_timed_against_a_read_of_its_own_bytes_and_a_scan_against_a_copy(tmp_path):
    run = _with_read_probe(tmp_path)
    frame = run.frame().set_index("key")
    read_gbps = 2**30 / (READ_MS * 1e-3) / 1e9
    assert run.read_gbps == pytest.approx(read_gbps)
    reduce = frame.loc["reduce/vector_load_sum/float32/n=1048576/block=256/uniform"]
    assert reduce["sol_us"] == pytest.approx(reduce["bytes"] / (SIZED_GBPS["read"] * 1e9) * 1e6)
    assert reduce["pct_sol"] == pytest.approx(100 * reduce["sol_us"] / (reduce["median_ms"] * 1e3))
    assert reduce["pct_peak_read"] == pytest.approx(reduce["pct_sol"] * SIZED_GBPS["read"] / read_gbps)
    scan = frame.loc["scan/decoupled_lookback/int32/n=1048576/block=256/uniform"]
    assert scan["sol_us"] == pytest.approx(scan["bytes"] / (SIZED_GBPS["read_write"] * 1e9) * 1e6)
    assert scan["pct_peak_read"] == pytest.approx(100 * scan["bytes"] / (run.copy_gbps * 1e9) / (scan["median_ms"] * 1e-3))
    ok = frame[frame["status"] == "ok"]
    assert ok["pct_sol"].notna().all() and (ok["pct_sol"] > 0).all()


def test_a_case_whose_bytes_the_run_did_not_probe_has_no_speed_of_light_but_its_peak_read(tmp_path):
    run = _with_read_probe(tmp_path)
    probed = run.header.ceilings["read"]
    run.header.ceilings["read"] = [p for p in probed if p["bytes"] != 4 * 1048576]
    frame = run.frame().set_index("key")
    reduce = frame.loc["reduce/vector_load_sum/float32/n=1048576/block=256/uniform"]
    assert math.isnan(reduce["pct_sol"]) and reduce["pct_peak_read"] > 0


def test_a_run_with_only_the_1_gib_probe_shows_percent_of_peak_read(tmp_path):
    from primbench.report.render import write_report

    run = _with_read_probe(tmp_path, sized=False)
    frame = run.frame()
    ok = frame[frame["status"] == "ok"]
    assert ok["pct_sol"].isna().all() and (ok["pct_peak_read"] > 0).all()
    html = write_report(run, tmp_path / "report.html").read_text()
    assert "% peak read</th>" in html and "% light</th>" not in html and "of its speed of light" not in html


def test_a_run_without_a_read_probe_has_no_speed_of_light_for_read_cases(tmp_path):
    frame = _with_read_probe(tmp_path, probe=False, sized=False).frame()
    reads = frame[frame["op"].isin(["reduce", "histogram"])]
    writes = frame[frame["op"] == "scan"]
    # The copy probe (every schema) still prices a scan at 1 GiB; nothing prices a read there.
    assert reads["pct_peak_read"].isna().all() and writes["pct_peak_read"].notna().all()
    assert frame["sol_us"].isna().all()


def test_a_run_from_before_the_read_probe_reads_as_4_with_no_speed_of_light():
    # tests/data's fixture run was written in schema 2, before the read probe (schema 4).
    run = load_run(REPO / "tests" / "data" / "runs" / "fixture-a.jsonl.gz")
    assert run.written_schema < 4
    assert run.header.schema == 4 and math.isnan(run.read_gbps) and run.frame()["sol_us"].isna().all()


def test_the_reference_run_has_a_peak_read_figure_for_every_case():
    run = load_run(REPO / "results" / "reference" / "nvidia-h200.jsonl.gz")
    ok = run.frame().query("status == 'ok'")
    assert run.read_gbps > 0 and (ok["pct_peak_read"] > 0).all()
    # The reference measured the sized probes: every case has its own size's speed of light.
    assert run.header.ceilings["read"] and ok["sol_us"].notna().all() and (ok["pct_sol"] > 0).all()


def test_the_report_shows_percent_of_light_and_a_line_per_op(tmp_path):
    from primbench.report.render import write_report

    run = _with_read_probe(tmp_path)
    html = write_report(run, tmp_path / "report.html").read_text()
    assert "% light</th>" in html and "% peak read</th>" in html and "% copy</th>" not in html
    assert "% of its speed of light" in html


def test_a_run_without_ceilings_keeps_percent_of_copy(tmp_path):
    from primbench.report.render import write_report

    html = write_report(_with_read_probe(tmp_path, probe=False, sized=False), tmp_path / "report.html").read_text()
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
