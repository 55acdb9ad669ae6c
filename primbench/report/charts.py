"""Draw a page's charts once each, in worker processes while the page's tables are still being
built: drawing is most of a report's time (matplotlib lays out text in Python), and it is
independent per chart.

`ChartBatch(plots)` stands in for the plots module: `batch.bandwidth_vs_size(...)` hands the call
to a pool at once and returns a `Chart`, which the template prints as the data URI once
`batch.finish()` has collected every drawing. With one CPU or no `fork`, the charts are drawn in
this process, in the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

# The pool starts with the first chart (a fork costs ~30 ms), so the story chart is drawn while
# the op sections' tables are still being built.
MIN_CHARTS_FOR_POOL = 1


class Chart:
    """A chart whose drawing may still be under way; prints as its data URI."""

    def __init__(self, future=None, uri: str | None = None):
        self._future, self._uri, self._drawn = future, uri, uri is not None

    @property
    def uri(self) -> str:
        if not self._drawn:
            self._uri, self._drawn = self._future.result(), True
        if not isinstance(self._uri, str):  # a chart function must return a data URI, never None
            raise TypeError(f"a deferred chart returned {type(self._uri).__name__}, not a data URI; decide "
                            "whether there is a chart before deferring it")
        return self._uri

    def __html__(self) -> str:  # Jinja prints it as is: a data URI has nothing to escape
        return self.uri

    def __str__(self) -> str:
        return self.uri

    def startswith(self, prefix: str) -> bool:
        return self.uri.startswith(prefix)


def _draw(function, args, kwargs) -> str:
    # `function` is a module-level function: a pool sends it by its module and name.
    return function(*args, **kwargs)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ChartBatch:
    """Defers each plotting call to a process pool (when there is more than one CPU)."""

    def __init__(self, plots, workers: int | None = None):
        self._plots = plots
        self._workers = workers if workers is not None else usable_cpus()
        self._pool = None
        self._pending: list[tuple[Chart, object, tuple, dict]] = []
        self._charts: list[Chart] = []

    def __getattr__(self, name):
        function = getattr(self._plots, name)
        if not name.endswith(("_chart", "_vs_size", "_multiples")):
            return function  # helpers (styles) run here: their results are needed now

        return lambda *args, **kwargs: self.defer(function, *args, **kwargs)

    def defer(self, function, *args, **kwargs) -> Chart:
        """Draw `function(*args, **kwargs)` (a module-level function returning a data URI) in the
        pool; any section's chart, not only the plots module's, can be drawn this way."""
        chart = Chart()
        self._charts.append(chart)
        self._pending.append((chart, function, args, kwargs))
        self._start_ready()
        return chart

    def where(self) -> str:
        """Where the charts are drawn, for a progress line."""
        return f"{self._workers} worker processes" if self._pool else "in this process"

    @property
    def count(self) -> int:
        return len(self._charts)

    def _start_ready(self) -> None:
        # The pool starts once enough charts are queued; from then on each is submitted at once,
        # so workers draw while this process goes on building tables.
        if self._pool is None and self._workers > 1 and len(self._pending) >= MIN_CHARTS_FOR_POOL:
            self._pool = _fork_pool(self._workers) or False  # False: no pool here, draw at the end
        if self._pool:
            for chart, function, args, kwargs in self._pending:
                chart._future = self._pool.submit(_draw, function, args, kwargs)
            self._pending.clear()

    def finish(self) -> int:
        """Draw what is left and wait for every chart; return how many were drawn."""
        for chart, function, args, kwargs in self._pending:
            chart._uri, chart._drawn = _draw(function, args, kwargs), True
        self._pending.clear()
        try:
            for chart in self._charts:
                chart.uri  # noqa: B018 (a drawing that failed raises here, not in the template)
        finally:
            if self._pool:
                self._pool.shutdown(wait=True)
            self._pool = None
        return self.count


def _fork_pool(workers: int):
    """A pool of forked workers (they inherit the imported matplotlib: no start-up import), or None
    where fork is not available or not safe (macOS, Windows)."""
    from concurrent.futures import ProcessPoolExecutor

    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.figure  # noqa: F401 (imported before the fork, once for every worker)

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
