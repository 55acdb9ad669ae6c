"""The Python API holds every argument to the CLI's rules (issue 52, item 3): primbench.measure
refuses what a config's `timing:` block and a run file refuse, with their rules and words, as a
TypeError (a wrong type) or a ValueError (a wrong value) that names the argument, raised by
primbench itself, before any GPU work; and it takes NumPy numbers and arrays as numbers.

The GPU step is a stand-in that raises NoGPUError with its own words, on any machine: a refused
value that got there (the order broken) fails its test with that NoGPUError, and a valid spelling
shows it was let through by reaching it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy
import pytest

import primbench
from primbench.errors import NoGPUError

PACKAGE = Path(primbench.__file__).resolve().parent
GPU_STEP = "stand-in: the GPU step was reached"


def fn():
    return None


@pytest.fixture(autouse=True)
def gpu_step(monkeypatch):
    """Every way primbench opens a GPU (require_gpu, Device) asks NVML first: here NVML answers
    with GPU_STEP, so no test touches a GPU and each can tell whether it got that far."""
    import primbench.measuring.device as device

    def reached():
        raise NoGPUError(GPU_STEP)

    monkeypatch.setattr(device, "_nvml", reached)


def refused(call, error: type, fragment: str) -> str:
    """`call()` raises exactly `error`, raised by primbench's own code (not numpy's, not a failing
    str() of a huge int), as one line that holds `fragment` (the argument it names)."""
    with pytest.raises(Exception) as caught:
        call()
    message = str(caught.value)
    assert type(caught.value) is error, f"{type(caught.value).__name__}: {message}"
    assert Path(caught.traceback[-1].path).resolve().is_relative_to(PACKAGE), caught.traceback[-1]
    assert "raise " in str(caught.traceback[-1].statement)
    assert "\n" not in message and len(message) <= 300 and fragment in message, message
    return message


def short(cases) -> list[str]:
    """Test ids: each case's first 40 characters (an int of over 4,300 digits, which repr refuses, as 'huge int')."""
    def one(case):
        try:
            return repr(case[0] if isinstance(case, tuple) and len(case) == 2 and isinstance(case[1], str) else case)[:40]
        except ValueError:
            return "huge int"
    return [one(case) for case in cases]


def reaches_the_gpu(call) -> None:
    with pytest.raises(NoGPUError, match=GPU_STEP):
        call()


# -- primbench.measure --------------------------------------------------------------------------------------
MEASURE_WRONG_TYPES = [
    ({"bytes": 1.5e9}, "bytes"), ({"bytes": "1GB"}, "bytes"), ({"bytes": True}, "bytes"), ({"bytes": numpy.float64(4096)}, "bytes"),
    ({"quantiles": "0.5"}, "quantiles"), ({"quantiles": [True]}, "quantiles"), ({"quantiles": [[0.5]]}, "quantiles"),
    ({"quantiles": numpy.array([["x"]])}, "quantiles"), ({"quantiles": fn}, "quantiles"), ({"label": 3}, "label"),
    ({"label": ["x"]}, "label"), ({"setup": "x"}, "setup"), ({"policy": {"min_samples": 10}}, "policy"),
    ({"min_samples": 10.0}, "timing.min_samples"), ({"min_samples": "10"}, "timing.min_samples"),
    ({"min_samples": True}, "timing.min_samples"), ({"warmup": numpy.bool_(True)}, "timing.warmup"),
    ({"max_noise": "0.01"}, "timing.max_noise"), ({"max_time_s": None}, "timing.max_time_s"),
]


@pytest.mark.parametrize("argument, fragment", MEASURE_WRONG_TYPES, ids=short(MEASURE_WRONG_TYPES))
def test_measure_arguments_of_the_wrong_type_are_type_errors(argument, fragment):
    refused(lambda: primbench.measure(fn, **argument), TypeError, fragment)


def test_measure_of_something_not_callable_is_a_type_error():
    refused(lambda: primbench.measure("x.sum()"), TypeError, "fn must be a callable")


MEASURE_OUT_OF_RANGE = [
    ({"bytes": 2**80}, "bytes must be at most 2^64"),  # the corpus: past the run file's BYTES_CEILING
    ({"bytes": 2**64 + 1}, "bytes must be at most 2^64"), ({"bytes": 10**5000}, "bytes must be at most"),
    ({"bytes": -(10**5000)}, "bytes must be positive"), ({"bytes": 0}, "bytes must be positive"),
    ({"quantiles": [1.5]}, "quantiles"), ({"quantiles": [math.nan]}, "quantiles"), ({"quantiles": -0.1}, "quantiles"),
    ({"quantiles": numpy.array([0.5, 2.0])}, "quantiles"), ({"quantiles": [10**5000]}, "quantiles"),
    ({"min_samples": -1}, "timing.min_samples"), ({"min_samples": 10**5000}, "timing.min_samples"),
    ({"max_noise": math.nan}, "timing.max_noise"), ({"max_noise": math.inf}, "timing.max_noise"),
    ({"warmup": -1}, "timing.warmup"), ({"max_time_s": 1e300}, "timing.max_time_s"),
    ({"min_sample": 5}, "unknown timing policy setting(s) min_sample"),
]


@pytest.mark.parametrize("argument, fragment", MEASURE_OUT_OF_RANGE, ids=short(MEASURE_OUT_OF_RANGE))
def test_measure_values_out_of_range_are_value_errors(argument, fragment):
    refused(lambda: primbench.measure(fn, **argument), ValueError, fragment)


MEASURE_TAKEN = [
    {"bytes": 2**64}, {"bytes": numpy.int64(4096)}, {"quantiles": numpy.array([0.2, 0.5, 0.8])}, {"quantiles": 0.5},
    {"quantiles": numpy.float64(0.5)}, {"quantiles": numpy.array(0.5)}, {"quantiles": []}, {"min_samples": numpy.int64(20)},
    {"max_noise": numpy.float32(0.01)}, {"label": "sum"},
]


@pytest.mark.parametrize("argument", MEASURE_TAKEN, ids=short(MEASURE_TAKEN))
def test_measure_takes_numpy_numbers_and_arrays_and_reaches_the_gpu(argument):
    reaches_the_gpu(lambda: primbench.measure(fn, **argument))
