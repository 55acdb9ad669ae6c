"""The run file: written line by line, read back, interruptions and bad files handled.

The records here are minimal format fixtures (no measurement is read from them); measurement
tests use the real recorded run under results/.
"""

import gzip
import json
import re

import pytest

from primbench.runfile.case_id import CaseId
from primbench.runfile.io import (
    SCHEMA_VERSION,
    RunFileError,
    RunWriter,
    load_run,
    repair_truncated_tail,
    report_path,
    run_stem,
)
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, Samples
from tests.run_copies import SCHEMA_1_ARCHIVED_RUN

HEADER = {"kind": "header", "schema": SCHEMA_VERSION, "run_id": "t", "device": {"peak_gbps": 4814.3, "l2_bytes": 62914560},
          "copy": {"bytes": 8, "samples_ms": [1.0]}, "variants": {}}


def _case(name, status="ok"):
    """A case record of variant `name` (its key, as every key, spelled from its fields)."""
    return {"kind": "case", "key": CaseId("reduce", name, "float32", 4, 64, "uniform").key, "op": "reduce", "variant": name,
            "dtype": "float32", "n": 4, "block": 64, "distribution": "uniform", "bytes": 16, "status": status,
            "samples": {"cold_ms": [0.001, 0.002, 0.003]}}


def _write(path, objects, tail=""):
    path.write_text("".join(json.dumps(o) + "\n" for o in objects) + tail)
    return path


def test_a_run_written_line_by_line_reads_back_with_its_end(tmp_path):
    path = tmp_path / "r.jsonl"
    with RunWriter(path, create=True) as writer:
        writer.append(RunHeader.from_json(HEADER))
        writer.append(CaseRecord.from_json(_case("a")))
        writer.append(RunEnd(ok=1))
    run = load_run(path)
    assert run.finished and [c.case.variant for c in run.cases] == ["a"]
    assert run.frame().loc[0, "median_ms"] == pytest.approx(0.002)


def test_a_writer_never_overwrites_an_existing_run(tmp_path):
    path = _write(tmp_path / "r.jsonl", [HEADER])
    with pytest.raises(RunFileError, match="never overwrites"):
        RunWriter(path, create=True)


def test_a_truncated_last_line_is_dropped_with_a_warning_and_can_be_repaired(tmp_path):
    path = _write(tmp_path / "r.jsonl", [HEADER, _case("a")], tail='{"kind": "case", "key": "b", "sam')
    run = load_run(path)
    assert [c.case.variant for c in run.cases] == ["a"] and not run.finished
    assert "truncated" in run.warnings[0]
    assert repair_truncated_tail(path)
    assert path.read_text().endswith("\n") and load_run(path).warnings == []


def test_a_corrupted_line_in_the_middle_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(HEADER) + "\n{not json\n" + json.dumps(_case("a")) + "\n")
    with pytest.raises(RunFileError, match=r"r.jsonl:2: not valid JSON"):
        load_run(path)


def test_a_newer_schema_is_refused_with_the_versions(tmp_path):
    path = _write(tmp_path / "r.jsonl", [dict(HEADER, schema=99)])
    with pytest.raises(RunFileError, match=f"schema version 99 is newer than this primbench reads \\({SCHEMA_VERSION}\\)"):
        load_run(path)


@pytest.mark.parametrize("content,message", [
    ("", "no header"),
    (json.dumps(_case("a")) + "\n", "no header"),
    ('["a list"]\n', "not a primbench record"),
])
def test_files_that_are_not_run_files_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    with pytest.raises(RunFileError, match=message):
        load_run(path)


def test_a_missing_run_file_names_the_path_and_where_runs_live(tmp_path):
    with pytest.raises(RunFileError, match="no such run file.*results/"):
        load_run(tmp_path / "nope.jsonl")


def test_a_resumed_run_is_finished_only_by_a_later_end(tmp_path):
    path = _write(tmp_path / "r.jsonl", [HEADER, _case("a"), {"kind": "resume", "at": "x"}, _case("b")])
    run = load_run(path)
    assert not run.finished and len(run.cases) == 2 and len(run.resumes) == 1


