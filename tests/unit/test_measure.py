"""primbench.measure: the arithmetic and argument checks on stand-ins (no GPU), then real timings of
cupy.sum (marker `gpu`)."""

import importlib
import sys
import types

import numpy as np
import pytest

from primbench.measuring.measure import Measured, measure
from primbench.measuring.policy import TimingPolicy
from primbench.measuring.timing import Measurement
from primbench.runfile import stats

# The module itself: the package's attribute `primbench.measure` is meant to be the function.
measure_module = importlib.import_module("primbench.measuring.measure")

COLD_MS = [0.2450, 0.2453, 0.2449, 0.2461, 0.2455, 0.2452, 0.2600, 0.2451, 0.2454, 0.2457]
PEAK_GBPS = 4800.0


class StandInTimer:
    """Returns known samples and remembers what it was asked to time."""

    def __init__(self, cold_ms, batch_ms=(), batch_size=None, stop="converged", batch_method=None):
        self.measurement = Measurement(cold_ms=list(cold_ms), batch_ms=list(batch_ms), batch_size=batch_size, stop=stop,
                                       batch_method=batch_method)
        self.calls = []

    def measure(self, operation, policy, setup=None):
        self.calls.append((operation, policy))
        self.setups = getattr(self, "setups", []) + [setup]
        return self.measurement


class StandInDevice:
    info = {"name": "Stand-in GPU", "peak_gbps": PEAK_GBPS}


@pytest.fixture
def stand_in(monkeypatch):
    """Put a stand-in timer in measure's per-process cache for GPU 0, with no CuPy stream to enter."""

    def install(**samples):
        timer = StandInTimer(**{"cold_ms": COLD_MS, **samples})
        monkeypatch.setitem(measure_module._SHARED, 0, (StandInDevice(), timer))
        monkeypatch.setattr(measure_module, "_callers_gpu_and_stream", lambda: _yields(0))
        return timer

    return install


class _yields:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


def test_median_noise_and_bandwidth_are_those_of_the_cold_samples(stand_in):
    stand_in()
    nbytes = 2**28 * 4
    result = measure(lambda: None, bytes=nbytes)
    median = float(np.median(COLD_MS))
    assert result.median_ms == pytest.approx(median)
    assert result.median_us == pytest.approx(median * 1e3)
    assert result.noise == pytest.approx(stats.robust_noise(COLD_MS))
    assert result.noise < 0.01  # the one slow outlier (0.26 ms) does not inflate the robust spread
    assert result.gbps == pytest.approx(nbytes / (median * 1e-3) / 1e9)
    assert result.pct_of_peak == pytest.approx(100 * result.gbps / PEAK_GBPS)
    assert result.peak_gbps == PEAK_GBPS and result.device == "Stand-in GPU" and result.bytes == nbytes
    assert result.cold_ms == COLD_MS and result.batch_ms == [] and result.batch_size is None and result.batch_method is None
    assert result.timed  # a measurement; the pytest plugin's --gpubench-disable returns one that is not


def test_the_one_line_summary_reads_time_spread_bandwidth_and_sample_count(stand_in):
    stand_in()
    text = str(measure(lambda: None, bytes=2**28 * 4))
    median = float(np.median(COLD_MS))
    gbps = 2**28 * 4 / (median * 1e-3) / 1e9
    assert text == (f"{median * 1e3:.1f} us ±{stats.robust_noise(COLD_MS) * 100:.1f} % {gbps:.0f} GB/s "
                    f"({100 * gbps / PEAK_GBPS:.1f} % of peak), 10 cold samples")
    assert "cold_ms" not in repr(measure(lambda: None))  # the raw samples stay out of a notebook's echo


def test_without_bytes_there_is_no_bandwidth(stand_in):
    stand_in()
    result = measure(lambda: None)
    assert result.gbps is None and result.pct_of_peak is None and result.bytes is None
    assert "GB/s" not in str(result)


