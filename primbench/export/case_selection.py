"""Which cases an export holds, for every format: `--cases GLOB` (fnmatch on the case key, any of
several) and `--common-with BASE` (only the cases another run also has, paired by CaseId as compare
pairs them). nvbench-compare-robust refuses two files whose states differ ("mismatched state
occurrences"), so two runs of different case sets are exported each `--common-with` the other.

A glob that matches no case, or a selection that leaves none, is one line (exit 2): an empty
export would read as a run where nothing was measured. Nothing here imports CuPy."""

from __future__ import annotations

import fnmatch
from dataclasses import replace

from primbench.errors import UserError
from primbench.runfile.io import Run
from primbench.text_safety import printable


def _example_key(run: Run) -> str:
    return printable(run.cases[0].key)[:120] if run.cases else "none: the run has no case"


def by_globs(run: Run, globs: list[str]) -> Run:
    """The run with only the cases whose key matches one of `globs`; each glob must match a case."""
    keys = [record.key for record in run.cases]
    for glob in globs:
        if not any(fnmatch.fnmatchcase(key, glob) for key in keys):
            raise UserError(f"export: --cases {printable(glob)[:100]!r} matches none of the {len(keys)} cases of "
                            f"{run.path}; a key looks like {_example_key(run)!r} (fnmatch: * and ?)")
    return replace(run, cases=[r for r in run.cases if any(fnmatch.fnmatchcase(r.key, glob) for glob in globs)])


def common_with(run: Run, base: Run) -> Run:
    """The run with only the cases `base` also has (whatever their status in either run)."""
    theirs = {record.case for record in base.cases}
    kept = [record for record in run.cases if record.case in theirs]
    if not kept:
        raise UserError(f"export: {run.path} and --common-with {base.path} have no case in common (e.g. "
                        f"{_example_key(run)!r} against {_example_key(base)!r}); give a run of the same config")
    return replace(run, cases=kept)


def select(run: Run, *, globs: list[str] | None = None, base: Run | None = None) -> Run:
    """The cases an export holds: those matching `globs` (all where None), of those the ones `base`
    has too (all where None)."""
    if not run.cases:
        how = "a run stopped before its first case: finish it with `primbench run --resume`" if not run.finished \
            else "a finished run whose sweep had no case: export another run"
        raise UserError(f"export: {run.path} holds no case, so there is nothing to export ({how})")
    selected = by_globs(run, globs) if globs else run
    if base is not None:
        selected = common_with(selected, base)
    return selected
