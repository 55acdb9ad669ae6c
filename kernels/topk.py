"""Top-k variants (kernels/topk.cu): seed 004's two-stage pruning at groups of 16 and 8 logits,
and the full sort it avoids (cupy.argsort per row) as a baseline (torch.topk and FlashInfer's
top_k: kernels/topk_library.py).

A case's n is the number of rows; each row holds `vocab` float32 logits (a parameter, the seed's
129,280 by default), rows padded to 1024 bytes. The output is the k best indices per row (`k`, a
parameter: 8, 64 or 256), best first, ties to the lower index: exactly what a stable descending
sort puts first. The pruning kernels keep 8 (TOPK_K, registers and one warp's lanes per group):
their cases at another k are skipped, saying so.

Bytes model: one read of the logits (n x vocab x 4); the group scores (1/16 or 1/8 of that) and
the candidates are what the pruning adds, and the report shows them.
"""

from __future__ import annotations

from primbench.api import BASELINE_SERIES, CUPY, CaseUnsupported, LaunchContext, Plan, Variant, register_variant as register
from primbench.api import ceil_div as _ceil_div, check_aligned_16 as _check_aligned

SOURCE = "topk.cu"
K = 8  # TOPK_K in topk.cu
KS = (8, 64, 256)  # the k axis (`params: {k: [...]}`); the first is the default of a sweep that names none
VOCABS = (129280, 129287)  # the seed's vocabulary, and one whose last group of 8 or 16 is partial
ROW_ALIGN_BYTES = 1024  # the seed's row alignment
BYTES = "n * vocab * itemsize"
REFINE_BLOCK = 256  # 8 rows (one warp each) per block in the second stage
GROUPS_PER_THREAD = 16  # kPerThread's default in block_max_select


def row_stride(vocab: int) -> int:
    """Floats from one row to the next: the vocabulary padded to ROW_ALIGN_BYTES."""
    per = ROW_ALIGN_BYTES // 4
    return _ceil_div(vocab, per) * per


def k_of(ctx: LaunchContext) -> int:
    """The case's k (K where the context names none: a test's or a tool's own context)."""
    return ctx.params.get("k", K)


def _refuse_other_k(ctx: LaunchContext, what: str) -> None:
    """CaseUnsupported where the case asks for another k than the kernels' compiled TOPK_K."""
    k = k_of(ctx)
    if k != K:
        raise CaseUnsupported(f"{what} keeps the best {K} of each row (TOPK_K in kernels/topk.cu: a register list and one "
                              f"warp lane per group), not k = {k}")


def two_stage_plan(group: int, sentinel_slot: bool = True):
    """Stage 1: block maxima of every group (+inf for each row's last), each CUDA block keeping its
    best `slots` groups; stage 2: one warp per row picks the best `slots` of those and ranks their
    candidates. `sentinel_slot=False` is the seed's arithmetic taken literally (8 groups, one of
    them the +inf sentinel): kept only for the test that shows it loses the 8th logit."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        _refuse_other_k(ctx, "the two-stage pruning")
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
    lower index first) and keep the first k (any k: the sort does not depend on it)."""
    import cupy

    vocab = ctx.params["vocab"]
    k = k_of(ctx)
    logits = ctx.x.reshape(ctx.n, row_stride(vocab))[:, :vocab]
    state = {}

    def run():
        state["index"] = cupy.argsort(-logits, axis=1)[:, :k].astype(cupy.int32).reshape(-1)

    return Plan(run=run, result=lambda: state["index"],
                launches=[{"kernel": "cupy.argsort (CUB segmented radix sort)", "grid": None, "block": None}], depth=0)


_COMMON = dict(op="topk", bytes_model=BYTES, traffic="read", tolerance_model="exact: the indices a stable descending sort puts first",
               deterministic_expected=True, dtypes=("float32",), params=(("vocab", VOCABS), ("k", KS)), grid_independent=True)


