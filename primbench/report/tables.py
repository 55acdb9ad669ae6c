"""The report's tables: pandas DataFrames (and small records) computed from a run's case frame.

Everything here works on `Run.frame()` (primbench/results.py) plus the header, so it can be
unit-tested on hand-made frames. Failed and skipped cases never count as valid times.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

PROGRESSION_N = 2**25  # the seed's "32M floats"
PREFERRED_BLOCK = 256
STORY_OP = "reduce"
HARRIS_SERIES = "harris"
BEYOND_SERIES = "beyond"  # primbench's kernels past the seeds: the story's last steps before CUB
BASELINE_SERIES = "baseline"
CUB_VARIANT = "cub_device_reduce"
ACCURACY_DISTRIBUTION = "ill_conditioned"
ACCURACY_DTYPE = "float32"
ACCURACY_HEADLINE = ("vector_compensated_sum", "vector_load_sum")  # (compensated, plain tree) compared at the largest n


def is_number(value) -> bool:
    """True for a finite number; False for None, NaN, pd.NA or text."""
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):  # None, pd.NA, text
        return False


def _block_or_none(value):
    """A block size as int, or None for the library's choice (stored as null, NaN or pd.NA)."""
    return int(value) if is_number(value) else None


def annotate(frame, variants_info: dict):
    """The case frame with what the header says of each variant, a nullable-int block and `valid`."""
    import pandas as pd

    frame = frame.copy()
    if frame.empty:  # a run with no cases: the columns the tables read, none of them filled
        for column in ("variant_name", "params", "origin", "hazard", "notes", "deterministic_expected", "work", "span", "noise_pct", "valid"):
            frame[column] = pd.Series(dtype=object)
        return frame
    # pandas turns the library variants' null block into NaN and every block into a float.
    frame["block"] = pd.array([_block_or_none(b) for b in frame["block"]], dtype="Int64")

    declared = [variants_info.get(f"{op}/{name}") or {} for op, name in zip(frame["op"], frame["variant_name"])]
    frame["origin"] = [d.get("origin", "") for d in declared]
    frame["hazard"] = [d.get("hazard") for d in declared]
    frame["notes"] = [d.get("notes", "") for d in declared]
    frame["deterministic_expected"] = [d.get("deterministic_expected") for d in declared]
    frame["work"] = [(d.get("work_span") or ("", ""))[0] for d in declared]
    frame["span"] = [(d.get("work_span") or ("", ""))[1] for d in declared]
    frame["noise_pct"] = frame["noise"] * 100
    frame["valid"] = (frame["status"] == "ok") & frame["median_ms"].map(lambda t: is_number(t) and t > 0)
    return frame


def ops_in(frame) -> list[str]:
    """The ops a run measured, the story's op first."""
    ops = sorted(set(frame["op"])) if not frame.empty else []
    return sorted(ops, key=lambda op: (op != STORY_OP, op))


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


def slices_by_dtype(frame, op: str, primary: tuple[str | None, str | None]) -> list[tuple[str | None, str | None]]:
    """The primary slice (primary_slice's), then for each other dtype of `op` its distribution with the most valid cases."""
    cases = frame[(frame["op"] == op) & frame["valid"] & (frame["distribution"] != ACCURACY_DISTRIBUTION)]
    others = [(dtype, _mode(mine["distribution"])) for dtype, mine in cases.groupby("dtype", sort=True) if dtype != primary[0]]
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


def _param_dict(text) -> dict[str, str]:
    """'bins=256,replicas=8' -> {'bins': '256', 'replicas': '8'} (the frame's `params` column)."""
    return dict(part.split("=", 1) for part in str(text or "").split(",") if "=" in part)


def primary_params(frame, op: str, dtype, distribution) -> str | None:
    """For each of the op's parameters the value with the most valid cases in the slice, as text
    ('bins=256,replicas=8'), or None when its variants have none: tables that compare variants
    hold each parameter at one value, since a step from radius 1 to radius 16 is not a speedup."""
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[cases["valid"]] if cases["valid"].any() else cases
    counts: dict[str, Counter] = {}
    for text in cases["params"]:
        for name, value in _param_dict(text).items():
            counts.setdefault(name, Counter())[value] += 1
    if not counts:
        return None
    return ",".join(f"{name}={counts[name].most_common(1)[0][0]}" for name in sorted(counts))


