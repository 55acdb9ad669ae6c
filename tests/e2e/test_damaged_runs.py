"""No gate is fooled by a damaged run (issue 21): `check` and `baseline` refuse, with one line and
exit 2, a real run transformed (test-only) into each damaged class: NaN, negative or zero samples,
a duplicate case key, a field of the wrong type, and (for baseline) a finished run with no case."""

import gzip
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO, RUNS

GOOD = RUNS / "progression.jsonl.gz"


def _records():
    return [json.loads(line) for line in gzip.decompress(GOOD.read_bytes()).decode().splitlines()]


def _first_case(records):
    return next(r for r in records if r["kind"] == "case")


def _nan(records):
    _first_case(records)["samples"]["cold_ms"][0] = float("nan")


def _negative(records):
    _first_case(records)["samples"]["cold_ms"][1] = -0.5


def _zero(records):
    _first_case(records)["samples"]["cold_ms"][2] = 0.0


def _duplicate(records):
    records.insert(2, dict(_first_case(records)))


def _wrong_type(records):
    _first_case(records)["n"] = "33554432"


def _no_cases(records):
    records[:] = [r for r in records if r["kind"] != "case"]
    records[-1].update(ok=0, failed=0, skipped=0)  # the end record counts the cases: none


DAMAGE = {"NaN sample": _nan, "negative sample": _negative, "zero sample": _zero, "duplicate key": _duplicate,
          "string n": _wrong_type}


def _damaged(tmp_path, damage) -> str:
    records = _records()
    damage(records)
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))  # json writes NaN as NaN, as a damaged file would
    return str(path)


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, REPO / "bench.py", *map(str, args)], cwd=tmp_path, capture_output=True, text=True)


def _one_line_exit_2(result):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    assert "damaged" in lines[0] or "again" in lines[0], lines[0]


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=list(DAMAGE))
def test_check_and_baseline_refuse_a_damaged_run(tmp_path, damage):
    damaged = _damaged(tmp_path, damage)
    _one_line_exit_2(_cli(tmp_path, "check", damaged, "--baseline", GOOD))
    _one_line_exit_2(_cli(tmp_path, "check", GOOD, "--baseline", damaged))
    _one_line_exit_2(_cli(tmp_path, "baseline", damaged))
    assert not (tmp_path / "results").exists()


def test_baseline_refuses_a_finished_run_with_no_case(tmp_path):
    empty = _damaged(tmp_path, _no_cases)
    result = _cli(tmp_path, "baseline", empty)
    assert result.returncode == 2 and "has no cases" in result.stderr and not (tmp_path / "results").exists()
