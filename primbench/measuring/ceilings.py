"""The GPU's ceilings measured at run start, beside the copy (runner.measure_copy): the pure-read
rate. A case's speed of light is the time its declared minimal bytes take at the ceiling of its
kind of traffic: the read rate for an op that only reads (reduce, histogram, top-k), the copy's
for one that writes as much as it reads (scan, stencil). See runfile/frame.py's sol_us and pct_sol,
and runfile/io.py's read_bandwidth_gbps.
"""

from __future__ import annotations

from primbench.build import load_module
from primbench.registry import HARNESS_KERNELS, HARNESS_SOURCE

READ_N = 2**28  # float32 elements, as the copy: 1 GiB, far past L2
READ_BLOCK = 256
NEVER = 0x9E3779B9  # the XOR the probe stores only if it meets it (see kernels/harness.cu)


def measure_read(timer, policy, device) -> dict:
    """The read probe's cold samples over READ_N float32s (L2 flushed before each, as any case)."""
    import cupy
    from cupy.cuda import driver

    from primbench.verify import inputs

    data = inputs.random_input(READ_N, "float32", "uniform", rng_seed=2)
    sink = cupy.zeros(1, dtype=cupy.uint32)
    kernel = load_module(HARNESS_SOURCE, HARNESS_KERNELS).get_function("primbench_read_probe")
    # One full wave by the kernel's own occupancy: every SM busy, no tail of a second wave.
    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, READ_BLOCK, 0)
    grid = device.sm_count * max(1, per_sm)
    vectors = READ_N * 4 // 16
    samples = timer.measure(lambda: kernel((grid,), (READ_BLOCK,), (data, cupy.uint64(vectors), cupy.uint32(NEVER), sink)),
                            policy).cold_ms
    del data, sink
    return {"n": READ_N, "bytes": READ_N * 4, "method": "primbench_read_probe", "grid": grid, "block": READ_BLOCK,
            "samples_ms": [round(t, 6) for t in samples]}
