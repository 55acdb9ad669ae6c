"""Which cases a report table shows: the case frame annotated with the header's variant facts, the
op's primary slice (dtype, distribution, parameters), the block and size chosen, the best library.

Everything here works on the annotated case frame (selection.annotate), so it can be unit-tested
on hand-made frames. Failed and skipped cases never count as valid times.
"""

from __future__ import annotations

import math
from collections import Counter

from primbench.compare.light_floor import floor_of_run, under_mask
from primbench.runfile.case_id import Params
from primbench.runfile.frame import block_or_none, is_number
from primbench.runfile.libraries import far_mask, library_mask, library_texts
from primbench.variant import LIBRARY_SERIES_NAMES

PROGRESSION_N = 2**25  # the seed's "32M floats"
PREFERRED_BLOCK = 256
ACCURACY_DISTRIBUTION = "ill_conditioned"


def annotate(frame, variants_info: dict, software: dict | None = None, floor=None):
    """The case frame with what the header says of each variant, `valid`, and for library cases
    how the run names the library (`library`, runfile/libraries.py) and whether the case is far
    from its light (`far_from_light`); where the run's config sets a light floor (`floor`, a
    compare/light_floor.LightFloor), whether each case fails it (`under_floor`)."""
    import pandas as pd

    frame = frame.copy()
    if frame.empty:  # a run with no cases: the columns the tables read, none of them filled
        for column in ("variant_name", "params", "origin", "hazard", "notes", "deterministic_expected", "work", "span",
                       "noise_pct", "valid", "library", "far_from_light", "under_floor"):
            frame[column] = pd.Series(dtype=object)
        return frame
    declared = [variants_info.get(f"{op}/{name}") or {} for op, name in zip(frame["op"], frame["variant_name"])]
    frame["origin"] = [d.get("origin", "") for d in declared]
    frame["hazard"] = [d.get("hazard") for d in declared]
    frame["notes"] = [d.get("notes", "") for d in declared]
    frame["deterministic_expected"] = [d.get("deterministic_expected") for d in declared]
    frame["work"] = [(d.get("work_span") or ("", ""))[0] for d in declared]
    frame["span"] = [(d.get("work_span") or ("", ""))[1] for d in declared]
    frame["noise_pct"] = frame["noise"] * 100
    frame["valid"] = (frame["status"] == "ok") & frame["median_ms"].map(lambda t: is_number(t) and t > 0)
    texts = library_texts(variants_info, software or {})
    frame["library"] = [texts.get(f"{op}/{name}") for op, name in zip(frame["op"], frame["variant_name"])]
    frame["far_from_light"] = far_mask(frame)
    frame["under_floor"] = under_mask(frame, floor) if floor is not None else False
    return frame


def annotated_frame(run):
    """The run's case frame annotated (annotate) from its own header: each variant's declared facts
    beside its cases, and the light floor its config sets."""
    return annotate(run.frame(), run.header.variants, run.header.software, floor_of_run(run.header.config))


def story_op(frame) -> str | None:
    """The op whose progression leads the report, of those the run measured (its OpChecks say so)."""
    from primbench import ops

    return ops.story_op(set(frame["op"])) if not frame.empty else None


def ops_in(frame) -> list[str]:
    """The ops a run measured, the story's op first."""
    ops = sorted(set(frame["op"])) if not frame.empty else []
    story = story_op(frame)
    return sorted(ops, key=lambda op: (op != story, op))


def mode(values):
    counts = Counter(v for v in values if v is not None)
    return counts.most_common(1)[0][0] if counts else None


def slices_by_dtype(frame, op: str, primary: tuple[str | None, str | None]) -> list[tuple[str | None, str | None]]:
    """The primary slice (primary_slice's), then for each other dtype of `op` its distribution with the most valid cases."""
    cases = frame[(frame["op"] == op) & frame["valid"] & (frame["distribution"] != ACCURACY_DISTRIBUTION)]
    others = [(dtype, mode(mine["distribution"])) for dtype, mine in cases.groupby("dtype", sort=True) if dtype != primary[0]]
    return [primary, *others]


def primary_slice(frame, op: str) -> tuple[str | None, str | None]:
    """The (dtype, distribution) of `op` with the most valid cases: the one plots and rankings show."""
    cases = frame[(frame["op"] == op) & frame["valid"]]
    if cases.empty:
        cases = frame[frame["op"] == op]
    if cases.empty:
        return None, None
    counts = Counter(zip(cases["dtype"], cases["distribution"]))
    # The accuracy study's input is there to be summed badly, not timed: never the headline slice
    # when the run has another one.
    timed = Counter({key: count for key, count in counts.items() if key[1] != ACCURACY_DISTRIBUTION})
    return (timed or counts).most_common(1)[0][0]


