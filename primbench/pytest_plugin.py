"""A pytest plugin: the `gpubench` fixture times a GPU callable by primbench's protocol inside an
ordinary test, and a saved baseline gates on it by the rule `primbench check` applies. Registered
through the `pytest11` entry point, so it is there once primbench is installed.

    def test_sum_is_fast(gpubench):
        x = cupy.random.random(2**25, dtype=cupy.float32)
        result = gpubench(lambda: x.sum(), bytes=x.nbytes)   # a primbench.measure result
        assert result.converged

    pytest --gpubench-save main            # keeps .gpubench/main.jsonl, a primbench run file
    pytest --gpubench-compare main         # a test the verdict engine calls SLOWER than main fails
    pytest --gpubench-json run.jsonl       # a run file: primbench report/compare/check/export read it
    pytest --gpubench-disable              # the tests run, each callable once, nothing timed or written

        gpubench(fn, bytes=x.nbytes, min_light=0.9)   # also fail under 90 % of these bytes' speed of light

`min_light` is a floor that travels across GPU models, with no baseline: the test fails in one line
when the timing's median is under that share of the speed of light of its bytes on the GPU that runs
it (a cold pure read of `bytes`, or a copy with traffic="read_write"; measuring/light.py, measured
once per session for each byte count, as `check --min-light` reads a run's pct_sol).

Each measurement is one case of the run file: op "pytest", the test's id (and its label) as the
variant. Without a GPU (or CuPy and PyTorch) a test that uses the fixture is skipped, in one line.

How it gates (primbench/pytest_gate.py): each timing is judged against the baseline's record of
the same test by the one verdict engine (compare/verdicts.judge; the README's table "The verdict
rule"), and a SLOWER verdict fails the test in one line. primbench.measure launches its batches
from the host, so the engine judges a timing on its cold samples (5 %, and at least 4 us).
`--gpubench-fail=STAT:LIMIT` (e.g. median:5%), given explicitly, replaces the engine with that rule
on the cold samples. A baseline measured by another protocol (runfile/protocol.py) marks the
verdicts whose figure it moves, fails none of them, and the summary says so once.

A baseline from another GPU model is refused, as `check` refuses it. The GPU is known only when
the first timing is taken, so at each process's first gpubench call, before anything is timed,
the names are compared; where they differ, every gpubench call fails in the same one line
without timing (no verdict would mean anything, and a skip would pass the gate silently), the
tests that do not time run as usual, and nothing is written, as nothing was timed.

Every output path is checked before any test runs (a usage error, exit code 4). A write that
fails at the end (a full disk) is one line, the other output is still written, and the session's
exit status becomes 1 where it was 0: a CI job must not pass without the baseline it asked for.
Under pytest-xdist each worker hands its timings to the controller (config.workeroutput), which
alone writes the files and prints the summary.

`--gpubench-disable`, as pytest-benchmark's --benchmark-disable, checks correctness alone: each
gpubench call runs its setup and callable once and returns an untimed result
(pytest_records.Untimed: `converged` True, so `assert result.converged` holds; `timed` False;
`value` what the callable returned; the figures NaN). Nothing is recorded, compared or written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from primbench.pytest_records import Timing, Untimed, case_of, code_hash, record_of, run_file_text

DEFAULT_STORAGE = ".gpubench"
_STATE = pytest.StashKey["_State"]()


@dataclass
class _State:
    """This process's gpubench session: its timings (on the controller, the workers' too), the
    baseline it is judged against, the GPU-model refusal once the first call found one, and the
    lines the summary adds."""

    baseline: object = None  # a pytest_gate.Baseline under --gpubench-compare
    timings: list[Timing] = field(default_factory=list)
    variants: set[str] = field(default_factory=set)  # this process's case variants: a run file holds each once
    test_hashes: dict = field(default_factory=dict)  # {test function: its code hash}: hashed once, not per call
    gpu_checked: bool = False
    refusal: str | None = None
    untimed: int = 0  # calls run once under --gpubench-disable
    workers: int = 0  # xdist workers that sent timings
    notes: list[str] = field(default_factory=list)  # what was written, or why not
    lights: dict = field(default_factory=dict)  # {(traffic, bytes): its speed of light in ms}: measured once a session


def pytest_addoption(parser):
    group = parser.getgroup("gpubench", "primbench: GPU timings in tests (the gpubench fixture)")
    group.addoption("--gpubench-save", metavar="NAME", help="save this session's timings as baseline NAME "
                    "(<storage>/NAME.jsonl, a primbench run file)")
    group.addoption("--gpubench-compare", metavar="NAME", help="judge each timing against baseline NAME by "
                    "primbench's verdict rule (as `primbench check`), and fail a test it calls SLOWER")
    group.addoption("--gpubench-fail", metavar="STAT:LIMIT", help="instead of the verdict rule, fail a test whose "
                    "STAT (median, mean or min of the cold samples) moved past LIMIT, a percentage or microseconds "
                    "(e.g. median:5%%, median:20us)")
    group.addoption("--gpubench-json", metavar="FILE", help="write this session's timings as a primbench run file")
    group.addoption("--gpubench-storage", metavar="DIR", default=DEFAULT_STORAGE, help="where baselines are kept "
                    "(default: %(default)s)")
    group.addoption("--gpubench-disable", action="store_true", help="run each timed callable once, untimed: the "
                    "tests check correctness only, nothing is recorded, compared or written")


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    """Check every option and output path, and read the baseline, before any test runs."""
    from primbench import pytest_gate
    from primbench.errors import UserError

    state = config.stash[_STATE] = _State()
    if config.pluginmanager.hasplugin("xdist") and not _is_worker(config):
        config.pluginmanager.register(_WorkerTimings(state), "gpubench-xdist")
    try:
        pytest_gate.check_override(config.getoption("--gpubench-fail"))
        if config.getoption("--gpubench-disable"):
            return
        if not _is_worker(config):  # the controller alone writes
            _check_outputs(config)
        name = config.getoption("--gpubench-compare")
        if name:
            from primbench.pytest_records import session_header

            path = pytest_gate.storage_file(config.getoption("--gpubench-storage"), name)
            state.baseline = pytest_gate.load_baseline(path, name, session_header())
    except UserError as exc:
        raise pytest.UsageError(str(exc).removeprefix("primbench: ")) from None


def _targets(config) -> list[tuple[str, object]]:
    """(option, path) of each file this session writes."""
    from primbench import pytest_gate

    targets = []
    if config.getoption("--gpubench-json"):
        targets.append(("--gpubench-json", config.getoption("--gpubench-json")))
    if config.getoption("--gpubench-save"):
        targets.append(("--gpubench-save", pytest_gate.storage_file(config.getoption("--gpubench-storage"),
                                                                    config.getoption("--gpubench-save"))))
    return targets


def _check_outputs(config) -> None:
    from primbench.errors import UserError
    from primbench.outputs import check_writable

    for option, path in _targets(config):
        try:
            check_writable(path)
        except UserError as exc:
            raise UserError(f"{option}: {str(exc).removeprefix('primbench: ')}") from None


class _WorkerTimings:
    """Under pytest-xdist, on the controller: each worker's timings as it finishes. Registered only
    where xdist is loaded: pytest knows pytest_testnodedown only from xdist."""

    def __init__(self, state: _State):
        self.state = state

    @pytest.hookimpl
    def pytest_testnodedown(self, node, error):
        sent = getattr(node, "workeroutput", {}).get("gpubench") or {}
        timings = [Timing.from_json(obj) for obj in sent.get("timings", [])]
        self.state.timings.extend(timings)
        self.state.workers += bool(timings)
        self.state.untimed += sent.get("untimed", 0)
        self.state.refusal = self.state.refusal or sent.get("refusal")


class GpuBench:
    """The fixture's value: call it to time a callable, as primbench.measure does."""

    def __init__(self, request):
        self._request = request
        self._state: _State = request.config.stash[_STATE]

    def __call__(self, fn, *, bytes=None, setup=None, label=None, min_light=None, traffic="read", **policy):
        from primbench.errors import NoGPUError
        from primbench.measuring.measure import device_info, measure

        config = self._request.config
        floor = _check_floor(min_light, traffic, bytes)
        if config.getoption("--gpubench-disable"):
            return self._untimed(fn, setup, label, bytes)
        try:
            device = device_info()
        except (NoGPUError, ModuleNotFoundError) as exc:
            pytest.skip(f"gpubench: {str(exc).removeprefix('primbench: ')}")
        self._refuse_another_gpu(device)
        result = measure(fn, bytes=bytes, setup=setup, label=label, **policy)
        state, function = self._state, self._request.function
        case = case_of(self._request.node.nodeid, label, bytes, state.variants)
        state.variants.add(case.variant)
        if function not in state.test_hashes:
            state.test_hashes[function] = code_hash(function)
        record = record_of(case, result, state.test_hashes[function])
        why, verdict = self._judge(record, device)
        state.timings.append(Timing(record, device, str(result), verdict))
        if why:
            pytest.fail(why, pytrace=False)
        if floor is not None:
            self._hold_the_floor(result, case.variant, floor, traffic, bytes)
        return result

    def _hold_the_floor(self, result, name: str, floor: float, traffic: str, nbytes: int) -> None:
        """Fail the test in one line when `result` runs under `floor` of its bytes' speed of light,
        measured on this GPU once per (traffic, bytes) a session (measuring/light.py)."""
        from primbench.compare.light_floor import percent
        from primbench.measuring.light import light_ms

        lights = self._state.lights
        if (traffic, nbytes) not in lights:
            lights[(traffic, nbytes)] = light_ms(nbytes, traffic)
        light = lights[(traffic, nbytes)]
        share = light / result.median_ms
        if share < floor:
            pytest.fail(f"gpubench: {name} runs at {100 * share:.1f} % of its speed of light ({light * 1e3:.1f} us for a "
                        f"cold {'read' if traffic == 'read' else 'copy'} of {nbytes:,} bytes on this GPU; "
                        f"{result.median_ms * 1e3:.1f} us), under min_light={floor:g} ({percent(floor)})", pytrace=False)

    def _untimed(self, fn, setup, label, nbytes) -> Untimed:
        if setup is not None:
            setup()
        self._state.untimed += 1
        return Untimed(label, nbytes, fn())

    def _refuse_another_gpu(self, device: dict) -> None:
        """At this process's first call, before timing: a baseline of another GPU model fails
        this call and every later one in one line (the module docstring says why)."""
        from primbench import pytest_gate

        state = self._state
        if not state.gpu_checked and state.baseline is not None:
            state.refusal = pytest_gate.other_gpu(state.baseline, device)
        state.gpu_checked = True
        if state.refusal:
            pytest.fail(state.refusal, pytrace=False)

    def _judge(self, record, device: dict) -> tuple[str | None, str]:
        """(why the test fails or None, the engine's verdict or "") for one timing."""
        from primbench import pytest_gate

        baseline, config = self._state.baseline, self._request.config
        if baseline is None or record.key not in baseline.records:
            return None, ""
        rule = config.getoption("--gpubench-fail")
        if rule:  # the user's explicit rule replaces the engine
            why = pytest_gate.regression(record.cold_ms, baseline.records[record.key].cold_ms, rule)
            return (f"gpubench: {record.case.variant} is slower than baseline {baseline.name}: {why}" if why else None), ""
        pair = pytest_gate.judged(baseline, record, device)
        verdict = f"{pair.verdict} (protocol changed: not gated)" if pair.protocol_changed else pair.verdict
        return (pytest_gate.slower_line(pair, baseline) if pair.regressed else None), verdict


