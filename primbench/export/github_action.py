"""github-action-benchmark's `customSmallerIsBetter` JSON of a run: an array of {name, unit, value,
range, extra}, as its src/extract.ts reads it (every field coerced to a string or a number).

One entry per measured case, named by its key: the median of the figure the verdict rule judges a
lone run's case on (compare/rule.py `lone_figure`: the CUDA-graph batch for a case whose cold
median is under 40 us and that timed one, else the cold samples), in us. The action alerts where
value / previous value passes its alert-threshold; a plain cold median moves too far between two
runs of the same code for that (README, "Comparing runs and gating CI"), the batch figure of a small
case does not.

`range` is "± h" (the form its extractRangeInfo parses and rescales when a unit changes), h the
larger half of the median's 95 % bootstrap interval (stats.median_interval), so that ± h covers the
whole interval; `extra`, shown under the value in the action's chart, names the figure and gives
the interval itself.

A case the rule would judge on another figure in another run (its cold median crossing 40 us from
one run to the next) changes figure under one name: the action then compares a batch median with a
cold one. primbench's verdict engine judges such a pair on the cold samples of both.

Failed and skipped cases, and cases with no samples, are left out (the action has no way to mark
one), and `left_out` counts them for the line `export` prints on standard error. Nothing here
imports CuPy."""

from __future__ import annotations

import json

import numpy as np

from primbench.compare.rule import BATCH, Thresholds, figure_samples
from primbench.errors import UserError
from primbench.export.records import ExportFormat
from primbench.runfile import stats
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord
from primbench.text_safety import without_surrogates

UNIT = "us"
DECIMALS = 4  # 0.1 ns, as the Google Benchmark export rounds


def _figure_text(record: CaseRecord, figure: str) -> str:
    if figure == BATCH:
        return f"batch: a CUDA graph of {record.samples.batch_size} runs, hot L2"
    return "cold: one run per sample, L2 flushed"


def entry(record: CaseRecord, thresholds: Thresholds) -> dict | None:
    """A measured case's entry, or None for a case the action cannot chart (not ok, no samples)."""
    if not record.ok or not record.cold_ms:
        return None
    figure = thresholds.lone_figure(record)
    samples_us = np.asarray(figure_samples(record, figure), dtype=np.float64) * 1e3
    median = float(np.median(samples_us))
    low, high = stats.median_interval(samples_us)
    known = bool(np.isfinite(low) and np.isfinite(high))
    interval = f"95 % interval [{low:.{DECIMALS}f}, {high:.{DECIMALS}f}] {UNIT}" if known else "no interval"
    written = {"name": record.key, "unit": UNIT, "value": round(median, DECIMALS),
               "extra": f"{_figure_text(record, figure)}; median of {samples_us.size} samples, {interval}"}
    if known:  # the action's range is optional: a case of too few samples has none, not "± 0.0"
        written["range"] = f"± {round(max(median - low, high - median), DECIMALS)}"
    return written


def to_github_action_json(run: Run) -> str:
    """The run's measured cases as github-action-benchmark's customSmallerIsBetter JSON."""
    thresholds = Thresholds.from_header(run.header)
    entries = [e for e in (entry(record, thresholds) for record in run.cases) if e is not None]
    if not entries:  # the action fails on an empty feed ("No benchmark result was found"), far from the cause
        raise UserError(f"github-action: none of the {len(run.cases)} cases of {run.path} was measured "
                        f"({_listed(left_out(run))}); "
                        "the action refuses an empty feed: export a run with measured cases")
    # Run-file strings may hold lone surrogates, which a JSON reader may refuse: their escapes' text instead.
    return json.dumps(without_surrogates(entries), indent=1) + "\n"  # ASCII: "±" as \u00b1, whatever the locale


def left_out(run: Run) -> dict[str, int]:
    """{why: how many cases} the export leaves out: failed, skipped, or no samples."""
    counts: dict[str, int] = {}
    for record in run.cases:
        why = record.status if not record.ok else "without samples" if not record.cold_ms else None
        if why:
            counts[why] = counts.get(why, 0) + 1
    return counts


def _listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} {why}" for why, count in counts.items())


def left_out_line(run: Run) -> str | None:
    """The one line on standard error that says what the feed lacks, or None where it lacks nothing."""
    counts = left_out(run)
    if not counts:
        return None
    return (f"github-action: left out {sum(counts.values())} of {len(run.cases)} cases ({_listed(counts)}): the action "
            "charts measured cases only; `primbench check` gates failed ones")


FORMAT = ExportFormat(
    name="github-action", short="github-action-benchmark's JSON",
    readers="github-action-benchmark (tool: customSmallerIsBetter): each case's judged figure in us",
    example="primbench export RUN --format github-action -o bench.json", write=to_github_action_json,
    notice=left_out_line, listed=40)