def _agrees(text, chosen: dict) -> bool:
    """Whether a case's parameters (text) take the chosen value of every parameter both have."""
    return all(chosen.get(name, value) == value for name, value in _param_dict(text).items())


def with_params(frame, op: str, params: str | None):
    """`frame` without the cases of `op` at other values of a parameter than `params` holds
    (unchanged when None); a case is kept when it agrees on every parameter it has, so variants
    with fewer parameters (a histogram's CUB, which has no `replicas`) stay."""
    if params is None:
        return frame
    chosen = _param_dict(params)
    return frame[(frame["op"] != op) | frame["params"].map(lambda text: _agrees(text, chosen))]


def _matches(column, value):
    # A null distribution must select the null rows; `column == None` would select none.
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return column.isna()
    return column == value


def slice_of(frame, op: str, dtype, distribution):
    """The cases of one op, dtype and input distribution."""
    return frame[(frame["op"] == op) & _matches(frame["dtype"], dtype) & _matches(frame["distribution"], distribution)]


def choose_progression_size(frame, op: str = STORY_OP, preferred: int = PROGRESSION_N) -> tuple[int | None, bool]:
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
    present = {b for b in (_block_or_none(x) for x in at_n["block"]) if b is not None}
    if not present:
        return None
    if preferred in present:
        return preferred
    counts = Counter(_block_or_none(x) for x in variant_cases["block"])
    # Ties go to the block nearest the preferred one, so the choice does not depend on run order.
    return max(present, key=lambda b: (counts[b], -abs(math.log2(b) - math.log2(preferred))))


def _rows_with_block(cases, block):
    if block is None:
        return cases[cases["block"].isna()]
    return cases[cases["block"] == block]


def progression_variants(frame, op: str = STORY_OP) -> list[str]:
    """The story's rows: the harris series in its order, primbench's kernels past the seeds, then the
    baseline(s). Another op's progression is every variant in its declared order (baselines last)."""
    if op != STORY_OP:
        cases = frame[frame["op"] == op].drop_duplicates("variant")
        ordered = cases.assign(_baseline=cases["series"] == BASELINE_SERIES).sort_values(["_baseline", "order", "variant"])
        return list(ordered["variant"])
    groups = {HARRIS_SERIES: 0, BEYOND_SERIES: 1, BASELINE_SERIES: 2}
    cases = frame[(frame["op"] == op) & frame["series"].isin(list(groups))]
    ordered = cases.drop_duplicates("variant").assign(
        _group=lambda d: d["series"].map(groups)
    ).sort_values(["_group", "order", "variant"])
    return list(ordered["variant"])


def progression_table(frame, n: int, references=(), op: str = STORY_OP, dtype=None, distribution=None):
    """The reduce progression at size n: time, noise, GB/s, % of both peaks, step and cumulative
    speedups, and each published progression's time and cumulative speedup beside them."""
    import pandas as pd

    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    rows = []
    for variant in progression_variants(cases, op):
        mine = cases[cases["variant"] == variant]
        block = choose_block(mine, n)
        at_n = _rows_with_block(mine[mine["n"] == n], block)
        valid = at_n[at_n["valid"]]
        first = mine.iloc[0]
        row = {
            "variant": variant,
            "series": first["series"],
            "origin": first["origin"],
            "hazard": first["hazard"],
            "work": first.get("work", ""),
            "span": first.get("span", ""),
            "block": block,
            "key": None,
            "status": "absent",
            "reason": None,
            "time_us": math.nan,
            "noise_pct": math.nan,
            "gbps": math.nan,
            "pct_peak": math.nan,
            "pct_copy": math.nan,
        }
        if not valid.empty:
            case = valid.sort_values("median_ms").iloc[0]
            row.update(
                key=case["key"],
                status="ok",
                time_us=case["median_ms"] * 1e3,
                noise_pct=case["noise"] * 100,
                gbps=case["gbps"],
                pct_peak=case["pct_peak"],
                pct_copy=case["pct_copy"],
            )
        elif not at_n.empty:
            case = at_n.iloc[0]
            row.update(key=case["key"], status=case["status"], reason=case["reason"])
        rows.append(row)
    table = pd.DataFrame(rows, columns=None if rows else ["variant", "time_us"])
    if table.empty:
        return table
    table["step_speedup"] = step_speedups(table["time_us"])
    table["cumulative_speedup"] = cumulative_speedups(table["time_us"])
    for reference in references:
        times = [reference.time_ms(v) for v in table["variant"]]
        first = reference.first_time_ms()
        table[f"{reference.id}_ms"] = [t if t is not None else math.nan for t in times]
        table[f"{reference.id}_cumulative"] = [first / t if t and first else math.nan for t in times]
    return table


