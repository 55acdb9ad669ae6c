"""The progression story: each step's time and speedup, the ranking, the best variant per size
against the best library at that size, and where the ordering differs from the seed's published
figures.

Everything here reads an op's view (report/op_view.py) of the annotated case frame, which a test
builds from a hand-made frame (op_view.of). Failed and skipped cases never count as valid times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primbench.report.selection import choose_block, library_facts, rows_with_block
from primbench.runfile.frame import block_or_none, is_number
from primbench.runfile.libraries import library_mask
from primbench.variant import BEYOND_SERIES, HARRIS_SERIES, LIBRARY_SERIES_NAMES


def step_speedups(times) -> list[float]:
    """Each time's speedup over the previous row that has a time (NaN for the first or a missing one)."""
    result, previous = [], None
    for t in times:
        if not is_number(t) or t <= 0:
            result.append(math.nan)
            continue
        result.append(previous / t if previous is not None else math.nan)
        previous = t
    return result


def cumulative_speedups(times) -> list[float]:
    """Each time's speedup over the first row that has a time (NaN where a row has none)."""
    first = next((t for t in times if is_number(t) and t > 0), None)
    return [first / t if first is not None and is_number(t) and t > 0 else math.nan for t in times]


def progression_variants(frame, op: str, story: bool) -> list[str]:
    """The story's rows (`story`: the op leads the report): the harris series in its order,
    primbench's kernels past the seeds, then the libraries. Another op's progression is every
    variant in its declared order (libraries last)."""
    if not story:
        cases = frame[frame["op"] == op].drop_duplicates("variant")
        ordered = cases.assign(_library=library_mask(cases)).sort_values(["_library", "order", "variant"])
        return list(ordered["variant"])
    groups = {HARRIS_SERIES: 0, BEYOND_SERIES: 1, **dict.fromkeys(LIBRARY_SERIES_NAMES, 2)}
    cases = frame[(frame["op"] == op) & frame["series"].isin(list(groups))]
    ordered = cases.drop_duplicates("variant").assign(
        _group=lambda d: d["series"].map(groups)
    ).sort_values(["_group", "order", "variant"])
    return list(ordered["variant"])


def _progression_row(variant: str, mine, n: int) -> dict:
    """One variant's row of a progression at size n: its case at the chosen block (the fastest
    valid one), else why it has no time (failed, skipped, or absent at this size)."""
    block = choose_block(mine, n)
    at_n = rows_with_block(mine[mine["n"] == n], block)
    valid = at_n[at_n["valid"]]
    first = mine.iloc[0]
    row = {
        "variant": variant,
        "series": first["series"],
        "origin": first["origin"],
        "hazard": first["hazard"],
        "library": first.get("library") or "",  # how the run names a library variant's library
        "far_from_light": False,
        "work": first.get("work", ""),
        "span": first.get("span", ""),
        "block": block,
        "key": None,
        "anchor": None,
        "status": "absent",
        "reason": None,
        **dict.fromkeys(("time_us", "noise_pct", "gbps", "pct_peak", "pct_copy", "pct_sol", "pct_peak_read"), math.nan),
    }
    if not valid.empty:
        case = valid.sort_values("median_ms").iloc[0]
        row.update(
            key=case["key"],
            anchor=case.get("anchor"),
            status="ok",
            time_us=case["median_ms"] * 1e3,
            noise_pct=case["noise"] * 100,
            gbps=case["gbps"],
            pct_peak=case["pct_peak"],
            pct_copy=case["pct_copy"],
            pct_sol=case.get("pct_sol", math.nan),  # hand-made frames (tests) may lack it
            pct_peak_read=case.get("pct_peak_read", math.nan),
            far_from_light=bool(case.get("far_from_light", False)),
        )
    elif not at_n.empty:
        case = at_n.iloc[0]
        row.update(key=case["key"], anchor=case.get("anchor"), status=case["status"], reason=case["reason"])
    return row


def progression_table(view, n: int, published=()):
    """An op's progression at size n (report/op_view.py: its primary slice, at the parameter values
    it compares): time, noise, GB/s, % of both peaks, step and cumulative speedups, and each
    published progression's time and cumulative speedup beside them."""
    import pandas as pd

    cases = view.compared_primary
    # One selection of the columns read (each selection copies every column), then one per variant.
    read = ("op", "variant", "series", "order", "origin", "hazard", "work", "span", "n", "block", "valid", "key",
            "anchor", "status", "reason", "median_ms", "noise", "gbps", "pct_peak", "pct_copy", "pct_sol",
            "pct_peak_read", "library", "far_from_light")
    by_variant = dict(tuple(cases[[c for c in read if c in cases]].groupby("variant", sort=False)))
    rows = [_progression_row(variant, by_variant[variant], n)
            for variant in progression_variants(cases, view.op, view.is_story)]
    table = pd.DataFrame(rows, columns=None if rows else ["variant", "time_us"])
    if table.empty:
        return table
    table["step_speedup"] = step_speedups(table["time_us"])
    table["cumulative_speedup"] = cumulative_speedups(table["time_us"])
    for source in published:
        times = [source.time_ms(v) for v in table["variant"]]
        first = source.first_time_ms()
        table[f"{source.id}_ms"] = [t if t is not None else math.nan for t in times]
        table[f"{source.id}_cumulative"] = [first / t if t and first else math.nan for t in times]
    return table


