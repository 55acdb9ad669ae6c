"""The run file's JSON Schema (docs/run-file.schema.json) is the one primbench/runfile/schema.py
generates, and the reference run, every fixture run and the schema-1 excerpt (as migrated) meet it."""

import gzip
import json

import pytest

from primbench.runfile.io import load_run
from primbench.runfile.schema import json_schema
from tests.conftest import REFERENCE_RUN, REPO, RUNS

jsonschema = pytest.importorskip("jsonschema", reason="make test installs jsonschema (pip install jsonschema)")


def test_the_published_schema_is_the_generated_one():
    published = json.loads((REPO / "docs" / "run-file.schema.json").read_text())
    assert published == json_schema(), "regenerate it: python -m primbench.runfile.schema > docs/run-file.schema.json"


@pytest.mark.parametrize("run", [REFERENCE_RUN, *sorted(RUNS.glob("fixture-*.jsonl.gz"))], ids=lambda p: p.name)
def test_every_line_of_a_real_run_meets_the_schema(run):
    validator = jsonschema.Draft202012Validator(json_schema())
    lines = gzip.decompress(run.read_bytes()).decode().splitlines()
    errors = [(number, error.message) for number, line in enumerate(lines, 1)
              for error in validator.iter_errors(_samples_cut(json.loads(line)))]
    assert len(lines) > 300 and not errors, errors[:5]


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


def test_the_schema_refuses_what_the_reader_refuses():
    validator = jsonschema.Draft202012Validator(json_schema())
    case = {"kind": "case", "key": "k", "op": "reduce", "variant": "v", "dtype": "float32", "n": 1024, "status": "ok",
            "samples": {"cold_ms": [0.1, 0.2]}}
    assert validator.is_valid(case)
    for damage in ({"n": "1024"}, {"status": "great"}, {"samples": {"cold_ms": [0.1, -0.2]}}, {"samples": {"cold_ms": [0.0]}},
                   {"params": {"radius": "4"}}):
        assert not validator.is_valid({**case, **damage}), damage
