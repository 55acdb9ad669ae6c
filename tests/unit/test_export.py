"""`primbench export`: each format read back the way its consumer reads it. CSV by pandas, with the
read call the README gives; Google Benchmark JSON by the fields its JSON reporter writes and
github-action-benchmark's googlecpp extractor reads (name, real_time, time_unit, iterations,
cpu_time, threads), its repetitions and aggregates as Google Benchmark writes them (its own
compare.py reads them in tests/readers/); NVBench JSON by the fields nvbench's comparers read."""

import io
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from primbench.cli.main import main
from primbench.export.csv_table import CSV_COLUMNS, LONG_COLUMNS
from primbench.export.formats import FORMATS, export, registered
from primbench.runfile import stats
from primbench.runfile.io import load_run
from primbench.runfile.records import Samples
from tests.conftest import RUNS

RUN = load_run(RUNS / "fixture-a.jsonl.gz")
SMALL_RUN = load_run(RUNS / "progression.jsonl.gz")  # 20 cases, one of them a library variant's
FAILED_REASON = "random input: got 508.2, expected 508.0"
SKIPPED_REASON = "needs about 80.0 GiB of GPU memory, 12.0 GiB free"


def _with_failed_and_skipped(run):
    """The run with its first case failed and its second skipped, as the runner writes them (no samples)."""
    cases = list(run.cases)
    cases[0] = replace(cases[0], status="failed", reason=FAILED_REASON, samples=Samples())
    cases[1] = replace(cases[1], status="skipped", reason=SKIPPED_REASON, samples=Samples())
    return replace(run, cases=cases)


def _read_csv(text: str):
    """The CSV as the README says to read it in pandas."""
    pandas = pytest.importorskip("pandas")
    return pandas.read_csv(io.StringIO(text), keep_default_na=False, na_values=["NaN"], dtype={"block": str})


def test_csv_reads_back_in_pandas_with_every_case_and_its_median():
    frame = _read_csv(export(RUN, "csv"))
    assert tuple(frame.columns) == CSV_COLUMNS and len(frame) == len(RUN.cases) and frame["key"].is_unique
    for record, row in zip(RUN.cases, frame.itertuples()):
        assert row.key == record.key and row.n == record.case.n and row.status == record.status
        if record.ok:
            assert float(row.median_us) == pytest.approx(stats.summarize(record.cold_ms).median * 1e3, abs=1e-6)
            assert int(row.samples) == len(record.cold_ms)


def test_csv_columns_keep_one_type_whether_or_not_a_case_failed():
    pandas = pytest.importorskip("pandas")
    from pandas.api.types import is_float_dtype, is_integer_dtype, is_string_dtype

    header = SMALL_RUN.header
    for run in (SMALL_RUN, _with_failed_and_skipped(SMALL_RUN)):
        frame = _read_csv(export(run, "csv"))
        for text in ("key", "block", "reason", "status", "params", "run_id", "gpu", "gpu_uuid", "commit", "started"):
            assert is_string_dtype(frame[text]) and not frame[text].isna().any(), text
        for figure in ("median_us", "p05_us", "noise", "batch_median_us", "gbps", "pct_peak"):
            assert is_float_dtype(frame[figure]), figure
        assert is_integer_dtype(frame["n"]) and is_integer_dtype(frame["samples"])
        assert set(frame["block"]) == {"256", "lib"}  # a library variant picks its own block size
        assert set(frame["run_id"]) == {header.run_id} and set(frame["gpu"]) == {header.device_name}
        assert set(frame["gpu_uuid"]) == {header.device["uuid"]} and set(frame["commit"]) == {header.git["sha"]}
        assert set(frame["started"]) == {header.started}
    assert frame["reason"].tolist()[:3] == [FAILED_REASON, SKIPPED_REASON, ""]
    assert math.isnan(frame["median_us"][0]) and frame["samples"][0] == 0
    assert pandas.read_csv(io.StringIO(export(run, "csv")))["median_us"].dtype == np.float64  # read plainly too


def test_csv_long_has_one_row_per_raw_sample():
    frame = _read_csv(export(SMALL_RUN, "csv", long=True))
    assert tuple(frame.columns) == LONG_COLUMNS
    assert len(frame) == sum(len(r.cold_ms) + len(r.samples.batch_ms) for r in SMALL_RUN.cases)
    record = SMALL_RUN.cases[3]
    for kind, samples in (("cold", record.cold_ms), ("batch", record.samples.batch_ms)):
        rows = frame[(frame["key"] == record.key) & (frame["kind"] == kind)]
        assert rows["sample_index"].tolist() == list(range(len(samples)))
        assert rows["time_us"].to_numpy() == pytest.approx(np.asarray(samples) * 1e3)
    assert set(frame["run_id"]) == {SMALL_RUN.header.run_id}


def test_gbench_json_has_what_github_action_benchmark_reads():
    document = json.loads(export(RUN, "gbench-json"))
    benchmarks = document["benchmarks"]
    assert [b["name"] for b in benchmarks] == [r.key for r in RUN.cases]  # one repetition: no aggregates
    for bench, record in zip(benchmarks, RUN.cases):
        assert bench["time_unit"] == "ns" and isinstance(bench["iterations"], int) and bench["threads"] == 1
        assert bench["real_time"] == round(np.median(record.cold_ms) * 1e6, 1) and bench["cpu_time"] == bench["real_time"]
        assert (bench["run_type"], bench["repetitions"], bench["repetition_index"]) == ("iteration", 1, 0)
        if record.samples.batch_ms:  # the figure to track a kernel under 25 us on
            assert bench["batch_ns"] == round(np.median(record.samples.batch_ms) * 1e6, 1)
    context = document["context"]
    assert context["gpu"] == RUN.device["name"] and context["json_schema_version"] == 1
    assert context["git_sha"] == RUN.git["sha"] and context["run_id"] == RUN.header.run_id


