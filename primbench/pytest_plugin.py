"""A pytest plugin: the `gpubench` fixture times a GPU callable by primbench's protocol inside an
ordinary test, and a baseline gates on it, as pytest-benchmark users expect. Registered through the
`pytest11` entry point, so it is there once primbench is installed.

    def test_sum_is_fast(gpubench):
        x = cupy.random.random(2**25, dtype=cupy.float32)
        result = gpubench(lambda: x.sum(), bytes=x.nbytes)   # a primbench.measure result
        assert result.converged

    pytest --gpubench-save main                      # keeps .gpubench/main.jsonl, a primbench run file
    pytest --gpubench-compare main --gpubench-fail=median:5%    # a test whose median moved more fails
    pytest --gpubench-json run.jsonl                 # a run file: primbench report/compare/check/export read it

Each measurement is one case of the run file: op "pytest", the test's id (and its label) as the
variant. Without a GPU (or CuPy and PyTorch) a test that uses the fixture is skipped, in one line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

OP = "pytest"
DEFAULT_STORAGE = ".gpubench"
DEFAULT_FAIL = "median:5%"
_RESULTS = pytest.StashKey[list]()
_BASELINE = pytest.StashKey[dict]()
_FAIL = re.compile(r"^(median|mean|min):(\d+(?:\.\d+)?)(%|us)$")


def pytest_addoption(parser):
    group = parser.getgroup("gpubench", "primbench: GPU timings in tests (the gpubench fixture)")
    group.addoption("--gpubench-save", metavar="NAME", help="save this session's timings as baseline NAME "
                    "(<storage>/NAME.jsonl, a primbench run file)")
    group.addoption("--gpubench-compare", metavar="NAME", help="compare each timing with baseline NAME, and fail "
                    "a test whose timing moved past --gpubench-fail")
    group.addoption("--gpubench-fail", metavar="STAT:LIMIT", default=DEFAULT_FAIL, help="how far a timing may move "
                    "past the baseline: median, mean or min, by a percentage or microseconds "
                    "(default: %(default)s; e.g. median:20us)")
    group.addoption("--gpubench-json", metavar="FILE", help="write this session's timings as a primbench run file")
    group.addoption("--gpubench-storage", metavar="DIR", default=DEFAULT_STORAGE, help="where baselines are kept "
                    "(default: %(default)s)")


def pytest_configure(config):
    config.stash[_RESULTS] = []
    text = config.getoption("--gpubench-fail")
    if not _FAIL.match(text or ""):
        raise pytest.UsageError(f"--gpubench-fail {text[:60]!r}: give STAT:LIMIT, STAT one of median, mean, min and "
                                "LIMIT like 5% or 20us (e.g. --gpubench-fail=median:5%)")
    name = config.getoption("--gpubench-compare")
    config.stash[_BASELINE] = _load_baseline(_storage_file(config, name)) if name else {}


def _storage_file(config, name: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name):
        raise pytest.UsageError(f"gpubench baseline name {name[:60]!r}: use letters, digits, '.', '_' and '-'")
    return Path(config.getoption("--gpubench-storage")) / f"{name}.jsonl"


def _load_baseline(path: Path) -> dict:
    """{case key: cold samples} of a saved baseline; a missing or unreadable one is a usage error."""
    from primbench.errors import UserError
    from primbench.runfile.io import load_run

    if not path.is_file():
        raise pytest.UsageError(f"--gpubench-compare: no baseline {path}; save one first with --gpubench-save")
    try:
        run = load_run(path)
    except UserError as exc:
        raise pytest.UsageError(f"--gpubench-compare: {exc}") from None
    return {record.key: list(record.cold_ms) for record in run.cases if record.ok}


def _statistic(name: str, samples_ms) -> float:
    import numpy

    return float({"median": numpy.median, "mean": numpy.mean, "min": numpy.min}[name](samples_ms))


def regression(new_ms, base_ms, rule: str) -> str | None:
    """Why `new_ms` fails `rule` (e.g. 'median:5%') against `base_ms`, in words; None when it passes."""
    stat, limit, unit = _FAIL.match(rule).groups()
    new, base = _statistic(stat, new_ms), _statistic(stat, base_ms)
    moved = (new / base - 1) * 100 if unit == "%" else (new - base) * 1e3
    if moved <= float(limit):
        return None
    return (f"{stat} {new * 1e3:,.2f} us against the baseline's {base * 1e3:,.2f} us: "
            f"{new / base - 1:+.1%} ({(new - base) * 1e3:+,.2f} us), past --gpubench-fail={rule}")


class GpuBench:
    """The fixture's value: call it to time a callable, as primbench.measure does."""

    def __init__(self, request):
        self._request = request

    def __call__(self, fn, *, bytes=None, setup=None, label=None, **policy):
        from primbench.errors import NoGPUError
        from primbench.measuring.measure import device_info, measure

        try:
            result = measure(fn, bytes=bytes, setup=setup, label=label, **policy)
        except (NoGPUError, ModuleNotFoundError) as exc:
            pytest.skip(f"gpubench: {str(exc).removeprefix('primbench: ')}")
        config = self._request.config
        case = _case_of(self._request.node.nodeid, label, bytes, config.stash[_RESULTS])
        config.stash[_RESULTS].append((case, result, device_info(), _code_hash(self._request)))
        baseline = config.stash[_BASELINE]
        if case.key in baseline:
            why = regression(result.cold_ms, baseline[case.key], config.getoption("--gpubench-fail"))
            if why:
                pytest.fail(f"gpubench: {case.variant} is slower than baseline "
                            f"{config.getoption('--gpubench-compare')}: {why}", pytrace=False)
        return result


