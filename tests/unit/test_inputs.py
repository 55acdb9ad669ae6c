"""The input helpers that need no GPU: bfloat16 rounding, the exact-check values, and the
reduce_vector launch rules that must depend on n alone."""

import numpy as np
import pytest

from primbench.verify import inputs


def _bf16_to_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_bfloat16_conversion_rounds_to_nearest_even_like_the_gpu():
    # bfloat16 keeps 7 fraction bits: near 1 its values are 1 + k 2^-7.
    values = np.array([1.0, -255.0, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-12, 3.0e38], dtype=np.float32)
    bits = inputs.from_float32(values, "bfloat16", np)
    assert bits.dtype == np.uint16
    back = _bf16_to_float(bits)
    assert back[0] == 1.0 and back[1] == -255.0  # exact
    assert back[2] == 1.0  # a tie between k = 0 and 1 goes to the even k = 0 (down)
    assert back[3] == 1 + 2.0**-6  # a tie between k = 1 and 2 goes to the even k = 2 (up)
    assert back[4] == 1 + 2.0**-7  # just above a tie: up, although k = 1 is odd
    assert np.isfinite(back[5])


def test_the_exact_check_values_are_representable_in_every_dtype_and_one_mod_the_modulus():
    draws = np.linspace(0, 1, 4096, endpoint=False)
    for dtype in ("float32", "float16", "bfloat16", "int32"):
        modulus = inputs.exact_modulus(dtype)
        values = inputs.exact_sum_values(draws, np, modulus)
        stored = inputs.from_float32(values, dtype, np)
        back = _bf16_to_float(stored) if dtype == "bfloat16" else stored.astype(np.float64)
        assert np.array_equal(back, values), dtype
        assert set(np.unique(values)) == {1.0, 1.0 - modulus}
        assert np.all(np.mod(values, modulus) == 1)


def test_the_fixed_trees_virtual_grid_and_the_load_choice_depend_on_n_and_dtype_alone():
    from primbench.kernels import reduce_vector as rv

    assert rv.virtual_warps_for(1, "float32") == 1
    assert rv.virtual_warps_for(2**28, "float32") == rv.MAX_VIRTUAL_WARPS
    assert rv.virtual_warps_for(2**20, "float32") == 2**20 // (4 * 32 * rv.UNROLL)
    assert rv.load_mode(2**26, "float32") == 1 and rv.load_mode(2**27, "float32") == 0
    assert rv.load_mode(2**27, "float16") == 1 and rv.load_mode(2**28, "bfloat16") == 0


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_every_dtype_has_an_item_size_and_a_storage_type(dtype):
    assert inputs.itemsize(dtype) == np.dtype(inputs.storage_dtype(dtype)).itemsize
