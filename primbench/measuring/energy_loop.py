"""The plan run back to back for the energy windows (measuring/energy.py): launches of
`ops_per_launch` operations each (one CUDA graph where the plan can be captured, as the batch
figure does, else host launches), kept a few deep on the stream so the GPU never idles while the
host polls NVML, each followed by an event that marks how many operations were done by then."""

from __future__ import annotations

from collections import deque

LAUNCH_MS = 5.0  # GPU time per launch: long enough that launch gaps vanish, short enough to poll between
DEPTH = 4  # launches queued ahead of the GPU
MAX_OPS_PER_LAUNCH = 1000


class PlanLoop:
    def __init__(self, gpu, operation, op_ms: float):
        import cupy

        self.cupy = cupy
        self.ops_per_launch = int(min(MAX_OPS_PER_LAUNCH, max(1, LAUNCH_MS / max(op_ms, 1e-6))))
        graph = gpu.capture(operation, self.ops_per_launch) if self.ops_per_launch > 1 else None
        self.method = "graph" if graph is not None else "stream"
        self.stream = cupy.cuda.get_current_stream()
        if graph is not None:
            self._launch = lambda: graph.launch(self.stream)
        else:
            def launch():
                for _ in range(self.ops_per_launch):
                    operation()
            self._launch = launch
        self._graph = graph
        self._in_flight: deque = deque()  # (event, operations enqueued up to it)
        self._enqueued = 0
        self._latest = None  # (event, operations) of the newest launch known done

    def _retire(self) -> None:
        while self._in_flight and self._in_flight[0][0].done:
            self._latest = self._in_flight.popleft()

    def feed(self) -> None:
        self._retire()
        while len(self._in_flight) < DEPTH:
            self._launch()
            event = self.cupy.cuda.Event()
            event.record(self.stream)
            self._enqueued += self.ops_per_launch
            self._in_flight.append((event, self._enqueued))

    def done(self):
        """(marker, operations done): the newest completed launch's event, waiting for the first if none is."""
        self._retire()
        if self._latest is None:
            self.feed()
            self._in_flight[0][0].synchronize()
            self._retire()
        return self._latest

    def gpu_ms(self, start, end) -> float:
        return self.cupy.cuda.get_elapsed_time(start, end)

    def finish(self, wait_s: float | None = None) -> None:
        """Wait for the queued launches: for ever after a clean measurement (as any sample does),
        at most `wait_s` after a failed one, whose kernel may be what failed."""
        import time

        if wait_s is None:
            self.stream.synchronize()
        elif self._in_flight:
            deadline = time.perf_counter() + wait_s
            while not self._in_flight[-1][0].done and time.perf_counter() < deadline:
                time.sleep(0.001)
        self._in_flight.clear()
        self._graph = None