def primary_params(frame, op: str, dtype, distribution) -> Params | None:
    """For each of the op's parameters the value with the most valid cases in the slice, or None
    when its variants have none: tables that compare variants hold each parameter at one value,
    since a step from radius 1 to radius 16 is not a speedup."""
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[cases["valid"]] if cases["valid"].any() else cases
    counts: dict[str, Counter] = {}
    for items in cases["param_items"]:
        for name, value in items:
            counts.setdefault(name, Counter())[value] += 1
    if not counts:
        return None
    return Params({name: counts[name].most_common(1)[0][0] for name in counts})


def agrees(items, chosen) -> bool:
    """Whether a case's parameters ((name, value) pairs) take the chosen value of every parameter both have."""
    return all(chosen.get(name, value) == value for name, value in items)


def with_params(frame, op: str, params):
    """`frame` without the cases of `op` at other values of a parameter than `params` holds
    (unchanged when None); a case is kept when it agrees on every parameter it has, so variants
    with fewer parameters (a histogram's CUB, which has no `replicas`) stay."""
    if params is None:
        return frame
    return frame[(frame["op"] != op) | frame["param_items"].map(lambda items: agrees(items, params))]


def matches(column, value):
    # A null distribution must select the null rows; `column == None` would select none.
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return column.isna()
    return column == value


def slice_of(frame, op: str, dtype, distribution):
    """The cases of one op, dtype and input distribution."""
    return frame[(frame["op"] == op) & matches(frame["dtype"], dtype) & matches(frame["distribution"], distribution)]


def choose_progression_size(frame, op: str, preferred: int = PROGRESSION_N) -> tuple[int | None, bool]:
    """The size the story is told at: `preferred` if measured, else the largest size present."""
    cases = frame[frame["op"] == op]
    valid = cases[cases["valid"]]
    sizes = set(valid["n"]) or set(cases["n"])
    if not sizes:
        return None, False
    if preferred in sizes:
        return preferred, True
    return int(max(sizes)), False


def choose_block(variant_cases, n: int | None = None, preferred: int = PREFERRED_BLOCK):
    """The block size shown for one variant: `preferred` if it was run (at n), else the one with most records.

    The choice ignores status on purpose: a failure at block 256 is shown as a failure, not
    replaced by another block's time. Returns None for library variants (the library chooses).
    """
    at_n = variant_cases if n is None else variant_cases[variant_cases["n"] == n]
    present = {b for b in (block_or_none(x) for x in at_n["block"]) if b is not None}
    if not present:
        return None
    if preferred in present:
        return preferred
    counts = Counter(block_or_none(x) for x in variant_cases["block"])
    # Ties go to the block nearest the preferred one, so the choice does not depend on run order.
    return max(present, key=lambda b: (counts[b], -abs(math.log2(b) - math.log2(preferred))))


def rows_with_block(cases, block):
    if block is None:
        return cases[cases["block"].isna()]
    return cases[cases["block"] == block]


def best_case(cases, n: int, exclude_series=LIBRARY_SERIES_NAMES):
    """The fastest valid case of `cases` (one op's slice) at size n outside the excluded series, or None."""
    cases = cases[(cases["n"] == n) & cases["valid"] & ~cases["series"].isin(list(exclude_series))]
    if cases.empty:
        return None
    return cases.sort_values("median_ms").iloc[0]


def libraries_by_size(cases, params=None, sizes=None) -> dict:
    """{n: the best library case at n} of `cases` (one op's slice): at each size its fastest valid
    library case, whichever library it is; a size where no library case has a time is absent (no
    ratio is then given). With `params` (a mapping), at the values of the parameters both have: a
    histogram into 32 bins is compared with the libraries' 32-bin cases. `sizes`: only these."""
    cases = cases[cases["valid"] & library_mask(cases)]
    if sizes is not None:
        cases = cases[cases["n"].isin(list(sizes))]
    if params is not None:
        cases = cases[cases["param_items"].map(lambda items: agrees(items, params)).astype(bool)]
    return {int(n): at_n.iloc[at_n["median_ms"].to_numpy().argmin()] for n, at_n in cases.groupby("n", sort=True)}


def name_of(frame, variant: str) -> str:
    """A variant label's name without its parameters ('cub_histogram_even[bins=256]' -> 'cub_histogram_even')."""
    names = frame.loc[frame["variant"] == variant, "variant_name"]
    return names.iloc[0] if not names.empty else variant


def library_facts(case) -> dict:
    """What the report says of a best library case beside its time: its label, the library text
    the run gives (package and version, where recorded), its % of light and whether it is flagged."""
    if case is None:
        return {"library": None, "library_text": "", "library_us": math.nan, "library_pct_sol": math.nan,
                "library_far": False, "library_anchor": None}
    return {"library": case["variant"], "library_text": case.get("library") or "",
            "library_us": float(case["median_ms"]) * 1e3, "library_pct_sol": case.get("pct_sol", math.nan),
            "library_far": bool(case.get("far_from_light", False)), "library_anchor": case.get("anchor")}
