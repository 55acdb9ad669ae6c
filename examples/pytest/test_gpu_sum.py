"""An ordinary GPU kernel test that also times the kernel, with primbench's pytest plugin (it comes
with primbench: `pip install primbench[cuda13]`, or a clone's `make test` venv).

    pytest examples/pytest                                   # checks the result, times the sum
    pytest examples/pytest --gpubench-save main              # keeps the timings as baseline "main"
    pytest examples/pytest --gpubench-compare main           # fails a test SLOWER than "main" (5 % and 4 us)
    GPUBENCH_EXAMPLE_SLOWDOWN=0.1 pytest examples/pytest --gpubench-compare main   # a slowdown to see it fail

Without an NVIDIA GPU the test is skipped, in one line.
"""

import os

import pytest

N = 2**27
# A deliberate slowdown, to try the gate: an extra pass over this share of the input.
SLOWDOWN = float(os.environ.get("GPUBENCH_EXAMPLE_SLOWDOWN", "0"))


def test_the_sum_is_right_and_fast(gpubench):
    cupy = pytest.importorskip("cupy")
    x = cupy.random.default_rng(7).random(N, dtype=cupy.float32)
    extra = x[: int(SLOWDOWN * N)]

    def total():
        result = x.sum()
        if extra.size:
            extra.sum()
        return result

    assert abs(float(total()) - float(x.astype(cupy.float64).sum())) < 1e-3 * N  # right first
    timing = gpubench(total, bytes=x.nbytes, label="sum of 2^27 floats")
    assert timing.converged, timing
