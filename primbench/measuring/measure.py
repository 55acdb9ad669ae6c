"""`measure(fn, bytes=...)`: time any CuPy or PyTorch callable from Python (a notebook, a script, a
test) by the protocol the CLI times a case with (primbench.measuring.timing.Timer.measure): warm-up,
cold samples with L2 flushed and the GPU held while the host enqueues, adaptive stop, batch samples
for short ops. Through CuPy where it is installed; a PyTorch callable needs no CuPy: with torch
alone it is timed on torch's current stream with torch's own events (gpu_calls.TorchCalls).

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

from primbench.measuring.case_limit import process_ends_if_hung
from primbench.runfile import stats

if TYPE_CHECKING:
    from primbench.measuring.policy import TimingPolicy

# One Device and Timer per GPU index (and back end), kept for the process: building a Timer allocates
# 2 x L2 bytes and compiles the hold kernel, far too slow to repeat in every notebook cell.
_SHARED: dict = {}
CONVERGED = ("converged", "median_converged")
NO_GPU_LIBRARY = ("primbench.measure needs CuPy (or PyTorch with CUDA, for a torch callable): "
                  "pip install 'primbench[cuda13]' (or [cuda12], by nvidia-smi's CUDA version)")


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
    label: str | None = None
    quantiles: dict = field(default_factory=dict)  # {q: cold ms} for the quantiles asked for
    # How the batches were launched ("stream": K launches from the host; None: no batch). A run
    # file records it, and the verdict rule gates on a batch only where it was a CUDA graph.
    batch_method: str | None = None

    @property
    def median_us(self) -> float:
        return self.median_ms * 1e3

    @property
    def batch_median_ms(self) -> float | None:
        return stats.summarize(self.batch_ms).median if self.batch_ms else None

    @property
    def timed(self) -> bool:
        """True: this result holds samples (the pytest plugin's --gpubench-disable returns an untimed
        one whose `timed` is False, so a test can tell)."""
        return True

    @property
    def converged(self) -> bool:
        """False when sampling ran out of time or samples before the noise target was met."""
        return self.stop in CONVERGED

    def to_dict(self) -> dict:
        """Every field, samples included, and the derived figures: plain values for JSON."""
        return {**dataclasses.asdict(self), "median_us": self.median_us, "batch_median_ms": self.batch_median_ms,
                "converged": self.converged, "quantiles": {str(q): t for q, t in self.quantiles.items()}}

    def __str__(self) -> str:
        text = f"{self.label}: " if self.label else ""
        text += f"{self.median_us:.1f} us ±{self.noise * 100:.1f} %"
        text += f" {self.gbps:.0f} GB/s" if self.gbps is not None else ""
        text += f" ({self.pct_of_peak:.1f} % of peak)" if self.pct_of_peak is not None else ""
        text += f", {len(self.cold_ms)} cold samples"
        if self.batch_ms:
            text += f"; hot L2 {self.batch_median_ms * 1e3:.2f} us (batches of {self.batch_size})"
        if not self.converged:
            text += f" [noise target missed: {self.stop}]"
        return text


def measure(fn, *, bytes: int | None = None, setup=None, quantiles=None, label: str | None = None,
            policy: TimingPolicy | None = None, **policy_overrides) -> Measured:
    """Time `fn()` as the CLI times a case, and return a Measured (median, noise, every sample).

    bytes: the traffic one call moves, for GB/s and % of the NVML peak.
    setup: called before every sample (and warm-up), never timed: restore an in-place input, set
        gradients to None. With a setup there are no batch samples (they would skip it).
    quantiles: e.g. (0.2, 0.5, 0.8): those quantiles of the cold samples, in ms (result.quantiles).
    label: a name for the result (its line and to_dict say it).
    policy: a primbench.TimingPolicy (default: the CLI's); keyword overrides replace its fields,
        e.g. measure(fn, min_samples=50, max_time_s=5.0).

    Every argument is checked before the GPU is touched, by the rules a config's `timing:` block
    and a run file keep: a value of the wrong type is a TypeError, a value out of range a
    ValueError, each naming the argument (Python's convention, which primbench.ab keeps too).
    NumPy integers, floats and arrays count as the numbers and sequences they hold. A call that
    makes no progress for the policy's case_limit_s (60 s) ends the process with one line
    (measuring/case_limit.py says why it cannot be an exception)."""
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments (e.g. lambda: x.sum()), not {type(fn).__name__}")
    if setup is not None and not callable(setup):
        raise TypeError(f"setup must be a callable taking no arguments, not {type(setup).__name__}")
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label must be text (a name for the result), not {type(label).__name__}")
    _check_bytes(bytes)
    wanted = _check_quantiles(quantiles)
    resolved = _resolve_policy(policy, policy_overrides)
    with _callers_gpu_and_stream() as key:
        device, timer = _shared(key)
        what = f"primbench.measure({label or getattr(fn, '__name__', 'fn')})"
        with process_ends_if_hung(what[:120], resolved.case_limit_s, timer):
            measurement = timer.measure(fn, resolved, setup=setup)
    return _result(measurement, bytes, device.info, label, wanted)


@contextlib.contextmanager
def callers_timer():
    """(Device, Timer) of the caller's GPU, its stream the one the caller enqueues on, for as long
    as the block runs (primbench.ab times two callables with it)."""
    with _callers_gpu_and_stream() as key:
        yield _shared(key)


def device_info() -> dict:
    """The caller's GPU as primbench.measuring.device.Device.info describes it (what a run file's
    header holds), through the back end measure uses."""
    with callers_timer() as (device, _timer):
        return device.info


def _check_quantiles(quantiles) -> tuple[float, ...]:
    """The quantiles asked for, as floats: one number, or any sequence of them (a NumPy array too)."""
    if quantiles is None:
        return ()
    if getattr(quantiles, "ndim", None) == 0:  # a NumPy scalar or 0-d array: the number it holds
        quantiles = quantiles.item()
    one = isinstance(quantiles, (numbers.Real, str, bytes)) or not hasattr(quantiles, "__iter__")
    values = (quantiles,) if one else tuple(quantiles)  # text is refused whole, not read letter by letter
    for q in values:
        if isinstance(q, bool) or not isinstance(q, numbers.Real):
            raise TypeError(f"quantiles must be numbers from 0 to 1, e.g. (0.2, 0.5, 0.8), not {_shown(quantiles)}")
        if not 0 <= q <= 1:  # False for NaN too
            raise ValueError(f"quantiles must be numbers from 0 to 1, e.g. (0.2, 0.5, 0.8), not {_shown(quantiles)}")
    return tuple(float(q) for q in values)


def _shown(value) -> str:
    """A value as an error line quotes it: at most 80 characters of its repr (Python refuses to
    write an int of over 4,300 digits at all)."""
    try:
        return repr(value)[:80]
    except ValueError:
        return f"a {type(value).__name__} too long to show"


def _check_bytes(nbytes) -> None:
    """A whole number of bytes from 1 to what a run file's bytes field holds (runfile/fields.BYTES_CEILING):
    the pytest plugin records it there, and past it no GPU moves anything."""
    from primbench.measuring.policy import shown_number
    from primbench.runfile.fields import BYTES_CEILING

    if nbytes is None:
        return
    if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Integral):
        raise TypeError(f"bytes must be a whole number of bytes (e.g. x.nbytes), not {_shown(nbytes)}")
    if nbytes <= 0:
        raise ValueError(f"bytes must be positive (the bytes one call reads and writes), not {shown_number(int(nbytes))}")
    if nbytes > BYTES_CEILING:
        raise ValueError(f"bytes must be at most 2^64 (what a run file records), not {shown_number(int(nbytes))}")


def _resolve_policy(policy, overrides: dict):
    """The policy, overrides applied, checked by the same rules as a config's `timing:` block."""
    from primbench.measuring.policy import TimingPolicy, field_names, timing_problem, type_problem

    base = TimingPolicy() if policy is None else policy
    if not isinstance(base, TimingPolicy):
        raise TypeError(f"policy must be a primbench.measuring.policy.TimingPolicy, not {type(base).__name__}")
    valid = field_names()
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ValueError(f"unknown timing policy setting(s) {', '.join(unknown)[:200]}; valid: {', '.join(valid)}")
    values = {name: _plain_number(value) for name, value in dataclasses.replace(base, **overrides).as_dict().items()}
    for name, value in values.items():
        if (problem := type_problem(name, value)) is not None:
            raise TypeError(f"primbench.measure: timing.{name}: {problem}")
    problem = timing_problem(values)
    if problem is not None:  # worded as a config's timing: block would be, e.g. "timing.min_samples: ..."
        key, message = problem
        raise ValueError(f"primbench.measure: timing{'.' + key if key else ''}: {message}")
    return TimingPolicy(**values)


def _plain_number(value):
    """A NumPy integer or float as the int or float it holds (the policy's rules, and the run file's
    JSON, take those); anything else as it is."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, int, float)):
        return float(value)
    return value


def _initialised_torch():
    """torch, if the caller imported it and it has touched CUDA; never imports it (seconds, and GPU memory)."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_initialized():
        return None
    return torch


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    return cupy


@contextlib.contextmanager
def _callers_gpu_and_stream():
    """Make the timer's stream the one the callable enqueues on; yields the key of its (Device, Timer).

    With CuPy: a torch callable enqueues on torch's current stream, while the Timer records its
    events and enqueues the L2 flush and the hold on CuPy's current stream. On two streams the
    events would time the flush and hold, not the operation; so CuPy adopts torch's stream here (a
    CuPy callable then runs on it too, which times it the same). The Device context puts CuPy's
    current device back afterwards; the stream is made inside it, as CuPy ties an external stream
    to the device current then. Without CuPy, a torch callable is timed through torch alone."""
    from primbench.measuring.device import require_gpu

    require_gpu()  # no driver or no GPU: one line (NoGPUError), before CUDA is asked anything
    cupy, torch = _cupy(), _initialised_torch()
    if cupy is None:
        if torch is None:
            raise ModuleNotFoundError(NO_GPU_LIBRARY, name="cupy")
        yield ("torch", torch.cuda.current_device())
        return
    index = torch.cuda.current_device() if torch else cupy.cuda.Device().id
    with cupy.cuda.Device(index):
        if torch:
            stream = _adopted(cupy, torch.cuda.current_stream(index))
        else:
            stream = contextlib.nullcontext()
        with stream:
            yield index


def _adopted(cupy, torch_stream):
    """torch's stream as a CuPy stream: Stream.from_external where CuPy has it (ExternalStream is
    deprecated there) and torch's stream speaks the CUDA stream protocol, else ExternalStream."""
    try:
        return cupy.cuda.Stream.from_external(torch_stream)
    except (AttributeError, TypeError, ValueError):
        return cupy.cuda.ExternalStream(torch_stream.cuda_stream)


def _shared(key):
    """(Device, Timer) for a GPU index (through CuPy) or ("torch", index), built on first use and
    kept (see _SHARED)."""
    if key not in _SHARED:
        from primbench.measuring.device import Device
        from primbench.measuring.timing import Timer

        if isinstance(key, tuple):
            from primbench.measuring.gpu_calls import TorchCalls

            device = Device(key[1], through="torch")
            _SHARED[key] = (device, Timer(device.l2_bytes, TorchCalls(device.info["max_sm_clock_mhz"])))
        else:
            device = Device(key)
            _SHARED[key] = (device, Timer(device.l2_bytes))
    return _SHARED[key]


def _result(measurement, nbytes: int | None, device_info: dict, label=None, quantiles=()) -> Measured:
    import numpy

    cold = stats.summarize(measurement.cold_ms)
    peak = device_info.get("peak_gbps")
    gbps = stats.bandwidth_gbps(nbytes, cold.median) if nbytes is not None else None
    pct = 100.0 * gbps / peak if gbps is not None and peak else None
    return Measured(median_ms=cold.median, noise=cold.noise, cold_ms=list(measurement.cold_ms),
                    batch_ms=list(measurement.batch_ms), batch_size=measurement.batch_size, stop=measurement.stop,
                    bytes=None if nbytes is None else int(nbytes), gbps=gbps, peak_gbps=peak, pct_of_peak=pct,
                    device=device_info.get("name", "?"), label=label, batch_method=measurement.batch_method,
                    quantiles={q: float(numpy.quantile(measurement.cold_ms, q)) for q in quantiles})
