"""reduce (sum) and reduce_max: one value out. Their inputs, references and checks live here; the
input generators they share with other ops are in primbench/verify/inputs.py."""

from __future__ import annotations

import math

from primbench.ops import OpChecks, register
from primbench.verify import inputs, outcomes
from primbench.verify.inputs import Reference, exact_modulus, exact_sum_values, from_float32, to_float64

DISTRIBUTIONS = {"reduce": ("uniform", "normal", "ill_conditioned"), "reduce_max": ("uniform", "normal")}
DTYPES = ("float32", "float16", "bfloat16", "int32")


def exact_input(op: str, n: int, dtype: str, rng_seed: int):
    """An input whose correct result is known exactly, and that result.

    reduce: the values of inputs.exact_sum_values. reduce_max: every value negative, the maximum
    planted in the very last element, so a kernel that pads with 0 instead of -inf, or drops the
    tail after the last whole 16-byte vector, gets a wrong answer.
    """
    import cupy

    rng = cupy.random.default_rng(rng_seed)
    draws = rng.random(n, dtype=cupy.float64)
    if op == "reduce_max":
        values = -(2.0 + draws.astype(cupy.float32))  # in [-3, -2)
        values[-1] = -1.5
        if dtype == "int32":
            return (values * 1000).astype(cupy.int32), -1500
        return from_float32(values, dtype, cupy), -1.5
    values = exact_sum_values(draws, cupy, exact_modulus(dtype))
    expected = int(values.astype(cupy.int64).sum())
    return from_float32(values, dtype, cupy), expected


def exact_sum_input(n: int, rng_seed: int):
    """float32 values whose sum every summation order computes exactly, and that sum."""
    return exact_input("reduce", n, "float32", rng_seed)


def reference(op: str, x, dtype: str, distribution: str, rng_seed: int) -> Reference:
    """The reference for `op` on input `x` = inputs.random_input(len(x), dtype, distribution, rng_seed)."""
    import cupy

    values = to_float64(x, dtype, cupy)
    if op == "reduce_max":
        return Reference(value=float(values.max()), abs_sum=0.0, exact=True)
    if dtype == "int32":
        total = int(values.sum())  # int64 holds any sum of 2^30 int32 values; wrapped as int32 sums wrap
        return Reference(value=float(inputs.wrap_int32(total)), abs_sum=float(cupy.abs(values).sum()), exact=True)
    result = Reference(value=float(values.sum()), abs_sum=float(cupy.abs(values).sum()), exact=False)
    if distribution == "ill_conditioned":
        result.value, result.exact = inputs.ill_conditioned_exact_sum(len(x), dtype, rng_seed), True
        if dtype == "float32":
            result.serial_float32 = inputs.serial_float32_sum(x.get())
    return result


def check_random(op: str, dtype: str, got: float, ref: Reference, depth: int,
                 unit_roundoff: float = outcomes.FLOAT32_UNIT_ROUNDOFF, result_rounding: float = 0.0, n: int = 1) -> dict:
    """The check on the random input: float sums within depth x unit roundoff x sum|x| (+ the
    plan's result rounding, + the float64 reference's own error when it is not exact); integer
    sums and maxima exactly (max picks an element, it never rounds)."""
    if op == "reduce" and dtype != "int32":
        # A float64 sum of n values errs by at most about log2(n) + 1 roundings of 2^-53 x sum|x|.
        reference_error = 0.0 if ref.exact else (math.ceil(math.log2(max(n, 2))) + 1) * 2.0**-53 * ref.abs_sum
        check = outcomes.check_float_sum(got, ref.value, ref.abs_sum, depth, unit_roundoff, result_rounding, reference_error)
    else:
        check = outcomes.check_float_sum(got, ref.value, 0.0, 0)
    check["reference"] = "exact" if ref.exact else "float64"
    check["abs_sum"] = ref.abs_sum  # the scale of the error bound, kept for the accuracy study
    return check


