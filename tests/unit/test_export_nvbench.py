"""NVBench JSON export (primbench/export/nvbench_json.py, nvbench_summaries.py): every summary
NVIDIA's readers look up, under nvbench's own tags, names, hints and value types, computed from the
raw samples of a real run; pow2 axes as nvbench writes them; the `--jsonbin` sample files; a failed
case as nvbench records a state it could not run. tests/readers/ runs the readers themselves."""

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from primbench.export.nvbench_json import to_nvbench_json
from primbench.runfile.case_id import Params
from primbench.runfile.io import load_run
from tests.conftest import RUNS

RUN = load_run(RUNS / "fixture-a.jsonl.gz")
MEASURED = [r for r in RUN.cases if r.ok and r.cold_ms]
HIDDEN = "Hidden by default."
# tag: (name, hint, type, hidden), as nvbench/detail/measure_cold.cu and measure_hot.cu write them.
NVBENCH_SUMMARIES = {
    "nv/cold/sample_size": ("Samples", "sample_size", "int64", False),
    "nv/cold/walltime": ("Walltime", "duration", "float64", True),
    "nv/cold/time/gpu/min": ("Min GPU Time", "duration", "float64", True),
    "nv/cold/time/gpu/max": ("Max GPU Time", "duration", "float64", True),
    "nv/cold/time/gpu/mean": ("GPU Time", "duration", "float64", False),
    "nv/cold/time/gpu/stdev/absolute": ("Noise", "duration", "float64", True),
    "nv/cold/time/gpu/stdev/relative": ("Noise", "percentage", "float64", False),
    "nv/cold/time/gpu/q1": ("Q1 GPU Time", "duration", "float64", True),
    "nv/cold/time/gpu/median": ("Median GPU Time", "duration", "float64", True),
    "nv/cold/time/gpu/q3": ("Q3 GPU Time", "duration", "float64", True),
    "nv/cold/time/gpu/iqr/absolute": ("IQR", "duration", "float64", True),
    "nv/cold/time/gpu/iqr/relative": ("Rel IQR", "percentage", "float64", True),
    "nv/cold/bw/global/bytes_per_second": ("GlobalMem BW", "byte_rate", "float64", False),
    "nv/cold/bw/global/utilization": ("BWUtil", "percentage", "float64", False),
    "nv/cold/sm_clock_rate/mean": ("Clock Rate", "frequency", "float64", True),
    "nv/cold/sm_clock_rate/scaling/percent": ("Clock Scaling", "percentage", "float64", True),
    "nv/batch/sample_size": ("Samples", "sample_size", "int64", False),
    "nv/batch/time/gpu/mean": ("Batch GPU", "duration", "float64", False),
}


def _states(document) -> dict:
    """{case's benchmark and state name: state}, in the run's case order."""
    return {(b["name"], s["name"]): s for b in document["benchmarks"] for s in b["states"]}


def _record_states(document) -> list[tuple]:
    """(record, state) pairs: states come per benchmark in the order of the run's cases."""
    pairs = []
    for bench in document["benchmarks"]:
        records = [r for r in RUN.cases if f"{r.case.op}/{r.case.variant}" == bench["name"]]
        assert len(records) == len(bench["states"])
        pairs += list(zip(records, bench["states"]))
    return pairs


def _values(state) -> dict:
    """{tag: value as its type says}, each summary's single "value"."""
    out = {}
    for summary in state["summaries"]:
        for data in summary["data"]:
            if data["name"] == "value":
                out[summary["tag"]] = int(data["value"]) if data["type"] == "int64" else float(data["value"])
    return out


def _quartiles(times_s) -> tuple[float, float, float]:
    """nvbench/detail/statistics.cuh: the samples at the ranks std::round(p / 100 * (n - 1))."""
    ordered = sorted(times_s)
    return tuple(ordered[math.floor(p / 100 * (len(ordered) - 1) + 0.5)] for p in (25, 50, 75))


@pytest.fixture(scope="module")
def document():
    return json.loads(to_nvbench_json(RUN))


def test_every_summary_has_nvbench_tag_name_hint_type_and_hide(document):
    seen = set()
    for state in (s for b in document["benchmarks"] for s in b["states"]):
        for summary in state["summaries"]:
            name, hint, kind, hidden = NVBENCH_SUMMARIES[summary["tag"]]
            assert (summary["name"], summary["hint"]) == (name, hint) and summary["description"]
            assert summary.get("hide") == (HIDDEN if hidden else None)
            (data,) = summary["data"]
            assert data["name"] == "value" and data["type"] == kind and isinstance(data["value"], str)
            seen.add(summary["tag"])
    assert seen == set(NVBENCH_SUMMARIES)  # every one of them appears in this run


