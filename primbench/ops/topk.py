"""topk (the k largest logits of each row, best first, ties to the lower index): inputs, reference,
checks. A case's n is the number of rows; the vocabulary and k are the case's `vocab` and `k`
parameters (k = 8 where a case names none); rows are padded to 1024 bytes (kernels/topk.py) and
the padding holds +inf, so a kernel that reads past the vocabulary picks it up and fails.

Inputs: `normal` (N(0, 3^2) logits); `many_ties` (every logit one of 1, 2, 3, 4: thousands of ties
for each place, decided by the index alone); `max_in_last_group` (normal, the row's maximum at its
last index, inside the last group: partial when the vocabulary is not a multiple of the group).
The exact input plants k distinct large values at random places of each row (one at the last
index), so its answer is known without sorting. Both are checked index for index, except that a
plan with `ties_in_any_order_of` set to its input (a library that does not promise which of equal
logits it returns: torch.topk, FlashInfer) passes the random check when the logits at its indices
are the expected values, place by place, from distinct indices of the row.
"""

from __future__ import annotations

import math

from primbench.ops import OpChecks, register
from primbench.ops.sections import Bar, Column, Section
from primbench.verify import outcomes

K = 8  # where a case names no k
FULL_SORT = "full_sort"  # what the pruning avoids: its table's baseline (kernels/topk.py)
DISTRIBUTIONS = ("normal", "many_ties", "max_in_last_group")


def k_of(case) -> int:
    return case.params.get("k", K)


def _shape(case) -> tuple[int, int, int]:
    from primbench.kernels.topk import row_stride

    vocab = case.params["vocab"]
    return case.n, vocab, row_stride(vocab)


def _padded(values, stride: int):
    """rows x vocab logits -> the flat padded layout, padding +inf."""
    import cupy

    rows, vocab = values.shape
    out = cupy.full((rows, stride), cupy.inf, dtype=cupy.float32)
    out[:, :vocab] = values
    return out.reshape(-1)


def _logits(case, rng_seed: int, distribution: str):
    import cupy

    rows, vocab, _stride = _shape(case)
    rng = cupy.random.default_rng(rng_seed)
    if distribution == "many_ties":
        return rng.integers(1, 5, (rows, vocab), dtype=cupy.int64).astype(cupy.float32)
    values = rng.standard_normal((rows, vocab), dtype=cupy.float32) * 3
    if distribution == "max_in_last_group":
        values[:, -1] = 100.0
    elif distribution != "normal":
        raise ValueError(f"unknown distribution {distribution!r}")
    return values


def random_input(case, rng_seed: int):
    return _padded(_logits(case, rng_seed, case.distribution), _shape(case)[2])


def exact_input(case, rng_seed: int):
    """Normal logits with k planted values 1000 - r (r = 0..k-1) per row: the r-th at a random place
    (distinct within the row), the one of rank 2 always at the last index. Distinct values far above
    any normal logit: no tie decides the answer, so it is exact for every variant."""
    import cupy

    rows, vocab, stride = _shape(case)
    k = k_of(case)
    values = _logits(case, rng_seed, "normal")
    rng = cupy.random.default_rng(rng_seed ^ 0x70B)
    # Distinct places per row: the first k of a random permutation of 0..vocab-2, then rank 2 -> last.
    places = cupy.argsort(rng.random((rows, vocab - 1)), axis=1)[:, :k].astype(cupy.int64)
    places[:, 2] = vocab - 1
    planted = (1000.0 - cupy.arange(k, dtype=cupy.float32))[None, :].repeat(rows, axis=0)
    values[cupy.arange(rows)[:, None], places] = planted
    return _padded(values, stride), places.reshape(-1).astype(cupy.float64)


def reference(x, case, rng_seed: int):
    """The first k by (value descending, index ascending), by a route the full sort does not take:
    each logit becomes one unique 64-bit key, its order-preserving bits inverted above its index,
    and an ascending sort of the keys needs no stability (the baseline negates and relies on it)."""
    import cupy

    rows, vocab, stride = _shape(case)
    logits = cupy.ascontiguousarray(x.reshape(rows, stride)[:, :vocab])
    bits = cupy.where(logits == 0, cupy.float32(0), logits).view(cupy.uint32)  # -0 ties with +0, as in the kernels
    ordered = cupy.where(bits >> 31 == 1, ~bits, bits | cupy.uint32(0x80000000))  # larger float, larger key
    keys = ((~ordered).astype(cupy.uint64) << cupy.uint64(32)) | cupy.arange(vocab, dtype=cupy.uint64)[None, :]
    first = cupy.sort(keys, axis=1)[:, :k_of(case)] & cupy.uint64(0xFFFFFFFF)
    return first.reshape(-1).astype(cupy.float64)


def check_random(result, expected, plan, case) -> dict:
    logits = getattr(plan, "ties_in_any_order_of", None)
    if logits is not None:
        return check_values(result, expected, logits, case)
    check = outcomes.check_array(result, expected)
    check["reference"] = "sort of (value, index) keys"
    return check


