"""Each op of a run as the report's sections read it, answered once per op: its cases, the slice
(dtype, distribution) its charts and rankings show, the parameter values its comparisons hold
fixed, the size its progression and headline are told at, and the best library at each size.

Sections read the view and never select the op's slice again, so every table and chart of an op
answers from the same slice, parameters and baseline, and each pandas selection (about a
millisecond on a 1,400-case frame) is made once. selection.py answers the questions on any
annotated frame; op_view.of builds one op's view of a test's hand-made frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from primbench import ops
from primbench.report import selection
from primbench.runfile.case_id import Params


@dataclass
class OpView:
    """One op of a run, as every section of its part of the report reads it."""

    op: str
    cases: Any  # every case of the op, annotated (and anchored, in a report): all slices, all parameter values
    is_story: bool  # this op's progression leads the report
    dtype: str | None  # the primary slice: the (dtype, distribution) with the most valid cases
    distribution: str | None
    primary: Any  # the cases of the primary slice
    params: Params | None  # each parameter's most measured value in the slice; None: the op has none
    compared: Any  # `cases` at those values (a case lacking a parameter is kept: CUB has no `replicas`)
    compared_primary: Any  # `primary` at those values: what the tables that compare variants read
    n: int | None  # the size the op's progression and headline are told at
    n_exact: bool  # n is the preferred size (the seed's 2^25), not the largest measured
    libraries: dict  # {n: the best library case at n in compared_primary}; a size with none is absent
    slices: list  # the primary slice, then each other dtype with its most measured distribution
    unit: str  # what n counts ("elements"; top-k's "rows")
    copy_gbps: float | None = None  # the run's copy bandwidth: one read of a case's bytes takes bytes / copy
    _asked: dict = field(default_factory=dict, repr=False)  # library() and slice() answers, per view

    def slice(self, dtype, distribution):
        """The op's cases of one (dtype, distribution): `primary` for the primary slice."""
        if (dtype, distribution) == (self.dtype, self.distribution):
            return self.primary
        key = ("slice", dtype, distribution)
        if key not in self._asked:
            self._asked[key] = selection.slice_of(self.cases, self.op, dtype, distribution)
        return self._asked[key]

    def library(self, n: int, dtype=None, distribution=None, params=None):
        """The best library case at size n in another slice or at other parameter values (the
        dtype table's), or None; `libraries[n]` is the primary slice's at the compared values."""
        dtype, distribution = (self.dtype, self.distribution) if dtype is None else (dtype, distribution)
        key = ("library", dtype, distribution, n, tuple(sorted(params.items())) if params is not None else None)
        if key not in self._asked:
            self._asked[key] = selection.libraries_by_size(self.slice(dtype, distribution), params, sizes=(n,)).get(n)
        return self._asked[key]


@dataclass
class RunView:
    """Every op of a run: the annotated case frame (with each case's anchor) and one view per op,
    the story's op first."""

    frame: Any
    ops: list[OpView]

    @property
    def story(self) -> OpView | None:
        return next((view for view in self.ops if view.is_story), None)


def build(run, frame=None) -> RunView:
    """The views of a loaded run (`frame`: its annotated case frame, where the caller has it)."""
    from primbench.report.anchors import with_anchors

    if frame is None:
        frame = selection.annotated_frame(run)
    if frame.empty:
        return RunView(frame=with_anchors(frame, {}), ops=[])
    story = selection.story_op(frame)
    slices = {op: selection.primary_slice(cases, op) for op, cases in frame.groupby("op", sort=False)}
    # Anchors name a case's distribution only where it is not its op's primary one.
    frame = with_anchors(frame, {op: distribution for op, (_dtype, distribution) in slices.items()})
    views = [_view(cases, op, run.copy_gbps, op == story, slices[op]) for op, cases in frame.groupby("op", sort=False)]
    return RunView(frame=frame, ops=sorted(views, key=lambda view: (not view.is_story, view.op)))


def of(frame, op: str, copy_gbps=None) -> OpView:
    """One op's view of any annotated frame (a test's hand-made one too); whether it leads the
    report is as its OpChecks say."""
    cases = frame[frame["op"] == op]
    return _view(cases, op, copy_gbps, selection.story_op(frame) == op, selection.primary_slice(cases, op))


def _view(cases, op: str, copy_gbps, is_story: bool, primary) -> OpView:
    dtype, distribution = primary
    in_slice = selection.slice_of(cases, op, dtype, distribution)
    params = selection.primary_params(in_slice, op, dtype, distribution)
    compared = selection.with_params(cases, op, params)
    compared_primary = selection.with_params(in_slice, op, params)
    n, exact = selection.choose_progression_size(compared, op)
    return OpView(
        op=op, cases=cases, is_story=is_story, dtype=dtype, distribution=distribution, primary=in_slice,
        params=params, compared=compared, compared_primary=compared_primary, n=n, n_exact=exact,
        libraries=selection.libraries_by_size(compared_primary),
        slices=selection.slices_by_dtype(cases, op, (dtype, distribution)),
        unit=ops.declared(op, "size_unit", "elements"), copy_gbps=copy_gbps,
    )