@pytest.fixture
def gpubench(request):
    """Time a GPU callable by primbench's protocol: gpubench(fn, bytes=None, setup=None, label=None,
    **policy) returns primbench.measure's result, recorded for --gpubench-save/-compare/-json."""
    from primbench.errors import NoGPUError
    from primbench.measuring.device import require_gpu

    try:  # before the test's body, which would ask CUDA for memory first
        require_gpu()
    except NoGPUError as exc:
        pytest.skip(f"gpubench: {exc}")
    return GpuBench(request)


def _code_hash(request) -> str:
    """The test function's source, hashed: a baseline then shows "code changed" where the test did
    (as a variant's hash does for a kernel)."""
    import hashlib
    import inspect

    try:
        text = inspect.getsource(request.function)
    except (OSError, TypeError):
        text = request.node.nodeid
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _case_of(nodeid: str, label, nbytes, recorded: list):
    """The timing's case: the test's id and label as the variant, the bytes as n. A test that times
    twice under one name gets '#2', '#3', ...: a run file holds each key once."""
    from primbench.runfile.case_id import CaseId

    name = nodeid.replace("/", ".") + (f"[{label}]" if label else "")
    taken = {entry[0].variant for entry in recorded}
    unique, count = name, 1
    while unique in taken:
        count += 1
        unique = f"{name}#{count}"
    return CaseId(OP, unique, "any", int(nbytes or 1), None, None)  # n: the bytes (a case's n is at least 1)


def pytest_sessionfinish(session):
    config = session.config
    results = config.stash.get(_RESULTS, [])
    targets = [Path(config.getoption("--gpubench-json"))] if config.getoption("--gpubench-json") else []
    if config.getoption("--gpubench-save"):
        targets.append(_storage_file(config, config.getoption("--gpubench-save")))
    if not results or not targets:
        return
    from primbench.outputs import write_atomically

    text = run_file_text(results)
    for target in targets:
        write_atomically(target, text)


def pytest_terminal_summary(terminalreporter, config):
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    terminalreporter.section("gpubench")
    for case, result, *_ in results:
        terminalreporter.write_line(f"{case.variant}: {result}")
    unmatched = [case.variant for case, *_ in results if config.stash[_BASELINE] and case.key not in config.stash[_BASELINE]]
    if unmatched:
        terminalreporter.write_line(f"not in baseline {config.getoption('--gpubench-compare')}: {len(unmatched)} "
                                    f"(e.g. {unmatched[0]}); save it again to gate them")
    for option in ("--gpubench-json", "--gpubench-save"):
        if config.getoption(option):
            name = config.getoption(option)
            where = name if option == "--gpubench-json" else _storage_file(config, name)
            terminalreporter.write_line(f"gpubench: {len(results)} timings written to {where}")


def run_file_text(results) -> str:
    """The session's timings as one primbench run file (header, a case a timing, end)."""
    import datetime as dt
    import hashlib
    import platform
    import socket

    from primbench import __version__
    from primbench.measuring.policy import TimingPolicy
    from primbench.run.runner import git_state
    from primbench.runfile.io import record_line
    from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, Samples

    now = dt.datetime.now(dt.timezone.utc)
    digest = hashlib.sha256("".join(entry[0].key for entry in results).encode()).hexdigest()[:6]
    variants = {f"{OP}/{case.variant}": {"op": OP, "name": case.variant, "hash": code_hash, "origin": "a pytest test (gpubench)",
                                         "series": OP, "order": index, "notes": ""}
                for index, (case, _, _, code_hash) in enumerate(results)}
    header = RunHeader(run_id=f"{now:%Y-%m-%d-%H%M%S}-pytest-{digest}", started=now.isoformat(timespec="seconds"),
                       tool={"name": "primbench", "version": __version__, "via": "pytest"}, git=git_state(),
                       host={"hostname": socket.gethostname(), "platform": platform.platform(),
                             "python": platform.python_version()},
                       device=results[0][2], timing=TimingPolicy().as_dict(), variants=variants)
    lines = [record_line(header)]
    for case, result, _, code_hash in results:
        lines.append(record_line(CaseRecord(
            case, status="ok", variant_hash=code_hash, bytes=float(result.bytes) if result.bytes else None,
            samples=Samples(tuple(round(t, 6) for t in result.cold_ms), tuple(round(t, 6) for t in result.batch_ms),
                            result.batch_size),
            timing={"stop": result.stop}, started=header.started)))
    lines.append(record_line(RunEnd(finished=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                                    ok=len(results))))
    return "".join(lines)