def check_values(result, expected, x, case) -> dict:
    """For a library that may return any of equal logits: the logits at its indices, place by place,
    against those at the reference's; an index outside the vocabulary, or twice in a row, reads NaN."""
    import cupy

    rows, vocab, stride = _shape(case)
    k = k_of(case)
    logits = x.reshape(rows, stride)
    got = result.reshape(rows, k).astype(cupy.int64)
    valid = (got >= 0) & (got < vocab)
    earlier = cupy.tri(k, k, -1, dtype=bool)  # [i, j]: j comes before i (k x k per row: at most 256 x 256)
    repeated = ((got[:, :, None] == got[:, None, :]) & earlier[None]).any(axis=2)
    values = cupy.take_along_axis(logits, cupy.where(valid, got, 0), axis=1).astype(cupy.float64)
    values = cupy.where(valid & ~repeated, values, cupy.nan)
    wanted = cupy.take_along_axis(logits, expected.reshape(rows, k).astype(cupy.int64), axis=1).astype(cupy.float64)
    check = outcomes.check_array(values.reshape(-1), wanted.reshape(-1))
    check["reference"] = "the logits at a sort's indices (ties in any order)"
    return check


def _working_bytes(case, itemsize: int) -> int:
    rows, _vocab, stride = _shape(case)
    # Two inputs; the reference's and the baseline's sorts (keys, indices, CUB's buffers).
    return 2 * rows * stride * 4 + 4 * rows * stride * 8 + (64 << 20)


def pruning_table(frame, copy_gbps: float | None):
    """Top-k's two-stage pruning, from the run: per two-stage variant and row count, its time against
    the full sort and against one read of the logits (their bytes over the measured copy bandwidth),
    and the seed's arithmetic: group scores as a share of the logits, candidates scanned per row.

    Reads the topk cases whose first launch declares its `group` (kernels/topk.py)."""
    import pandas as pd

    from primbench.runfile.frame import block_or_none

    cases = frame[(frame["op"] == "topk") & frame["valid"]]
    rows = []
    for _, case in cases.iterrows():
        launches = case["launch_list"] or []
        group = launches[0].get("group") if launches else None
        if not group:
            continue
        vocab = int(dict(case["param_items"])["vocab"])
        # The full sort of the same rows, input, vocabulary and k (the same parameters); not the
        # other libraries of the baseline series (torch.topk, FlashInfer), which prune too.
        same = cases[(cases["n"] == case["n"]) & (cases["distribution"] == case["distribution"])
                     & (cases["params"] == case["params"])]
        sort = same[same["variant_name"] == FULL_SORT]["median_ms"]
        one_read_ms = case["bytes"] / (copy_gbps * 1e9) * 1e3 if copy_gbps else math.nan
        candidates = launches[-1].get("candidates")  # the refine's launch (the only one when fused)
        groups = launches[0].get("groups_per_row")
        rows.append({
            "variant": case["variant"], "order": case["order"], "series": case["series"], "anchor": case.get("anchor"),
            "rows": int(case["n"]), "distribution": case["distribution"],
            "vocab": vocab, "block": block_or_none(case["block"]), "time_us": case["median_ms"] * 1e3,
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


PRUNING_COLUMNS = (
    Column("distribution", "input", "code"), Column("vocab", "V", "count"), Column("rows", "rows", "count"),
    Column("variant", "variant", "code"), Column("block", "block", "block"), Column("time_us", "time µs", "us"),
    Column("sort_us", "full sort µs", "us"), Column("speedup_vs_sort", "vs full sort", "faster"),
    Column("one_read_us", "one read µs", "us"), Column("times_one_read", "× one read", "times"),
    Column("group", "B", "count"), Column("groups_per_row", "scores / row", "count"),
    Column("score_share_pct", "% of logits", "pct"), Column("candidates", "candidates", "count"),
    Column("pruning", "pruning", "times"),
)


def report_sections(view) -> list[Section]:
    """Top-k's own section: what the two-stage pruning saves (pruning_table), each row a mark."""
    table = pruning_table(view.cases, view.copy_gbps)
    if table.empty:
        return []
    rows = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in table.to_dict("records")]
    bars = [Bar(f"{r['variant']} · {r['distribution']} · V={r['vocab']} · {r['rows']} rows", r["time_us"], r["series"],
                r["anchor"]) for r in rows]
    return [Section(
        name="pruning", title="what the two-stage pruning saves",
        caption="The pruning arithmetic of seed 004's top-k section, from this run's launches: a row of V logits gives "
                "V / B group scores (their share of the logits' bytes) and (k + 1) x B candidates (the +inf sentinel "
                "group takes a slot, so 9 groups are kept). Pruning is V / candidates. \"One read\" is the logits' "
                "bytes over the copy bandwidth measured at the start of the run.",
        columns=PRUNING_COLUMNS, rows=rows, bars=bars, bars_title=f"{view.op}: time of each kernel per input",
        bars_caption="Each row of the table below as a mark: the kernel's median time on that input, vocabulary "
                     "and number of rows.")]


TOPK = register(OpChecks(
    op="topk",
    dtypes=("float32",),
    distributions=DISTRIBUTIONS,
    exact_input=exact_input,
    random_input=random_input,
    reference=reference,
    check_exact=lambda result, expected, _x, _case: outcomes.check_array(result, expected),
    check_random=check_random,
    failure_reason=lambda exact, random: outcomes.array_failure_reason(exact, random, "k planted maxima per row"),
    working_bytes=_working_bytes,
    input_params=("vocab", "k"),
    baseline=FULL_SORT,
    size_unit="rows",
    report_sections=report_sections,
))