@dataclass(frozen=True)
class OrderingDifference:
    """Two consecutive kernels whose order on this device differs from a published progression."""

    earlier: str
    later: str
    here_earlier_us: float
    here_later_us: float
    reference_label: str
    reference_device: str
    reference_earlier_ms: float
    reference_later_ms: float

    @staticmethod
    def _verdict(earlier: float, later: float, tie: float) -> str:
        ratio = later / earlier
        if abs(ratio - 1) <= tie:
            return "about as fast"
        return "faster" if ratio < 1 else "slower"

    def here_verdict(self, tie: float = 0.01) -> str:
        """'faster', 'slower' or 'about as fast': the later kernel against the earlier, in this run."""
        return self._verdict(self.here_earlier_us, self.here_later_us, tie)

    def reference_verdict(self, tie: float = 0.01) -> str:
        """The same verdict in the published progression."""
        return self._verdict(self.reference_earlier_ms, self.reference_later_ms, tie)


def ordering_differences(progression, references, tie: float = 0.01) -> list[OrderingDifference]:
    """Consecutive steps (among kernels both sides timed) that go the other way here than in a reference.

    Changes within `tie` (relative) count as "about as fast" and differ from a clear step either way.
    """
    found = []
    for reference in references:
        for difference in compared_steps(progression, reference):
            if difference.here_verdict(tie) != difference.reference_verdict(tie):
                found.append(difference)
    return found


def compared_steps(progression, reference) -> list[OrderingDifference]:
    """Every consecutive pair of Harris-series kernels timed both here and in `reference`."""
    if progression.empty:
        return []
    harris = progression[progression["series"] == HARRIS_SERIES]
    paired = [
        (row["variant"], row["time_us"], reference.time_ms(row["variant"]))
        for _, row in harris.iterrows()
        if is_number(row["time_us"]) and reference.time_ms(row["variant"])
    ]
    return [
        OrderingDifference(a, b, here_a, here_b, reference.label, reference.device, ref_a, ref_b)
        for (a, here_a, ref_a), (b, here_b, ref_b) in zip(paired, paired[1:])
    ]


def best_case(frame, op: str, n: int, exclude_series=(BASELINE_SERIES,), dtype=None, distribution=None):
    """The fastest valid case of `op` at size n outside the excluded series, or None."""
    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[(cases["n"] == n) & cases["valid"] & ~cases["series"].isin(list(exclude_series))]
    if cases.empty:
        return None
    return cases.sort_values("median_ms").iloc[0]


def baseline_variant(frame, op: str) -> str | None:
    """The library variant `op` is compared with: CUB for reduce, else the first of the baseline series."""
    cases = frame[(frame["op"] == op) & (frame["series"] == BASELINE_SERIES)]
    names = list(cases.sort_values(["order", "variant"])["variant"].drop_duplicates())
    if CUB_VARIANT in names:
        return CUB_VARIANT
    return names[0] if names else None


def _name_of(frame, variant: str) -> str:
    """A variant label's name without its parameters ('cub_histogram_even[bins=256]' -> 'cub_histogram_even')."""
    names = frame.loc[frame["variant"] == variant, "variant_name"]
    return names.iloc[0] if not names.empty else variant


def baseline_time_ms(frame, op: str, n: int, dtype=None, distribution=None, variant: str | None = None,
                     params: str | None = None) -> float:
    """The median time of the library baseline at size n (its fastest valid case), or NaN. With
    `params` (a case's parameter text), the baseline by name at the values of the parameters both
    have: CUB's histogram into 32 bins is what a 32-bin kernel is compared with."""
    variant = variant or baseline_variant(frame, op)
    if variant is None:
        return math.nan
    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    if params is None:
        cases = cases[cases["variant"] == variant]
    else:
        chosen = _param_dict(params)
        cases = cases[(cases["variant_name"] == _name_of(frame, variant)) & cases["params"].map(lambda t: _agrees(t, chosen))]
    cases = cases[(cases["n"] == n) & cases["valid"]]
    return float(cases["median_ms"].min()) if not cases.empty else math.nan