def failure_reason(exact: dict, random_check: dict, op: str = "reduce") -> str | None:
    """One line saying what a failed verification got wrong, or None if it passed."""
    if exact["got"] is None or random_check["got"] is None:
        return "output is NaN after the operation: not written (it was poisoned with NaN first) or NaN computed"
    if not exact["ok"]:
        if op == "reduce_max":
            return (f"exact check: max of negative values with -1.5 planted last gave {exact['got']:g}, expected "
                    f"{exact['expected']:g} (0 means padding with 0 instead of -inf; less, a dropped tail)")
        off = exact["got"] - exact["expected"]
        return (f"exact check: sum of small integers gave {exact['got']:.0f}, expected {exact['expected']} "
                f"(off by {off:+.0f}: elements missed or counted twice)")
    if not random_check["ok"]:
        if not random_check["tolerance"]:
            return f"random-input check: got {random_check['got']!r}, expected exactly {random_check['expected']!r}"
        return (f"random-input check: error {random_check['error']:.3g} exceeds the tolerance "
                f"{random_check['tolerance']:.3g} (depth {random_check['depth']})")
    return None


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs and the L2 flush buffer; the ill-conditioned input is shuffled through an argsort
    # (8-byte keys and indices); the references are reductions (no array of their own).
    n = case.n
    return 3 * n * itemsize + (16 * n if case.distribution == "ill_conditioned" else 0) + (64 << 20)


def _checks(op: str) -> OpChecks:
    def check_exact(result, expected, _x, _case) -> dict:
        return outcomes.check_exact_sum(outcomes.scalar(result), expected)

    def checked_random(result, ref, plan, case) -> dict:
        check = check_random(op, case.dtype, outcomes.scalar(result), ref, plan.depth, plan.unit_roundoff,
                             plan.result_rounding, case.n)
        if ref.serial_float32 is not None:  # the accuracy study's left-to-right float32 loop
            check["serial_float32"] = ref.serial_float32
        return check

    return OpChecks(
        op=op,
        dtypes=DTYPES,
        distributions=DISTRIBUTIONS[op],
        exact_input=lambda case, rng_seed: exact_input(op, case.n, case.dtype, rng_seed),
        random_input=lambda case, rng_seed: inputs.random_input(case.n, case.dtype, case.distribution, rng_seed),
        reference=lambda x, case, rng_seed: reference(op, x, case.dtype, case.distribution, rng_seed),
        check_exact=check_exact,
        check_random=checked_random,
        failure_reason=lambda exact, random: failure_reason(exact, random, op),
        working_bytes=_working_bytes,
        story=op == "reduce",
        accuracy_pair=("vector_compensated_sum", "vector_load_sum") if op == "reduce" else None,
        step_reasons=STEP_REASONS if op == "reduce" else None,
    )


# What each step of the seeds' progression (Harris's slides, seed 002) changes, in one line.
STEP_REASONS = {
    "reduce0_interleaved_divergent": "start: tid % (2s) leaves most lanes of each warp idle (divergence)",
    "reduce1_interleaved_strided": "no divergent branch, but a strided index: shared-memory bank conflicts",
    "reduce2_sequential": "sequential addressing: no bank conflicts, but half the threads idle from the first step",
    "reduce3_first_add_during_load": "first add during the load: no thread idles in the first step",
    "reduce4_unroll_last_warp_volatile": "last warp unrolled: no loop or __syncthreads for 6 steps (volatile: a hazard)",
    "reduce4_unroll_last_warp_syncwarp": "the same, made safe with __syncwarp()",
    "reduce5_complete_unroll_volatile": "block size a template: every loop unrolled, no loop overhead (hazard)",
    "reduce5_complete_unroll_syncwarp": "the same, made safe with __syncwarp()",
    "reduce6_grid_stride_shuffle": "many elements per thread (grid stride), warp shuffles instead of shared memory",
    "vector_load_sum": "past the seeds: 16-byte loads, 8 in flight per thread, one wave",
    "vector_fixed_tree_deterministic": "16-byte loads on a tree fixed by n: the same bits every run",
    "cub_device_reduce": "the library: CUB DeviceReduce::Sum",
}


REDUCE = register(_checks("reduce"))
REDUCE_MAX = register(_checks("reduce_max"))
