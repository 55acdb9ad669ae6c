"""An op's sections past its progression: bandwidth against size, block sizes, input distributions,
the variants' own parameters, dtypes, the accuracy study.

Everything here reads an op's view (report/op_view.py) of the annotated case frame, which a test
builds from a hand-made frame (op_view.of). Failed and skipped cases never count as valid times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primbench import ops
from primbench.report.anchors import point_records
from primbench.report.selection import ACCURACY_DISTRIBUTION, choose_block, matches, mode, rows_with_block
from primbench.runfile.frame import block_or_none, is_number


def bandwidth_lines(view):
    """GB/s against n for each variant of the op's primary slice at one block size (256, the
    library's, or its most measured)."""
    import numpy as np
    import pandas as pd

    cases = view.primary
    blocks = {variant: choose_block(mine) for variant, mine in cases.groupby("variant", sort=False)}
    # Each variant's valid cases at its block, in one selection; a variant has one case per size
    # at a block, so the sort alone sets the order.
    chosen_block = [blocks[variant] for variant in cases["variant"]]
    at_block = [block_or_none(b) == chosen for b, chosen in zip(cases["block"], chosen_block)]
    keep = cases["valid"].to_numpy(dtype=bool) & np.array(at_block, dtype=bool)
    if not keep.any():
        return pd.DataFrame(columns=["variant", "n", "gbps", "order", "chosen_block"])
    chosen = cases[keep].assign(chosen_block=[b for b, kept in zip(chosen_block, keep) if kept])
    return chosen.sort_values(["order", "variant", "n"]).reset_index(drop=True)


def l2_edge(lines, l2_bytes) -> float | None:
    """The largest n at which every case of `lines` (bandwidth_lines) still fits in L2 by its own
    bytes: for each case, n x L2 / bytes (where a case of that shape would fill L2), the smallest
    over the cases. Every case left of it has bytes <= L2 whatever its bytes model; a linear model
    puts it on the size where the largest case of the chart fills L2. The chart shades up to it and
    the page names it."""
    if not l2_bytes or "bytes" not in lines:
        return None
    moved = lines[lines["bytes"] > 0]  # a case without a byte count (NaN) fills nothing
    if moved.empty:
        return None
    return float((moved["n"].astype(float) * l2_bytes / moved["bytes"].astype(float)).min())


def block_sweeps(view) -> dict:
    """{n: cases} for every size where some variant of the op's primary slice was measured at more
    than one block size."""
    cases = view.primary
    cases = cases[cases["valid"] & cases["block"].notna()]
    # The cases of each (size, variant) measured at more than one block size, counted in one pass.
    swept = cases[cases.groupby(["n", "variant"])["block"].transform("nunique") > 1]
    return {int(n): at_n.sort_values(["order", "variant", "block"]).reset_index(drop=True)
            for n, at_n in swept.groupby("n")}


def distribution_bars(view):
    """Each variant on each input distribution at one size, in the op's primary dtype at the
    parameter values it compares: the size with the most distributions (the largest on a tie),
    each variant at its chosen block size. Empty unless there are two."""
    import pandas as pd

    frame = view.compared
    cases = frame[matches(frame["dtype"], view.dtype) & frame["valid"]]
    cases = cases[cases["distribution"] != ACCURACY_DISTRIBUTION]  # summed badly on purpose, not timed
    if cases.empty:
        return pd.DataFrame()
    spread = cases.groupby("n")["distribution"].nunique()
    if spread.max() < 2:
        return pd.DataFrame()
    n = int(max(spread[spread == spread.max()].index))
    rows = []
    for variant, mine in cases[cases["n"] == n].groupby("variant", sort=False):
        block = choose_block(mine, n)
        chosen = rows_with_block(mine, block)
        for _, row in chosen.iterrows():
            rows.append({"variant": variant, "order": row["order"], "distribution": row["distribution"], "n": n,
                         "block": block, "median_us": 1e3 * row["median_ms"], "gbps": row["gbps"],
                         # For the chart's hover text and link (hand-made test frames may lack them).
                         "dtype": row.get("dtype"), "pct_peak": row.get("pct_peak"), "pct_sol": row.get("pct_sol"),
                         "anchor": row.get("anchor"), "key": row.get("key")})
    return pd.DataFrame(rows).sort_values(["order", "variant"]).reset_index(drop=True)


def param_sweeps(view, dtype, distribution, min_values: int = 3) -> list[dict]:
    """Every parameter some variant was measured at `min_values` or more values of, with all else
    fixed: [{'n', 'param', 'dtype', 'lines': {'variant, block B': [(value, GB/s, case), ...]}}] (seed
    004's K, a histogram's bins), at the largest size it was swept at. Two values (top-k's
    vocabulary with and without a partial last group) are a check, not a sweep."""
    cases = view.slice(dtype, distribution)
    cases = cases[cases["valid"]]
    sweeps = {}
    for n, at_n in cases.sort_values(["order", "variant_name", "block"]).groupby("n", sort=True):
        names = sorted({name for items in at_n["param_items"] for name, _ in items})
        records = point_records(at_n)  # records, not iterrows: a Series per row costs more than the rest
        for name in names:
            lines: dict[str, list] = {}
            for case in records:
                items, variant_name, block, gbps = case["param_items"], case["variant_name"], case["block"], case["gbps"]
                params = dict(items)
                if name not in params:
                    continue
                others = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k != name)
                block = block_or_none(block)
                label = f"{variant_name}{f'[{others}]' if others else ''}, block {block if block else 'lib'}"
                lines.setdefault(label, []).append((int(params[name]), gbps, case))
            lines = {label: sorted(points, key=lambda p: p[0]) for label, points in lines.items() if len({p[0] for p in points}) >= min_values}
            if lines:  # a larger size replaces a smaller one
                sweeps[name] = {"n": int(n), "param": name, "lines": lines}
    return list(sweeps.values())


