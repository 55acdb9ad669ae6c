"""Timing as nvbench does it: warm-up, cold samples with the L2 flushed, batch samples where launch
overhead dominates, adaptive stopping, every raw sample kept.

One cold sample, on the current stream:
    flush L2 (memset of 2 x L2 bytes) -> host waits for the stream -> hold (GPU spins while the
    host enqueues) -> start event -> the complete operation -> end event
The wait after the flush is nvbench's too. Without it, an operation of 5-20 us on the H200 timed
5-10 % slower than nvbench times it (0.7 us more, whatever the flush size or the hold); with it,
within 1 % (docs/perf-notes.md, "Small kernels against nvbench"). `Timer.cold_sample` is that
sequence, the one copy: `measure` and `interleaved` (primbench ab) take theirs from it, and a
probe that changes a step passes a `ColdProtocol` instead of copying the sequence (the two jitter
probes keep loops of their own, for recipes no protocol option offers).
One batch sample: hold -> start event -> K back-to-back operations -> end event, time / K (hot L2).
For a case's plan the K operations are one CUDA graph where it can be captured, else (and for any
other callable, primbench.measure's) K launches from the host. A graph, because its replays are
steadier from machine to machine than the same launches from the host, and far steadier than cold
samples of a few microseconds (docs/perf-notes.md, "Small kernels" has the figures).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from primbench.measuring.gpu_calls import CupyCalls
from primbench.measuring.policy import TimingPolicy
from primbench.runfile import stats
from primbench.runfile.records import Samples

MAX_EVENTS_PER_CHUNK = 256
CHUNK_WALL_S = 0.02  # enqueue about this much work between synchronisations
RECOVERY_S = 0.05  # the pause after a chunk with a throttled sample, before the samples are retaken


@dataclass(frozen=True)
class ColdProtocol:
    """How one cold sample is taken. The default is primbench's own (the module docstring); a probe
    that asks what one step is worth changes that step here."""

    flush_l2s: float = 2.0  # the memset flush, in L2 sizes: above 0, at most the buffer's 2
    wait_for_flush: bool = True  # the host waits for the flush before the hold, as nvbench does
    # The hold stamps its SM clock, where the GPU calls can. Unstamped samples have no clock to
    # judge, so the throttle rule (Timer.min_clock_mhz) keeps every one of them.
    stamped: bool = True
    flush: Callable[[], None] | None = None  # a flush of the caller's own in place of the memset

    def __post_init__(self):
        if not 0 < self.flush_l2s <= 2:
            raise ValueError(f"flush_l2s {self.flush_l2s!r}: the flush buffer holds 2 x L2; give a size above 0 and at most 2")


PRIMBENCH_COLD = ColdProtocol()


def spin_us(host_enqueue_us: float) -> float:
    """How long a hold keeps the GPU busy: twice the host's time to enqueue what follows it, plus
    slack for a slow Python moment, so the timed work is queued before the GPU reaches it."""
    return 2.0 * host_enqueue_us + 20.0


@dataclass
class Interleaved:
    """Cold samples of several operations taken in turn (Timer.interleaved): per operation, one
    sample a round in round order, so that samples[i][r] and samples[j][r] come from round r."""

    samples_ms: list[list[float]]
    clock_mhz: list[list[float]]  # per operation, each sample's SM clock; empty where holds cannot stamp
    throttled_rounds: int = 0  # rounds retaken whole because a sample in them ran under the clock floor


@dataclass
class Measurement:
    """The raw samples of one case and how sampling ended."""

    cold_ms: list[float] = field(default_factory=list)
    batch_ms: list[float] = field(default_factory=list)
    batch_size: int | None = None
    batch_method: str | None = None  # "graph" or "stream": how the K operations of a batch were launched
    stop: str = ""
    batch_stop: str | None = None
    spin_us: float = 0.0
    host_enqueue_us: float = 0.0
    wall_s: float = 0.0
    cold_clock_mhz: list[float] = field(default_factory=list)  # each kept cold sample's SM clock (its hold's)
    throttled: int = 0  # cold samples discarded (and retaken) for an SM clock under the policy's floor

    def as_record(self) -> tuple[Samples, dict]:
        """(samples, timing) of a run-file case record."""
        # Stored to 1 ns: cudaEventElapsedTime resolves about 0.5 us, so nothing measured is lost,
        # and the run file stays small enough to commit.
        samples = Samples(tuple(_ns(self.cold_ms)), tuple(_ns(self.batch_ms)), self.batch_size,
                          tuple(round(c, 1) for c in self.cold_clock_mhz))
        timing = {
            "stop": self.stop,
            "batch_stop": self.batch_stop,
            "batch_method": self.batch_method,
            "spin_us": round(self.spin_us, 1),
            "host_enqueue_us": round(self.host_enqueue_us, 1),
            "wall_s": round(self.wall_s, 3),
            "throttled_discarded": self.throttled,
        }
        return samples, timing


def stop_reason(samples_ms: list[float], policy: TimingPolicy, elapsed_s: float, wall_cap_s: float) -> str | None:
    """Why sampling should stop now, or None to take more samples (the adaptive stopping rule)."""
    count = len(samples_ms)
    enough = count >= policy.min_samples and sum(samples_ms) * 1e-3 >= policy.min_time_s
    if enough and stats.robust_noise(samples_ms) <= policy.max_noise:
        return "converged"
    if enough and stats.median_standard_error(samples_ms) <= policy.max_median_error:
        return "median_converged"
    if count >= policy.max_samples:
        return "max_samples"
    if count >= policy.min_samples and elapsed_s >= wall_cap_s:
        return "max_time"
    return None


def _ns(samples_ms: list[float]) -> list[float]:
    return [round(t, 6) for t in samples_ms]


class Timer:
    """Measures operations on the current stream of one GPU, through `gpu` (gpu_calls: CuPy by
    default, or PyTorch alone for a torch callable)."""

    def __init__(self, l2_bytes: int, gpu=None):
        self.gpu = gpu if gpu is not None else CupyCalls()
        # 2 x L2, as DESIGN.md asks: a memset this size leaves none of the operation's data in L2.
        self.flush_buffer = self.gpu.buffer(max(2 * l2_bytes, 1 << 20))
        self.events = [self.gpu.event_pair() for _ in range(MAX_EVENTS_PER_CHUNK)]
        # Where the GPU calls can stamp a hold (CuPy's, not torch's), each cold sample carries the SM
        # clock of its hold, and one under `min_clock_mhz` (set by the runner) is discarded and retaken.
        self._stamps = self.gpu.stamp_buffer(MAX_EVENTS_PER_CHUNK) if hasattr(self.gpu, "stamp_buffer") else None
        self.min_clock_mhz: float | None = None
        # When the last chunk of samples came back: the case limit's sign of life (case_limit.py).
        self.last_progress = 0.0

    def flush_l2(self, l2s: float = 2.0) -> None:
        """The memset flush over `l2s` L2 sizes of the buffer (2 x L2: all of it, the default)."""
        buffer = self.flush_buffer
        if l2s != 2.0:
            buffer = buffer[: int(l2s * buffer.nbytes / 2)]
        self.gpu.memset(buffer)

    def hold(self, microseconds: float) -> None:
        self.gpu.hold(microseconds)

    def _host_enqueue_us(self, enqueue) -> float:
        """Host time to enqueue `enqueue()` once (the GPU must be busy for at least this long first)."""
        timings = []
        for _ in range(3):
            self.hold(2000)  # keep the GPU busy so the enqueue is not slowed by a full queue
            start = time.perf_counter()
            enqueue()
            timings.append((time.perf_counter() - start) * 1e6)
            self.gpu.synchronize()
        return sorted(timings)[1]

    def _sample(self, enqueue_sample, policy: TimingPolicy, wall_start: float, wall_cap: float,
                clocked: bool = False) -> tuple[list[float], str, list[float], int]:
        """Take samples in chunks until the policy is met; return them, why sampling stopped, their
        SM clocks (`clocked`: read from the holds' stamps) and how many were discarded as throttled.
        Past the wall cap a throttled sample is kept, so a GPU that stays throttled still ends."""
        samples: list[float] = []
        clocks: list[float] = []
        discarded = 0
        chunk = 4
        while True:
            chunk_start = time.perf_counter()
            used = self.events[:chunk]
            for slot, (start, end) in enumerate(used):
                enqueue_sample(start, end, slot)
            self.gpu.wait(used[-1][1])
            self.last_progress = time.monotonic()
            times = [self.gpu.elapsed_ms(start, end) for start, end in used]
            readings = self.gpu.sm_clocks_mhz(self._stamps, len(used)) if clocked else [None] * len(used)
            late = time.perf_counter() - wall_start >= wall_cap
            floor = self.min_clock_mhz if clocked and not late else None
            for sample, clock in zip(times, readings):
                if floor and clock < floor:
                    discarded += 1
                    continue
                samples.append(sample)
                if clock is not None:
                    clocks.append(clock)
            if floor and any(clock < floor for clock in readings):
                time.sleep(RECOVERY_S)  # let the clock recover before the samples are retaken
            per_sample_wall = (time.perf_counter() - chunk_start) / chunk
            reason = stop_reason(samples, policy, time.perf_counter() - wall_start, wall_cap)
            if reason:
                return samples, reason, clocks, discarded
            chunk = int(min(MAX_EVENTS_PER_CHUNK, max(4, CHUNK_WALL_S / max(per_sample_wall, 1e-6))))
            chunk = min(chunk, max(1, policy.max_samples - len(samples)))

    def cold_sample(self, operation, start, end, slot: int, hold_us: float, *, setup=None,
                    protocol: ColdProtocol = PRIMBENCH_COLD) -> None:
        """Enqueue one cold sample of `operation` between the events `start` and `end` (the module
        docstring's sequence). `setup` runs first, before the flush, so it is never timed; `slot`
        is where the hold stamps its SM clock (read back by sm_clocks_mhz)."""
        if setup is not None:
            setup()
        if protocol.flush is not None:
            protocol.flush()
        else:
            self.flush_l2(protocol.flush_l2s)
        if protocol.wait_for_flush:
            self.gpu.synchronize()  # the flush finished before the hold: see the module docstring
        if protocol.stamped and self._stamps is not None:
            self.gpu.hold(hold_us, self._stamps, slot)
        else:
            self.hold(hold_us)
        self.gpu.record(start)
        operation()
        self.gpu.record(end)

    def measure(self, operation, policy: TimingPolicy, *, batch_as_graph: bool = False, setup=None,
                protocol: ColdProtocol = PRIMBENCH_COLD) -> Measurement:
        """Warm up, then cold samples (and batch samples for short operations) of `operation`.
        `batch_as_graph`: try a CUDA graph for the batches. Only for plans, whose launches go to
        the current CuPy stream; any other callable (primbench.measure) may launch on a stream or
        allocate through an allocator the capture cannot see, so it keeps host-launched batches.
        `setup`: called before every warm-up and every cold sample, before the L2 flush, so never
        timed (an in-place operation's input restored, gradients set to None). An operation with a
        setup gets no batch samples: back-to-back runs would skip it. `protocol`: a probe's change
        to the cold sample; a run always takes primbench's."""
        wall_start = time.perf_counter()
        prepare = setup or (lambda: None)
        for _ in range(policy.warmup):
            prepare()
            operation()
        self.gpu.synchronize()
        result = Measurement()

        def enqueue_with_events():
            start, end = self.events[-1]
            self.gpu.record(start)
            operation()
            self.gpu.record(end)

        result.host_enqueue_us = self._host_enqueue_us(enqueue_with_events)
        result.spin_us = spin_us(result.host_enqueue_us)
        clocked = protocol.stamped and self._stamps is not None

        def one_cold_sample(start, end, slot):
            self.cold_sample(operation, start, end, slot, result.spin_us, setup=setup, protocol=protocol)

        result.cold_ms, result.stop, result.cold_clock_mhz, result.throttled = self._sample(
            one_cold_sample, policy, wall_start, policy.max_time_s, clocked)
        cold_median_us = stats.summarize(result.cold_ms).median * 1e3
        if cold_median_us < policy.batch_below_us and setup is None:
            self._batches(operation, policy, result, wall_start, cold_median_us, batch_as_graph)
        result.wall_s = time.perf_counter() - wall_start
        return result

    def _batches(self, operation, policy: TimingPolicy, result: Measurement, wall_start: float, cold_median_us: float,
                 as_graph: bool) -> None:
        """Batch samples of a short operation into `result`: K operations per sample, one CUDA
        graph where asked and capturable, else K launches from the host."""
        batch = int(min(1000, max(2, policy.batch_target_ms * 1e3 / max(cold_median_us, 0.5))))
        graph = self.gpu.capture(operation, batch) if as_graph else None
        result.batch_method = "stream" if graph is None else "graph"
        if graph is None:
            batch_spin_us = spin_us(batch * result.host_enqueue_us)

            def launch_batch():
                for _ in range(batch):
                    operation()
        else:
            def launch_batch():
                self.gpu.launch(graph)

            launch_batch()
            batch_spin_us = spin_us(self._host_enqueue_us(launch_batch))

        def batch_sample(start, end, _slot):
            self.hold(batch_spin_us)
            self.gpu.record(start)
            launch_batch()
            self.gpu.record(end)

        # The same wall-clock budget as the cold samples, counted from the case's start: a case
        # that used it all gets min_samples batch samples and no more.
        raw, result.batch_stop, _, _ = self._sample(batch_sample, policy, wall_start, policy.max_time_s)
        result.batch_ms = [t / batch for t in raw]
        result.batch_size = batch

    def interleaved(self, operations: list, rounds: int, warmup: int = 10, rng_seed: int = 0,
                    setups: list | None = None) -> Interleaved:
        """Cold samples of several operations taken in turn, `rounds` of each: a clock ramp, a
        throttle or a neighbour's load falls on every side alike (primbench ab). Each round takes
        the operations in a random order (seeded): on the H200, one plan timed against itself gave
        B/A 0.94 with the order fixed (A B, A B, ...) and 1.08 with it alternating (A B, B A, ...)
        at 2^20, so a sample's place in the sequence matters, and no fixed order may follow it.

        An operation may be a tuple of callables: round r runs its (r mod length)-th, so that `ab`
        swaps the buffer sets of its sides every round.

        Each sample is a cold sample (cold_sample) and carries its hold's SM clock, as a run's do.
        The throttle rule is a run's too, by round: a round with any sample under `min_clock_mhz`
        is retaken whole after a pause, in its own place, so that every side keeps one sample of
        each round and round r stays round r (ab's instances are counted by round). After as many
        retaken rounds as there are rounds, a throttled round is kept, so a GPU that stays
        throttled still ends."""
        import numpy

        choices = [operation if isinstance(operation, tuple) else (operation,) for operation in operations]
        setups = setups or [None] * len(operations)
        for alternatives, setup in zip(choices, setups):
            for operation in alternatives:
                for _ in range(warmup):
                    if setup is not None:
                        setup()
                    operation()
        self.gpu.synchronize()
        hold_us = spin_us(max(self._host_enqueue_us(op) for alternatives in choices for op in alternatives))
        taken: list[list] = [[None] * rounds for _ in operations]
        clocks: list[list] = [[None] * rounds for _ in operations]
        result = Interleaved([], [])
        shuffle = numpy.random.default_rng(rng_seed)
        per_chunk = max(1, MAX_EVENTS_PER_CHUNK // len(operations))
        pending = list(range(rounds))
        while pending:
            chunk, pending = pending[:per_chunk], pending[per_chunk:]
            used = []
            for round_index in chunk:
                for index in shuffle.permutation(len(operations)):
                    start, end = self.events[len(used)]
                    self.cold_sample(choices[index][round_index % len(choices[index])], start, end, len(used), hold_us,
                                     setup=setups[index])
                    used.append((round_index, index, start, end))
            self.gpu.wait(used[-1][3])
            self.last_progress = time.monotonic()
            readings = self.gpu.sm_clocks_mhz(self._stamps, len(used)) if self._stamps is not None else [None] * len(used)
            floor = self.min_clock_mhz if self._stamps is not None and result.throttled_rounds < rounds else None
            throttled = sorted({used[i][0] for i, clock in enumerate(readings) if floor and clock < floor})
            for (round_index, index, start, end), clock in zip(used, readings):
                if round_index not in throttled:
                    taken[index][round_index] = self.gpu.elapsed_ms(start, end)
                    clocks[index][round_index] = clock
            if throttled:
                result.throttled_rounds += len(throttled)
                pending = throttled + pending
                time.sleep(RECOVERY_S)  # let the clock recover before the rounds are retaken
        result.samples_ms = [_ns(side) for side in taken]
        result.clock_mhz = [[c for c in side if c is not None] for side in clocks]
        return result
