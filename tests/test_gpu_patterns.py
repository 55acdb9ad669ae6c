"""Seed 004's other patterns on the GPU (marker `gpu`): every stencil variant at every radius and
block size against numpy, and every top-k variant index for index against a stable sort, on
random and adversarial inputs, through the checks the runner applies."""

import numpy
import pytest

from primbench import registry
from primbench.api import LaunchContext
from primbench import ops
from primbench.build import load_module
from primbench.model import CaseId as Case
from tests.gpu_helpers import device_limits, run_plan

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

    checks = ops.checks("stencil")
    for radius in RADII:
        case0 = Case("stencil", variant.name, "float32", n, None, "uniform", (("radius", radius),))
        exact, _ = checks.exact_input(case0, seed=n % 101)
        x = checks.random_input(case0, seed=7)
        # The references depend on the input and the radius only: made once, not per block size.
        host = x.get()
        wanted = numpy_blur(host, radius)
        bound = (2 * radius + 2) * 2.0**-24 * numpy_blur(numpy.abs(host), radius) + 1e-30
        reference = checks.reference(x, case0, 7)
        for block in variant.block_sizes or (None,):
            case = Case("stencil", variant.name, "float32", n, block, "uniform", (("radius", radius),))
            plan = _plan(variant, exact, case, sm_count)
            assert checks.check_exact(plan.result(), None, exact, case)["ok"], f"{case.key}: exact input"
            plan = _plan(variant, x, case, sm_count)
            got = cupy.asnumpy(plan.result()).astype(numpy.float64)
            # numpy's own sum, checked within the same bound the runner uses
            check = checks.check_random(plan.result(), reference, plan, case)
            assert check["ok"], f"{case.key}: {check}"
            assert numpy.all(numpy.abs(got - wanted) <= bound), case.key


def test_a_stencil_that_treats_the_boundary_as_garbage_is_caught():
    # The exact check must be able to fail: an output whose first element missed its left halo
    # (read 7 instead of 0 outside the array) differs from the expected window sum.
    import cupy

    checks = ops.checks("stencil")
    case = Case("stencil", "any", "float32", 1000, 256, "uniform", (("radius", 4),))
    x, _ = checks.exact_input(case, seed=1)
    out = cupy.asarray(numpy_blur(x.get(), 4).astype(numpy.float32))
    assert checks.check_exact(out, None, x, case)["ok"]
    out[0] += numpy.float32(7 / 9)
    check = checks.check_exact(out, None, x, case)
    assert not check["ok"] and check["first_mismatch"]["index"] == 0


TOPK = registry.variants("topk")


def stable_top8(x_flat, rows, vocab, stride):
    logits = x_flat.reshape(rows, stride)[:, :vocab]
    return numpy.argsort(-logits, axis=1, kind="stable")[:, :8]


@pytest.mark.parametrize("distribution", ["normal", "many_ties", "max_in_last_group"])
@pytest.mark.parametrize("vocab", [129280, 129287])
@pytest.mark.parametrize("variant", TOPK, ids=lambda v: v.key)
def test_every_topk_gives_exactly_the_indices_of_a_stable_sort(variant, vocab, distribution, sm_count):
    from primbench.kernels.topk import row_stride

    checks = ops.checks("topk")
    rows = 37
    case = Case("topk", variant.name, "float32", rows, 256 if variant.block_sizes else None, distribution, (("vocab", vocab),))
    x = checks.random_input(case, seed=vocab % 97)
    wanted = stable_top8(x.get(), rows, vocab, row_stride(vocab))
    plan = _plan(variant, x, case, sm_count)
    got = plan.result().get().reshape(rows, 8)
    assert numpy.array_equal(got, wanted), f"{case.key}: first bad row {numpy.flatnonzero((got != wanted).any(axis=1))[:1]}"
    exact, expected = checks.exact_input(case, seed=3)
    plan = _plan(variant, exact, case, sm_count)
    assert checks.check_exact(plan.result(), expected, exact, case)["ok"]
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
    x = checks.random_input(case, seed=11)
    module = load_module(variant.source, variant.kernels)
    plan = two_stage_plan(16, sentinel_slot=False)(LaunchContext(module, x, 64, 256, sm_count, params=case.params,
                                                                  **device_limits()))
    plan.run()
    check = checks.check_random(plan.result(), checks.reference(x, case, 11), plan, case)
    assert not check["ok"] and check["mismatches"] >= 32  # most rows lose their 8th
    assert check["first_mismatch"]["index"] % 8 == 7  # and only the 8th place is wrong
