"""`measure(fn, bytes=...)`: time any CuPy or PyTorch callable from Python (a notebook, a script) by
the protocol the CLI times a case with (primbench.measuring.timing.Timer.measure): warm-up, cold samples with
L2 flushed and the GPU held while the host enqueues, adaptive stop, batch samples for short ops.

    >>> import cupy, primbench
    >>> x = cupy.random.random(2**28, dtype=cupy.float32)
    >>> print(primbench.measure(lambda: x.sum(), bytes=x.nbytes))  # median, spread, GB/s, % of peak
"""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from primbench.runfile import stats

if TYPE_CHECKING:
    from primbench.measuring.policy import TimingPolicy

# One Device and Timer per GPU index, kept for the process: building a Timer allocates 2 x L2 bytes
# and compiles the hold kernel, far too slow to repeat in every notebook cell.
_SHARED: dict = {}
CONVERGED = ("converged", "median_converged")


@dataclass(frozen=True)
class Measured:
    """What `measure` found: the cold median, its spread, every raw sample, and bandwidth if asked."""

    median_ms: float  # median of the cold samples (L2 flushed), as the CLI reports a case
    noise: float  # robust spread of the cold samples: 1.4826 x MAD / median (stats.robust_noise)
    cold_ms: list[float] = field(repr=False)
    batch_ms: list[float] = field(repr=False)  # per operation, from back-to-back batches (hot L2)
    batch_size: int | None
    stop: str  # why cold sampling ended (timing.stop_reason)
    bytes: int | None
    gbps: float | None
    peak_gbps: float | None  # the device's NVML peak: 2 x max memory clock x bus width / 8
    pct_of_peak: float | None
    device: str

    @property
    def median_us(self) -> float:
        return self.median_ms * 1e3

    @property
    def batch_median_ms(self) -> float | None:
        return stats.summarize(self.batch_ms).median if self.batch_ms else None

    @property
    def converged(self) -> bool:
        """False when sampling ran out of time or samples before the noise target was met."""
        return self.stop in CONVERGED

    def __str__(self) -> str:
        text = f"{self.median_us:.1f} us ±{self.noise * 100:.1f} %"
        text += f" {self.gbps:.0f} GB/s" if self.gbps is not None else ""
        text += f" ({self.pct_of_peak:.1f} % of peak)" if self.pct_of_peak is not None else ""
        text += f", {len(self.cold_ms)} cold samples"
        if self.batch_ms:
            text += f"; hot L2 {self.batch_median_ms * 1e3:.2f} us (batches of {self.batch_size})"
        if not self.converged:
            text += f" [noise target missed: {self.stop}]"
        return text


def measure(fn, *, bytes: int | None = None, policy: TimingPolicy | None = None, **policy_overrides) -> Measured:
    """Time `fn()` as the CLI times a case. `bytes`: the traffic one call moves, for GB/s and % of
    peak. `policy`: a TimingPolicy (default: the CLI's); keyword overrides replace its fields,
    e.g. measure(fn, min_samples=50, max_time_s=5.0)."""
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments (e.g. lambda: x.sum()), not {type(fn).__name__}")
    _check_bytes(bytes)
    resolved = _resolve_policy(policy, policy_overrides)
    with _callers_gpu_and_stream() as index:
        device, timer = _shared(index)
        measurement = timer.measure(fn, resolved)
    return _result(measurement, bytes, device.info)


def _check_bytes(nbytes) -> None:
    if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Integral)):
        raise TypeError(f"bytes must be a whole number of bytes (e.g. x.nbytes), not {nbytes!r}")
    if nbytes is not None and nbytes <= 0:
        raise ValueError(f"bytes must be positive (the bytes one call reads and writes), not {nbytes}")


def _resolve_policy(policy, overrides: dict):
    """The policy, overrides applied, checked by the same rules as a config's `timing:` block."""
    from primbench.measuring.policy import TimingPolicy, field_names, timing_problem

    base = TimingPolicy() if policy is None else policy
    if not isinstance(base, TimingPolicy):
        raise TypeError(f"policy must be a primbench.measuring.policy.TimingPolicy, not {type(base).__name__}")
    valid = field_names()
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ValueError(f"unknown timing policy setting(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    resolved = dataclasses.replace(base, **overrides)
    problem = timing_problem(resolved.as_dict())
    if problem is not None:  # worded as a config's timing: block would be, e.g. "timing.min_samples: ..."
        key, message = problem
        raise ValueError(f"primbench.measure: timing{'.' + key if key else ''}: {message}")
    return resolved


def _initialised_torch():
    """torch, if the caller imported it and it has touched CUDA; never imports it (seconds, and GPU memory)."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_initialized():
        return None
    return torch


@contextlib.contextmanager
def _callers_gpu_and_stream():
    """Make CuPy's current device and stream the ones the callable enqueues on; yields the device index."""
    import cupy

    torch = _initialised_torch()
    index = torch.cuda.current_device() if torch else cupy.cuda.Device().id
    # A torch callable enqueues on torch's current stream, while the Timer records its events and
    # enqueues the L2 flush and the hold kernel on CuPy's current stream. On two streams the events
    # would time the flush and hold, not the operation; so CuPy adopts torch's stream here (a CuPy
    # callable then runs on it too, which times it the same).
    # The Device context puts CuPy's current device back afterwards (Device(index) makes it current);
    # the stream is made inside it, as CuPy ties an external stream to the device current then.
    with cupy.cuda.Device(index):
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream(index).cuda_stream) if torch else contextlib.nullcontext()
        with stream:
            yield index


def _shared(index: int):
    """(Device, Timer) for GPU `index`, built on first use and kept (see _SHARED)."""
    if index not in _SHARED:
        from primbench.measuring.device import Device
        from primbench.measuring.timing import Timer

        device = Device(index)
        _SHARED[index] = (device, Timer(device.l2_bytes))
    return _SHARED[index]


def _result(measurement, nbytes: int | None, device_info: dict) -> Measured:
    cold = stats.summarize(measurement.cold_ms)
    peak = device_info.get("peak_gbps")
    gbps = stats.bandwidth_gbps(nbytes, cold.median) if nbytes is not None else None
    pct = 100.0 * gbps / peak if gbps is not None and peak else None
    return Measured(median_ms=cold.median, noise=cold.noise, cold_ms=list(measurement.cold_ms),
                    batch_ms=list(measurement.batch_ms), batch_size=measurement.batch_size, stop=measurement.stop,
                    bytes=None if nbytes is None else int(nbytes), gbps=gbps, peak_gbps=peak, pct_of_peak=pct,
                    device=device_info.get("name", "?"))
