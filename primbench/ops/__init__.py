"""What each op's cases are checked against: its inputs, its reference and its checks.

One module per op (reduce.py holds reduce and reduce_max, scan.py holds scan). The runner and
the config only ask `checks(op)` for an OpChecks; adding an op is a module here, registered in
OP_MODULES, and its variants in kernels/. Nothing here imports CuPy at module level.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

OP_MODULES = ("reduce", "scan")


@dataclass(frozen=True)
class OpChecks:
    """An op's inputs and checks. Every check returns a dict with at least 'ok', stored in the run file."""

    op: str
    dtypes: tuple[str, ...]  # the first is the default of a sweep that names none
    distributions: tuple[str, ...]  # likewise
    # (n, dtype, seed) -> (input whose correct output is known exactly, that output)
    exact_input: Callable[[int, str, int], tuple[Any, Any]]
    # (n, dtype, distribution, seed) -> input
    random_input: Callable[[int, str, str, int], Any]
    # (input, dtype, distribution, seed) -> what check_random compares against
    reference: Callable[[Any, str, str, int], Any]
    # (result array, expected) -> check
    check_exact: Callable[[Any, Any], dict]
    # (result array, reference, plan, dtype, n) -> check
    check_random: Callable[[Any, Any, Any, str, int], dict]
    # (exact check, random check) -> one line, or None when both passed
    failure_reason: Callable[[dict, dict], str | None]
    # (n, itemsize, distribution) -> GPU bytes a case needs: inputs, references, outputs, temporaries
    working_bytes: Callable[[int, int, str], int]


_CHECKS: dict[str, OpChecks] = {}


def register(checks: OpChecks) -> OpChecks:
    _CHECKS[checks.op] = checks
    return checks


def checks(op: str) -> OpChecks:
    """The checks of `op` (KeyError if no module declares it)."""
    if not _CHECKS:
        for module in OP_MODULES:
            importlib.import_module(f"primbench.ops.{module}")
    return _CHECKS[op]


def dtypes(op: str) -> tuple[str, ...]:
    return checks(op).dtypes


def distributions(op: str) -> tuple[str, ...]:
    return checks(op).distributions