def test_batch_samples_and_a_missed_noise_target_are_reported(stand_in):
    stand_in(cold_ms=[0.01, 0.012, 0.02], batch_ms=[0.004, 0.0041, 0.0039], batch_size=125, stop="max_time",
             batch_method="stream")
    result = measure(lambda: None)
    assert result.batch_ms == [0.004, 0.0041, 0.0039] and result.batch_size == 125
    assert result.batch_method == "stream"  # what a run file records, and the verdict rule reads
    assert result.batch_median_ms == pytest.approx(0.004)
    assert not result.converged
    assert "hot L2 4.00 us (batches of 125)" in str(result) and "noise target missed: max_time" in str(result)


def test_the_callable_and_the_cli_default_policy_reach_the_timer(stand_in):
    timer = stand_in()

    def operation():
        return None

    measure(operation)
    assert timer.calls == [(operation, TimingPolicy())]


def test_policy_overrides_replace_only_the_fields_named(stand_in):
    timer = stand_in()
    measure(lambda: None, min_samples=50, max_time_s=5.0)
    assert timer.calls[-1][1] == TimingPolicy(min_samples=50, max_time_s=5.0)
    measure(lambda: None, policy=TimingPolicy(warmup=7, max_noise=0.01), min_samples=20)
    assert timer.calls[-1][1] == TimingPolicy(warmup=7, max_noise=0.01, min_samples=20)


@pytest.mark.parametrize("fn", [42, None, "x.sum()"])
def test_a_non_callable_is_a_type_error(stand_in, fn):
    timer = stand_in()
    with pytest.raises(TypeError, match="callable"):
        measure(fn)
    assert timer.calls == []


@pytest.mark.parametrize("nbytes, error", [(0, ValueError), (-4, ValueError), (1.5e9, TypeError), (True, TypeError),
                                           ("1GB", TypeError)])
def test_bytes_must_be_a_positive_whole_number(stand_in, nbytes, error):
    timer = stand_in()
    with pytest.raises(error, match="bytes"):
        measure(lambda: None, bytes=nbytes)
    assert timer.calls == []


def test_numpy_integer_bytes_are_accepted(stand_in):
    stand_in()
    assert measure(lambda: None, bytes=np.int64(4096)).bytes == 4096


def test_an_unknown_policy_setting_is_refused_with_the_valid_names(stand_in):
    timer = stand_in()
    with pytest.raises(ValueError) as caught:
        measure(lambda: None, min_sample=5)
    message = str(caught.value)
    assert "min_sample" in message
    for name in ("min_samples", "max_noise", "max_median_error", "max_time_s", "warmup", "batch_below_us"):
        assert name in message
    assert timer.calls == []


@pytest.mark.parametrize("setting", [{"min_samples": 1}, {"max_noise": 5}, {"max_time_s": -1.0}])
def test_a_policy_value_the_config_would_refuse_is_refused(stand_in, setting):
    timer = stand_in()
    with pytest.raises(ValueError, match=next(iter(setting))):
        measure(lambda: None, **setting)
    assert timer.calls == []


def test_a_policy_value_of_a_type_the_config_would_refuse_is_a_type_error(stand_in):
    timer = stand_in()
    with pytest.raises(TypeError, match="timing.min_samples: must be a whole number, not 10.0"):
        measure(lambda: None, min_samples=10.0)
    assert timer.calls == []


def test_a_bad_value_in_the_policy_itself_is_refused_as_the_config_words_it(stand_in):
    timer = stand_in()
    with pytest.raises(ValueError, match=r"primbench.measure: timing.warmup: -1 is below the minimum 0"):
        measure(lambda: None, policy=TimingPolicy(warmup=-1))
    with pytest.raises(ValueError, match=r"primbench.measure: timing.min_samples: needs at least 3"):
        measure(lambda: None, min_samples=2)
    assert timer.calls == []


def test_a_policy_that_is_not_a_timing_policy_is_a_type_error(stand_in):
    with pytest.raises(TypeError, match="TimingPolicy"):
        measure(lambda: None, policy={"min_samples": 10})


