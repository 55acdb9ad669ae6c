"""What each op's cases are checked against: its inputs, its reference and its checks.

One module per op (reduce.py holds reduce and reduce_max, scan.py holds scan; sections.py holds
the typed report sections an op may return). The runner and the config only ask `checks(op)` for
an OpChecks; adding an op is a module here (found by name, no list) and its variants in
kernels/<op>.py (or a plugin that registers both; docs/extending.md). Nothing here imports CuPy at
module level.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class OpChecks:
    """An op's inputs and checks. Every check returns a dict with at least 'ok', stored in the run file."""

    op: str
    dtypes: tuple[str, ...]  # the first is the default of a sweep that names none
    distributions: tuple[str, ...]  # likewise
    # Every function gets the Case (op, variant, dtype, n, block, distribution, params).
    # (case, rng_seed) -> (input whose correct output is known exactly, that output, or None when the
    # check derives it from the input and the case's parameters)
    exact_input: Callable[[Any, int], tuple[Any, Any]]
    # (case, rng_seed) -> input of the case's distribution
    random_input: Callable[[Any, int], Any]
    # (input, case, rng_seed) -> what check_random compares against
    reference: Callable[[Any, Any, int], Any]
    # (result array, expected, exact input, case) -> check
    check_exact: Callable[[Any, Any, Any, Any], dict]
    # (result array, reference, plan, case) -> check
    check_random: Callable[[Any, Any, Any, Any], dict]
    # (exact check, random check) -> one line, or None when both passed
    failure_reason: Callable[[dict, dict], str | None]
    # (case, itemsize) -> GPU bytes a case needs: inputs, references, outputs, temporaries
    working_bytes: Callable[[Any, int], int]
    # (dtype, the case's parameters) -> why that sample type cannot take those parameters, or None
    # (histogram: uint8 samples have 256 bins). The config drops such combinations from a sweep.
    refuses: Callable[[str, dict], str | None] = lambda dtype, params: None
    # The variant parameters the inputs or the reference depend on (top-k's vocabulary, a
    # histogram's bins, a stencil's radius): part of a case's input key, so cases differing only in
    # another parameter (seed 004's K) meet the same data, drawn and checked once.
    input_params: tuple[str, ...] = ()
    # The report. `story`: this op's progression leads the report (the seeds' reduce story), and
    # its accuracy study follows. `report_sections`: (the op's view, report/op_view.py) -> a list
    # of sections.Section, its own sections on its page (top-k's pruning). `report_tables`, the
    # older form: (annotated case frame, copy GB/s) -> {name: DataFrame}, each shown as a plain
    # section after those (its columns' kinds read from their dtypes).
    story: bool = False
    report_sections: Callable[[Any], list] | None = None
    report_tables: Callable[[Any, float | None], dict] | None = None
    # No longer read: every ratio is against the op's best library at each size (the fastest case of
    # its library series there, report/op_view.py libraries). Kept so that a plugin declaring
    # it still loads.
    baseline: str | None = None
    # The (compensated, plain) pair the accuracy study's headline sets side by side.
    accuracy_pair: tuple[str, str] | None = None
    # The story's one line per step: what each variant of the progression removes (divergence,
    # bank conflicts, ...), shown beside its time in the report's opening chart.
    step_reasons: dict[str, str] | None = None
    # What a case's n counts, for the charts' size axis: top-k's n is rows of logits.
    size_unit: str = "elements"

_CHECKS: dict[str, OpChecks] = {}
_LOADED = False


def register(checks: OpChecks) -> OpChecks:
    """Declare an op's checks (a built-in module here, or a plugin adding an op of its own); its name
    is checked as a variant's is (primbench/declarations.py)."""
    from primbench import declarations

    if not isinstance(checks, OpChecks):
        raise declarations.DeclarationError(f"register_op takes an OpChecks, not {type(checks).__name__}")
    declarations.check_name("op", checks.op)
    checks = declarations.checked_op(checks)
    _load()
    if checks.op in _CHECKS:
        raise declarations.DeclarationError(f"op {checks.op} declared twice; give it a name of its own")
    declarations.warn_if_alike("op", checks.op, _CHECKS)
    _CHECKS[checks.op] = checks
    return checks


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True  # before the imports: each module registers through register() above
        import pkgutil

        # Every module here declares an op's checks: a new op's ops/<op>.py needs no list.
        for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
            importlib.import_module(f"primbench.ops.{module}")


def declared_ops() -> tuple[str, ...]:
    """Every op declared so far."""
    _load()
    return tuple(_CHECKS)


def forget_all_but(kept: tuple[str, ...]) -> None:
    """Drop the ops declared since `declared_ops()` returned `kept` (a plugin that failed to load)."""
    for op in [op for op in _CHECKS if op not in kept]:
        del _CHECKS[op]


def checks(op: str) -> OpChecks:
    """The checks of `op` (KeyError if no module declares it)."""
    _load()
    return _CHECKS[op]


def story_op(ops_present) -> str | None:
    """Of the ops a run measured, the one whose progression leads the report; None if none does.
    An op no module declares (a plugin's, read without the plugin) tells no story."""
    _load()
    return next((op for op in sorted(ops_present) if op in _CHECKS and _CHECKS[op].story), None)


def declared(op: str, name: str, default=None):
    """A field of the op's OpChecks, or `default` for an op no module declares (a plugin's op read
    without its plugin): the report renders any run."""
    _load()
    return getattr(_CHECKS[op], name) if op in _CHECKS else default


def dtypes(op: str) -> tuple[str, ...]:
    return checks(op).dtypes


def distributions(op: str) -> tuple[str, ...]:
    return checks(op).distributions
