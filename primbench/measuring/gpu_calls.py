"""The few GPU calls the Timer makes, through CuPy or through PyTorch: a buffer to flush L2 with,
the memset that flushes it, the hold that keeps the GPU busy while the host enqueues, event pairs
and their elapsed time, and a CUDA graph of a batch (CuPy only).

Two back ends and one protocol: a case's plan (the runner) and a CuPy callable are timed through
CuPy; a PyTorch callable can be timed through torch alone (`primbench.measure` with no CuPy
installed), on torch's current stream, with torch's own events. Every call goes to the current
stream of the back end's library.
"""

from __future__ import annotations


class CupyCalls:
    """Through CuPy (and primbench's own hold kernel, compiled with NVRTC)."""

    name = "cupy"

    def __init__(self):
        import cupy

        from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE, load_module

        self.cupy = cupy
        module = load_module(HARNESS_SOURCE, HARNESS_KERNELS)
        self._hold = module.get_function("primbench_hold")
        self._hold_stamped = module.get_function("primbench_hold_stamped")

    def buffer(self, nbytes: int):
        return self.cupy.empty(nbytes, dtype=self.cupy.uint8)

    def memset(self, buffer) -> None:
        self.cupy.cuda.runtime.memsetAsync(buffer.data.ptr, 0, buffer.nbytes, self.cupy.cuda.get_current_stream().ptr)

    def hold(self, microseconds: float, stamps=None, slot: int = 0) -> None:
        """Spin for `microseconds`; with `stamps` (stamp_buffer's), also record the SM clock in slot `slot`."""
        import numpy

        ns = numpy.uint64(int(microseconds * 1000))
        if stamps is None:
            self._hold((1,), (1,), (ns,))
        else:
            self._hold_stamped((1,), (1,), (ns, stamps[4 * slot:4 * slot + 4]))

    def stamp_buffer(self, slots: int):
        """Room for `slots` holds' clock stamps (4 x uint64 each) on the GPU."""
        return self.cupy.zeros(4 * slots, dtype=self.cupy.uint64)

    @staticmethod
    def sm_clocks_mhz(stamps, count: int) -> list[float]:
        """The mean SM clock (MHz) of each of the first `count` stamped holds: cycles over nanoseconds."""
        values = stamps[:4 * count].get().reshape(count, 4).astype("float64")
        elapsed_ns = values[:, 2] - values[:, 0]
        return [float(c) for c in (values[:, 3] - values[:, 1]) / elapsed_ns * 1e3]

    def event_pair(self):
        return self.cupy.cuda.Event(), self.cupy.cuda.Event()

    @staticmethod
    def record(event) -> None:
        event.record()

    def elapsed_ms(self, start, end) -> float:
        return self.cupy.cuda.get_elapsed_time(start, end)

    @staticmethod
    def wait(event) -> None:
        event.synchronize()

    def synchronize(self) -> None:
        self.cupy.cuda.get_current_stream().synchronize()

    def capture(self, operation, count: int):
        """`count` operations as one CUDA graph, uploaded and ready to launch on any stream; None
        when the operation cannot be captured (it synchronises, or allocates device memory anew).
        Capture runs on a stream of its own (the legacy default stream cannot capture). A plan
        whose buffers come from CuPy's pool during the capture keeps those addresses in the graph;
        nothing else allocates while its samples are taken, and the graph is dropped after them."""
        cupy = self.cupy
        stream = cupy.cuda.Stream(non_blocking=True)
        cupy.cuda.get_current_stream().synchronize()
        try:
            with stream:
                stream.begin_capture()
                try:
                    for _ in range(count):
                        operation()
                finally:
                    graph = stream.end_capture()
            graph.upload(stream)
            stream.synchronize()
            return graph
        except Exception:  # noqa: BLE001 (CUDA and CuPy raise several types for an uncapturable call)
            try:
                stream.synchronize()
                cupy.cuda.runtime.deviceSynchronize()
            except Exception:  # noqa: BLE001 (a failed capture may leave a sticky error; the host batch follows)
                pass
            return None

    def launch(self, graph) -> None:
        graph.launch(self.cupy.cuda.get_current_stream())


class TorchCalls:
    """Through PyTorch alone, on its current device and stream. The hold is torch.cuda._sleep, a
    spin of so many SM cycles: counted at the GPU's highest clock, so it lasts at least as long as
    asked whatever the clock is."""

    name = "torch"

    def __init__(self, max_sm_clock_mhz: float):
        import torch

        self.torch = torch
        self.cycles_per_us = max(float(max_sm_clock_mhz), 1.0)

    def buffer(self, nbytes: int):
        return self.torch.empty(nbytes, dtype=self.torch.uint8, device="cuda")

    @staticmethod
    def memset(buffer) -> None:
        buffer.zero_()

    def hold(self, microseconds: float) -> None:
        self.torch.cuda._sleep(int(microseconds * self.cycles_per_us))

    def event_pair(self):
        event = self.torch.cuda.Event
        return event(enable_timing=True), event(enable_timing=True)

    @staticmethod
    def record(event) -> None:
        event.record()

    @staticmethod
    def elapsed_ms(start, end) -> float:
        return start.elapsed_time(end)

    @staticmethod
    def wait(event) -> None:
        event.synchronize()

    def synchronize(self) -> None:
        self.torch.cuda.current_stream().synchronize()

    @staticmethod
    def capture(operation, count: int):
        return None  # batches of a callable are launched from the host, as through CuPy

    @staticmethod
    def launch(graph) -> None:
        raise AssertionError("no graphs through torch")
