"""What a run shows while it goes: a bar on a terminal, one line per case in a log."""

from __future__ import annotations

import sys

from primbench import stats
from primbench.model import CaseId
from primbench.records import CaseRecord


class Progress:
    """A bar on a terminal, one line per case in a log."""

    def __init__(self, total: int):
        self.total = total
        self.done = 0
        self.bar = None
        if sys.stdout.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            self.task = self.bar.add_task("primbench", total=total)
            self.bar.start()

    def line(self, text: str) -> None:
        self.done += 1
        message = f"[{self.done}/{self.total}] {text}"
        if self.bar:
            self.bar.console.print(message, markup=False, highlight=False)
            self.bar.advance(self.task)
        else:
            print(message, flush=True)

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def describe_result(case: CaseId, record: CaseRecord, device_info: dict) -> str:
    params = "".join(f" {name}={value}" for name, value in case.params.items())
    label = f"{case.op}/{case.variant} n={case.n} block={case.block or 'lib'}{params}"
    if record.status != "ok":
        return f"{label}: {record.status.upper()} {record.reason or ''}"
    summary = stats.summarize(record.cold_ms)
    gbps = stats.bandwidth_gbps(record.bytes, summary.median)
    return (f"{label}: {summary.median * 1e3:.1f} us ±{summary.noise * 100:.1f}% "
            f"{gbps:.0f} GB/s ({100 * gbps / device_info['peak_gbps']:.0f}% of peak) ok")
