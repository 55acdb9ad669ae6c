"""`primbench export --format gbench-json` read by Google Benchmark's own tools/compare.py (vendored
in tests/readers/gbench/, its README says from which commit), run as a subprocess: two real runs of
the same code, 9 repetitions a case, get its U test on every case, and a case made 30 % slower
shows as slower."""

import gzip
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from primbench.export.formats import export
from primbench.runfile.io import load_run
from tests.conftest import RUNS
from tests.run_copies import SLOWED_CASE, edited_copy, scale_samples

COMPARE = Path(__file__).resolve().parent / "gbench" / "compare.py"
REPETITIONS = 9  # compare.py's UTEST_OPTIMAL_REPETITIONS: with fewer it calls its U test unreliable
SLOWER_BY = 1.30


def _every_fourth_case_and(run, key: str):
    """compare.py pairs benchmarks in quadratic time: every fourth case (90, across every op) says
    what all 352 would, in a second instead of five."""
    return replace(run, cases=[r for i, r in enumerate(run.cases) if i % 4 == 0 or r.key == key])


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """compare.py's difference report (--dump_to_json) and its printout, fixture-a against
    fixture-b with SLOWED_CASE's cold samples 30 % slower."""
    folder = tmp_path_factory.mktemp("gbench")
    unpacked = folder / "fixture-b.jsonl"
    unpacked.write_bytes(gzip.decompress((RUNS / "fixture-b.jsonl.gz").read_bytes()))
    slowed = edited_copy(unpacked, folder / "slowed.jsonl", lambda record: scale_samples(record, SLOWED_CASE, SLOWER_BY))
    exports, keys = [], set()
    for name, run_path in (("a", RUNS / "fixture-a.jsonl.gz"), ("b", slowed)):
        run = _every_fourth_case_and(load_run(run_path), SLOWED_CASE)
        keys |= {record.key for record in run.cases}
        exports.append(folder / f"{name}.json")
        exports[-1].write_text(export(run, "gbench-json", repetitions=REPETITIONS))
    dump = folder / "difference.json"
    result = subprocess.run([sys.executable, str(COMPARE), "--no-color", "--dump_to_json", str(dump), "benchmarks",
                             *map(str, exports)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    cases = {entry["name"]: entry for entry in json.loads(dump.read_text()) if entry["run_type"] == "iteration"}
    return cases, {entry["name"]: entry for entry in json.loads(dump.read_text())}, result.stdout, keys


def test_compare_py_runs_its_u_test_on_every_case_of_two_runs_of_the_same_code(compared):
    cases, _, printed, keys = compared
    assert set(cases) == keys and SLOWED_CASE in cases
    for name, case in cases.items():
        utest = case["utest"]
        assert utest["nr_of_repetitions"] == utest["nr_of_repetitions_other"] == REPETITIONS, name
        assert utest["have_optimal_repetitions"] and 0 <= utest["time_pvalue"] <= 1, name
        assert len(case["measurements"]) == REPETITIONS
    assert printed.count(f"U Test, Repetitions: {REPETITIONS} vs {REPETITIONS}") == len(cases)
    assert "WARNING: Results unreliable" not in printed


def test_compare_py_shows_the_case_made_30_percent_slower_as_slower_and_the_rest_as_they_were(compared):
    _, everything, _, _ = compared
    (median,) = everything[f"{SLOWED_CASE}_median"]["measurements"]
    assert median["time"] == pytest.approx(SLOWER_BY - 1, abs=0.05)  # its relative change, new against old
    assert everything[SLOWED_CASE]["utest"]["time_pvalue"] < 0.001
    # Two runs of the same code (one case slowed among 89): the geometric mean of the times hardly moves.
    (geomean,) = everything["OVERALL_GEOMEAN"]["measurements"]
    assert abs(geomean["time"]) < 0.02
