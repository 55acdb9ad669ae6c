"""One validator at the run-file reader (primbench/runfile/validate.py, issue 37 items 4 and 10):
every field a command reads, nested ones included, is checked as the file is read, and the records
against each other; a file that fails is refused by every command in one line naming its first
bad field (a dotted path) and its line, exit 2, nothing written. Runs primbench itself writes
(resumed, with failed or skipped cases, with telemetry, of older schemas) always read; gzip files
of several members read whole."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from primbench.runfile.io import RunWriter, load_run
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, RunResume, Telemetry
from tests.hostile import harness
from tests.hostile.corpus import good_records, write_records

# Every command that reads a run file, with the damaged one ({bad}) where it reads it.
COMMANDS = {
    "report": ["report", "{bad}", "-o", "{dir}/out.html"],
    "compare": ["compare", "{good}", "{bad}"],
    "compare as baseline": ["compare", "{bad}", "{good}"],
    "check": ["check", "{bad}", "--baseline", "{good}"],
    "check baseline": ["check", "{good}", "--baseline", "{bad}"],
    "export csv": ["export", "{bad}", "--format", "csv"],
    "export gbench-json": ["export", "{bad}", "--format", "gbench-json", "-o", "{dir}/out.json"],
    "export nvbench-json": ["export", "{bad}", "--format", "nvbench-json", "-o", "{dir}/out.json"],
    "replicas": ["replicas", "{good}", "{bad}"],
    "profile": ["profile", "{bad}"],
    "baseline": ["baseline", "{bad}", "--folder", "{dir}/baselines"],
    "publish": ["publish", "{bad}", "-o", "{dir}/site"],
    "resume": ["run", "--resume", "{bad}"],
}  # `ab` and `run CONFIG` read no run file


def _first_case(records: list[dict]) -> dict:
    return next(r for r in records if r["kind"] == "case")


def _cli(tmp_path: Path, argv: list[str], records=None, *, name="bad.jsonl", data: bytes | None = None):
    """Write the run (records, or raw bytes) beside good.jsonl, run the command; (outcome, stderr lines),
    after checking that no input changed and nothing was written."""
    folder = tmp_path / "case"
    folder.mkdir(exist_ok=True)
    write_records(folder / "good.jsonl", good_records())
    bad = folder / name
    if data is not None:
        bad.write_bytes(data)
    elif records is not None:
        write_records(bad, records)
    before = harness.fingerprint([folder])
    argv = [a.replace("{dir}", str(folder)).replace("{bad}", str(bad)).replace("{good}", str(folder / "good.jsonl"))
            for a in argv]
    outcome = harness.run_cli(argv, folder, tmp_path / "output")
    assert outcome.code is not None, "still running at the timeout"
    assert "Traceback" not in outcome.stderr + outcome.stdout, outcome.stderr[-800:]
    assert harness.fingerprint([folder]) == before, "an input changed or a file was written"
    return outcome, [line for line in outcome.stderr.splitlines() if line.strip()]


def _refused(tmp_path: Path, argv: list[str], records=None, *, says: tuple[str, ...], **options) -> str:
    outcome, lines = _cli(tmp_path, argv, records, **options)
    assert outcome.code == 2 and len(lines) == 1 and lines[0].startswith("primbench"), (outcome.code, outcome.stderr[-800:])
    assert all(words in lines[0] for words in says), lines[0]
    return lines[0]


def _damaged(change) -> list[dict]:
    records = good_records()
    change(records)
    return records


def _in_first_case(**fields):
    return _damaged(lambda records: _first_case(records).update(fields))


# -- item 4: times above a physical floor, bytes and peaks not negative, by every command ----------
@pytest.mark.parametrize("command", COMMANDS, ids=list(COMMANDS))
def test_a_sample_under_a_nanosecond_is_refused_by_every_command(tmp_path, command):
    # 5e-324 ms divided by zero in report, compare, check and the exports
    records = _damaged(lambda r: _first_case(r)["samples"]["cold_ms"].__setitem__(3, 5e-324))
    _refused(tmp_path, COMMANDS[command], records, says=("bad.jsonl:2:", "'samples.cold_ms'", "5e-324 at [3]", "floor"))


@pytest.mark.parametrize("command", ["export gbench-json", "export nvbench-json", "check"])
def test_a_denormal_batch_sample_never_reaches_an_export_as_infinity(tmp_path, command):
    # 1e-310 ms once wrote Infinity into the Google Benchmark JSON (no JSON reader takes it)
    records = _damaged(lambda r: _first_case(r)["samples"].update(batch_ms=[1e-310] * 5, batch_size=100))
    _refused(tmp_path, COMMANDS[command], records, says=("bad.jsonl:2:", "'samples.batch_ms'", "1e-310"))


def test_a_probe_sample_under_the_floor_is_refused(tmp_path):
    records = _damaged(lambda r: r[0]["copy"].update(samples_ms=[0.5, 1e-9]))
    _refused(tmp_path, COMMANDS["report"], records, says=("bad.jsonl:1:", "'copy.samples_ms'", "1e-09 at [1]"))


@pytest.mark.parametrize("command", ["report", "compare", "export csv", "export gbench-json"])
def test_negative_bytes_are_refused(tmp_path, command):
    # a negative byte count printed a negative GB/s
    _refused(tmp_path, COMMANDS[command], _in_first_case(bytes=-4096.0), says=("bad.jsonl:2:", "'bytes'", "-4096.0"))


@pytest.mark.parametrize("command", ["report", "compare", "export nvbench-json"])
def test_a_negative_peak_is_refused(tmp_path, command):
    records = _damaged(lambda r: r[0]["device"].update(peak_gbps=-4800.0))
    _refused(tmp_path, COMMANDS[command], records, says=("bad.jsonl:1:", "'device.peak_gbps'", "-4800.0"))


# Values a reader could not hold, found by a blind review: each crashed a command (int64 columns,
# float conversion, int(infinity)) or wrote an export its reader crashed on.
PAST_READERS = {
    "a sample past any float": (lambda r: _first_case(r)["samples"]["cold_ms"].__setitem__(0, 2**1024),
                                ("bad.jsonl:2:", "'samples.cold_ms'", "ceiling")),
    "a batch of 2^63 launches": (lambda r: _first_case(r)["samples"].update(batch_ms=[0.5] * 5, batch_size=2**63),
                                 ("bad.jsonl:2:", "'samples.batch_size'", "2^40")),
    "an order past int64": (lambda r: next(iter(r[0]["variants"].values())).update(order=-(2**63) - 1),
                            ("bad.jsonl:1:", ".order'", "-2^31 to 2^31 - 1")),
    "a peak of 1e300 GB/s": (lambda r: r[0]["device"].update(peak_gbps=1e300), ("bad.jsonl:1:", "'device.peak_gbps'")),
    "a wall time of 1e308 s": (lambda r: _first_case(r).setdefault("timing", {}).update(wall_s=1e308),
                               ("bad.jsonl:2:", "'timing.wall_s'")),
    "a parameter past int64": (lambda r: _first_case(r).update(params={"k": 2**64}), ("bad.jsonl:2:", "'params.k'")),
    "schema 0": (lambda r: r[0].update(schema=0), ("bad.jsonl", "schema version 0")),
}


@pytest.mark.parametrize("command", ["report", "compare", "export nvbench-json"])
@pytest.mark.parametrize("damage", PAST_READERS, ids=list(PAST_READERS))
def test_a_value_no_reader_can_hold_is_refused_by_name(tmp_path, damage, command):
    change, says = PAST_READERS[damage]
    _refused(tmp_path, COMMANDS[command], _damaged(change), says=says)


# -- item 4: the records against each other ---------------------------------------------------------
def _a_case_after_the_end(records):
    end = records.pop()
    records.insert(len(records) - 1, dict(end, ok=end["ok"] - 1))  # it counts the cases before it: the last one follows it


@pytest.mark.parametrize("command", ["report", "check", "compare", "baseline"])
def test_a_case_after_the_end_record_is_refused(tmp_path, command):
    _refused(tmp_path, COMMANDS[command], _damaged(_a_case_after_the_end),
             says=("bad.jsonl:22:", "a case record after the end record (line 21)"))


@pytest.mark.parametrize("command", ["report", "check", "baseline"])
def test_two_end_records_are_refused(tmp_path, command):
    _refused(tmp_path, COMMANDS[command], _damaged(lambda r: r.append(dict(r[-1]))),
             says=("bad.jsonl:23:", "a end record after the end record (line 22)"))


@pytest.mark.parametrize("command", ["report", "check", "check baseline", "export csv"])
def test_end_counts_that_contradict_the_cases_are_refused(tmp_path, command):
    # a failed case the end record counts as ok would let a gate read a broken run as clean
    records = _damaged(lambda r: _first_case(r).update(status="failed", reason="wrong"))
    _refused(tmp_path, COMMANDS[command], records,
             says=("bad.jsonl:22:", "the end record counts 20 ok, 0 failed, 0 skipped", "19 ok, 1 failed, 0 skipped"))


@pytest.mark.parametrize("command", ["report", "check", "replicas", "export csv"])
def test_a_case_measured_on_a_gpu_the_header_does_not_name_is_refused(tmp_path, command):
    records = _in_first_case(device_uuid="GPU-00000000-0000-0000-0000-000000000000")
    _refused(tmp_path, COMMANDS[command], records,
             says=("bad.jsonl:2:", "names GPU 'GPU-00000000-0000-0000-0000-000000000000' ('device_uuid')", "GPU-ab231fe6"))


def test_telemetry_of_a_gpu_the_header_does_not_name_is_refused(tmp_path):
    records = _damaged(lambda r: r.insert(2, {"kind": "telemetry", "device_uuid": "GPU-other", "sm_clock_mhz": 1980.0}))
    _refused(tmp_path, COMMANDS["report"], records, says=("bad.jsonl:3:", "telemetry of GPU 'GPU-other'"))


# -- item 4: nested fields the hostile corpus hit -----------------------------------------------------
NESTED = {
    "verify.random not an object": (lambda r: _first_case(r)["verify"].update(random="ok"), 2, "'verify.random' must be object, not str"),
    "determinism.across_grids an integer": (lambda r: _first_case(r)["determinism"].update(across_grids=3), 2,
                                            "'determinism.across_grids' must be array, not int"),
    "config.compare a string": (lambda r: r[0]["config"].update(compare="strict"), 1, "'config.compare' must be object, not str"),
    "device.uuid an integer": (lambda r: r[0]["device"].update(uuid=7), 1, "'device.uuid' must be string or null, not int"),
    "an across_grids entry's grids": (lambda r: _first_case(r)["determinism"].update(
        across_grids=[{"grid_scale": 2.0, "bitwise_equal": True, "grids": ["x"]}]), 2,
        "'determinism.across_grids[0].grids' must hold grids ([0] is str)"),
    "a threshold past one": (lambda r: r[0]["config"].update(compare={"threshold": 5}), 1, "'config.compare.threshold'"),
    "a variant's block sizes a string": (lambda r: next(iter(r[0]["variants"].values())).update(block_sizes="256"), 1,
                                         "'variants.reduce/"),
    "nvml.before a list": (lambda r: _first_case(r)["nvml"].update(before=[1980]), 2, "'nvml.before' must be object, not list"),
}


@pytest.mark.parametrize("command", ["report", "check", "export gbench-json"])
@pytest.mark.parametrize("damage", NESTED, ids=list(NESTED))
def test_a_nested_field_of_the_wrong_shape_is_named_by_its_dotted_path(tmp_path, damage, command):
    change, line, words = NESTED[damage]
    _refused(tmp_path, COMMANDS[command], _damaged(change), says=(f"bad.jsonl:{line}:", words))


def test_unknown_extra_fields_still_pass(tmp_path):
    def extras(records):  # a later primbench may add fields at any depth
        records[0].update(future={"anything": [1, "x"]})
        records[0]["device"]["future_gauge"] = "x"
        case = _first_case(records)
        case.update(future_note=7)
        case["samples"]["future_list"] = ["a"]
        case["verify"]["exact"]["future"] = {"deep": None}
        records[-1]["future_total"] = "n/a"

    outcome, lines = _cli(tmp_path, ["check", "{bad}", "--baseline", "{good}"], _damaged(extras))
    assert outcome.code == 0 and not lines, outcome.stderr[-800:]


# -- runs primbench writes always read -----------------------------------------------------------------
def test_a_resumed_run_reads_and_a_resume_reopens_a_finished_run(tmp_path):
    records = good_records()
    header, cases, end = records[0], records[1:-1], records[-1]
    resume = {"kind": "resume", "at": "2026-12-01T16:00:00+00:00", "done_before": 8}
    resumed = [header, *cases[:8], resume, *cases[8:], end]
    outcome, lines = _cli(tmp_path, ["check", "{bad}", "--baseline", "{good}"], resumed)
    assert outcome.code == 0 and not lines, outcome.stderr[-800:]
    # an end record, then a resume: the run goes on, and only the last end record (counting every case) finishes it
    reopened = [header, *cases[:8], dict(end, ok=8), resume, *cases[8:], end]
    outcome, lines = _cli(tmp_path, ["check", "{bad}", "--baseline", "{good}"], reopened, name="reopened.jsonl")
    assert outcome.code == 0 and not lines, outcome.stderr[-800:]
    path = tmp_path / "case" / "reopened.jsonl"
    assert load_run(path).finished and len(load_run(path).cases) == 20
    write_records(path, reopened[:-1])
    assert not load_run(path).finished  # reopened, not finished again


def test_a_run_primbench_writes_with_every_kind_of_record_reads(tmp_path):
    header = RunHeader.from_json(good_records()[0])
    uuid = header.device["uuid"]
    good = [CaseRecord.from_json(r) for r in good_records()[1:-1]]
    failed = CaseRecord(good[0].case, status="failed", reason="exact check: wrong", log="nvrtc: ...", device_uuid=uuid)
    skipped = CaseRecord(good[1].case, status="skipped", reason="needs more GPU memory")
    path = tmp_path / "r.jsonl"
    with RunWriter(path, create=True) as writer:
        writer.append(header)
        for record in (failed, skipped, *good[2:10]):
            writer.append(record)
        writer.append(Telemetry(device_uuid=uuid, at="t", sm_clock_mhz=1980.0, temperature_c=41.0, reasons=("gpu_idle",)))
        writer.append(RunResume(at="t", done_before=10))
        for record in good[10:]:
            writer.append(record)
        writer.append(RunEnd(finished="t", ok=18, failed=1, skipped=1))
    run = load_run(path)
    assert run.finished and len(run.cases) == 20 and len(run.telemetry) == 1 and len(run.resumes) == 1
    assert [c.status for c in run.cases[:2]] == ["failed", "skipped"] and run.cases[2].samples == good[2].samples


def test_every_stored_run_and_schema_reads(tmp_path):
    from tests.conftest import REFERENCE_RUN, RUNS

    for path in [REFERENCE_RUN, *sorted(RUNS.glob("*.jsonl.gz"))]:
        run = load_run(path)
        assert run.cases, path


# -- counters files beside a run ----------------------------------------------------------------------
def _counters(ncu) -> str:
    return json.dumps({"format": "primbench-counters", "schema": 1, "device": {"name": "NVIDIA H200"}, "ncu": ncu,
                       "metrics": {}, "cases": []})


def test_a_counters_file_whose_ncu_is_not_an_object_is_one_line(tmp_path):
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "good.counters.json").write_text(_counters(5))
    _refused(tmp_path, ["profile", "{good}"], says=("good.counters.json: damaged counters file: 'ncu' must be object, not int",))


def test_the_report_says_so_in_the_page_for_a_damaged_counters_file(tmp_path):
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "good.counters.json").write_text(_counters([]))
    report = tmp_path / "report.html"  # outside the inputs' folder, which must not change
    outcome, lines = _cli(tmp_path, ["report", "{good}", "-o", str(report)])
    assert outcome.code == 0 and report.is_file(), outcome.stderr[-800:]
    assert "damaged counters file: &#39;ncu&#39; must be object, not list" in report.read_text()


# -- item 10: gzip files of several members -------------------------------------------------------------
def _lines(records) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


@pytest.mark.parametrize("members", [2, 22], ids=["gzip -c part >> run.jsonl.gz", "a member per line (pigz, bgzip)"])
def test_a_gzip_file_of_several_members_is_read_whole(tmp_path, members):
    lines = _lines(good_records())
    cut = -(-len(lines) // members)
    data = b"".join(gzip.compress(b"".join(lines[i:i + cut])) for i in range(0, len(lines), cut))
    outcome, errors = _cli(tmp_path, ["check", "{bad}", "--baseline", "{good}"], name="bad.jsonl.gz", data=data)
    assert outcome.code == 0 and not errors, outcome.stderr[-800:]
    run = load_run(tmp_path / "case" / "bad.jsonl.gz")
    assert run.finished and len(run.cases) == 20 and not run.warnings


@pytest.mark.parametrize("command", ["report", "check", "compare"])
def test_two_runs_joined_in_one_gzip_file_are_refused_at_the_second_header(tmp_path, command):
    run = b"".join(_lines(good_records()))
    data = gzip.compress(run) + gzip.compress(run)
    _refused(tmp_path, COMMANDS[command], name="bad.jsonl.gz", data=data,
             says=("bad.jsonl.gz:23:", "a second header; two runs were written into one file"))


def test_bytes_after_a_gzip_member_that_start_no_other_are_refused(tmp_path):
    data = gzip.compress(b"".join(_lines(good_records()))) + b"trailing junk"
    _refused(tmp_path, COMMANDS["report"], name="bad.jsonl.gz", data=data, says=("has data after the end of its gzip stream",))
