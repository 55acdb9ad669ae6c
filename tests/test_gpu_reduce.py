"""Every reduce variant against its reference on the GPU (marker `gpu`; run with `make gpu-test`).

Sizes include n = 1, 1000 and 2^20 + 3, which are multiples of no block size, and the seed's 2^25.
"""

import pytest

import kernels
from kernels import LaunchContext
from primbench import inputs, verify
from primbench.build import load_module

pytestmark = pytest.mark.gpu

SIZES = [1, 1000, 2**20 + 3, 2**25]
REDUCE_VARIANTS = kernels.variants("reduce")


@pytest.fixture(scope="module")
def sm_count():
    import cupy

    return cupy.cuda.Device().attributes["MultiProcessorCount"]


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"n={n}")
def case_inputs(request):
    import cupy

    n = request.param
    exact, expected = inputs.exact_sum_input(n, seed=1000 + n % 997)
    x = inputs.random_input(n, "float32", "uniform", seed=2000 + n % 991)
    x64 = x.astype(cupy.float64)
    return n, exact, expected, x, float(x64.sum()), float(cupy.abs(x64).sum())


def _run(variant, x, n, block, sm_count):
    module = load_module(variant.source, variant.kernels) if variant.source else None
    plan = variant.prepare(LaunchContext(module, x, n, block, sm_count))
    verify.poison(plan.scratch)
    plan.run()
    return plan, verify.scalar(plan.result())


@pytest.mark.parametrize("variant", REDUCE_VARIANTS, ids=lambda v: v.name)
def test_every_reduce_variant_sums_exactly_and_within_tolerance_at_every_block_size(variant, case_inputs, sm_count):
    n, exact, expected, x, reference, abs_sum = case_inputs
    for block in variant.block_sizes or (None,):
        _plan, got_exact = _run(variant, exact, n, block, sm_count)
        assert got_exact == expected, f"{variant.name} block={block} n={n}: exact sum {got_exact} != {expected}"
        plan, got = _run(variant, x, n, block, sm_count)
        check = verify.check_float_sum(got, reference, abs_sum, plan.depth)
        assert check["ok"], f"{variant.name} block={block} n={n}: {verify.failure_reason({'ok': True, 'got': 0}, check)}"


def test_the_fixed_tree_gives_the_same_bits_for_every_block_size_grid_and_repeat(sm_count):
    variant = kernels.get("reduce", "seed004_fixed_tree_deterministic")
    n = 2**24 + 12345
    x = inputs.random_input(n, "float32", "normal", seed=7)
    patterns = set()
    for block in variant.block_sizes:
        for sms in (1, 7, sm_count):  # the grid is sized from the SM count: three different grids
            for _ in range(3):
                plan, _value = _run(variant, x, n, block, sms)
                patterns.add(plan.result().get().tobytes())
    assert len(patterns) == 1


def test_a_variant_that_skips_the_tail_is_caught_by_the_exact_check(sm_count):
    # The exact check must be able to fail: summing n - 1 of n elements is off by the last value.
    variant = kernels.get("reduce", "reduce2_sequential")
    n = 2**20 + 3
    exact, expected = inputs.exact_sum_input(n, seed=5)
    _plan, got = _run(variant, exact[: n - 1], n - 1, 256, sm_count)
    assert not verify.check_exact_sum(got, expected)["ok"]


def test_poisoned_outputs_that_stay_unwritten_are_reported_as_not_written():
    import cupy

    out = cupy.zeros(1, dtype=cupy.float32)
    verify.poison([out])
    got = verify.scalar(out)
    exact = verify.check_exact_sum(got, 3)
    float_check = verify.check_float_sum(got, 3.0, 3.0, 1)
    assert "not written" in verify.failure_reason(exact, float_check)


def test_device_info_reports_the_nvml_peak_from_clock_and_bus_width():
    from primbench import stats
    from primbench.device import Device

    info = Device().info
    assert info["sm_count"] > 0 and info["l2_bytes"] > 0
    assert info["peak_gbps"] == pytest.approx(stats.peak_gbps(info["max_mem_clock_mhz"], info["bus_width_bits"]), rel=1e-3)


def test_a_variant_that_drops_two_elements_is_caught_by_the_exact_check(sm_count):
    # Two dropped values could cancel with symmetric inputs; the exact check's values cannot.
    variant = kernels.get("reduce", "reduce6_grid_stride_shuffle")
    n = 2**25 + 2
    for seed in range(8):
        exact, expected = inputs.exact_sum_input(n, seed=seed)
        _plan, got = _run(variant, exact[: n - 2], n - 2, 256, sm_count)
        assert not verify.check_exact_sum(got, expected)["ok"]
