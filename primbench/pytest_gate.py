"""How the pytest plugin (primbench/pytest_plugin.py) gates a timing on a saved baseline: by the one
verdict engine (compare/verdicts.judge, the README's table "The verdict rule"), as `primbench
check` judges a run, case by case; or, where the user gives --gpubench-fail=STAT:LIMIT, by that
rule on the cold samples alone, in pytest-benchmark's style.

The engine, not a bare 5 % on the median: replayed from two real H200 runs of the default config,
the bare rule failed 58 of 1,296 tests (all under 30 us; 56 of them of identical code), the engine
none (tests/e2e/test_pytest_plugin.py). A baseline measured on another GPU model is refused, as
`check` refuses it: times of two models are not comparable. No CuPy here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from primbench.errors import UserError
from primbench.runfile.records import CaseRecord, RunHeader

OVERRIDE_RULE = re.compile(r"^(median|mean|min):(\d+(?:\.\d+)?)(%|us)$")
BASELINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass
class Baseline:
    """A saved baseline as the gate reads it: its run's header, its ok records by case key, and
    what of the measuring protocol differs from this code's ({figure: what}, and the line saying so)."""

    name: str
    path: Path
    header: RunHeader
    records: dict[str, CaseRecord]
    protocol_changes: dict[str, str] = field(default_factory=dict)
    protocol_line: str | None = None


def storage_file(storage: str, name: str) -> Path:
    """<storage>/NAME.jsonl; a name that is not a plain file name is refused in one line."""
    if not BASELINE_NAME.fullmatch(name):
        raise UserError(f"gpubench baseline name {name[:60]!r}: use letters, digits, '.', '_' and '-'")
    return Path(storage) / f"{name}.jsonl"


def load_baseline(path: Path, name: str, session_header: RunHeader) -> Baseline:
    """The baseline saved as `name`; a missing or unreadable one is one line (UserError)."""
    from primbench.runfile import protocol
    from primbench.runfile.io import load_run

    if not path.is_file():
        raise UserError(f"--gpubench-compare: no baseline {path}; save one first with --gpubench-save {name}")
    try:
        run = load_run(path)
    except UserError as exc:
        raise UserError(f"--gpubench-compare: {exc}") from None
    difference = protocol.compare(run.header, session_header)
    return Baseline(name, path, run.header, {record.key: record for record in run.cases if record.ok},
                    difference.by_figure(), difference.line(renew=f"pytest --gpubench-save {name}"))


def other_gpu(baseline: Baseline, device: dict) -> str | None:
    """Why this session cannot be judged against the baseline (another GPU model), in the words of
    `check`; None where the models agree."""
    here, there = device.get("name") or "?", baseline.header.device.get("name") or "?"
    if here == there:
        return None
    return (f"gpubench: this GPU is {here}, baseline {baseline.name} ({baseline.path}) was measured on {there}; "
            f"times are not comparable (save a baseline on this GPU model: --gpubench-save NAME)")


def judged(baseline: Baseline, record: CaseRecord, device: dict):
    """The engine's Pair for one timing against the baseline's record of the same case (present)."""
    from primbench.compare.rule import Thresholds
    from primbench.compare.verdicts import judge

    peaks = (baseline.header.device.get("peak_gbps") or math.nan, device.get("peak_gbps") or math.nan)
    return judge(baseline.records[record.key], record, Thresholds(), same_gpu=True, peaks=peaks,
                 base_sha=baseline.header.git.get("sha"), protocol_changes=baseline.protocol_changes)


def slower_line(pair, baseline: Baseline) -> str:
    """The one line a test fails with: verdict, figure, base -> new us, ratio, interval, threshold."""
    from primbench.compare.output import interval, measure_text

    code = "; the test's code changed" if pair.code_changed else ""
    return (f"gpubench: {pair.case.variant} is {pair.verdict} than baseline {baseline.name}: "
            f"{measure_text(pair, 'time')}, x{pair.ratio:.3f} (95 % interval {interval(pair)}), past the "
            f"{pair.threshold:.1%} threshold (Mann-Whitney p {pair.p_value:.2g}){code}")


def check_override(text: str | None) -> None:
    """--gpubench-fail's value, checked: one line where it is not STAT:LIMIT."""
    if text is not None and not OVERRIDE_RULE.match(text):
        raise UserError(f"--gpubench-fail {text[:60]!r}: give STAT:LIMIT, STAT one of median, mean, min and "
                        "LIMIT like 5% or 20us (e.g. --gpubench-fail=median:5%)")


def _statistic(name: str, samples_ms) -> float:
    import numpy

    return float({"median": numpy.median, "mean": numpy.mean, "min": numpy.min}[name](samples_ms))


def regression(new_ms, base_ms, rule: str) -> str | None:
    """Why `new_ms` fails the override `rule` (e.g. 'median:5%') against `base_ms`, in words; None
    when it passes."""
    stat, limit, unit = OVERRIDE_RULE.match(rule).groups()
    new, base = _statistic(stat, new_ms), _statistic(stat, base_ms)
    moved = (new / base - 1) * 100 if unit == "%" else (new - base) * 1e3
    if moved <= float(limit):
        return None
    return (f"{stat} {new * 1e3:,.2f} us against the baseline's {base * 1e3:,.2f} us: "
            f"{new / base - 1:+.1%} ({(new - base) * 1e3:+,.2f} us), past --gpubench-fail={rule}")