def test_device_and_timer_are_built_once_per_gpu(monkeypatch):
    import primbench.measuring.device
    import primbench.measuring.timing

    built = []

    class CountingDevice:
        l2_bytes = 50 << 20

        def __init__(self, index):
            built.append(("device", index))

    monkeypatch.setattr(primbench.measuring.device, "Device", CountingDevice)
    monkeypatch.setattr(primbench.measuring.timing, "Timer", lambda l2_bytes: built.append(("timer", l2_bytes)) or "timer")
    monkeypatch.setattr(measure_module, "_SHARED", {})
    first = measure_module._shared(1)
    assert measure_module._shared(1) is first
    assert built == [("device", 1), ("timer", 50 << 20)]


def test_torch_is_used_only_when_imported_and_on_cuda(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert measure_module._initialised_torch() is None
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=lambda: False))
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert measure_module._initialised_torch() is None
    fake.cuda.is_initialized = lambda: True
    assert measure_module._initialised_torch() is fake


def test_primbench_measure_stays_callable_after_the_module_is_imported(stand_in):
    """The first call imports primbench.measuring.measure; the package's function must survive that, or a
    notebook's second call would fail with 'module object is not callable'."""
    import primbench
    import primbench.measuring.measure  # noqa: F401

    stand_in()
    assert isinstance(primbench.measure(lambda: None), Measured)
    assert isinstance(primbench.measure(lambda: None), Measured)


def test_without_a_gpu_measure_says_so_in_one_line(monkeypatch):
    from primbench.errors import NoGPUError

    def no_gpu():
        raise NoGPUError("no NVIDIA GPU here; to see a real run, render the bundled one: make report")

    monkeypatch.setattr("primbench.measuring.device.require_gpu", no_gpu)
    with pytest.raises(NoGPUError, match="no NVIDIA GPU here"):
        measure(lambda: None)


def test_help_shows_the_real_signature():
    import inspect

    import primbench

    parameters = inspect.signature(primbench.measure).parameters
    assert list(parameters)[:6] == ["fn", "bytes", "setup", "quantiles", "label", "policy"]
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in ("bytes", "setup", "label"))


def test_quantiles_label_and_to_dict(stand_in):
    import json

    timer = stand_in()
    result = measure(lambda: None, bytes=4 << 20, quantiles=(0.2, 0.5, 0.8), label="sum of 1M floats")
    assert result.quantiles[0.5] == pytest.approx(float(np.quantile(COLD_MS, 0.5)))
    assert result.quantiles[0.2] <= result.quantiles[0.5] <= result.quantiles[0.8]
    assert str(result).startswith("sum of 1M floats: ") and "\n" not in str(result)
    as_dict = json.loads(json.dumps(result.to_dict()))
    assert as_dict["label"] == "sum of 1M floats" and as_dict["cold_ms"] == COLD_MS and as_dict["quantiles"]["0.8"] > 0
    with pytest.raises(ValueError, match="quantiles"):
        measure(lambda: None, quantiles=(1.5,))
    assert len(timer.calls) == 1


def test_setup_reaches_the_timer_and_must_be_callable(stand_in):
    timer = stand_in()

    def reset():
        pass

    measure(lambda: None, setup=reset)
    assert timer.setups == [reset]
    with pytest.raises(TypeError, match="setup"):
        measure(lambda: None, setup=3)


def test_with_neither_cupy_nor_torch_one_line_says_what_to_install(monkeypatch):
    monkeypatch.setattr("primbench.measuring.device.require_gpu", lambda: None)  # a GPU, but no library
    monkeypatch.setattr(measure_module, "_cupy", lambda: None)
    monkeypatch.setattr(measure_module, "_initialised_torch", lambda: None)
    with pytest.raises(ModuleNotFoundError) as caught:
        measure(lambda: None)
    message = str(caught.value)
    assert "\n" not in message and "pip install 'primbench[cuda13]'" in message and "PyTorch" in message