def test_gbench_json_keeps_failed_and_skipped_cases_as_google_benchmark_writes_them():
    benchmarks = json.loads(export(_with_failed_and_skipped(SMALL_RUN), "gbench-json", repetitions=3))["benchmarks"]
    failed = [b for b in benchmarks if b["name"] == SMALL_RUN.cases[0].key]
    skipped = [b for b in benchmarks if b["name"] == SMALL_RUN.cases[1].key]
    assert [b["repetition_index"] for b in failed] == [0, 1, 2]  # every repetition, no aggregates
    assert all(b["error_occurred"] is True and FAILED_REASON in b["error_message"] and b["real_time"] == 0 for b in failed)
    assert all(b["skipped"] is True and SKIPPED_REASON in b["skip_message"] and "error_occurred" not in b for b in skipped)
    assert all(b["time_unit"] == "ns" and b["iterations"] == 0 for b in failed + skipped)


def test_gbench_json_repetitions_are_interleaved_slices_of_the_cold_samples_then_their_aggregates():
    repetitions = 5
    benchmarks = json.loads(export(SMALL_RUN, "gbench-json", repetitions=repetitions))["benchmarks"]
    record = SMALL_RUN.cases[3]
    entries = [b for b in benchmarks if b["run_name"] == record.key]
    runs, aggregates = entries[:repetitions], entries[repetitions:]
    slices = [np.asarray(record.cold_ms[i::repetitions]) * 1e6 for i in range(repetitions)]
    assert [b["repetition_index"] for b in runs] == list(range(repetitions)) and {b["repetitions"] for b in entries} == {5}
    assert [b["real_time"] for b in runs] == [round(float(np.median(s)), 1) for s in slices]
    assert [b["iterations"] for b in runs] == [len(s) for s in slices]
    medians = np.array([np.median(s) for s in slices])
    assert [(b["name"], b["run_type"], b["aggregate_name"], b["aggregate_unit"]) for b in aggregates] == [
        (f"{record.key}_{name}", "aggregate", name, unit)
        for name, unit in (("mean", "time"), ("median", "time"), ("stddev", "time"), ("cv", "percentage"))]
    mean, median, stddev, cv = (b["real_time"] for b in aggregates)
    assert (mean, median, stddev) == pytest.approx((medians.mean(), np.median(medians), medians.std(ddof=1)), abs=0.051)
    assert cv == pytest.approx(medians.std(ddof=1) / medians.mean(), abs=1e-6)
    assert all("repetition_index" not in b and b["iterations"] == repetitions for b in aggregates)
    assert "batch_ns" in aggregates[0] and "batch_ns" not in aggregates[2]  # the case's one batch median has no spread


def test_gbench_json_gives_a_case_with_fewer_samples_than_repetitions_one_per_sample():
    record = min(SMALL_RUN.cases, key=lambda r: len(r.cold_ms))
    asked = len(record.cold_ms) + 10
    entries = [b for b in json.loads(export(SMALL_RUN, "gbench-json", repetitions=asked))["benchmarks"]
               if b["run_name"] == record.key and b["run_type"] == "iteration"]
    assert len(entries) == len(record.cold_ms) and {b["repetitions"] for b in entries} == {len(record.cold_ms)}
    assert f"not {asked}" in entries[0]["label"]


@pytest.mark.parametrize("arguments, says", [
    (["--format", "gbench-json", "--repetitions", "0"], "--repetitions"),
    (["--format", "gbench-json", "--repetitions", "-2"], "--repetitions"),
    (["--format", "gbench-json", "--repetitions", "2.5"], "--repetitions"),
    (["--repetitions", "9"], "gbench-json only"),
    (["--format", "gbench-json", "--long"], "csv only"),
    (["--format", "csv", "--jsonbin", "samples"], "nvbench-json only"),
])
def test_export_refuses_an_option_of_another_format_or_a_bad_repetition_count_in_one_line(arguments, says, capsys, tmp_path):
    try:
        code = main(["export", str(RUNS / "progression.jsonl.gz"), *arguments, "-o", str(tmp_path / "out")])
    except SystemExit as exit_:  # argparse's own refusals
        code = exit_.code
    error = capsys.readouterr().err
    assert code == 2 and len(error.strip().splitlines()) == 1 and says in error and not (tmp_path / "out").exists()


def test_export_help_lists_each_format_with_its_reader_and_an_example_and_csv_is_the_default(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    printed = capsys.readouterr().out
    assert tuple(registered()) == FORMATS
    for fmt in registered().values():
        assert fmt.name in printed and fmt.readers in printed and fmt.example in printed
    assert main(["export", str(RUNS / "progression.jsonl.gz"), "-o", str(tmp_path / "run.csv")]) == 0
    assert (tmp_path / "run.csv").read_text().startswith(",".join(CSV_COLUMNS) + "\n")


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
