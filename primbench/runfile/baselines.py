"""Kept copies: a clean, finished run made its GPU model's baseline (what `check` compares with) or
its reference run (what `make report` renders), as results/<folder>/<gpu>.jsonl.gz; or several
runs of one config and one code made one baseline that knows their spread.

A baseline of several runs is itself a run file: the newest run's header with a `baseline` block
naming every run, and for each case the record of its middle run (the run whose cold median is the
median of the runs'), raw samples and all, carrying `between_runs`: each run's median of the cold
and the batch samples. The verdict engine (compare/rule.py) then holds that case to a threshold of at
least SPREAD_MULTIPLE times its spread: what the runs of one config on a few machines differ by
is no evidence of a change of code.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np

from primbench.errors import UserError
from primbench.outputs import write_atomically
from primbench.runfile.lines import GZIP_MAGIC
from primbench.runfile.locations import REFERENCE_DIR, kept_copy_path

# Within a baseline, each case's threshold is at least this multiple of its spread across the runs
# (compare/rule.py uses the value the baseline's header records). Twice: a spread seen between the
# baseline's own runs is no evidence of a change, and another machine can sit past the ones it saw
# (docs/perf-notes.md, "A baseline of several runs", has the spreads measured across boards).
SPREAD_MULTIPLE = 2.0
MAX_RUNS = 50  # a baseline of more runs than this is a mistake (a folder of a year of runs, say)


def refuse_unclean(run) -> None:
    """One line, unless the run finished, measured something and failed no case. A skipped case
    (a library not installed, a size this GPU has no memory for) is kept as skipped: it gates
    nothing, and a run of the config on such a machine always skips it (nightly.yaml's FlashInfer
    case on a CI runner without the package), so refusing it would leave that config no baseline."""
    if not run.finished:
        raise UserError(f"{run.path}: the run was interrupted (no end record); finish it with --resume before making it a baseline")
    if not run.cases:
        raise UserError(f"{run.path}: the run has no cases; a baseline must be a finished run that measured something")
    failed = [record.key for record in run.cases if record.status == "failed"]
    if failed:  # before the skipped test: a run whose every case failed is a failed run, not a skipped one
        raise UserError(f"{run.path}: {len(failed)} case(s) failed (e.g. {failed[0]}); a baseline must be a run whose every "
                        "case gave the right result")
    if not any(record.ok for record in run.cases):
        raise UserError(f"{run.path}: every case of the run was skipped; a baseline must be a finished run that measured something")


def skipped_words(run) -> str | None:
    """'1 case skipped, kept as skipped (it gates nothing): <key>: <why>', or None."""
    skipped = [record for record in run.cases if record.status == "skipped"]
    if not skipped:
        return None
    first = skipped[0]
    return (f"{len(skipped)} case(s) skipped, kept as skipped (they gate nothing), e.g. {first.key}: "
            f"{' '.join((first.reason or '').split())[:120]}")


def keep_copy(run, folder) -> Path:
    """Write the loaded `run` (a runfile.io.Run) as `folder`/<gpu>.jsonl.gz and return that path.
    Refused, in one line, unless the run finished, measured something and failed no case."""
    refuse_unclean(run)
    target = _target(folder, run)
    data = run.path.read_bytes()
    # Kept compressed (about 7x smaller); mtime 0 so the same run always gives the same bytes.
    write_atomically(target, data if data[:2] == GZIP_MAGIC else gzip.compress(data, mtime=0))
    return target


def keep_merged(runs: list, folder) -> Path:
    """Write one baseline made of `runs` (runfile.io.Run, at least two) as `folder`/<gpu>.jsonl.gz;
    refused in one line unless they are clean runs of one GPU model, one protocol and the same
    cases measured by the same code."""
    from primbench.runfile.io import record_line
    from primbench.runfile.records import RunEnd

    _refuse_unmergeable(runs)
    runs = sorted(runs, key=lambda run: str(run.header.started or ""))
    newest = runs[-1]
    sources = [{"run_id": run.header.run_id, "started": run.header.started, "sha": run.git.get("sha"),
                "device_uuid": run.device.get("uuid")} for run in runs]
    header = dataclasses.replace(newest.header, baseline={"runs": sources, "spread_multiple": SPREAD_MULTIPLE})
    by_run = [{record.case: record for record in run.cases} for run in runs]
    lines = [record_line(header)]
    for record in newest.cases:
        lines.append(record_line(_merged_case([cases[record.case] for cases in by_run], [s["run_id"] for s in sources])))
    lines.append(record_line(RunEnd(finished=newest.end.finished, ok=sum(r.ok for r in newest.cases),
                                    skipped=sum(r.status == "skipped" for r in newest.cases))))
    target = _target(folder, newest, sources=runs)
    write_atomically(target, gzip.compress("".join(lines).encode("utf-8"), mtime=0))
    return target


def _median_or_none(samples) -> float | None:
    return float(np.median(samples)) if samples else None


def _merged_case(records: list, run_ids: list[str]):
    """The case's record from its middle run by cold median (of an even count, the slower of the two
    middle runs, so that the baseline does not lean fast), every run's medians beside it. A small
    case judged on its batch figure may have another middle run on that figure: its threshold,
    twice the runs' spread on the figure it is judged on, covers the difference."""
    cold = [_median_or_none(r.cold_ms) for r in records]
    batch = [_median_or_none(r.samples.batch_ms) for r in records]
    order = sorted(range(len(records)), key=lambda i: (cold[i] is None, cold[i] or 0.0))
    middle = records[order[len(order) // 2]]
    return dataclasses.replace(middle, between_runs={"runs": run_ids, "cold_median_ms": cold, "batch_median_ms": batch})


def _refuse_unmergeable(runs: list) -> None:
    from primbench.runfile import protocol

    if len(runs) > MAX_RUNS:
        raise UserError(f"{len(runs)} runs: a baseline takes at most {MAX_RUNS}; give the few recent runs of the config "
                        "(three, on two or more machines, is what the README advises)")
    seen = {}
    for run in runs:
        refuse_unclean(run)
        if run.header.baseline:
            raise UserError(f"{run.path}: is already a baseline of several runs; give the runs themselves")
        if run.header.run_id in seen:
            raise UserError(f"{run.path}: the same run as {seen[run.header.run_id]}; give each run once")
        seen[run.header.run_id] = run.path
    first = runs[0]
    for run in runs[1:]:
        if run.device.get("name") != first.device.get("name"):
            raise UserError(f"{run.path}: measured on {run.header.device_name}, {first.path} on {first.header.device_name}; "
                            "a baseline holds runs of one GPU model")
        if protocol.compare(first.header, run.header).moves_figures:  # the probes alone move no timed figure
            what = protocol.compare(first.header, run.header).what()
            raise UserError(f"{run.path}: measured by another protocol than {first.path} ({what[:120]}); "
                            "make the baseline from runs of one primbench")
        _refuse_other_cases(first, run)


def _refuse_other_cases(first, run) -> None:
    mine, theirs = {r.case: r for r in first.cases}, {r.case: r for r in run.cases}
    if mine.keys() != theirs.keys():
        common = len(mine.keys() & theirs.keys())
        raise UserError(f"{run.path}: holds {len(theirs)} cases, {first.path} {len(mine)} ({common} in common); "
                        "a baseline is made of runs of one config")
    measured_in_one = [case.key for case in mine if mine[case].status != theirs[case].status]
    if measured_in_one:
        raise UserError(f"{run.path}: skips a case {first.path} measured, or the other way round, in "
                        f"{len(measured_in_one)} case(s) (e.g. {measured_in_one[0][:100]}); make the baseline from runs "
                        "of one installation")
    changed = [case.key for case in mine if mine[case].variant_hash != theirs[case].variant_hash]
    if changed:
        raise UserError(f"{run.path}: measured other code than {first.path} for {len(changed)} case(s) "
                        f"(e.g. {changed[0][:100]}); a baseline is made of runs of one commit's kernels")


def _target(folder, run, sources=None) -> Path:
    target = kept_copy_path(folder, run.device.get("name"))  # always written compressed
    for source in sources or [run]:
        if target.exists() and target.resolve() == source.path.resolve():
            raise UserError(f"{source.path}: is already the baseline of {run.header.device_name}")
    return target


def kind_of(folder) -> str:
    """'reference' for the reference folder, else 'baseline' (what the command's line calls it)."""
    return "reference" if Path(folder).name == REFERENCE_DIR.name else "baseline"