def test_without_cupy_a_torch_callable_goes_to_the_torch_timer(monkeypatch):
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_device=lambda: 0))
    monkeypatch.setattr("primbench.measuring.device.require_gpu", lambda: None)
    monkeypatch.setattr(measure_module, "_cupy", lambda: None)
    monkeypatch.setattr(measure_module, "_initialised_torch", lambda: fake_torch)
    timer = StandInTimer(cold_ms=COLD_MS)
    monkeypatch.setitem(measure_module._SHARED, ("torch", 0), (StandInDevice(), timer))
    assert measure(lambda: None).median_ms == pytest.approx(float(np.median(COLD_MS)))
    assert len(timer.calls) == 1


class RecordingCalls:
    """gpu_calls' interface on the host: every call in order, events that elapse 1 ms."""

    name = "recording"

    def __init__(self):
        self.log = []

    def buffer(self, nbytes):
        return bytearray(8)

    def memset(self, buffer):
        self.log.append("flush")

    def hold(self, microseconds):
        self.log.append("hold")

    def event_pair(self):
        return object(), object()

    def record(self, event):
        self.log.append("event")

    def elapsed_ms(self, start, end):
        return 1.0

    def wait(self, event):
        pass

    def synchronize(self):
        self.log.append("sync")

    def capture(self, operation, count):
        return None

    def launch(self, graph):
        raise AssertionError


def test_the_protocol_is_the_same_through_any_back_end_and_setup_is_never_timed():
    from primbench.measuring.timing import Timer

    calls = RecordingCalls()
    timer = Timer(1 << 20, calls)
    policy = TimingPolicy(min_samples=4, max_samples=4, warmup=1, min_time_s=0.0, batch_below_us=1e9)
    result = timer.measure(lambda: calls.log.append("op"), policy, setup=lambda: calls.log.append("setup"))
    assert result.cold_ms == [1.0] * 4 and result.batch_ms == []  # a setup means no batches
    samples = _letters(calls.log)
    # setup, flush, the host waits for the flush (as nvbench does), hold, start event, the op, end event
    assert samples.endswith("SFWHEoE" * 4)
    assert samples.startswith("So")  # the warm-up also gets its setup


def test_a_probe_changes_one_step_of_the_cold_sample_by_passing_a_protocol():
    from primbench.measuring.timing import ColdProtocol, Timer

    class SizedCalls(RecordingCalls):
        def buffer(self, nbytes):
            return memoryview(bytearray(nbytes))

        def memset(self, buffer):
            self.log.append(f"flush {buffer.nbytes}")

    policy = TimingPolicy(min_samples=4, max_samples=4, warmup=0, min_time_s=0.0, batch_below_us=0.0)
    calls = SizedCalls()
    timer = Timer(1 << 20, calls)  # a flush buffer of 2 x L2: 2 MiB
    timer.measure(lambda: calls.log.append("op"), policy, protocol=ColdProtocol(flush_l2s=1.0, wait_for_flush=False))
    # 1 x L2 of the buffer, and no wait for it: flush, hold, start event, the op, end event
    assert calls.log[-20:] == [f"flush {1 << 20}", "hold", "event", "op", "event"] * 4
    assert f"flush {2 << 20}" not in calls.log
    calls.log.clear()
    timer.measure(lambda: calls.log.append("op"), policy, protocol=ColdProtocol(flush=lambda: calls.log.append("own flush")))
    assert _letters(calls.log).endswith("oWHEoE" * 4) and calls.log.count("own flush") == 4
    assert not any(entry.startswith("flush") for entry in calls.log)  # the memset was not taken as well
    for beyond_the_buffer in (0.0, 2.5, float("nan")):
        with pytest.raises(ValueError, match="flush_l2s"):
            ColdProtocol(flush_l2s=beyond_the_buffer)