def _check_floor(min_light, traffic, nbytes) -> float | None:
    """min_light as a fraction, checked with its companions before anything is timed (a TypeError or
    ValueError naming the argument, as primbench.measure's own checks), by check --min-light's rule."""
    from primbench.compare.light_floor import is_fraction
    from primbench.measuring.light import TRAFFIC

    if min_light is None:
        return None
    if isinstance(min_light, bool) or not isinstance(min_light, (int, float)):
        raise TypeError(f"min_light must be a fraction of the speed of light (0.9 is 90 %), not {type(min_light).__name__}")
    if not is_fraction(min_light):
        raise ValueError(f"min_light must be above 0 and at most 1 (0.9 is 90 %), not {min_light!r}")
    if traffic not in TRAFFIC:
        raise ValueError(f"traffic must be 'read' or 'read_write', not {str(traffic)[:40]!r}")
    if nbytes is None:
        raise TypeError("min_light needs bytes=: the speed of light is that of the bytes one call moves")
    return float(min_light)


@pytest.fixture
def gpubench(request):
    """Time a GPU callable by primbench's protocol: gpubench(fn, bytes=None, setup=None, label=None,
    **policy) returns primbench.measure's result, recorded for --gpubench-save/-compare/-json
    (under --gpubench-disable, an untimed result: pytest_records.Untimed)."""
    from primbench.errors import NoGPUError
    from primbench.measuring.device import require_gpu

    try:  # before the test's body, which would ask CUDA for memory first
        require_gpu()
    except NoGPUError as exc:
        pytest.skip(f"gpubench: {exc}")
    return GpuBench(request)