def test_failed_cases_have_no_bandwidth_in_the_frame(tmp_path):
    failed = dict(_case("f", status="failed"), samples={"cold_ms": []})
    run = load_run(_write(tmp_path / "r.jsonl", [HEADER, _case("a"), failed]))
    frame = run.frame().set_index("variant")
    assert frame.loc["f", "gbps"] != frame.loc["f", "gbps"]  # NaN
    assert frame.loc["a", "gbps"] == pytest.approx(16 / 0.002e-3 / 1e9)


def test_a_schema_older_than_any_primbench_wrote_is_refused(tmp_path):
    path = _write(tmp_path / "r.jsonl", [dict(HEADER, schema=0)])
    with pytest.raises(RunFileError, match="schema version 0 is not one primbench ever wrote"):
        load_run(path)


DAMAGED_CASES = [
    ({"kind": "case"}, "r.jsonl:2: case record lacks 'key'"),
    (dict(_case("a"), samples={"cold_ms": ["a"]}), "'samples.cold_ms' holds 'a'"),
    (dict(_case("a"), samples={"cold_ms": [float("nan")] * 3}), "'samples.cold_ms' holds nan"),
    (dict(_case("a"), samples={"cold_ms": [0.1, -0.2, 0.1]}), "'samples.cold_ms' holds -0.2"),
    (dict(_case("a"), samples={"cold_ms": [0.1, 0.0, 0.1]}), "'samples.cold_ms' holds 0.0"),
    (dict(_case("a"), samples={"cold_ms": []}), "an 'ok' case with no cold samples"),
    (dict(_case("a"), samples="fast"), "'samples' must be object, not str"),
    (dict(_case("a"), n="1024"), "'n' must be integer, not str"),
    (dict(_case("a"), n=2**70), "'n' 1180591620717411303424 is outside"),
    (dict(_case("a"), params=["radius", 4]), "'params' must be object, not list"),
    (dict(_case("a"), status="great"), "'status' must be one of ok, failed, skipped"),
    (dict(_case("a"), launches=["x"]), "'launches' must hold objects"),
    (dict(_case("a"), flags=[1, {}]), "'flags' must hold names"),
    (dict(_case("a"), block=True), "'block' must be integer or null, not bool"),
    (dict(_case("a"), n=5), "'key' 'reduce/a/float32/n=4/block=64/uniform' does not match its op, variant"),
    (dict(_case("a"), samples={"cold_ms": [0.1], "batch_size": 0}), "'samples.batch_size' must be a count"),
]


@pytest.mark.parametrize("case,message", DAMAGED_CASES, ids=[m for _, m in DAMAGED_CASES])
def test_damaged_case_records_are_refused_in_one_line_naming_the_line_and_field(tmp_path, case, message):
    with pytest.raises(RunFileError, match=re.escape(message)):
        load_run(_write(tmp_path / "r.jsonl", [HEADER, case]))


@pytest.mark.parametrize("header,message", [
    (dict(HEADER, device="an H200"), "r.jsonl:1: header record 'device' must be object, not str"),
    (dict(HEADER, variants=[]), "'variants' must be object, not list"),
    ({k: v for k, v in HEADER.items() if k != "run_id"}, "header record lacks 'run_id'"),
    (dict(HEADER, variants={"reduce/a": "a string"}), "'variants.reduce/a' must be object, not str"),
    (dict(HEADER, device={"name": ["x"], "peak_gbps": 4814.3}), "'device.name' must be string, not list"),
    (dict(HEADER, device={"name": "H200", "peak_gbps": "fast"}), "'device.peak_gbps' must be number or null, not str"),
    (dict(HEADER, git={"sha": 123}), "'git.sha' must be string or null, not int"),
])
def test_a_header_of_the_wrong_shape_is_refused_in_one_line(tmp_path, header, message):
    with pytest.raises(RunFileError, match=re.escape(message)):
        load_run(_write(tmp_path / "r.jsonl", [header, _case("a")]))


def test_a_case_key_twice_is_refused(tmp_path):
    with pytest.raises(RunFileError, match=re.escape("r.jsonl:3: case 'reduce/a/float32/n=4/block=64/uniform' again (first on line 2)")):
        load_run(_write(tmp_path / "r.jsonl", [HEADER, _case("a"), _case("a")]))


