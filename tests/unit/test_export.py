"""`primbench export`: each format read back the way its consumer reads it. CSV by pandas; Google
Benchmark JSON by the fields github-action-benchmark's googlecpp extractor reads (name, real_time,
time_unit, iterations, cpu_time, threads); NVBench JSON by the fields nvbench's
scripts/nvbench_compare.py reads (which read these exports without a warning once, by hand: see
README.md, "compare")."""

import io
import json
import math

import numpy as np
import pytest

from primbench.compare.export import CSV_COLUMNS, export
from primbench.runfile import stats
from primbench.runfile.io import load_run
from tests.conftest import RUNS

RUN = load_run(RUNS / "fixture-a.jsonl.gz")


def test_csv_reads_back_in_pandas_with_every_case_and_its_median():
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(io.StringIO(export(RUN, "csv")), keep_default_na=False)
    assert tuple(frame.columns) == CSV_COLUMNS and len(frame) == len(RUN.cases) and frame["key"].is_unique
    for record, row in zip(RUN.cases, frame.itertuples()):
        assert row.key == record.key and row.n == record.case.n and row.status == record.status
        if record.ok:
            assert float(row.median_us) == pytest.approx(stats.summarize(record.cold_ms).median * 1e3, abs=1e-6)
            assert int(row.samples) == len(record.cold_ms)


def test_gbench_json_has_what_github_action_benchmark_reads():
    document = json.loads(export(RUN, "gbench-json"))
    measured = [r for r in RUN.cases if r.ok]
    benchmarks = document["benchmarks"]
    assert [b["name"] for b in benchmarks] == [r.key for r in measured]
    for bench, record in zip(benchmarks, measured):
        assert bench["time_unit"] == "us" and isinstance(bench["iterations"], int) and bench["threads"] == 1
        assert bench["real_time"] == pytest.approx(np.median(record.cold_ms) * 1e3) and bench["cpu_time"] == bench["real_time"]
    assert document["context"]["gpu"] == RUN.device["name"]


def _value(summary):
    (data,) = [d for d in summary["data"] if d["name"] == "value"]
    return data["type"], data["value"]


def test_nvbench_json_has_what_nvbench_compare_reads():
    document = json.loads(export(RUN, "nvbench-json"))
    assert document["meta"]["version"]["json"]["string"] == "1.0.0"
    assert [d["id"] for d in document["devices"]] == [0]
    states = 0
    for bench in document["benchmarks"]:
        axes = {axis["name"]: axis for axis in bench["axes"]}
        for state in bench["states"]:
            states += 1
            for value in state["axis_values"]:
                assert value["name"] in axes and value["type"] == axes[value["name"]]["type"]
                if value["type"] == "int64":
                    int(value["value"])
            if state["is_skipped"]:
                assert state["skip_reason"]
                continue
            tags = {s["tag"]: s for s in state["summaries"]}
            kind, mean = _value(tags["nv/cold/time/gpu/mean"])
            assert kind == "float64" and float(mean) > 0
            kind, noise = _value(tags["nv/cold/time/gpu/stdev/relative"])
            assert kind == "float64" and math.isfinite(float(noise))
    assert states == len(RUN.cases)
    # Every measured case's state holds the mean of its cold samples in seconds, as NVBench's does.
    states_by_name = {(b["name"], s["name"]): s for b in document["benchmarks"] for s in b["states"]}
    assert len(states_by_name) == len(RUN.cases)  # no two cases share a state
    for bench in document["benchmarks"]:
        records = [r for r in RUN.cases if f"{r.case.op}/{r.case.variant}" == bench["name"]]
        for record, state in zip(records, bench["states"]):
            if record.ok:
                summaries = {s["tag"]: s for s in state["summaries"]}
                assert float(_value(summaries["nv/cold/time/gpu/mean"])[1]) == pytest.approx(np.mean(record.cold_ms) * 1e-3)


def test_export_refuses_to_write_onto_its_run(tmp_path, bench):
    run = tmp_path / "run.jsonl"
    run.write_bytes(__import__("gzip").decompress((RUNS / "progression.jsonl.gz").read_bytes()))
    before = run.read_bytes()
    result = bench("export", str(run), "--format", "csv", "-o", str(run))
    assert result.returncode == 2 and run.read_bytes() == before and len(result.stderr.strip().splitlines()) == 1
    written = bench("export", str(run), "--format", "nvbench-json", "-o", str(tmp_path / "out.json"))
    assert written.returncode == 0 and json.loads((tmp_path / "out.json").read_text())["benchmarks"]
