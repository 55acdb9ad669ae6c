"""primbench's NVBench JSON read by NVIDIA's own readers (cuda-bench, installed by
tests/readers/install.py): nvbench-compare-robust calls a 30 % slowdown SLOW and a run against
itself SAME, nvbench-json-summary lists every measured case, nvbench-walltime totals the cases'
wall time, nvbench-histogram reads the --jsonbin sample files. The runs are two real H200 runs
of the same code (tests/data/runs/fixture-a and fixture-b) and a copy of the first with every
sample 30 % longer."""

import dataclasses
import gzip
import os
import re
import subprocess

import pytest

from primbench.export.case_selection import select
from primbench.export.nvbench_json import to_nvbench_json
from primbench.runfile.io import load_run
from tests.conftest import REFERENCE_RUN, REPO, RUNS
from tests.readers import install
from tests.run_copies import edited_copy

install.start_install()  # at collection: the install overlaps the rest of the suite

SLOWDOWN = 1.30
RUN_A = load_run(RUNS / "fixture-a.jsonl.gz")
MEASURED = [r for r in RUN_A.cases if r.ok and r.cold_ms]
READERS = ("nvbench-compare-robust", "nvbench-json-summary", "nvbench-walltime", "nvbench-histogram")


def _slower(record: dict) -> None:
    """Every sample of every case SLOWDOWN times as long."""
    if record["kind"] == "case":
        samples = record["samples"]
        samples["cold_ms"] = [t * SLOWDOWN for t in samples["cold_ms"]]
        samples["batch_ms"] = [t * SLOWDOWN for t in samples["batch_ms"]]


@pytest.fixture(scope="module")
def readers() -> dict:
    found = {name: install.reader(name) for name in READERS}
    if None in found.values():
        pytest.skip(f"NVIDIA's NVBench readers are not installed: {install.why_not()}")
    return found


def _export(run, json_path):
    json_path.write_text(to_nvbench_json(run, jsonbin=json_path.with_name(json_path.name + "-bin")))
    return json_path


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict:
    """{name: NVBench JSON beside its sample folder}: a, a exported again, b, and a 30 % slower."""
    folder = tmp_path_factory.mktemp("nvbench-exports")
    plain = folder / "fixture-a.jsonl"
    plain.write_bytes(gzip.decompress((RUNS / "fixture-a.jsonl.gz").read_bytes()))
    slower = edited_copy(plain, folder / "fixture-a-slower.jsonl", _slower)
    runs = {"a": RUN_A, "a-again": load_run(plain), "b": load_run(RUNS / "fixture-b.jsonl.gz"), "a-slower": load_run(slower)}
    return {name: _export(run, folder / f"{name}.json") for name, run in runs.items()}