def test_deep_nesting_and_huge_integers_are_one_line(tmp_path):
    deep = tmp_path / "deep.jsonl"
    deep.write_text(json.dumps(HEADER) + "\n" + '{"kind": "case", "x": ' + "[" * 100000 + "]" * 100000 + "}\n")
    with pytest.raises(RunFileError, match="deep.jsonl:2: a value nested or sized past any run record"):
        load_run(deep)
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps(HEADER) + "\n" + '{"kind": "case", "n": ' + "9" * 5000 + "}\n")
    with pytest.raises(RunFileError, match="huge.jsonl:2: a value nested or sized past any run record"):
        load_run(huge)


def test_a_schema_1_run_is_migrated_on_reading_and_its_random_check_keeps_its_values(tmp_path):
    old_case = dict(_case("a"), verify={"exact": {"ok": True}, "float": {"ok": False, "error": 0.5, "tolerance": 0.1}})
    path = _write(tmp_path / "r.jsonl", [dict(HEADER, schema=1), old_case])
    run = load_run(path)
    assert run.written_schema == 1 and run.header.schema == SCHEMA_VERSION
    assert run.cases[0].verify == {"exact": {"ok": True}, "random": {"ok": False, "error": 0.5, "tolerance": 0.1}}
    row = run.frame().iloc[0]
    assert row["random_ok"] == False and row["error"] == 0.5  # noqa: E712 (numpy bool)
    assert "float" in json.loads(path.read_text().splitlines()[1])["verify"]  # the file itself is never rewritten


def test_a_real_schema_1_run_from_the_archive_reads_as_schema_2(repo):
    archived = repo / SCHEMA_1_ARCHIVED_RUN
    run = load_run(archived)
    assert run.written_schema == 1 and run.finished
    assert all("float" not in c.verify and "ok" in c.verify["random"] for c in run.cases if c.status == "ok")
    frame = run.frame()
    assert frame.loc[frame["status"] == "ok", "random_ok"].all()


def test_an_archived_run_reads_the_same_compressed_and_a_cut_gzip_loses_only_its_last_line(tmp_path):
    import gzip

    objects = [HEADER, _case("a"), _case("b"), {"kind": "end", "finished": "t", "ok": 2, "failed": 0, "skipped": 0}]
    plain = _write(tmp_path / "r.jsonl", objects)
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert [c.case.variant for c in load_run(packed).cases] == ["a", "b"] and load_run(packed).finished
    assert run_stem(packed) == "r" and report_path(packed) == tmp_path / "r.html"
    many = [HEADER] + [_case(f"case{i}") for i in range(300)] + [dict(objects[-1], ok=300)]
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress("".join(json.dumps(o) + "\n" for o in many).encode())[:-200])
    run = load_run(cut)  # the stream ends early: what decodes is read, its partial last line dropped
    assert 0 < len(run.cases) < 300 and not run.finished
    assert any("truncated last line" in w for w in run.warnings) and any("ends early" in w for w in run.warnings)
    trailer_cut = tmp_path / "trailer.jsonl.gz"  # every line decodes, but the stream's end is missing: said so
    trailer_cut.write_bytes(gzip.compress("".join(json.dumps(o) + "\n" for o in many).encode())[:-8])
    run = load_run(trailer_cut)
    assert len(run.cases) == 300 and [w for w in run.warnings if "gzip stream ends early" in w]
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b but not gzip after all")
    with pytest.raises(RunFileError, match="its gzip stream is damaged"):
        load_run(bad)
    copied = tmp_path / "baseline.jsonl"  # `bench.py baseline` of an archived run copies its bytes
    copied.write_bytes(packed.read_bytes())
    assert [c.case.variant for c in load_run(copied).cases] == ["a", "b"]


def test_records_read_back_as_they_were_written(tmp_path):
    # What the runner writes is what every reader gets: each record type's line reads back equal.
    header = RunHeader.from_json(HEADER)
    case = CaseRecord(CaseId("stencil", "s", "float32", 1000, None, "normal", {"radius": 4}), bytes=8000.0, seed=3,
                      launches=({"kernel": "k", "grid": 4, "block": 256},), samples=Samples((0.1, 0.2), (0.05,), 10),
                      verify={"exact": {"ok": True}}, flags=("throttled",), elapsed_s=0.5)
    failed = CaseRecord(CaseId("reduce", "r", "int32", 7, 64, "uniform"), status="failed", reason="wrong", log="nvrtc: ...")
    path = tmp_path / "r.jsonl"
    with RunWriter(path, create=True) as writer:
        for record in (header, case, failed, RunEnd(finished="t", ok=1, failed=1)):
            writer.append(record)
    run = load_run(path)
    assert (run.header, run.cases, run.end) == (header, [case, failed], RunEnd(finished="t", ok=1, failed=1))
    assert json.loads(path.read_text().splitlines()[1])["key"] == "stencil/s/float32/n=1000/block=lib/normal/radius=4"


