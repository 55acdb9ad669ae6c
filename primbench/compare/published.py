"""A published progression (results/reference/published.json: a seed article's or Harris's
figures) as a run of one-sample cases that compare can set beside a measured run: `ref:<id>`.
Such pairs show % of each side's peak and never get a speed verdict: a quoted figure has no
samples to test. No CuPy."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from primbench.errors import UserError
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord, RunHeader, Samples
from primbench.verify.inputs import ITEMSIZE

PUBLISHED = "PUBLISHED"  # one side is a quoted figure: no samples, no verdict, % of peak only
REFERENCE_PREFIX = "ref:"


def is_published(run: Run) -> bool:
    return run.header.published


def published_run(argument: str, path=None) -> Run:
    """A published progression as a run of one-sample cases, marked so that it never gets a speed
    verdict: `ref:seed002_rtx3080`."""
    from primbench.runfile.published import load_published

    wanted = argument[len(REFERENCE_PREFIX):]
    progressions = {p.id: p for p in load_published(path)}
    if wanted not in progressions:
        raise UserError(f"{argument}: no such published progression; valid: "
                        + ", ".join(REFERENCE_PREFIX + name for name in progressions))
    p = progressions[wanted]
    header = RunHeader(run_id=p.id, started="published figures", git={"sha": None},
                       device={"name": p.device, "peak_gbps": p.peak_gbps}, published=True)
    cases = [CaseRecord(CaseId(p.op, e.variant, p.dtype, p.n, None, None), bytes=p.n * ITEMSIZE.get(p.dtype, 4),
                        samples=Samples(cold_ms=(e.time_ms,))) for e in p.entries if e.time_ms]
    return Run(path=Path(f"{p.id} (published)"), header=header, cases=cases)


def load_comparable(argument: str) -> Run:
    """A run file, or `ref:<id>` for a published progression."""
    from primbench.runfile.io import load_run

    return published_run(argument) if argument.startswith(REFERENCE_PREFIX) else load_run(argument)


def published_pairs(base: Run, new: Run, pair_type, pct_peak) -> list:
    """Pairs of a published progression and a run (either side): published figures have no block or
    distribution, so pairs are matched on (op, variant, dtype, n), the run's fastest valid case
    standing for the variant. `pair_type` is verdicts.Pair, `pct_peak(record, run)` its % of peak."""
    def by_kernel(run):
        best = {}
        for record in run.cases:
            if not record.ok or not record.cold_ms:
                continue
            key = dataclasses.replace(record.case, block=None, distribution=None)
            if key not in best or np.median(record.cold_ms) < np.median(best[key].cold_ms):
                best[key] = record
        return best

    base_cases, new_cases = by_kernel(base), by_kernel(new)
    pairs = []
    for key in [k for k in base_cases if k in new_cases]:
        b, n = base_cases[key], new_cases[key]
        pair = pair_type(dataclasses.replace(key, block=n.case.block or b.case.block), PUBLISHED,
                         base_pct_peak=pct_peak(b, base), new_pct_peak=pct_peak(n, new),
                         note="a published figure: no samples, no verdict")
        pair.base_ms = float(np.median(b.cold_ms))
        pair.new_ms = float(np.median(n.cold_ms))
        pair.ratio = pair.new_ms / pair.base_ms
        pairs.append(pair)
    return pairs
