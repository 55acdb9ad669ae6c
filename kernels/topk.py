"""Top-k variants (kernels/topk.cu): seed 004's two-stage pruning at groups of 16 and 8 logits,
and the full sort it avoids (cupy.argsort per row) as the baseline.

A case's n is the number of rows; each row holds `vocab` float32 logits (a parameter, the seed's
129,280 by default), rows padded to 1024 bytes. The output is the 8 best indices per row, best
first, ties to the lower index: exactly what a stable descending sort puts first.

Bytes model: one read of the logits (n x vocab x 4); the group scores (1/16 or 1/8 of that) and
the candidates are what the pruning adds, and the report shows them.
"""

from __future__ import annotations

from primbench.api import LaunchContext, Plan, Variant, register_variant as register, ceil_div as _ceil_div, check_aligned_16 as _check_aligned

SOURCE = "topk.cu"
K = 8  # TOPK_K in topk.cu
VOCABS = (129280, 129287)  # the seed's vocabulary, and one whose last group of 8 or 16 is partial
ROW_ALIGN_BYTES = 1024  # the seed's row alignment
BYTES = "n * vocab * itemsize"
REFINE_BLOCK = 256  # 8 rows (one warp each) per block in the second stage
GROUPS_PER_THREAD = 16  # kPerThread's default in block_max_select


def row_stride(vocab: int) -> int:
    """Floats from one row to the next: the vocabulary padded to ROW_ALIGN_BYTES."""
    per = ROW_ALIGN_BYTES // 4
    return _ceil_div(vocab, per) * per


def two_stage_plan(group: int, sentinel_slot: bool = True):
    """Stage 1: block maxima of every group (+inf for each row's last), each CUDA block keeping its
    best `slots` groups; stage 2: one warp per row picks the best `slots` of those and ranks their
    candidates. `sentinel_slot=False` is the seed's arithmetic taken literally (8 groups, one of
    them the +inf sentinel): kept only for the test that shows it loses the 8th logit."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        vocab = ctx.params["vocab"]
        rows, stride = ctx.n, row_stride(vocab)
        groups_per_row = _ceil_div(vocab, group)
        slots = K + 1 if sentinel_slot else K
        names = (f"block_max_select<{group}, {slots}>", f"topk_refine<{group}, {slots}>")
        first, second = ctx.kernel(names[0]), ctx.kernel(names[1])
        blocks_per_row = _ceil_div(groups_per_row, ctx.block * GROUPS_PER_THREAD)
        picked_per_row = blocks_per_row * slots
        picked_score = cupy.empty(rows * picked_per_row, dtype=cupy.float32)
        picked_group = cupy.empty(rows * picked_per_row, dtype=cupy.int32)
        index = cupy.empty(rows * K, dtype=cupy.int32)
        value = cupy.empty(rows * K, dtype=cupy.float32)
        grid_second = _ceil_div(rows * 32, REFINE_BLOCK)
        _check_aligned(ctx.x)
        i32 = numpy.int32

        def run():
            first((blocks_per_row, rows), (ctx.block,), (ctx.x, picked_score, picked_group, i32(vocab), i32(stride),
                                                         i32(groups_per_row)))
            second((grid_second,), (REFINE_BLOCK,), (ctx.x, picked_score, picked_group, index, value, i32(rows), i32(vocab),
                                                     i32(stride), i32(picked_per_row)))

        return Plan(run=run, result=lambda: index,
                    launches=[{"kernel": names[0], "grid": [blocks_per_row, rows], "block": ctx.block, "group": group,
                               "groups_per_row": groups_per_row},
                              {"kernel": names[1], "grid": grid_second, "block": REFINE_BLOCK, "picked_per_row": picked_per_row,
                               "candidates": slots * group}],
                    depth=0, scratch=[picked_score, picked_group, index, value])

    return prepare


def full_sort_prepare(ctx: LaunchContext) -> Plan:
    """Sort every row (cupy.argsort of the negated logits: CuPy's sort is stable, so ties keep the
    lower index first) and keep the first 8."""
    import cupy

    vocab = ctx.params["vocab"]
    logits = ctx.x.reshape(ctx.n, row_stride(vocab))[:, :vocab]
    state = {}

    def run():
        state["index"] = cupy.argsort(-logits, axis=1)[:, :K].astype(cupy.int32).reshape(-1)

    return Plan(run=run, result=lambda: state["index"],
                launches=[{"kernel": "cupy.argsort (CUB segmented radix sort)", "grid": None, "block": None}], depth=0)


_COMMON = dict(op="topk", bytes_model=BYTES, traffic="read", tolerance_model="exact: the indices a stable descending sort puts first",
               deterministic_expected=True, dtypes=("float32",), params=(("vocab", VOCABS),), grid_independent=True)


def _two_stage(name, order, group):
    register(Variant(
        name=name, origin=f"seed 004 §4.6: block maxima over {group} logits (+inf for the last group), the best groups, "
                          f"an exact top-8 of their {(K + 1) * group} candidates",
        series="seed004", order=order, prepare=two_stage_plan(group), block_sizes=(64, 128, 256),
        source=SOURCE, kernels=tuple(f"{kernel}<{group}, {slots}>" for kernel in ("block_max_select", "topk_refine")
                                     for slots in (K + 1, K)),
        work_span=("V + V/B + (k+1)B per row", "log2(V/B) + log2(kB)"),
        notes="The seed's +inf sentinel takes one of the group slots, so 9 groups are kept, not 8: with 8, the "
              "8th-best logit is lost whenever the best 8 lie in 8 other groups.",
        **_COMMON,
    ))


_two_stage("two_stage_b16", 10, 16)
_two_stage("two_stage_b8", 20, 8)
register(Variant(
    name="full_sort", origin="a full stable sort of every row (cupy.argsort), then the first 8", series="baseline", order=90,
    prepare=full_sort_prepare, block_sizes=(), work_span=("V log V per row", "log^2 V"),
    notes="What the two-stage pruning avoids; includes negating the logits (a sort is ascending).", **_COMMON,
))

# topk_refine picks K + 1 groups per row: a vocabulary of fewer groups would let it pick a
# placeholder group and read before the row. Every allowed vocabulary has thousands.
if min(VOCABS) < (K + 1) * 16:
    raise ValueError(f"kernels/topk.py: every vocabulary must hold at least {(K + 1) * 16} logits")