def ranking_table(frame, op: str, n: int, dtype=None, distribution=None, baseline: str | None = None):
    """Every variant of `op` at size n at its fastest block, ranked by median time; valid cases only."""
    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[(cases["n"] == n) & cases["valid"]]
    best = cases.sort_values(["median_ms", "variant"]).drop_duplicates("variant").reset_index(drop=True)
    base = baseline_time_ms(frame, op, n, dtype, distribution, baseline)
    best["time_us"] = best["median_ms"] * 1e3
    best["ratio_to_baseline"] = best["median_ms"] / base if is_number(base) else math.nan
    best["rank"] = range(1, len(best) + 1)
    return best


def unranked_cases(frame, op: str, n: int):
    """The failed and skipped cases of `op` at size n: listed beside the ranking, never in it."""
    cases = frame[(frame["op"] == op) & (frame["n"] == n) & (frame["status"] != "ok")]
    return cases.sort_values(["variant", "block"], na_position="last")


def best_per_size(frame, op: str, dtype=None, distribution=None, baseline: str | None = None):
    """For each size of `op`, the fastest valid variant (any block) and how it compares with the baseline."""
    import pandas as pd

    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    rows = []
    for n in sorted(set(cases["n"])):
        best = best_case(cases, op, n, dtype=dtype, distribution=distribution)
        overall = best_case(cases, op, n, exclude_series=(), dtype=dtype, distribution=distribution)
        if overall is None:
            continue
        base = baseline_time_ms(cases, op, n, dtype, distribution, baseline)
        chosen = best if best is not None else overall
        rows.append(
            {
                "n": int(n),
                "variant": chosen["variant"],
                "block": _block_or_none(chosen["block"]),
                "time_us": chosen["median_ms"] * 1e3,
                "gbps": chosen["gbps"],
                "pct_peak": chosen["pct_peak"],
                "pct_copy": chosen["pct_copy"],
                "l2_resident": bool(chosen["l2_resident"]),
                "baseline_us": base * 1e3,
                "ratio_to_baseline": chosen["median_ms"] / base if is_number(base) else math.nan,
                "fastest_overall": overall["variant"],
            }
        )
    return pd.DataFrame(rows)


def bandwidth_lines(frame, op: str, dtype=None, distribution=None):
    """GB/s against n for each variant at one block size (256, the library's, or its most measured)."""
    import pandas as pd

    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    parts = []
    for variant, mine in cases.groupby("variant", sort=False):
        block = choose_block(mine)
        chosen = _rows_with_block(mine, block)
        chosen = chosen[chosen["valid"]].sort_values("n")
        if not chosen.empty:
            parts.append(chosen.assign(chosen_block=block))
    if not parts:
        return pd.DataFrame(columns=["variant", "n", "gbps", "order", "chosen_block"])
    return pd.concat(parts).sort_values(["order", "variant", "n"]).reset_index(drop=True)


def block_sweeps(frame, op: str, dtype=None, distribution=None) -> dict:
    """{n: cases} for every size where some variant was measured at more than one block size."""
    if dtype is None:
        dtype, distribution = primary_slice(frame, op)
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[cases["valid"] & cases["block"].notna()]
    sweeps = {}
    for n, at_n in cases.groupby("n"):
        swept = [v for v, mine in at_n.groupby("variant") if mine["block"].nunique() > 1]
        if swept:
            chosen = at_n[at_n["variant"].isin(swept)]
            sweeps[int(n)] = chosen.sort_values(["order", "variant", "block"]).reset_index(drop=True)
    return sweeps


def distribution_bars(frame, op: str, dtype):
    """Each variant on each input distribution at one size: the size with the most distributions
    (the largest on a tie), each variant at its chosen block size. Empty unless there are two."""
    import pandas as pd

    cases = frame[(frame["op"] == op) & _matches(frame["dtype"], dtype) & frame["valid"]]
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
        chosen = _rows_with_block(mine, block)
        for _, row in chosen.iterrows():
            rows.append({"variant": variant, "order": row["order"], "distribution": row["distribution"], "n": n,
                         "block": block, "median_us": 1e3 * row["median_ms"], "gbps": row["gbps"]})
    return pd.DataFrame(rows).sort_values(["order", "variant"]).reset_index(drop=True)


