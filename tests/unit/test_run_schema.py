"""The run file's JSON Schema (docs/run-file.schema.json) is the one primbench/runfile/schema.py
generates; every committed run (results/, tests/data/runs/, tests/data/default-runs/) meets it, the
schema-1 excerpt also as migrated; and a record the reader refuses for a field's type or range,
nested fields included, the schema refuses too."""

import gzip
import json

import pytest

from primbench.runfile.case_id import CaseId
from primbench.runfile.io import load_run
from primbench.runfile.schema import json_schema, record_problem
from tests.conftest import REPO, RUNS

COMMITTED_RUNS = sorted([*(REPO / "results").glob("*/*.jsonl.gz"), *RUNS.glob("*.jsonl.gz"),
                         *(REPO / "tests" / "data" / "default-runs").glob("*.jsonl.gz")])

jsonschema = pytest.importorskip("jsonschema", reason="make test installs jsonschema (pip install jsonschema)")


def test_the_published_schema_is_the_generated_one():
    published = json.loads((REPO / "docs" / "run-file.schema.json").read_text())
    assert published == json_schema(), "regenerate it: python -m primbench.runfile.schema > docs/run-file.schema.json"


def test_the_committed_runs_are_found():
    assert len(COMMITTED_RUNS) >= 10 and REPO / "results" / "reference" / "nvidia-h200.jsonl.gz" in COMMITTED_RUNS


@pytest.mark.parametrize("run", COMMITTED_RUNS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_line_of_a_committed_run_meets_the_schema(run):
    validator = jsonschema.Draft202012Validator(json_schema())
    lines = gzip.decompress(run.read_bytes()).decode().splitlines()
    errors = [(number, error.message) for number, line in enumerate(lines, 1)
              for error in validator.iter_errors(_samples_cut(json.loads(line)))]
    assert lines and not errors, errors[:5]


def _samples_cut(record, keep: int = 25):
    """The record with each list of raw numbers cut to its first `keep` (every field, object and
    list kept, so the schema still meets each of them): jsonschema in Python walks the reference
    run's 600,000 samples one by one (16 s), and the run-file reader checks every one already
    (tests/hostile, runfile/validate.py)."""
    if isinstance(record, dict):
        return {key: _samples_cut(value, keep) for key, value in record.items()}
    if isinstance(record, list):
        if len(record) > keep and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in record):
            return record[:keep]
        return [_samples_cut(value, keep) for value in record]
    return record


def test_a_schema_1_run_meets_it_once_migrated():
    run = load_run(RUNS / "schema1-excerpt.jsonl.gz")
    validator = jsonschema.Draft202012Validator(json_schema())
    assert not [e.message for record in [run.header, *run.cases, run.end] for e in validator.iter_errors(record.to_json())]


CASE = {"kind": "case", "key": "", "op": "reduce", "variant": "v", "dtype": "float32", "n": 1024, "block": 256,
        "status": "ok", "samples": {"cold_ms": [0.1, 0.2], "cold_clock_mhz": [1980.0, 1980.0]}}
HEADER = {"kind": "header", "run_id": "r", "schema": 4, "device": {"name": "NVIDIA H200", "sm_count": 132},
          "variants": {"reduce/v": {"op": "reduce", "library": {"package": "cupy", "version": "13.6"}}}}
CASE_DAMAGE = [
    {"n": "1024"}, {"n": 0}, {"block": 0}, {"status": "great"}, {"bytes": -1}, {"params": {"radius": "4"}},
    {"samples": {"cold_ms": [0.1, -0.2]}}, {"samples": {"cold_ms": [0.0]}}, {"samples": {"cold_ms": "0.1"}},
    {"samples": {"cold_ms": [0.1, 0.2], "cold_clock_mhz": [0.5, 1980.0]}}, {"samples": {"batch_size": 0}},
    {"verify": {"exact": {"ok": "yes"}}}, {"verify": {"random": {"first_mismatch": {"index": 1.5}}}},
    {"determinism": {"across_grids": [{"grids": ["a"]}]}}, {"launches": [{"kernel": 3}]}, {"launches": ["k"]},
    {"timing": {"throttled_discarded": -1}}, {"nvml": {"before": {"sm_clock_mhz": 0.5}}},
    {"energy": {"windows": [{"seconds": 1, "mj": -1, "ops": 1}]}}, {"energy": {"windows": [{"mj": 1, "ops": 1}]}},
    {"between_runs": {"cold_median_ms": [0.1, 0.0]}}, {"flags": [1]},
]
HEADER_DAMAGE = [
    {"device": {"name": 7}}, {"device": {"name": "x", "sm_count": "132"}}, {"device": {"name": "x", "peak_gbps": 0.5}},
    {"variants": {"reduce/v": {"library": {"version": "13.6"}}}}, {"variants": {"reduce/v": {"traffic": "write"}}},
    {"variants": {"reduce/v": {"work_span": ["n"]}}}, {"variants": {"reduce/v": {"bytes_model": 3}}},
    {"protocol": {"parts": {"cold_sample": {"revision": "2"}}}}, {"gpus": {"mode": "mirror"}},
    {"ceilings": {"read": [{"bytes": 0}]}}, {"baseline": {"spread_multiple": 0.5}},
    {"config": {"compare": {"threshold": 1.5}}}, {"energy": {"idle_w": 0}}, {"copy": {"samples_ms": [-1]}},
]


def _case(**fields) -> dict:
    case = {**CASE, **fields}
    try:
        return {**case, "key": CaseId.from_record(case).key}  # the key spells the fields, damage or not
    except (TypeError, ValueError):
        return case


def test_the_schema_takes_what_the_reader_takes():
    validator = jsonschema.Draft202012Validator(json_schema())
    for record in (_case(), HEADER):
        assert record_problem(record) is None and validator.is_valid(record), record["kind"]


@pytest.mark.parametrize("damage", [*CASE_DAMAGE, *HEADER_DAMAGE], ids=lambda d: json.dumps(d)[:60])
def test_a_damaged_field_is_refused_by_the_reader_and_the_schema(damage):
    record = _case(**damage) if damage in CASE_DAMAGE else {**HEADER, **damage}
    assert record_problem(record) is not None
    schema = json_schema()
    kind_only = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{record['kind']}"})
    errors = list(kind_only.iter_errors(record))
    assert errors and {error.absolute_path[0] for error in errors} == set(damage), [e.message for e in errors]
    assert not jsonschema.Draft202012Validator(schema).is_valid(record)


def test_the_schema_refuses_what_the_reader_refuses():
    validator = jsonschema.Draft202012Validator(json_schema())
    case = {"kind": "case", "key": "k", "op": "reduce", "variant": "v", "dtype": "float32", "n": 1024, "status": "ok",
            "samples": {"cold_ms": [0.1, 0.2]}}
    assert validator.is_valid(case)
    for damage in ({"n": "1024"}, {"status": "great"}, {"samples": {"cold_ms": [0.1, -0.2]}}, {"samples": {"cold_ms": [0.0]}},
                   {"params": {"radius": "4"}}):
        assert not validator.is_valid({**case, **damage}), damage