def pytest_sessionfinish(session):
    """A worker hands its timings to the controller; the controller (or a session without xdist)
    writes each output, each on its own: one that fails is one line and spares the other."""
    from primbench.errors import UserError
    from primbench.outputs import write_atomically

    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    if _is_worker(config):
        config.workeroutput["gpubench"] = {"timings": [t.to_json() for t in state.timings], "untimed": state.untimed,
                                           "refusal": state.refusal}
        return
    if not state.timings:
        return
    text = run_file_text(state.timings)
    for option, target in _targets(config):
        try:
            write_atomically(target, text)
            state.notes.append(f"gpubench: {len(state.timings)} timings written to {target}")
        except UserError as exc:
            state.notes.append(f"gpubench: {option} not written: {str(exc).removeprefix('primbench: ')}")
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_STATE, None)
    if state is None or _is_worker(config) or not (state.timings or state.untimed or state.refusal):
        return
    write = terminalreporter.write_line
    terminalreporter.section("gpubench")
    if state.untimed:
        write(f"gpubench: {state.untimed} calls ran once, untimed (--gpubench-disable): nothing recorded or written")
    for timing in state.timings:
        write(f"{timing.record.case.variant}: {timing.line}" + (f"  [{timing.verdict}]" if timing.verdict else ""))
    if state.workers:
        write(f"gpubench: {len(state.timings)} timings from {state.workers} workers")
    for line in _baseline_lines(config, state):
        write(line)
    for line in state.notes:
        write(line)