def param_sweeps(frame, op: str, dtype, distribution, min_values: int = 3) -> list[dict]:
    """Every parameter some variant was measured at `min_values` or more values of, with all else
    fixed: [{'n', 'param', 'dtype', 'lines': {'variant, block B': [(value, GB/s), ...]}}] (seed
    004's K, a histogram's bins), at the largest size it was swept at. Two values (top-k's
    vocabulary with and without a partial last group) are a check, not a sweep."""
    cases = slice_of(frame, op, dtype, distribution)
    cases = cases[cases["valid"]]
    sweeps = {}
    for n, at_n in cases.sort_values(["order", "variant_name", "block"]).groupby("n", sort=True):
        names = sorted({name for text in at_n["params"] for name in _param_dict(text)})
        for name in names:
            lines: dict[str, list] = {}
            for _, row in at_n.iterrows():
                params = _param_dict(row["params"])
                if name not in params:
                    continue
                others = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k != name)
                block = _block_or_none(row["block"])
                label = f"{row['variant_name']}{f'[{others}]' if others else ''}, block {block if block else 'lib'}"
                lines.setdefault(label, []).append((int(params[name]), row["gbps"]))
            lines = {label: sorted(points) for label, points in lines.items() if len({v for v, _ in points}) >= min_values}
            if lines:  # a larger size replaces a smaller one
                sweeps[name] = {"n": int(n), "param": name, "lines": lines}
    return list(sweeps.values())


def determinism_verdict(bitwise_values) -> str:
    """'yes' if every measured case was bitwise equal across runs, 'no' if none, 'mixed', or '' if unmeasured."""
    values = [bool(v) for v in bitwise_values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return ""
    if all(values):
        return "yes"
    if not any(values):
        return "no"
    return "mixed"


def _check_verdict(values) -> str:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return ""
    failed = sum(1 for v in values if not v)
    return "all passed" if not failed else f"{failed} of {len(values)} failed"


def verification_table(frame, op: str):
    """Per variant of `op`: case counts by status, exact and random-input checks, determinism vs declared."""
    import pandas as pd

    cases = frame[frame["op"] == op]
    rows = []
    for variant, mine in cases.groupby("variant", sort=False):
        statuses = Counter(mine["status"])
        ratios = [
            float(e) / float(t)
            for e, t in zip(mine["error"], mine["tolerance"])
            if is_number(e) and is_number(t) and float(t) > 0
        ]
        observed = determinism_verdict(mine.loc[mine["status"] == "ok", "bitwise_equal"])
        expected = mine["deterministic_expected"].iloc[0]
        # A variant promising determinism that was not bitwise equal is a finding; one that makes no
        # promise (atomics) but happened to be equal is not.
        mismatch = bool(expected) and observed in ("no", "mixed")
        rows.append(
            {
                "variant": variant,
                "order": mine["order"].iloc[0],
                "ok": statuses.get("ok", 0),
                "failed": statuses.get("failed", 0),
                "skipped": statuses.get("skipped", 0),
                "exact": _check_verdict(mine["exact_ok"]),
                "random": _check_verdict(mine["random_ok"]),
                "max_error_ratio": max(ratios) if ratios else math.nan,
                "deterministic": observed,
                "deterministic_expected": expected,
                "determinism_mismatch": mismatch,
                "hazard": mine["hazard"].iloc[0],
                "notes": mine["notes"].iloc[0],
            }
        )
    table = pd.DataFrame(rows)
    return table.sort_values(["order", "variant"]).reset_index(drop=True) if not table.empty else table


def failures_table(frame, op: str | None = None):
    """Failed and skipped cases (of one op, or all) with their reasons, in run order."""
    cases = frame[frame["status"] != "ok"]
    if op is not None:
        cases = cases[cases["op"] == op]
    return cases.reset_index(drop=True)


@dataclass
class TimingQuality:
    """How trustworthy the times are: stopping rules hit, flags raised, L2-resident and >100 % cases."""

    measured: int
    stops: dict
    flags: dict
    flagged: object  # DataFrame of valid cases with any flag
    l2_resident: object  # DataFrame of valid cases whose working set fits in L2
    over_peak: object  # DataFrame of valid cases over 100 % of the NVML peak


def timing_quality(frame) -> TimingQuality:
    """Timing quality over the valid cases of a run."""
    valid = frame[frame["valid"]] if not frame.empty else frame
    stops = Counter(s if isinstance(s, str) and s else "unknown" for s in valid["stop"]) if not valid.empty else Counter()
    flags = Counter(f for text in valid.get("flags", []) for f in (text or "").split(",") if f)
    return TimingQuality(
        measured=len(valid),
        stops=dict(stops.most_common()),
        flags=dict(flags.most_common()),
        flagged=valid[valid["flags"].fillna("") != ""] if not valid.empty else valid,
        l2_resident=valid[valid["l2_resident"]] if not valid.empty else valid,
        over_peak=valid[valid["pct_peak"] > 100] if not valid.empty else valid,
    )


def flatten(mapping, prefix: str = "") -> list[tuple[str, object]]:
    """Nested header dicts as (dotted key, value) rows; lists stay whole."""
    rows = []
    for key, value in (mapping or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, name + "."))
        else:
            rows.append((name, value))
    return rows