def _two_stage(name, order, group):
    register(Variant(
        name=name, origin=f"seed 004 (its top-k by two-stage pruning section): block maxima over {group} logits "
                          f"(+inf for the last group), the best groups, an exact top-8 of their {(K + 1) * group} candidates",
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


# One launch (kernels/topk_fused.cu): stage 1 as above, and the last CUDA block to finish
# a row refines it with one warp. Forms: (groups per thread, float4 loads in flight); the plan
# takes the first whose grid (one block per chunk of a row) fills one wave of the GPU by the
# kernel's occupancy, else the last: 8 groups per thread measured fastest for stage 1 at 512 rows
# (docs/perf-notes.md), and fewer rows need more, smaller blocks to keep every SM reading.
FUSED_SOURCE = "topk_fused.cu"
FUSED_FORMS = ((8, 8), (4, 8), (2, 8))


def fused_name(group: int, slots: int, per_thread: int, in_flight: int, persistent: bool = False, min_blocks: int = 4) -> str:
    """topk_fused's instantiation. min_blocks: blocks of 256 threads per SM the registers must allow
    (4: 64 registers, no spill for sm_90 in the one-chunk form; the persistent form needs 3: 80)."""
    return f"topk_fused<{group}, {slots}, {per_thread}, {in_flight}, {'true' if persistent else 'false'}, {min_blocks}>"


def _blocks_per_wave(ctx: LaunchContext, kernel) -> int:
    """Blocks of ctx.block threads the GPU holds at once, by the kernel's occupancy (from the driver)."""
    from cupy.cuda import driver

    return ctx.sm_count * max(1, driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, ctx.block, 0))


def fused_plan(group: int = 16, forms: tuple = FUSED_FORMS, persistent: bool = False, min_blocks: int = 4):
    """One launch of topk_fused: one block per chunk of kPerThread x block groups of a row, with the
    first form of `forms` (most groups per thread first) that gives every SM a block, else the last;
    `persistent`: one wave of blocks by occupancy instead, each looping over an equal share of the
    chunks, the first form that fills that wave (tools/tune/topk_fused.py; give it min_blocks=3).
    On the H200 at 64 rows, 8 groups per thread (256 blocks) took 22.9 us against 27.5 for 2 per
    thread (1,024 blocks, one full wave): fewer, longer blocks win once every SM has one."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        _refuse_other_k(ctx, "the one-launch pruning")
        vocab = ctx.params["vocab"]
        rows, stride = ctx.n, row_stride(vocab)
        groups_per_row = _ceil_div(vocab, group)
        slots = K + 1
        for per_thread, in_flight in forms:
            name = fused_name(group, slots, per_thread, in_flight, persistent, min_blocks)
            kernel = ctx.kernel(name)
            blocks_per_row = _ceil_div(groups_per_row, ctx.block * per_thread)
            chunks = rows * blocks_per_row
            wave = _blocks_per_wave(ctx, kernel)
            if chunks >= (wave if persistent else ctx.sm_count):
                break
        if persistent:  # an equal number of chunks per block, in at most one wave
            wave = max(1, min(chunks, round(wave * ctx.grid_scale)))
            grid = _ceil_div(chunks, _ceil_div(chunks, wave))
        else:
            grid = chunks
        picked_per_row = blocks_per_row * slots
        picked_score = cupy.empty(rows * picked_per_row, dtype=cupy.float32)
        picked_group = cupy.empty(rows * picked_per_row, dtype=cupy.int32)
        tickets = cupy.zeros(rows, dtype=cupy.uint32)  # each row's last block wraps its ticket back to 0
        index = cupy.empty(rows * K, dtype=cupy.int32)
        value = cupy.empty(rows * K, dtype=cupy.float32)
        _check_aligned(ctx.x)
        i32 = numpy.int32
        args = (ctx.x, picked_score, picked_group, tickets, index, value, i32(rows), i32(vocab), i32(stride),
                i32(groups_per_row), i32(blocks_per_row))

        def run():
            kernel((grid,), (ctx.block,), args)

        plan = Plan(run=run, result=lambda: index,
                    launches=[{"kernel": name, "grid": grid, "block": ctx.block, "group": group, "groups_per_row": groups_per_row,
                               "groups_per_thread": per_thread, "loads_in_flight": in_flight, "blocks_per_row": blocks_per_row,
                               "picked_per_row": picked_per_row, "candidates": slots * group, "persistent": persistent}],
                    # Not the tickets: they are state the kernel leaves zero, not an output (poisoned, no
                    # block would see itself last).
                    depth=0, scratch=[picked_score, picked_group, index, value])
        plan.tickets = tickets  # for the tests and tools/tune/topk_fused.py: zero after every launch
        return plan

    return prepare


register(Variant(
    name="two_stage_b16_fused", origin="primbench: two_stage_b16 in one launch, the last block of each row refines it "
                                       "(a per-row ticket, one warp)",
    series="beyond", order=15, prepare=fused_plan(16), block_sizes=(64, 128, 256), source=FUSED_SOURCE,
    kernels=tuple(fused_name(16, K + 1, p, f) for p, f in FUSED_FORMS),
    work_span=("V + V/B + (k+1)B per row", "log2(V/B) + log2(kB)"),
    notes="No second launch: each row's refine runs in the last of its blocks to finish, while later rows are read. "
          "Groups per thread: 8 where the grid still fills a wave, else 4 or 2 (fewer rows).",
    **_COMMON,
))


register(Variant(
    name="full_sort", origin="a full stable sort of every row (cupy.argsort, CuPy's CUB segmented radix sort), then the first k",
    series=BASELINE_SERIES, order=90, library=CUPY, prepare=full_sort_prepare, block_sizes=(), work_span=("V log V per row", "log^2 V"),
    notes="What the two-stage pruning avoids; includes negating the logits (a sort is ascending).", **_COMMON,
))

# topk_refine picks K + 1 groups per row: a vocabulary of fewer groups would let it pick a
# placeholder group and read before the row. Every allowed vocabulary has thousands.
if min(VOCABS) < (K + 1) * 16:
    raise ValueError(f"kernels/topk.py: every vocabulary must hold at least {(K + 1) * 16} logits")