def test_cold_summaries_are_the_statistics_of_the_raw_samples_in_seconds(document):
    peak = RUN.device["peak_gbps"] * 1e9
    for record, state in _record_states(document):
        values = _values(state)
        times_s = np.asarray(record.cold_ms) / 1e3
        q1, median, q3 = _quartiles(times_s)
        mean, stdev = times_s.mean(), times_s.std(ddof=1)
        assert values["nv/cold/sample_size"] == len(record.cold_ms)
        assert values["nv/cold/time/gpu/min"] == times_s.min() and values["nv/cold/time/gpu/max"] == times_s.max()
        assert values["nv/cold/time/gpu/mean"] == pytest.approx(mean, rel=1e-12)
        assert values["nv/cold/time/gpu/stdev/absolute"] == pytest.approx(stdev, rel=1e-9)
        assert values["nv/cold/time/gpu/stdev/relative"] == pytest.approx(stdev / mean, rel=1e-9)
        assert (values["nv/cold/time/gpu/q1"], values["nv/cold/time/gpu/median"], values["nv/cold/time/gpu/q3"]) == (q1, median, q3)
        assert values["nv/cold/time/gpu/iqr/absolute"] == pytest.approx(q3 - q1, rel=1e-12)
        assert values["nv/cold/time/gpu/iqr/relative"] == pytest.approx((q3 - q1) / median, rel=1e-12)
        assert values["nv/cold/bw/global/bytes_per_second"] == pytest.approx(record.bytes / mean, rel=1e-12)
        assert values["nv/cold/bw/global/utilization"] == pytest.approx(record.bytes / mean / peak, rel=1e-12)


def test_clock_and_walltime_come_from_the_case_record(document):
    for record, state in _record_states(document):
        values = _values(state)
        readings = [record.nvml["before"]["sm_clock_mhz"], record.nvml["sm_clock_mhz"]]
        assert values["nv/cold/sm_clock_rate/mean"] == pytest.approx(np.mean(readings) * 1e6)
        assert values["nv/cold/sm_clock_rate/scaling/percent"] == pytest.approx(
            np.mean(readings) / RUN.device["max_sm_clock_mhz"])
        assert values["nv/cold/walltime"] == record.timing["wall_s"] > 0
        if record.samples.batch_ms:
            assert values["nv/batch/sample_size"] == len(record.samples.batch_ms) * record.samples.batch_size
            assert values["nv/batch/time/gpu/mean"] == pytest.approx(np.mean(record.samples.batch_ms) / 1e3)
        else:
            assert "nv/batch/time/gpu/mean" not in values


def test_a_case_without_clock_readings_gets_the_gpus_maximum_clock():
    record = dataclasses.replace(MEASURED[0], nvml={})
    state = json.loads(to_nvbench_json(dataclasses.replace(RUN, cases=[record])))["benchmarks"][0]["states"][0]
    assert _values(state)["nv/cold/sm_clock_rate/mean"] == RUN.device["max_sm_clock_mhz"] * 1e6


def test_a_case_with_per_sample_clocks_gets_their_mean_not_nvmls_readings():
    first = MEASURED[0]
    clocks = tuple(1900.0 + (i % 5) for i in range(len(first.samples.cold_ms)))
    record = dataclasses.replace(first, samples=dataclasses.replace(first.samples, cold_clock_mhz=clocks))
    state = json.loads(to_nvbench_json(dataclasses.replace(RUN, cases=[record])))["benchmarks"][0]["states"][0]
    assert _values(state)["nv/cold/sm_clock_rate/mean"] == pytest.approx(np.mean(clocks) * 1e6)


