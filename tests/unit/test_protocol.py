"""The measuring protocol has an identity in the run header, so that compare and check never take a
change of protocol for a change of kernel; and the code behind each part cannot change unnoticed."""

import ast
import dataclasses
import hashlib
import importlib
import inspect
import textwrap
from pathlib import Path

import pytest

from primbench.compare import verdicts
from primbench.runfile import protocol
from primbench.runfile.io import load_run

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "data" / "runs"

# The hash of each part's code (comments and docstrings left out). When a test below fails, the code
# that carries that part changed: if the change can move the figures the part makes, raise its
# revision in primbench/runfile/protocol.py (and say why in its history); either way, put the new
# hash here.
CODE_HASHES = {
    "cold": "8aba21f6cb71f6c8",  # Timer.cold_sample, the one copy; flush_l2 takes its size: moves no figure
    "batch": "7b8605e5ef6223f6",  # spin_us, the one hold formula: moves no figure
    "throttle": "4b1c74995d96de76",  # last_progress (the case limit): moves no figure
    "ceilings": "868b084824ca4e44",
}


def _code_of(target: str) -> str:
    module_name, _, qualified = target.partition(":")
    value = importlib.import_module(module_name)
    for name in qualified.split("."):
        value = getattr(value, name)
    return stripped(inspect.getsource(value))


def stripped(source: str) -> str:
    """The code of a function's source with its comments and docstrings left out."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def code_hash(part: protocol.Part) -> str:
    return hashlib.sha256("\n".join(_code_of(target) for target in part.code).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", list(protocol.PARTS))
def test_the_code_behind_each_protocol_part_is_the_code_its_revision_describes(name):
    got = code_hash(protocol.PARTS[name])
    assert got == CODE_HASHES[name], (
        f"the code of protocol part {name!r} changed ({got}): if it can move the figures the part makes, raise its "
        f"revision in primbench/runfile/protocol.py; either way record {got!r} in CODE_HASHES")


def test_a_comment_or_docstring_edit_leaves_the_code_hash_alone_and_a_code_edit_does_not():
    source = "    def f(x):\n        'doc'\n        # why\n        return x + 1\n"
    comments = "    def f(x):\n        'another doc'\n        return x + 1  # another why\n"
    code = "    def f(x):\n        'doc'\n        return x + 2\n"
    assert stripped(source) == stripped(comments) != stripped(code)


def test_a_run_header_carries_the_declared_protocol():
    block = protocol.declared()
    assert block["format"] == protocol.PROTOCOL_FORMAT
    assert {name: entry["revision"] for name, entry in block["parts"].items()} == {
        name: part.revision for name, part in protocol.PARTS.items()}


def test_older_run_files_get_the_revisions_their_headers_show():
    fixture = load_run(RUNS / "fixture-a.jsonl.gz")  # 985bc39: before the flush wait, the clock floor, sized probes
    baseline = load_run(ROOT / "results" / "reference" / "nvidia-h200.jsonl.gz")  # da38fb9: all three
    assert protocol.recorded(fixture.header) == {"cold": 1, "batch": 1, "throttle": 0, "ceilings": 0}
    assert protocol.recorded(baseline.header) == {"cold": 2, "batch": 1, "throttle": 1, "ceilings": 1}


def test_a_protocol_change_is_one_line_naming_what_changed_and_the_figures_it_moves():
    fixture = load_run(RUNS / "fixture-a.jsonl.gz")
    baseline = load_run(ROOT / "results" / "reference" / "nvidia-h200.jsonl.gz")  # da38fb9, a header with no protocol
    difference = protocol.compare(fixture.header, baseline.header)
    line = difference.line("make baseline RUN=new.jsonl")
    assert line.startswith("protocol changed since the baseline (inferred from an older run file): cold r1 -> r2")
    assert "throttle r0 -> r1" in line and line.endswith("renew the baseline: make baseline RUN=new.jsonl")
    assert set(difference.by_figure()) == {"cold", "batch"}
    assert protocol.compare(fixture.header, fixture.header).line() is None


def test_a_change_of_the_probes_alone_names_itself_and_marks_no_verdict():
    baseline = load_run(ROOT / "results" / "reference" / "nvidia-h200.jsonl.gz")  # da38fb9: ceilings r1
    today = dataclasses.replace(baseline.header, protocol=protocol.declared())  # ceilings r1 -> r2 since
    difference = protocol.compare(baseline.header, today)
    assert difference.by_figure() == {}
    assert "ceilings r1 -> r2" in difference.line() and "no timed figure moves with it" in difference.line()


def test_a_timing_policy_that_moves_the_batch_figure_marks_batch_verdicts_only():
    header = load_run(RUNS / "fixture-a.jsonl.gz").header
    other = dataclasses.replace(header, timing=dict(header.timing, batch_target_ms=2.0))
    assert protocol.compare(header, other).by_figure() == {"batch": "timing.batch_target_ms 0.5 -> 2.0"}


def test_verdicts_on_a_changed_protocol_are_marked_and_fail_nothing(tmp_path):
    base = load_run(RUNS / "fixture-a.jsonl.gz")
    new = load_run(RUNS / "fixture-b.jsonl.gz")
    slowed = [dataclasses.replace(r, samples=dataclasses.replace(r.samples, cold_ms=tuple(t * 1.3 for t in r.cold_ms)))
              for r in new.cases]
    planted = dataclasses.replace(new, cases=slowed)
    code, pairs = verdicts.check(base, planted)
    assert code == 1 and sum(p.verdict == verdicts.SLOWER for p in pairs) > 100  # the +30 % fails on one protocol
    other = dataclasses.replace(planted, header=dataclasses.replace(planted.header, protocol=protocol.declared()))
    code, pairs = verdicts.check(base, other)
    slower = [p for p in pairs if p.verdict == verdicts.SLOWER]
    assert code == 0 and len(slower) > 100
    assert all(p.protocol_changed.startswith("cold r1 -> r2") and "protocol changed" in p.note for p in slower)


def test_an_older_pytest_baseline_is_not_called_another_protocol_for_what_it_cannot_show():
    # The pytest plugin never measured ceilings, so their absence says nothing of its cold sample:
    # only its throttle rule is read from its header, and nothing it cannot show is marked.
    header = load_run(RUNS / "fixture-a.jsonl.gz").header
    older_pytest = dataclasses.replace(header, tool={"name": "primbench", "version": "0.2.0", "via": "pytest"},
                                       ceilings={}, protocol={}, timing=dict(header.timing, min_clock_fraction=0.75))
    today = dataclasses.replace(older_pytest, protocol=protocol.declared())
    assert protocol.recorded(older_pytest) == {"throttle": 1}
    assert protocol.compare(older_pytest, today).line() is None