def _letters(log) -> str:
    letters = {"setup": "S", "flush": "F", "sync": "W", "hold": "H", "event": "E"}
    return "".join(letters.get(entry, "o") for entry in log)


def test_interleaved_samples_wait_for_the_flush_before_the_hold_as_cold_samples_do():
    from primbench.measuring.timing import Timer

    calls = RecordingCalls()
    timer = Timer(1 << 20, calls)
    taken = timer.interleaved([lambda: calls.log.append("a"), lambda: calls.log.append("b")], rounds=3, warmup=0)
    assert taken.samples_ms == [[1.0] * 3, [1.0] * 3] and taken.clock_mhz == [[], []]  # no stamps on this back end
    timed = _letters(calls.log)
    assert timed.endswith("FWHEoE" * 6) and timed.count("FWHEoE") == 6


# ---------------------------------------------------------------------------------------------
# On the GPU
# ---------------------------------------------------------------------------------------------

N = 2**24


@pytest.fixture(scope="module")
def vectors():
    import cupy

    rng = cupy.random.default_rng(5)
    return rng.random(N, dtype=cupy.float32), rng.random(N, dtype=cupy.float32)


@pytest.mark.gpu
@pytest.mark.timed
def test_cupy_sum_measures_a_plausible_bandwidth(vectors):
    x, _ = vectors
    result = measure(lambda: x.sum(), bytes=x.nbytes)
    assert result.median_ms > 0 and len(result.cold_ms) >= TimingPolicy().min_samples
    assert 1.0 <= result.pct_of_peak <= 110.0, str(result)


@pytest.mark.gpu
@pytest.mark.timed
def test_twice_the_work_measures_at_least_one_and_a_half_times_longer(vectors):
    # Two arrays, not one summed twice: the second pass over one array could find part of it in L2.
    x, y = vectors
    once = measure(lambda: x.sum())
    twice = measure(lambda: (x.sum(), y.sum()))
    assert twice.median_ms >= 1.5 * once.median_ms, f"once {once}, twice {twice}"


@pytest.mark.gpu
@pytest.mark.timed
def test_a_torch_callable_is_timed_on_torchs_current_stream():
    torch = pytest.importorskip("torch")
    import cupy

    x = torch.rand(N, device="cuda", dtype=torch.float32)
    stream = torch.cuda.Stream()
    streams_seen = []

    def operation():
        streams_seen.append(cupy.cuda.get_current_stream().ptr)
        return x.sum()

    with torch.cuda.stream(stream):
        result = measure(operation, bytes=x.numel() * 4)
    assert set(streams_seen) == {stream.cuda_stream}
    assert 1.0 <= result.pct_of_peak <= 110.0, str(result)


@pytest.mark.gpu
@pytest.mark.timed
def test_a_torch_callable_with_cupy_hidden_times_as_through_cupy(repo):
    """The torch back end (no CuPy at all) against the CuPy one, on the same torch kernel: one
    protocol, so within 1 %."""
    pytest.importorskip("torch")
    import subprocess

    probe = ("import sys, json\n{hide}import torch, primbench\n"
             "x = torch.rand(2**28, device='cuda')\n"
             "r = primbench.measure(lambda: x.sum(), bytes=x.numel() * 4, min_samples=50, max_time_s=3.0)\n"
             "print(json.dumps([r.median_ms, sys.modules.get('cupy') is not None]))")
    medians = {}
    for name, hide in (("cupy", ""), ("torch", "sys.modules['cupy'] = None\n")):
        done = subprocess.run([sys.executable, "-c", probe.format(hide=hide)], cwd=repo, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        medians[name], imported = __import__("json").loads(done.stdout.splitlines()[-1])
        assert imported == (name == "cupy")
    ratio = medians["torch"] / medians["cupy"]
    print(f"torch.sum of 2^28 floats: through torch {medians['torch'] * 1e3:.1f} us, through CuPy "
          f"{medians['cupy'] * 1e3:.1f} us, ratio {ratio:.4f}")
    assert abs(ratio - 1) < 0.01, medians
