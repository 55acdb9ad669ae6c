"""The GPU's ceilings measured at run start, beside the copy (runner.measure_copy): the pure-read
rate at 1 GiB (`measure_read`, the run's "peak read"), and the read and copy probes again at every
byte count the run's cases move (`measure_sized`). A case's speed of light is the time a pure read
(or, for an op that writes as much as it reads, a copy) of its own minimal bytes takes, by the same
cold protocol as the case: at 256 MiB a read takes 72.35 us where the 1 GiB rate predicts 62 us on
the H200, so a ceiling measured at another size would call a kernel at its limit 86 % of light.
Below the L2 size both the probe and the case start from a flushed L2 and include their launch:
100 % there means "as fast as a cold pure read of these bytes". See runfile/frame.py's pct_sol
(size-matched) and pct_peak_read (1 GiB), and runfile/io.py's readers of both.
"""

from __future__ import annotations

import dataclasses

from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE, load_module
from primbench.runfile import stats

READ_N = 2**28  # float32 elements, as the copy: 1 GiB, far past L2
READ_BLOCK = 256
NEVER = 0x9E3779B9  # the XOR the probe stores only if it meets it (see kernels/harness.cu)


def _wave_grid(device, block: int) -> int:
    """The read probe's grid of one full wave at `block` threads, by the kernel's own occupancy:
    every SM busy, no tail of a second wave."""
    from cupy.cuda import driver

    kernel = load_module(HARNESS_SOURCE, HARNESS_KERNELS).get_function("primbench_read_probe")
    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, 0)
    return device.sm_count * max(1, per_sm)


def measure_read(timer, policy, device) -> dict:
    """The read probe's cold samples over READ_N float32s (L2 flushed before each, as any case), in
    the fastest of the launch shapes and loads `measure_sized` screens: the run's peak read must not
    lose to its own sized probe at the same 1 GiB. With one fixed shape (a full wave of 256 threads,
    the read-only load) it did, on one H200: 4,324 GB/s against the sized probe's 4,472."""
    (fastest,) = _sized_reads(timer, policy, device, [READ_N * 4])
    return {"n": READ_N, **fastest}


# Each sized probe stops by the run's policy, but within this wall time: tens of sizes, seconds in all.
SIZED_PROBE_MAX_S = 0.25


def measure_sized(timer, policy, device, read_bytes, copy_bytes) -> dict:
    """The read probe over each byte count in `read_bytes`, and a device-to-device copy for each in
    `copy_bytes` (a case's read-and-write bytes: half read, half written), by the cold protocol:
    {"read": [{"bytes", "samples_ms"}...], "copy": [...], "read_method", "copy_method"}. Sizes the
    GPU has no memory for are left out (their cases would be skipped too)."""
    import cupy

    probe = dataclasses.replace(policy, batch_below_us=0.0, max_time_s=min(policy.max_time_s, SIZED_PROBE_MAX_S))
    result = {"read_method": "primbench_read_probe", "copy_method": "cudaMemcpyAsync", "read": [], "copy": []}
    try:
        result["read"] = _sized_reads(timer, probe, device, sorted({int(b) for b in read_bytes if b and b > 0}))
        result["copy"] = _sized_copies(timer, probe, sorted({int(b) for b in copy_bytes if b and b > 1}))
    except cupy.cuda.memory.OutOfMemoryError:
        cupy.get_default_memory_pool().free_all_blocks()
    return result


# The probe's launch shapes tried at each size, as (threads per block, rule): "wave" one full wave
# by occupancy, "sm" one block per SM (vector_reduce's shape at block 1024), or a number of vectors
# per thread; each with both loads (READ_KERNELS). A ceiling must not lose to a kernel: on the H200
# at 64 MiB the probe as first written (one shape, __ldg, a tail of single loads) read 25.6 us where
# vector_load_sum (one 1024-thread block per SM, L1::no_allocate loads) read 23.1; at 32 MiB one
# vector per thread won. Each shape is screened by a few cold samples; the fastest is measured by
# the run's policy.
READ_SHAPES = ((READ_BLOCK, "wave"), (1024, "wave"), (1024, "sm"), (READ_BLOCK, 1), (READ_BLOCK, 8))
SCREEN_SAMPLES = 30
# Both loads (kernels/harness.cu): the read-only path, and one that skips L1 allocation, which the
# H200 reads up to 9 % faster below 512 MiB and which vector_reduce uses there.
READ_KERNELS = ("primbench_read_probe", "primbench_read_probe_no_allocate")


def _read_grids(device, waves: dict, vectors: int) -> list[tuple[int, int]]:
    """The distinct (grid, block) launches READ_SHAPES gives for `vectors` 16-byte vectors; `waves`:
    the full-wave grid at each block size."""
    launches = set()
    for block, rule in READ_SHAPES:
        if rule == "wave":
            grid = min(waves[block], -(-vectors // block))
        elif rule == "sm":
            grid = min(device.sm_count, -(-vectors // block))
        else:
            grid = -(-vectors // (block * rule))
        launches.add((max(1, grid), block))
    return sorted(launches)


def _sized_reads(timer, policy, device, sizes: list[int]) -> list[dict]:
    """The read probe over the first `b` bytes (rounded up to its 16-byte vectors) of one buffer of
    the largest size; L2 is flushed before every sample, so reading a prefix is a cold read."""
    import cupy

    from primbench.verify import inputs

    if not sizes:
        return []
    largest = -(-sizes[-1] // 16) * 16
    data = inputs.random_input(largest // 4, "float32", "uniform", rng_seed=2)
    sink = cupy.zeros(1, dtype=cupy.uint32)
    module = load_module(HARNESS_SOURCE, HARNESS_KERNELS)
    kernels = {name: module.get_function(name) for name in READ_KERNELS}
    screen = dataclasses.replace(policy, min_samples=SCREEN_SAMPLES, max_samples=SCREEN_SAMPLES, max_noise=1.0)
    waves = {block: _wave_grid(device, block) for block, rule in READ_SHAPES if rule == "wave"}  # once per run
    measured = []
    for size in sizes:
        vectors = -(-size // 16)

        def launch(name, grid, block):
            kernel = kernels[name]
            return lambda: kernel((grid,), (block,), (data, cupy.uint64(vectors), cupy.uint32(NEVER), sink))

        shapes = [(name, grid, block) for name in READ_KERNELS for grid, block in _read_grids(device, waves, vectors)]
        shapes.sort(key=lambda shape: stats.summarize(timer.measure(launch(*shape), screen).cold_ms).median)
        name, grid, block = shapes[0]
        samples = timer.measure(launch(name, grid, block), policy).cold_ms
        measured.append({"bytes": size, "method": name, "grid": grid, "block": block,
                         "samples_ms": [round(t, 6) for t in samples]})
    del data, sink
    return measured


def _sized_copies(timer, policy, sizes: list[int]) -> list[dict]:
    """cudaMemcpyAsync of half of each byte count (as much written as read), prefixes of one pair of buffers."""
    import cupy

    if not sizes:
        return []
    half = sizes[-1] // 2
    source, target = cupy.empty(half, dtype=cupy.uint8), cupy.empty(half, dtype=cupy.uint8)
    source.fill(1)
    measured = []
    for size in sizes:
        count = size // 2
        samples = timer.measure(lambda: target.data.copy_from_device_async(source.data, count), policy).cold_ms
        measured.append({"bytes": size, "samples_ms": [round(t, 6) for t in samples]})
    del source, target
    return measured