def test_int64_axes_whose_values_are_all_powers_of_two_are_pow2_as_nvbench_writes_them(document):
    sizes = {}
    for record in RUN.cases:
        sizes.setdefault(f"{record.case.op}/{record.case.variant}", set()).add(record.case.n)
    flags = set()
    for bench in document["benchmarks"]:
        axes = {a["name"]: a for a in bench["axes"]}
        elements, pow2 = axes["Elements"], all(n & (n - 1) == 0 for n in sizes[bench["name"]])
        assert elements["type"] == "int64" and elements["flags"] == ("pow2" if pow2 else "")
        for n, entry in zip(sorted(sizes[bench["name"]]), sorted(elements["values"], key=lambda v: v["value"])):
            k = n.bit_length() - 1
            # int64_axis.cxx: a pow2 axis's input string is the exponent, its description "2^k = n".
            assert entry == ({"input_string": str(k), "description": f"2^{k} = {n}", "value": n} if pow2 else
                             {"input_string": str(n), "description": "", "value": n})
        assert axes["T"]["flags"] == ""  # string axes never are
        flags.add(elements["flags"])
    assert flags == {"pow2", ""}  # the run has both kinds
    state = document["benchmarks"][0]["states"][0]
    assert state["name"] == "Device=0 T=float32 Elements=2^10 Block=256 Distribution=uniform"
    assert {"name": "Elements", "type": "int64", "value": "1024"} in state["axis_values"]  # the value, not 2^k's k


def test_jsonbin_sample_files_hold_each_measured_cases_cold_samples(tmp_path):
    jsonbin = tmp_path / "run.json-bin"
    document = json.loads(to_nvbench_json(RUN, jsonbin=jsonbin))
    files = []
    for record, state in _record_states(document):
        (summary,) = [s for s in state["summaries"] if s["tag"] == "nv/json/bin:nv/cold/sample_times"]
        assert (summary["name"], summary["hint"], summary["hide"]) == ("Sample Times File", "file/sample_times",
                                                                       "Not needed in table.")
        data = {d["name"]: d for d in summary["data"]}
        assert data["filename"]["type"] == "string" and data["size"] == {"name": "size", "type": "int64",
                                                                          "value": str(len(record.cold_ms))}
        files.append(data["filename"]["value"])
        samples = np.fromfile(tmp_path / data["filename"]["value"], dtype="<f4")  # relative to the JSON's folder
        assert np.array_equal(samples, (np.asarray(record.cold_ms) / 1e3).astype(np.float32))
    assert files == [f"run.json-bin/{i}.bin" for i in range(len(MEASURED))]  # json_printer.cu's names
    assert sorted(os.listdir(jsonbin)) == sorted(f"{i}.bin" for i in range(len(MEASURED)))


def test_jsonbin_file_names_are_relative_to_where_the_json_goes(tmp_path):
    document = json.loads(to_nvbench_json(RUN, jsonbin=tmp_path / "samples", json_path=tmp_path / "out" / "run.json"))
    state = document["benchmarks"][0]["states"][0]
    (summary,) = [s for s in state["summaries"] if s["tag"] == "nv/json/bin:nv/cold/sample_times"]
    filename = next(d["value"] for d in summary["data"] if d["name"] == "filename")
    assert filename == "../samples/0.bin" and (tmp_path / "out" / filename).resolve().is_file()


def test_a_special_file_in_the_jsonbin_folder_is_written_in_place_not_replaced(tmp_path):
    jsonbin = tmp_path / "bins"
    jsonbin.mkdir()
    (jsonbin / "0.bin").symlink_to(os.devnull)
    to_nvbench_json(dataclasses.replace(RUN, cases=MEASURED[:2]), jsonbin=jsonbin)
    assert (jsonbin / "0.bin").is_symlink() and Path(os.readlink(jsonbin / "0.bin")) == Path(os.devnull)
    assert (jsonbin / "1.bin").stat().st_size == 4 * len(MEASURED[1].cold_ms)


def test_a_failed_case_is_a_skipped_state_with_its_reason_and_no_sample_file(tmp_path):
    cases = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant][:3]  # three cases of one variant
    failed = dataclasses.replace(cases[0], status="failed", reason="wrong result: got 3, expected 4", timing={},
                                 elapsed_s=0.75, samples=dataclasses.replace(cases[0].samples, cold_ms=(), batch_ms=()))
    run = dataclasses.replace(RUN, cases=[failed, *cases[1:]])
    document = json.loads(to_nvbench_json(run, jsonbin=tmp_path / "bins"))
    first, second, _ = document["benchmarks"][0]["states"]
    # Its own wall time, the one summary: nvbench-walltime looks it up in every state.
    assert first["is_skipped"] is True and [s["tag"] for s in first["summaries"]] == ["nv/cold/walltime"]
    assert _values(first) == {"nv/cold/walltime": 0.75}
    assert first["skip_reason"] == "failed: wrong result: got 3, expected 4"
    assert second["is_skipped"] is False and sorted(os.listdir(tmp_path / "bins")) == ["0.bin", "1.bin"]
    # The skipped state keeps its place among the axes, so that both runs of a pair have the same states.
    assert [v["name"] for v in first["axis_values"]] == [a["name"] for a in document["benchmarks"][0]["axes"]]


