"""reduce (sum) and reduce_max: one value out, checked by primbench.inputs and primbench.verify."""

from __future__ import annotations

from primbench import inputs, verify
from primbench.ops import OpChecks, register


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs and the L2 flush buffer; the ill-conditioned input is shuffled through an argsort
    # (8-byte keys and indices); the references are reductions (no array of their own).
    n = case.n
    return 3 * n * itemsize + (16 * n if case.distribution == "ill_conditioned" else 0) + (64 << 20)


def _checks(op: str) -> OpChecks:
    def check_exact(result, expected, _x, _case) -> dict:
        return verify.check_exact_sum(verify.scalar(result), expected)

    def check_random(result, reference, plan, case) -> dict:
        check = verify.check_random(op, case.dtype, verify.scalar(result), reference, plan.depth, plan.unit_roundoff,
                                    plan.result_rounding, case.n)
        if reference.serial_float32 is not None:  # the accuracy study's left-to-right float32 loop
            check["serial_float32"] = reference.serial_float32
        return check

    return OpChecks(
        op=op,
        dtypes=inputs.DTYPES[op],
        distributions=inputs.DISTRIBUTIONS[op],
        exact_input=lambda case, seed: inputs.exact_input(op, case.n, case.dtype, seed),
        random_input=lambda case, seed: inputs.random_input(case.n, case.dtype, case.distribution, seed),
        reference=lambda x, case, seed: inputs.reference(op, x, case.dtype, case.distribution, seed),
        check_exact=check_exact,
        check_random=check_random,
        failure_reason=lambda exact, random: verify.failure_reason(exact, random, op),
        working_bytes=_working_bytes,
    )


REDUCE = register(_checks("reduce"))
REDUCE_MAX = register(_checks("reduce_max"))