def test_junk_after_the_last_record_is_refused_not_skipped(tmp_path):
    # A gigabyte of padding once rendered as if fine: any unfinished last line that is not the
    # start of a record, and any blank line, is refused with its line number.
    for tail, message in (("\0" * 5000, r"r.jsonl:3: after the last record: junk"), ("\n\n", r"r.jsonl:3: a blank line"),
                          ("   ", r"r.jsonl:3: after the last record: junk")):
        path = _write(tmp_path / "r.jsonl", [HEADER, _case("a")], tail=tail)
        with pytest.raises(RunFileError, match=message):
            load_run(path)
    cut = _write(tmp_path / "cut.jsonl", [HEADER, _case("a")], tail='{"ki')  # cut three bytes into a record
    assert "truncated last line" in load_run(cut).warnings[0]


def test_a_line_or_a_file_past_its_cap_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    from primbench.runfile import lines

    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 64 << 10)
    long_line = _write(tmp_path / "long.jsonl", [HEADER, dict(_case("a"), reason="x" * (100 << 10))])
    with pytest.raises(RunFileError, match=r"long.jsonl:2: a line over 0 MiB"):
        load_run(long_line)
    monkeypatch.setattr(lines, "MAX_RUN_BYTES", 1 << 20)
    # Valid records past the cap: unpacked in chunks and refused once over it, never read whole.
    many = [HEADER] + [_case(f"case{i}") for i in range(8000)]
    big = tmp_path / "big.jsonl.gz"
    big.write_bytes(gzip.compress("".join(json.dumps(o) + "\n" for o in many).encode()))
    with pytest.raises(RunFileError, match=r"big.jsonl.gz: holds over 0 GiB \(unpacked\)"):
        load_run(big)
    # Padding, however well it packs, is refused at its first line.
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress((json.dumps(HEADER) + "\n").encode() + b"\n" * (100 << 20), compresslevel=9))
    assert bomb.stat().st_size < 200 << 10
    with pytest.raises(RunFileError, match=r"bomb.jsonl.gz:2: a blank line"):
        load_run(bomb)


def test_data_after_the_gzip_stream_and_text_that_is_not_utf8_are_refused(tmp_path):
    joined = tmp_path / "joined.jsonl.gz"
    joined.write_bytes(gzip.compress((json.dumps(HEADER) + "\n").encode()) + b"trailing junk")
    with pytest.raises(RunFileError, match="data after the end of its gzip stream"):
        load_run(joined)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes((json.dumps(HEADER) + "\n").encode() + b'{"kind": "case", "key": "\xe9"}\n')
    with pytest.raises(RunFileError, match="latin.jsonl:2: not UTF-8"):
        load_run(latin)


def test_an_integer_sample_of_400_digits_is_damage_not_a_traceback(tmp_path):
    path = _write(tmp_path / "r.jsonl", [HEADER, dict(_case("a"), samples={"cold_ms": [int("9" * 400)]})])
    with pytest.raises(RunFileError, match=r"r.jsonl:2: case record 'samples.cold_ms' holds 9"):
        load_run(path)


def test_a_whole_last_record_missing_only_its_newline_is_kept_by_the_repair(tmp_path):
    # A kill between a record's closing brace and its newline: the record is whole, so --resume's
    # repair ends its line rather than cutting a finished case (which would then be lost).
    path = _write(tmp_path / "r.jsonl", [HEADER], tail=json.dumps(_case("a")))
    assert [c.case.variant for c in load_run(path).cases] == ["a"]
    assert repair_truncated_tail(path)
    assert path.read_text().endswith("}\n") and [c.case.variant for c in load_run(path).cases] == ["a"]
