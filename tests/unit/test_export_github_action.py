"""`primbench export --format github-action` (primbench/export/github_action.py): what
github-action-benchmark's customSmallerIsBetter reads, one entry per measured case on the figure the
verdict rule judges a lone run's case on, with its 95 % interval as the range the action parses.
tests/readers/test_github_action_alerts.py reads them as the action does, and alerts as it does."""

import json
import re
import numpy as np
import pytest

from primbench.cli.main import main
from primbench.export.formats import export
from primbench.compare.rule import BATCH, COLD, Thresholds, figure_samples
from primbench.runfile import stats
from primbench.runfile.io import load_run
from tests.conftest import REPO
from tests.run_copies import edited_copy

BASELINE = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"  # the nightly run: graph batches, a skipped library
RUN = load_run(BASELINE)
MEASURED = [record for record in RUN.cases if record.ok]  # what the action charts
# github-action-benchmark's src/extractRangeInfo.ts: how it reads a range to rescale it with the unit.
RANGE = re.compile(r"(?P<prefix>(\+-|±)\s*)(?P<value>\d.*)")


def test_each_measured_case_is_one_entry_on_the_figure_its_verdict_is_judged_on():
    entries = json.loads(export(RUN, "github-action"))
    thresholds = Thresholds.from_header(RUN.header)
    assert [e["name"] for e in entries] == [r.key for r in MEASURED]
    figures = set()
    for entry, record in zip(entries, MEASURED):
        figure = thresholds.lone_figure(record)
        figures.add(figure)
        samples_us = np.asarray(figure_samples(record, figure)) * 1e3
        assert entry["unit"] == "us" and entry["value"] == pytest.approx(np.median(samples_us), abs=1e-4)
        assert entry["extra"].startswith(f"batch: a CUDA graph of {record.samples.batch_size} runs, hot L2"
                                         if figure == BATCH else "cold: one run per sample, L2 flushed")
    assert figures == {BATCH, COLD}  # the nightly run has both: small cases on the batch, the rest cold
    small = [e for e, r in zip(entries, MEASURED) if thresholds.lone_figure(r) == BATCH]
    assert all(e["value"] < 40 for e in small)


def test_the_range_is_what_the_action_parses_and_covers_the_medians_95_percent_interval():
    thresholds = Thresholds.from_header(RUN.header)
    for entry, record in zip(json.loads(export(RUN, "github-action")), MEASURED):
        match = RANGE.match(entry["range"])
        assert match and match.group("prefix") == "± ", entry["range"]
        half = float(match.group("value"))
        low, high = stats.median_interval(np.asarray(figure_samples(record, thresholds.lone_figure(record))) * 1e3)
        assert entry["value"] - half <= low + 1e-4 and high - 1e-4 <= entry["value"] + half
        assert f"95 % interval [{low:.4f}, {high:.4f}] us" in entry["extra"]


def test_a_case_of_too_few_samples_for_an_interval_has_no_range_rather_than_plus_minus_zero(tmp_path):
    # "± 0.0" told the action's chart the median was exact; its extra said "no interval".
    def one_sample(record):
        if record["kind"] == "case" and record["key"] == MEASURED[0].key:
            samples = record["samples"]
            record["samples"] = {**samples, "cold_ms": samples["cold_ms"][:1], "batch_ms": [], "batch_size": None,
                                 **({"cold_clock_mhz": samples["cold_clock_mhz"][:1]} if samples.get("cold_clock_mhz") else {})}

    (first, *_) = json.loads(export(load_run(edited_copy(BASELINE, tmp_path / "one.jsonl", one_sample)), "github-action"))
    assert first["name"] == MEASURED[0].key and "range" not in first and first["extra"].endswith("no interval")


def _fail_and_skip_the_first_two(record: dict) -> None:
    """The first measured case failed and the second skipped, as the runner writes them (no samples)."""
    if record["kind"] == "case" and record["key"] in (MEASURED[0].key, MEASURED[1].key):
        failed = record["key"] == MEASURED[0].key
        record.update(status="failed" if failed else "skipped", reason="wrong result" if failed else "out of memory",
                      samples={"cold_ms": [], "batch_ms": [], "batch_size": None})


def test_failed_and_skipped_cases_are_left_out_and_counted_in_one_line_on_standard_error(tmp_path, capsys):
    run_file = edited_copy(BASELINE, tmp_path / "run.jsonl", _fail_and_skip_the_first_two)
    entries = json.loads(export(load_run(run_file), "github-action"))
    assert [e["name"] for e in entries] == [r.key for r in MEASURED[2:]]
    assert main(["export", str(run_file), "--format", "github-action", "-o", str(tmp_path / "bench.json")]) == 0
    error = capsys.readouterr().err.strip().splitlines()
    skipped = len(RUN.cases) - len(MEASURED) + 1  # the baseline's own skipped case(s), and the one made here
    assert error == [f"github-action: left out {skipped + 1} of {len(RUN.cases)} cases (1 failed, {skipped} skipped): "
                     "the action charts measured cases only; `primbench check` gates failed ones"]
    assert json.loads((tmp_path / "bench.json").read_text()) == entries


def test_a_run_with_nothing_left_out_says_nothing_on_standard_error(tmp_path, capsys):
    whole = REPO / "tests" / "data" / "runs" / "progression.jsonl.gz"  # every case measured
    assert all(record.ok for record in load_run(whole).cases)
    assert main(["export", str(whole), "--format", "github-action", "-o", str(tmp_path / "bench.json")]) == 0
    assert capsys.readouterr().err == ""