def _baseline_lines(config, state: _State) -> list[str]:
    """What the summary says of the baseline: a refused GPU model, the protocol line, the
    verdicts counted, and the timings it does not hold."""
    baseline = state.baseline
    if baseline is None:
        return []
    if state.refusal:
        return [state.refusal]
    rule = config.getoption("--gpubench-fail")
    lines = []
    if baseline.protocol_line and not rule:
        lines.append(f"gpubench: {baseline.protocol_line}")
    elif baseline.protocol_changes:  # the user's rule gates whatever measured the samples
        changed = "; ".join(dict.fromkeys(baseline.protocol_changes.values()))
        lines.append(f"gpubench: protocol changed since the baseline ({changed}); --gpubench-fail gates all the same")
    counts: dict[str, int] = {}
    for timing in state.timings:
        if timing.verdict:
            counts[timing.verdict] = counts.get(timing.verdict, 0) + 1
    if counts:
        order = {verdict: rank for rank, verdict in enumerate(("SLOWER", "FASTER", "UNSURE", "BELOW_FLOOR", "SAME"))}
        listed = ", ".join(f"{counts[v]} {v}" for v in sorted(counts, key=lambda v: order.get(v, len(order))))  # what changed first
        lines.append(f"gpubench: against baseline {baseline.name}: {listed} (README: \"The verdict rule\")")
    unmatched = [t.record.case.variant for t in state.timings if t.record.key not in baseline.records]
    if unmatched:
        lines.append(f"gpubench: not in baseline {baseline.name}: {len(unmatched)} (e.g. {unmatched[0]}); "
                     "save it again to gate them")
    if rule:
        lines.append(f"gpubench: gated by --gpubench-fail={rule}, not the verdict rule")
    return lines
