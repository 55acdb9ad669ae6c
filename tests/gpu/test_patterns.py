"""Seed 004's other patterns on the GPU (marker `gpu`): every stencil variant at every radius and
block size against numpy, and every top-k variant at k = 8, 64 and 256 against a stable sort, on
random and adversarial inputs, through the checks the runner applies: index for index, or, for a
library that returns any of equal logits (torch.topk, FlashInfer), logit for logit. The library
baselines are among them; where one is not installed, its tests are skipped naming the package."""

import numpy
import pytest

from primbench import ops, registry
from primbench.api import LaunchContext
from primbench.build import load_module
from primbench.runfile.case_id import CaseId as Case
from tests.gpu.helpers import device_limits, op_inputs, run_plan, verify_every_block

pytestmark = pytest.mark.gpu

STENCIL_SIZES = [1, 5, 1000, 2**20 + 3, 2**24 + 1]  # no multiple of a block, a tile or a 4-float vector
RADII = [1, 4, 16]


def _plan(variant, x, case, sm_count):
    return run_plan(variant, x, case.n, case.block, sm_count, dtype=case.dtype, params=case.params)


def numpy_blur(x, radius):
    """seed 004's rule in float64 on the host: zeros outside, 2R + 1 neighbours, divided by 2R + 1."""
    padded = numpy.concatenate([numpy.zeros(radius), x.astype(numpy.float64), numpy.zeros(radius)])
    window = numpy.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1)
    return window.sum(axis=1) / (2 * radius + 1)


