"""What primbench shows while it works: for a run, a bar on a terminal (current case, count,
elapsed time and ETA) or one line per case in a log (with the same ETA); for report and publish,
a line per stage on stderr."""

from __future__ import annotations

import sys
import time

from primbench.runfile import stats
from primbench.runfile.case_id import CaseId
from primbench.runfile.records import CaseRecord


def say(text: str) -> None:
    """One line saying what report or publish is doing now, on stderr: stdout is the paths written,
    which scripts read. Callers check their inputs and outputs first, so a bad one still gets one line."""
    print(f"primbench: {text}", file=sys.stderr, flush=True)


def warn_of(run, *, unfinished: bool = True) -> None:
    """A warning line for each thing reading `run` found (a truncated last line dropped, a gzip
    stream cut short) and, with `unfinished`, for a run with no end record: a command that exports
    or compares it says so, as the report's page does, rather than pass on part of a run unmarked."""
    from primbench.text_safety import printable

    for warning in run.warnings:
        say(printable(f"warning: {warning}"))
    if unfinished and not run.finished:
        say(printable(f"warning: {run.path}: the run was interrupted (no end record): {len(run.cases)} cases so far; "
                      "`primbench run --resume` finishes it"))


def duration_text(seconds: float) -> str:
    """'42s', '3m05s', '1h02m': short enough for a progress line."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def case_label(case: CaseId) -> str:
    """A case in a progress line: op/variant, dtype, input distribution, n, block and parameters."""
    params = "".join(f" {name}={value}" for name, value in case.params.items())
    return (f"{case.op}/{case.variant} {case.dtype} {case.distribution} n={case.n} "
            f"block={case.block or 'lib'}{params}")


class Progress:
    """A bar on a terminal, one line per case in a log; both with an ETA from the pace so far."""

    def __init__(self, total: int, clock=time.monotonic):
        self.total = total
        self.done = 0
        self.clock = clock
        self.started = clock()
        self.bar = None
        if sys.stdout.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                                TimeRemainingColumn(), TextColumn("{task.description}"))
            self.task = self.bar.add_task("starting", total=total)
            self.bar.start()

    def eta_seconds(self) -> float | None:
        """Seconds left at the pace so far; None before the first case has finished."""
        if not self.done:
            return None
        return (self.clock() - self.started) / self.done * (self.total - self.done)

    def start(self, case: CaseId) -> None:
        """The case now running: shown on the bar."""
        if self.bar:
            self.bar.update(self.task, description=case_label(case))

    def line(self, text: str) -> None:
        self.done += 1
        eta = self.eta_seconds()
        message = f"[{self.done}/{self.total} ETA {duration_text(eta) if eta is not None else '?'}] {text}"
        if self.bar:
            self.bar.console.print(message, markup=False, highlight=False)
            self.bar.advance(self.task)
        else:
            print(message, flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def describe_result(case: CaseId, record: CaseRecord, device_info: dict) -> str:
    label = case_label(case)
    if record.status != "ok":
        return f"{label}: {record.status.upper()} {record.reason or ''}"
    summary = stats.summarize(record.cold_ms)
    gbps = stats.bandwidth_gbps(record.bytes, summary.median)
    return (f"{label}: {summary.median * 1e3:.1f} us ±{summary.noise * 100:.1f}% "
            f"{gbps:.0f} GB/s ({100 * gbps / device_info['peak_gbps']:.0f}% of peak) ok")