@dataclass(frozen=True)
class OrderingDifference:
    """Two consecutive kernels whose order on this device differs from a published progression."""

    earlier: str
    later: str
    here_earlier_us: float
    here_later_us: float
    source_label: str
    source_device: str
    source_earlier_ms: float
    source_later_ms: float

    @staticmethod
    def _verdict(earlier: float, later: float, tie: float) -> str:
        ratio = later / earlier
        if abs(ratio - 1) <= tie:
            return "about as fast"
        return "faster" if ratio < 1 else "slower"

    def here_verdict(self, tie: float = 0.01) -> str:
        """'faster', 'slower' or 'about as fast': the later kernel against the earlier, in this run."""
        return self._verdict(self.here_earlier_us, self.here_later_us, tie)

    def source_verdict(self, tie: float = 0.01) -> str:
        """The same verdict in the published progression."""
        return self._verdict(self.source_earlier_ms, self.source_later_ms, tie)


def ordering_differences(progression, published, tie: float = 0.01) -> list[OrderingDifference]:
    """Consecutive steps (among kernels both sides timed) that go the other way here than in a published progression.

    Changes within `tie` (relative) count as "about as fast" and differ from a clear step either way.
    """
    found = []
    for source in published:
        for difference in compared_steps(progression, source):
            if difference.here_verdict(tie) != difference.source_verdict(tie):
                found.append(difference)
    return found


def compared_steps(progression, source) -> list[OrderingDifference]:
    """Every consecutive pair of Harris-series kernels timed both here and in `source`."""
    if progression.empty:
        return []
    timed = progression[(progression["series"] == HARRIS_SERIES) & progression["time_us"].notna()]
    paired = [(variant, here, source.time_ms(variant)) for variant, here in zip(timed["variant"], timed["time_us"])
              if source.time_ms(variant)]
    return [
        OrderingDifference(a, b, here_a, here_b, source.label, source.device, ref_a, ref_b)
        for (a, here_a, ref_a), (b, here_b, ref_b) in zip(paired, paired[1:])
    ]


def ranking_table(view, n: int):
    """Every variant of the op (its primary slice, report/op_view.py) at size n at its fastest block,
    ranked by median time; valid cases only; each time against the best library's at n
    (`ratio_to_library`: below 1 faster)."""
    cases = view.primary
    cases = cases[(cases["n"] == n) & cases["valid"]]
    best = cases.sort_values(["median_ms", "variant"]).drop_duplicates("variant").reset_index(drop=True)
    library = view.libraries.get(n)
    best["time_us"] = best["median_ms"] * 1e3
    best["ratio_to_library"] = best["median_ms"] / library["median_ms"] if library is not None else math.nan
    best["is_best_library"] = best["variant"] == library["variant"] if library is not None else False
    best["rank"] = range(1, len(best) + 1)
    return best


def unranked_cases(view, n: int):
    """The failed and skipped cases of the op at size n: listed beside the ranking, never in it."""
    cases = view.cases[(view.cases["n"] == n) & (view.cases["status"] != "ok")]
    return cases.sort_values(["variant", "block"], na_position="last")


def best_per_size(view):
    """For each size of the op (its primary slice at the parameter values it compares), the fastest
    valid variant (any block) outside the libraries, and the best library at that size (the op
    view's: the fastest library case there, whichever library it is): its name, time, % of light
    and flag, and the variant's time over its (`ratio_to_library`)."""
    import pandas as pd

    cases = view.compared_primary
    rows = []
    # One grouping of the valid cases (a size with none has no row), a few selections instead of
    # ~10 per size; only the columns read are carried (a selection copies every column).
    columns = [c for c in ("n", "variant", "series", "block", "median_ms", "gbps", "pct_peak", "pct_copy", "pct_sol", "pct_peak_read",
                           "l2_resident", "anchor", "library", "far_from_light") if c in cases]
    for n, at_n in cases.loc[cases["valid"], columns].groupby("n", sort=True):
        overall = at_n.sort_values("median_ms").iloc[0]
        libraries = library_mask(at_n)
        others = at_n[~libraries]
        best = others.sort_values("median_ms").iloc[0] if not others.empty else None
        library = view.libraries.get(int(n))
        chosen = best if best is not None else overall
        facts = library_facts(library)
        rows.append(
            {
                "n": int(n),
                "variant": chosen["variant"],
                "block": block_or_none(chosen["block"]),
                "time_us": chosen["median_ms"] * 1e3,
                "gbps": chosen["gbps"],
                "pct_peak": chosen["pct_peak"],
                "pct_copy": chosen["pct_copy"],
                "pct_sol": chosen.get("pct_sol", math.nan),
                "pct_peak_read": chosen.get("pct_peak_read", math.nan),
                "l2_resident": bool(chosen["l2_resident"]),
                **facts,
                "ratio_to_library": chosen["median_ms"] * 1e3 / facts["library_us"] if library is not None else math.nan,
                "fastest_overall": overall["variant"],
                "anchor": chosen.get("anchor"),
            }
        )
    return pd.DataFrame(rows)