def _mode(values):
    counts = Counter(v for v in values if v is not None)
    return counts.most_common(1)[0][0] if counts else None


def dtype_table(frame, op: str):
    """Every variant in every dtype at the largest size measured in more than one dtype: time, GB/s,
    % of peak, and its time over the baseline's in the same dtype. Empty when one dtype was run."""
    import pandas as pd

    cases = frame[(frame["op"] == op) & frame["valid"]]
    dtypes_per_n = cases.groupby("n")["dtype"].nunique() if not cases.empty else pd.Series(dtype=int)
    sizes = [int(n) for n, count in dtypes_per_n.items() if count > 1]
    if not sizes:
        return pd.DataFrame(), None
    n = max(sizes)
    at_n = cases[cases["n"] == n]
    distribution = _mode(at_n["distribution"])
    at_n = at_n[_matches(at_n["distribution"], distribution)]
    baseline = baseline_variant(frame, op)
    rows = []
    for (variant, dtype), mine in at_n.groupby(["variant", "dtype"], sort=False):
        best = mine.sort_values("median_ms").iloc[0]
        # The baseline at this row's own parameter values.
        base = baseline_time_ms(frame, op, n, dtype, distribution, baseline, params=best["params"]) if baseline else math.nan
        rows.append({"variant": variant, "order": best["order"], "series": best["series"], "dtype": dtype,
                     "block": _block_or_none(best["block"]), "time_us": best["median_ms"] * 1e3, "gbps": best["gbps"],
                     "pct_peak": best["pct_peak"], "ratio_to_baseline": best["median_ms"] / base if is_number(base) else math.nan})
    table = pd.DataFrame(rows).sort_values(["order", "variant", "dtype"]).reset_index(drop=True)
    return table, {"n": n, "distribution": distribution, "baseline": _name_of(frame, baseline) if baseline else None}


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


def accuracy_study(frame, op: str = STORY_OP) -> Accuracy | None:
    """From the cases on the ill-conditioned input (float32): each variant's |got - exact| / |exact|,
    the host's left-to-right float32 loop, and the floor every float32 result has (its own rounding)."""
    import numpy as np

    cases = frame[(frame["op"] == op) & (frame["distribution"] == ACCURACY_DISTRIBUTION) & (frame["dtype"] == ACCURACY_DTYPE)]
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
        chosen = _rows_with_block(mine, block)
        by_n = {int(n): g for n, g in zip(chosen["n"], chosen["got"])}
        rows.append({"label": variant, "variant": variant, "kind": mine["series"].iloc[0],
                     "errors": [relative(by_n[n], n) if n in by_n else None for n in sizes]})
    rows.append({"label": "float32 rounding of the exact sum (the floor for a float32 result)", "variant": None,
                 "kind": "floor", "errors": [abs(float(np.float32(exact[n])) - exact[n]) / abs(exact[n]) for n in sizes]})
    headline = None
    compensated, plain = (next((r for r in rows if r["variant"] == name), None) for name in ACCURACY_HEADLINE)
    if compensated and plain and is_number(compensated["errors"][-1]) and is_number(plain["errors"][-1]):
        small, large = compensated["errors"][-1], plain["errors"][-1]
        headline = {"n": sizes[-1], "compensated": ACCURACY_HEADLINE[0], "plain": ACCURACY_HEADLINE[1],
                    "compensated_error": small, "plain_error": large,
                    "ratio": small / large if large else math.nan, "verdict": _accuracy_verdict(small, large)}
    return Accuracy(sizes=sizes, rows=rows, headline=headline)