def _run(reader, *args) -> str:
    env = dict(os.environ, MPLBACKEND="Agg")  # nvbench-histogram draws, and shows nothing, without a display
    result = subprocess.run([str(reader), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout


def _verdicts(reader, reference, compare) -> tuple[dict, str]:
    """nvbench-compare-robust's summary counts {total, SAME, FAST, SLOW, AMBG, UNKNOWN}, and its output."""
    output = _run(reader, "--no-color", reference, compare)
    summary = output[output.index("# Summary"):]
    patterns = {"total": r"Total Matches: (\d+)", "SAME": r"classified as SAME\): (\d+)",
                "FAST": r"Improvement\s+\(.*\): (\d+)", "SLOW": r"Regression\s+\(.*\): (\d+)",
                "AMBG": r"Ambiguous\s+\(.*\): (\d+)", "UNKNOWN": r"Unknown\s+\(.*\): (\d+)"}
    return {label: int(re.search(pattern, summary).group(1)) for label, pattern in patterns.items()}, summary


def test_a_30_percent_slowdown_is_slow_in_nearly_every_case(readers, exports):
    counts, summary = _verdicts(readers["nvbench-compare-robust"], exports["a"], exports["a-slower"])
    assert counts["total"] == len(MEASURED) and counts["SLOW"] >= 0.95 * len(MEASURED), summary
    assert counts["FAST"] == counts["SAME"] == counts["UNKNOWN"] == 0, summary
    # The rest are cases whose own spread is wider than 30 % (their fastest samples far below the median).
    assert "missing_clock_rate" not in summary


def test_a_run_against_itself_is_same_in_every_case(readers, exports):
    counts, summary = _verdicts(readers["nvbench-compare-robust"], exports["a"], exports["a-again"])
    assert counts["SAME"] == counts["total"] == len(MEASURED) and counts["SLOW"] == counts["FAST"] == 0, summary


def test_two_runs_of_the_same_code_show_almost_no_clear_change(readers, exports):
    counts, summary = _verdicts(readers["nvbench-compare-robust"], exports["a"], exports["b"])
    assert counts["total"] == len(MEASURED) and counts["UNKNOWN"] == 0, summary
    assert counts["SLOW"] + counts["FAST"] <= 0.01 * len(MEASURED) and "missing_clock_rate" not in summary, summary


def test_a_failed_case_is_unknown_to_the_comparer_not_an_error(readers, tmp_path):
    cases = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant]
    failed = dataclasses.replace(cases[0], status="failed", reason="wrong result",
                                 samples=dataclasses.replace(cases[0].samples, cold_ms=(), batch_ms=()))
    reference = _export(dataclasses.replace(RUN_A, cases=cases), tmp_path / "ref.json")
    compare = _export(dataclasses.replace(RUN_A, cases=[failed, *cases[1:]]), tmp_path / "cmp.json")
    counts, summary = _verdicts(readers["nvbench-compare-robust"], reference, compare)
    assert counts["UNKNOWN"] == 1 and counts["total"] == len(cases), summary


def test_runs_of_different_case_sets_exported_each_common_with_the_other_are_compared_case_by_case(readers, tmp_path):
    # The nightly baseline (153 cases) and the reference run (1,447), about a hundred cases in common.
    base, new = load_run(REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"), load_run(REFERENCE_RUN)
    shared = {r.key for r in base.cases if r.ok} & {r.key for r in new.cases if r.ok}
    whole = [_export(run, tmp_path / f"{name}-all.json") for name, run in (("base", base), ("new", new))]
    refused = subprocess.run([str(readers["nvbench-compare-robust"]), "--no-color", *map(str, whole)],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "mismatched state occurrences" in refused.stdout + refused.stderr
    common = [_export(select(run, base=other), tmp_path / f"{name}.json")
              for name, run, other in (("base", base, new), ("new", new, base))]
    counts, summary = _verdicts(readers["nvbench-compare-robust"], *common)
    assert counts["total"] == len(shared) > 100 and counts["UNKNOWN"] == 0, summary


def test_json_summary_lists_every_measured_case(readers, exports):
    output = _run(readers["nvbench-json-summary"], exports["a"])
    headers = [line for line in output.splitlines() if line.startswith("|") and "GPU Time" in line]
    rows = [line for line in output.splitlines() if line.startswith("|") and "GPU Time" not in line
            and not line.startswith("|--")]
    assert len(rows) == len(MEASURED) and len(headers) == len({f"{r.case.op}/{r.case.variant}" for r in MEASURED})
    assert all(column in headers[0] for column in ("Samples", "GPU Time", "Noise", "GlobalMem BW", "BWUtil"))


def _seconds(text: str) -> float:
    """nvbench-walltime's [hh:][mm:]ss.mmm as seconds."""
    return sum(float(part) * 60**i for i, part in enumerate(reversed(text.split(":"))))


def test_walltime_totals_every_cases_wall_time(readers, exports):
    output = _run(readers["nvbench-walltime"], exports["a"])
    overview = output[output.index("# Walltime Overview"):].splitlines()
    total = _seconds(overview[4].strip("| ").split("|")[0].strip())  # the table's first row
    assert total == pytest.approx(sum(r.timing["wall_s"] for r in MEASURED), abs=0.002) and total > 0


def test_walltime_reads_a_run_with_a_failed_case_and_counts_the_failed_cases_own_time(readers, tmp_path):
    cases = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant]
    failed = dataclasses.replace(cases[0], status="failed", reason="wrong result", timing={}, elapsed_s=0.5,
                                 samples=dataclasses.replace(cases[0].samples, cold_ms=(), batch_ms=()))
    json_path = _export(dataclasses.replace(RUN_A, cases=[failed, *cases[1:]]), tmp_path / "failed.json")
    output = _run(readers["nvbench-walltime"], json_path)  # a state without nv/cold/walltime was its KeyError 'cold'
    overview = output[output.index("# Walltime Overview"):].splitlines()
    total = _seconds(overview[4].strip("| ").split("|")[0].strip())
    assert total == pytest.approx(0.5 + sum(r.timing["wall_s"] for r in cases[1:]), abs=0.002)


def test_histogram_reads_every_sample_file(readers, tmp_path):
    cases = [r for r in MEASURED if r.case.variant == MEASURED[0].case.variant]  # one benchmark: a KDE per state
    json_path = _export(dataclasses.replace(RUN_A, cases=cases), tmp_path / "one.json")
    output = _run(readers["nvbench-histogram"], json_path)
    assert output.count("State: ") == len(cases)