def test_every_state_has_a_walltime_from_its_timing_else_its_own_elapsed_time_else_its_samples():
    record = MEASURED[0]
    untimed = dataclasses.replace(record, timing={}, elapsed_s=None)
    failed = dataclasses.replace(record, status="failed", elapsed_s=None,
                                 samples=dataclasses.replace(record.samples, cold_ms=(), batch_ms=()))
    expected = [(record, record.timing["wall_s"]), (dataclasses.replace(record, timing={}), record.elapsed_s),
                (untimed, (sum(record.cold_ms) + sum(record.samples.batch_ms) * record.samples.batch_size) / 1e3),
                (failed, 0.0)]
    for case, wall_s in expected:
        (bench,) = json.loads(to_nvbench_json(dataclasses.replace(RUN, cases=[case])))["benchmarks"]
        assert _values(bench["states"][0])["nv/cold/walltime"] == pytest.approx(wall_s, rel=1e-12)


def test_the_device_is_described_as_nvbench_does(document):
    (device,) = document["devices"]
    assert device["id"] == 0 and device["name"] == RUN.device["name"] and device["sm_version"] == 900
    assert device["sm_default_clock_rate"] == RUN.device["max_sm_clock_mhz"] * 10**6
    assert device["global_memory_bus_bandwidth"] == int(RUN.device["peak_gbps"] * 1e9)
    assert document["meta"]["version"]["json"]["string"] == "1.0.0"


def test_a_parameter_only_some_cases_have_is_a_string_axis_empty_where_they_lack_it():
    first, second = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant][:2]
    second = dataclasses.replace(second, case=dataclasses.replace(second.case, params=Params({"unroll": 4})))
    (bench,) = json.loads(to_nvbench_json(dataclasses.replace(RUN, cases=[first, second])))["benchmarks"]
    assert bench["axes"][-1] == {"name": "unroll", "type": "string", "flags": "", "values": [
        {"input_string": "4", "description": "", "value": "4"}, {"input_string": "", "description": "", "value": ""}]}
    assert [s["axis_values"][-1]["value"] for s in bench["states"]] == ["", "4"]  # every state on every axis


def test_a_parameter_named_as_a_cases_own_axis_gets_an_axis_of_its_own():
    # A parameter "Elements" once overwrote the size axis: a variant's cases at 2^25 and 2^28 got one
    # state name, and nvbench-compare matched a state with the wrong one (+675 % "slower").
    first, second = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant][:2]
    assert first.case.n != second.case.n or first.case.block != second.case.block
    named = [dataclasses.replace(r, case=dataclasses.replace(r.case, params=Params({"Elements": 7, "Block": 3})))
             for r in (first, second)]
    (bench,) = json.loads(to_nvbench_json(dataclasses.replace(RUN, cases=named)))["benchmarks"]
    assert [axis["name"] for axis in bench["axes"]] == ["T", "Elements", "Block", "Distribution", "Block_param",
                                                        "Elements_param"]
    assert len({state["name"] for state in bench["states"]}) == 2
    sizes = [next(v["value"] for v in state["axis_values"] if v["name"] == "Elements") for state in bench["states"]]
    assert sizes == [str(first.case.n), str(second.case.n)]


@pytest.mark.parametrize("fails", ["a sample file", "the JSON"])
def test_an_export_that_fills_the_disk_leaves_no_sample_file_behind(tmp_path, monkeypatch, capsys, fails):
    # The disk fills after 5 sample files, or when the JSON itself is written: one line, exit 2, and
    # nothing of the export is left: not the sample files written before, nor the folder it made.
    from primbench import outputs
    from primbench.cli.main import main

    real, calls = outputs.os.replace, {"n": 0}

    def replace(source, destination):
        calls["n"] += 1
        if (fails == "a sample file" and calls["n"] > 5) or str(destination).endswith("out.json"):
            raise OSError(28, "No space left on device")
        return real(source, destination)

    monkeypatch.setattr(outputs.os, "replace", replace)
    (tmp_path / "kept.bin").write_bytes(b"a file of the user's")
    folder = tmp_path / "samples"
    code = main(["export", str(RUNS / "fixture-a.jsonl.gz"), "--format", "nvbench-json", "--jsonbin", str(folder),
                 "-o", str(tmp_path / "out.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "No space left on device" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.bin"]