def reproducibility_table(frame, op: str):
    """Per variant of `op`: the same bits across repeated runs, across block sizes (one input, every
    block measured at that size) and across grids (the runner's probe), as yes / no / mixed / ''."""
    import pandas as pd

    cases = frame[(frame["op"] == op) & (frame["status"] == "ok")]
    rows = []
    for variant, mine in cases.groupby("variant", sort=False):
        across_blocks = []
        for _key, same_input in mine[mine["result_hex"].notna()].groupby(["n", "dtype", "distribution"]):
            if same_input["block"].nunique() > 1:
                across_blocks.append(same_input["result_hex"].nunique() == 1)
        recorded = mine["result_hex"].notna().any() if "result_hex" in mine else False
        probed = bool(mine["grids_probed"].any()) if "grids_probed" in mine else False
        rows.append({
            "variant": variant,
            "order": mine["order"].iloc[0],
            "across_runs": determinism_verdict(mine["bitwise_equal"]),
            # Runs made before results were kept (and inputs shared across variants) cannot say.
            "across_blocks": determinism_verdict(across_blocks) or ("not tried" if recorded else "not recorded"),
            "inputs_compared": len(across_blocks),
            "across_grids": determinism_verdict(mine["grids_bitwise_equal"]) or ("not tried" if probed else "not recorded"),
            "deterministic_expected": mine["deterministic_expected"].iloc[0],
        })
    table = pd.DataFrame(rows)
    return table.sort_values(["order", "variant"]).reset_index(drop=True) if not table.empty else table


def pruning_table(frame, copy_gbps: float | None):
    """Top-k's two-stage pruning, from the run: per two-stage variant and row count, its time against
    the full sort and against one read of the logits (their bytes over the measured copy bandwidth),
    and the seed's arithmetic: group scores as a share of the logits, candidates scanned per row.

    Reads the topk cases whose first launch declares its `group` (kernels/topk.py)."""
    import pandas as pd

    cases = frame[(frame["op"] == "topk") & frame["valid"]]
    rows = []
    for _, case in cases.iterrows():
        launches = case["launch_list"] or []
        group = launches[0].get("group") if launches else None
        if not group:
            continue
        vocab = int(dict(case["param_items"])["vocab"])
        # The full sort of the same rows, input and vocabulary (the same parameters).
        same = cases[(cases["n"] == case["n"]) & (cases["distribution"] == case["distribution"])
                     & (cases["params"] == case["params"])]
        sort = same[same["series"] == BASELINE_SERIES]["median_ms"]
        one_read_ms = case["bytes"] / (copy_gbps * 1e9) * 1e3 if copy_gbps else math.nan
        candidates = launches[1].get("candidates") if len(launches) > 1 else None
        groups = launches[0].get("groups_per_row")
        rows.append({
            "variant": case["variant"], "order": case["order"], "rows": int(case["n"]), "distribution": case["distribution"],
            "vocab": vocab, "block": _block_or_none(case["block"]), "time_us": case["median_ms"] * 1e3,
            "sort_us": sort.min() * 1e3 if len(sort) else math.nan,
            "speedup_vs_sort": sort.min() / case["median_ms"] if len(sort) else math.nan,
            "one_read_us": one_read_ms * 1e3, "times_one_read": case["median_ms"] / one_read_ms if one_read_ms else math.nan,
            "group": group, "groups_per_row": groups, "score_share_pct": 100.0 * groups / vocab if groups else math.nan,
            "candidates": candidates, "pruning": vocab / candidates if candidates else math.nan,
        })
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    # One row per variant, row count, input and vocabulary: its fastest block.
    table = table.sort_values("time_us").drop_duplicates(["variant", "rows", "distribution", "vocab"])
    return table.sort_values(["distribution", "vocab", "rows", "order", "variant"]).reset_index(drop=True)