def dtype_table(view):
    """Every variant of the op in every dtype at the largest size measured in more than one dtype:
    time, GB/s, % of peak, and its time over the best library's in the same dtype (at the
    parameters both have). Empty when one dtype was run."""
    import pandas as pd

    cases = view.cases[view.cases["valid"]]
    dtypes_per_n = cases.groupby("n")["dtype"].nunique() if not cases.empty else pd.Series(dtype=int)
    sizes = [int(n) for n, count in dtypes_per_n.items() if count > 1]
    if not sizes:
        return pd.DataFrame(), None
    n = max(sizes)
    at_n = cases[cases["n"] == n]
    distribution = mode(at_n["distribution"])
    columns = ["variant", "order", "series", "dtype", "block", "median_ms", "gbps", "pct_peak", "param_items"]
    at_n = at_n.loc[matches(at_n["distribution"], distribution), columns]  # a selection copies every column
    libraries = {}  # (dtype, parameters) -> the best library there: variants share them
    rows = []
    for (variant, dtype), mine in at_n.groupby(["variant", "dtype"], sort=False):
        best = mine.sort_values("median_ms").iloc[0]
        key = (dtype, tuple(best["param_items"]))
        if key not in libraries:
            libraries[key] = view.library(n, dtype, distribution, params=dict(best["param_items"]))
        library = libraries[key]
        rows.append({"variant": variant, "order": best["order"], "series": best["series"], "dtype": dtype,
                     "block": block_or_none(best["block"]), "time_us": best["median_ms"] * 1e3, "gbps": best["gbps"],
                     "pct_peak": best["pct_peak"], "library": library["variant"] if library is not None else None,
                     "ratio_to_library": best["median_ms"] / library["median_ms"] if library is not None else math.nan})
    table = pd.DataFrame(rows).sort_values(["order", "variant", "dtype"]).reset_index(drop=True)
    named = sorted({row["library"] for row in rows if row["library"]})
    return table, {"n": n, "distribution": distribution, "libraries": named}


ACCURACY_DTYPE = "float32"


def _accuracy_verdict(compensated: float, plain: float) -> str:
    """How the compensated sum's error compares with the plain tree's, in words."""
    if compensated == 0:
        return "the compensated sum is exact"
    if plain == 0:
        return "the plain tree is exact here"
    ratio = plain / compensated
    if ratio >= 10:
        return f"{ratio:,.0f} times smaller"
    if ratio >= 1.05:
        return f"{ratio:,.1f} times smaller"
    if ratio > 1 / 1.05:
        return "about the same"
    return f"{1 / ratio:,.1f} times larger"


@dataclass
class Accuracy:
    """The accuracy study: relative error against the exact sum, per size, for every variant."""

    sizes: list  # n, ascending
    rows: list  # {"label", "variant" (or None), "kind", "errors": [relative error or None per size]}
    headline: dict | None  # the compensated and plain-tree errors at the largest size, and their ratio


def accuracy_study(view) -> Accuracy | None:
    """From the op's cases on the ill-conditioned input (float32): each variant's |got - exact| /
    |exact|, the host's left-to-right float32 loop, and the floor every float32 result has (its own
    rounding)."""
    import numpy as np

    op, frame = view.op, view.cases
    cases = frame[(frame["distribution"] == ACCURACY_DISTRIBUTION) & (frame["dtype"] == ACCURACY_DTYPE)]
    cases = cases[cases["status"] == "ok"]
    cases = cases[[is_number(g) and is_number(e) and float(e) != 0 for g, e in zip(cases["got"], cases["expected"])]]
    if cases.empty:
        return None
    sizes = sorted(int(n) for n in set(cases["n"]))
    exact = {int(n): float(e) for n, e in zip(cases["n"], cases["expected"])}

    def relative(value, n):
        return abs(float(value) - exact[n]) / abs(exact[n]) if is_number(value) else None

    rows = []
    serial = {int(n): s for n, s in zip(cases["n"], cases["serial_float32"]) if is_number(s)}
    if serial:
        rows.append({"label": "left-to-right float32 loop (host, numpy)", "variant": None, "kind": "serial",
                     "errors": [relative(serial.get(n), n) if n in serial else None for n in sizes]})
    ordered = cases.sort_values(["order", "variant"])
    for variant, mine in ordered.groupby("variant", sort=False):
        block = choose_block(mine)
        chosen = rows_with_block(mine, block)
        by_n = {int(n): g for n, g in zip(chosen["n"], chosen["got"])}
        rows.append({"label": variant, "variant": variant, "kind": mine["series"].iloc[0],
                     "errors": [relative(by_n[n], n) if n in by_n else None for n in sizes]})
    rows.append({"label": "float32 rounding of the exact sum (the floor for a float32 result)", "variant": None,
                 "kind": "floor", "errors": [abs(float(np.float32(exact[n])) - exact[n]) / abs(exact[n]) for n in sizes]})
    headline = None
    # The (compensated, plain tree) pair the op declares, compared at the largest n.
    pair = ops.declared(op, "accuracy_pair") or (None, None)
    compensated, plain = (next((r for r in rows if r["variant"] == name), None) for name in pair)
    if compensated and plain and is_number(compensated["errors"][-1]) and is_number(plain["errors"][-1]):
        small, large = compensated["errors"][-1], plain["errors"][-1]
        headline = {"n": sizes[-1], "compensated": pair[0], "plain": pair[1],
                    "compensated_error": small, "plain_error": large,
                    "ratio": small / large if large else math.nan, "verdict": _accuracy_verdict(small, large)}
    return Accuracy(sizes=sizes, rows=rows, headline=headline)