@pytest.mark.parametrize("n", STENCIL_SIZES, ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", registry.variants("stencil"), ids=lambda v: v.key)
def test_every_stencil_matches_numpy_at_every_radius_and_block_size(variant, n, sm_count):
    import cupy

    for radius in RADII:
        cases = [Case("stencil", variant.name, "float32", n, block, "uniform", (("radius", radius),))
                 for block in variant.block_sizes or (None,)]
        inputs = op_inputs(cases[0], rng_seed=n % 101)
        # numpy's own windowed sum, made once per input and radius, within the bound the runner uses:
        # the plan's depth (2R + 1 additions; cupyx's reciprocal weights, 2R + 2) and the result's rounding
        host = inputs[2].get()
        wanted = numpy_blur(host, radius)
        window_abs = numpy_blur(numpy.abs(host), radius)
        for case, verified in verify_every_block(cases, sm_count, inputs):
            bound = (verified.plan.depth + 1) * 2.0**-24 * window_abs + 1e-30
            got = cupy.asnumpy(verified.plan.result()).astype(numpy.float64)
            assert numpy.all(numpy.abs(got - wanted) <= bound), case.key


def test_a_stencil_that_treats_the_boundary_as_garbage_is_caught():
    # The exact check must be able to fail: an output whose first element missed its left halo
    # (read 7 instead of 0 outside the array) differs from the expected window sum.
    import cupy

    checks = ops.checks("stencil")
    case = Case("stencil", "any", "float32", 1000, 256, "uniform", (("radius", 4),))
    x, _ = checks.exact_input(case, rng_seed=1)
    out = cupy.asarray(numpy_blur(x.get(), 4).astype(numpy.float32))
    assert checks.check_exact(out, None, x, case)["ok"]
    out[0] += numpy.float32(7 / 9)
    check = checks.check_exact(out, None, x, case)
    assert not check["ok"] and check["first_mismatch"]["index"] == 0


TOPK = registry.variants("topk")


def stable_top8(x_flat, rows, vocab, stride, k=8):
    logits = x_flat.reshape(rows, stride)[:, :vocab]
    return numpy.argsort(-logits, axis=1, kind="stable")[:, :k]


@pytest.mark.parametrize("k", [8, 64, 256])
@pytest.mark.parametrize("distribution", ["normal", "many_ties", "max_in_last_group"])
@pytest.mark.parametrize("vocab", [129280, 129287])
@pytest.mark.parametrize("variant", TOPK, ids=lambda v: v.key)
def test_every_topk_gives_exactly_the_indices_of_a_stable_sort(variant, vocab, distribution, k, sm_count):
    import cupy

    from primbench.kernels.topk import row_stride

    rows = 37
    case = Case("topk", variant.name, "float32", rows, 256 if variant.block_sizes else None, distribution,
                (("k", k), ("vocab", vocab)))
    inputs = op_inputs(case, rng_seed=vocab % 97)
    ((_case, verified),) = verify_every_block([case], sm_count, inputs)  # the runner's checks, then a stable sort's
    host = inputs[2].get()
    wanted = stable_top8(host, rows, vocab, row_stride(vocab), k)
    got = cupy.asnumpy(verified.plan.result()).reshape(rows, k)
    if getattr(verified.plan, "ties_in_any_order_of", None) is not None:  # a library: which of equal logits is its choice
        logits = host.reshape(rows, -1)[:, :vocab]
        got_values, wanted_values = numpy.take_along_axis(logits, got, 1), numpy.take_along_axis(logits, wanted, 1)
        assert numpy.array_equal(got_values, wanted_values), f"{case.key}: logits differ"
        assert all(len(set(row)) == k for row in got.tolist()), f"{case.key}: an index twice in a row"
    else:
        assert numpy.array_equal(got, wanted), f"{case.key}: first bad row {numpy.flatnonzero((got != wanted).any(axis=1))[:1]}"
    if distribution == "max_in_last_group":
        assert (got[:, 0] == vocab - 1).all()


def test_the_seeds_sentinel_with_only_8_groups_loses_the_8th_logit(sm_count):
    # The seed keeps 8 groups with the last one scored +inf: one slot goes to the sentinel, so on
    # random logits (best 8 in 8 different groups) the 8th is not among the candidates. The check
    # catches it; the registered variants keep 9 groups.
    from primbench.kernels.topk import two_stage_plan

    checks = ops.checks("topk")
    variant = registry.get("topk", "two_stage_b16")
    case = Case("topk", variant.name, "float32", 64, 256, "normal", (("vocab", 129280),))
    x = checks.random_input(case, rng_seed=11)
    module = load_module(variant.source, variant.kernels)
    plan = two_stage_plan(16, sentinel_slot=False)(LaunchContext(module, x, 64, 256, sm_count, params=case.params,
                                                                  **device_limits()))
    plan.run()
    check = checks.check_random(plan.result(), checks.reference(x, case, 11), plan, case)
    assert not check["ok"] and check["mismatches"] >= 32  # most rows lose their 8th
    assert check["first_mismatch"]["index"] % 8 == 7  # and only the 8th place is wrong


FUSED = "two_stage_b16_fused"


@pytest.mark.parametrize("rows", [1, 3, 64, 77, 512])
@pytest.mark.parametrize("distribution", ["normal", "many_ties", "max_in_last_group"])
@pytest.mark.parametrize("vocab", [129280, 129287])
def test_the_one_launch_topk_is_exact_at_every_row_count_and_block_size(vocab, distribution, rows, sm_count):
    # The last block of each row refines it (kernels/topk_fused.cu): at 1 and 3 rows a grid of a few
    # blocks per row (the plan then takes 2 groups per thread), at 512 the measured case. The runner's
    # checks (exact input, the reference index for index, the same bits twice and at another grid)
    # at every block size; the tickets are back to zero after each launch.
    import cupy

    variant = registry.get("topk", FUSED)
    cases = [Case("topk", FUSED, "float32", rows, block, distribution, (("vocab", vocab),)) for block in variant.block_sizes]
    inputs = op_inputs(cases[0], rng_seed=rows + vocab % 97)
    for case, verified in verify_every_block(cases, sm_count, inputs):
        assert int(cupy.count_nonzero(verified.plan.tickets)) == 0, case.key
        if distribution == "max_in_last_group":
            assert (verified.plan.result().get().reshape(rows, 8)[:, 0] == vocab - 1).all(), case.key


@pytest.mark.parametrize("persistent", [False, True], ids=["one_chunk_per_block", "persistent"])
@pytest.mark.parametrize("per_thread", [8, 4, 2])
def test_every_one_launch_form_is_exact_and_leaves_its_tickets_zero(per_thread, persistent, sm_count):
    # Each form tools/tune/topk_fused.py times, forced (the registered plan picks one by the row
    # count), on many ties and a partial last group, three launches in a row.
    import cupy

    from primbench.kernels.topk import FUSED_SOURCE, K, fused_name, fused_plan

    checks = ops.checks("topk")
    min_blocks = 3 if persistent else 4
    module = load_module(FUSED_SOURCE, (fused_name(16, K + 1, per_thread, 8, persistent, min_blocks),))
    for rows, vocab, distribution in [(1, 129287, "many_ties"), (77, 129287, "max_in_last_group"), (512, 129280, "many_ties")]:
        case = Case("topk", FUSED, "float32", rows, 256, distribution, (("vocab", vocab),))
        x = checks.random_input(case, rng_seed=rows)
        wanted = checks.reference(x, case, rows)
        plan = fused_plan(16, forms=((per_thread, 8),), persistent=persistent, min_blocks=min_blocks)(
            LaunchContext(module, x, rows, 256, sm_count, params=dict(case.params), **device_limits()))
        for _ in range(3):
            plan.result().fill(-1)
            plan.run()
            check = checks.check_random(plan.result(), wanted, plan, case)
            assert check["ok"], (rows, vocab, distribution, check.get("first_mismatch"))
            assert int(cupy.count_nonzero(plan.tickets)) == 0
        if persistent:
            assert plan.launches[0]["grid"] <= rows * plan.launches[0]["blocks_per_row"]
