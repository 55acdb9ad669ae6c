"""Every scan variant against numpy.cumsum on the GPU (marker `gpu`; `make gpu-test`), through the
checks the runner applies.

Sizes: 1, 31, 1000, 2^20 + 7 (multiples of no block size, no tile and no 16-byte vector width)
and 2^26. The single-block seed kernel takes n up to its block size, so it meets the sizes it can.
"""

import numpy
import pytest

from primbench import ops, registry
from primbench.runfile.case_id import CaseId as Case
from primbench.verify import outcomes
from tests.gpu.helpers import run_plan, verify_every_block

pytestmark = pytest.mark.gpu

SIZES = [1, 31, 1000, 2**20 + 7, 2**26]
VARIANTS = registry.variants("scan")
CHECKS = ops.checks("scan")


_INPUTS: dict = {}


def _case(n, dtype, variant="any", block=None):
    return Case("scan", variant, dtype, n, block, "uniform")


def case_inputs(n, dtype):
    """(exact input, its prefix sums, random input, reference), one size and dtype at a time."""
    key = (n, dtype)
    if key not in _INPUTS:
        _INPUTS.clear()
        case = _case(n, dtype)
        exact, expected = CHECKS.exact_input(case, rng_seed=100 + n % 97)
        x = CHECKS.random_input(case, 200 + n % 89)
        _INPUTS[key] = (exact, expected, x, CHECKS.reference(x, case, 200 + n % 89))
    return _INPUTS[key]


def _blocks_or_skip(variant, n):
    """The block sizes at which `variant` can scan n elements; skips the test where there is none."""
    blocks = [b for b in variant.block_sizes or (None,) if variant.takes(n, b)]
    if not blocks:
        pytest.skip(f"{variant.name} runs in one block: n = {n} is past its largest block size")
    return blocks


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.key)
def test_every_scan_is_exact_on_int32_against_numpy_cumsum_at_every_block_size(variant, n, sm_count):
    import cupy

    blocks = _blocks_or_skip(variant, n)
    inputs = case_inputs(n, "int32")
    wanted = numpy.cumsum(inputs[2].get().astype(numpy.int64))
    wanted = ((wanted + 2**31) % 2**32 - 2**31).astype(numpy.int32)  # int32 sums wrap, as in the kernels
    for case, verified in verify_every_block([_case(n, "int32", variant.name, block) for block in blocks], sm_count, inputs):
        block = case.block
        got = cupy.asnumpy(verified.plan.result())  # and, beside the runner's checks, numpy's own cumsum
        bad = numpy.flatnonzero(got != wanted)
        assert bad.size == 0, f"{variant.key} block={block} n={n}: {bad.size} wrong, first at {bad[0]}: {got[bad[0]]} != {wanted[bad[0]]}"


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.key)
def test_every_scan_is_within_its_tolerance_on_float32_and_exact_on_the_integer_valued_input(variant, n, sm_count):
    blocks = _blocks_or_skip(variant, n)
    verify_every_block([_case(n, "float32", variant.name, block) for block in blocks], sm_count, case_inputs(n, "float32"))


@pytest.mark.parametrize("name", ["decoupled_lookback", "decoupled_lookback_status_prefetch", "decoupled_lookback_async_copy",
                                  "round_sums_async_copy"])
def test_the_look_back_scan_stays_exact_over_repeated_calls_with_one_status_array(name, sm_count):
    # The tile status is never cleared: each call's epoch makes the words of the call before read
    # as unpublished. Ten calls on one plan, each checked, would catch a stale prefix.
    variant = registry.get("scan", name)
    n = 2**22 + 5
    exact, expected = CHECKS.exact_input(_case(n, "int32"), rng_seed=9)
    plan = run_plan(variant, exact, n, 256, sm_count, dtype="int32")
    for _ in range(10):
        outcomes.poison(plan.scratch)
        plan.run()
        assert CHECKS.check_exact(plan.result(), expected, exact, _case(n, "int32"))["ok"]


@pytest.mark.parametrize("name,block", [("decoupled_lookback_async_copy", 128), ("decoupled_lookback_async_copy", 1024),
                                        ("round_sums_async_copy", 256), ("round_sums_async_copy", 512),
                                        ("round_sums_async_copy", 1024)])
@pytest.mark.parametrize("grid_scale", [1e-6, 0.5], ids=["one block", "half a wave"])
def test_the_persistent_async_copy_scan_is_exact_when_few_blocks_loop_over_every_tile(grid_scale, block, name, sm_count):
    # The persistent scans' blocks loop over tiles, each keeping its next tiles' copies in flight in
    # a ring of shared-memory buffers: one block alone walks the whole ring many times over (and
    # draws, then resets, every ticket; or, in round_sums_async_copy, gathers every round of one),
    # and n = 2^22 + 5 ends part-way into its last tile (5 elements in for the async copy scan's
    # tiles; 4101 or more for round_sums' 6144- and 12288-element tiles). Three calls on one plan,
    # each checked, would catch a ticket counter left unreset or a status word of the call before
    # read as this call's.
    variant = registry.get("scan", name)
    n = 2**22 + 5
    exact, expected = CHECKS.exact_input(_case(n, "int32"), rng_seed=5)
    plan = run_plan(variant, exact, n, block, sm_count, dtype="int32", grid_scale=grid_scale)
    launch = plan.launches[0]
    assert launch["grid"] < launch["tiles"] and (grid_scale > 1e-3 or launch["grid"] == 1)
    for _ in range(3):
        outcomes.poison(plan.scratch)
        plan.run()
        assert CHECKS.check_exact(plan.result(), expected, exact, _case(n, "int32"))["ok"]


def test_a_scan_that_loses_one_element_is_caught_with_its_position(sm_count):
    # The element check must be able to fail: scanning with one element zeroed changes every prefix
    # from that index on, and the check names that index first.
    variant = registry.get("scan", "decoupled_lookback")
    n = 2**20 + 7
    exact, expected = CHECKS.exact_input(_case(n, "float32"), rng_seed=4)
    broken = exact.copy()
    broken[123457] = 0
    plan = run_plan(variant, broken, n, 256, sm_count, dtype="float32")
    check = CHECKS.check_exact(plan.result(), expected, broken, _case(n, "float32"))
    assert not check["ok"] and check["first_mismatch"]["index"] == 123457
    assert "index 123457" in CHECKS.failure_reason(check, {"ok": True})


def test_an_unwritten_tile_is_reported_as_nan_or_unwritten(sm_count):
    import cupy

    out = cupy.empty(5000, dtype=cupy.float32)
    outcomes.poison([out])
    expected = cupy.arange(5000, dtype=cupy.float64)
    out[:4096] = expected[:4096].astype(cupy.float32)
    check = CHECKS.check_exact(out, expected, None, _case(5000, "float32"))
    assert check["mismatches"] == 5000 - 4096
    assert "NaN or unwritten" in CHECKS.failure_reason(check, {"ok": True})
