"""The ceilings at the byte counts of the cases the tuning aimed at, not only at the run's 1 GiB.

A run measures its read and copy ceilings once, over 1 GiB (primbench/measuring/ceilings.py,
runner.measure_copy). A kernel that moves fewer bytes pays the same fixed costs (the launch, the
ramp of the first wave, the write-back of the dirty lines the L2 flush left) over less time, so
its best possible rate is lower. This probe times, cold and the harness's way:

- the read probe (kernels/harness.cu) over exactly the bytes of each target case;
- a device-to-device copy moving those bytes (half read, half written);
- the read probe over 16 KB: the fixed cost every cold sample pays, whatever its size;
- the read probe again with the L2 flushed by a read of 2 x L2 instead of the harness's memset.
  The memset leaves L2 full of dirty lines, which the timed kernel must write back as it evicts
  them: up to one L2 of write traffic in every cold sample (nvbench and do_bench flush the same
  way, so the harness keeps it). The difference between the two columns is that write-back.

A target asked at a rate the probe itself cannot reach at that size is proven out of reach.

Usage (on the GPU): python -m tools.probe.ceiling [--json out.json]
"""

import argparse
from pathlib import Path

from tools.common import Tuner, gbps_of

MiB = 2**20
TARGETS = [  # (label, bytes)
    ("16 KB: the fixed cost of a cold sample", 16 * 1024),
    ("histogram uint8 2^28 (read)", 2**28),
    ("top-k 512 x 129,280 float32 logits (read)", 512 * 129_280 * 4),
    ("reduce float16 2^28 = float32 2^27 (read)", 2**29),
    ("stencil float32 2^26 (copy: 2 x 2^28 B)", 2**29),
    ("reduce float32 2^28 (read)", 2**30),
    ("scan int32 2^28 (copy: 2 x 2^30 B)", 2**31),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    import cupy
    from cupy.cuda import driver

    from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE, load_module
    from primbench.measuring.ceilings import NEVER, READ_BLOCK

    tuner = Tuner()
    kernel = load_module(HARNESS_SOURCE, HARNESS_KERNELS).get_function("primbench_read_probe")
    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, READ_BLOCK, 0)
    grid = tuner.device.sm_count * max(1, per_sm)
    sink = cupy.zeros(1, dtype=cupy.uint32)
    flush = tuner.timer.flush_buffer

    def read_probe(data):
        kernel((grid,), (READ_BLOCK,), (data, cupy.uint64(data.nbytes // 16), cupy.uint32(NEVER), sink))

    def clean_flush():  # the same 2 x L2 bytes as the memset, read instead of written
        kernel((grid,), (READ_BLOCK,), (flush, cupy.uint64(flush.nbytes // 16), cupy.uint32(NEVER), sink))

    print(f"{tuner.device.info['name']}: NVML peak {tuner.device.info['peak_gbps']:.0f} GB/s, read probe grid {grid} x {READ_BLOCK}")
    for label, nbytes in TARGETS:
        row = measure_target(tuner, read_probe, clean_flush, label, nbytes)
        print(f"{label:46} {nbytes / MiB:9.3f} MiB  read {row['read_us']:8.2f} us {row['read_gbps']:5d} GB/s   "
              f"copy {row['copy_us']:8.2f} us {row['copy_gbps']:5d} GB/s   read, clean flush "
              f"{row['read_clean_flush_us']:8.2f} us {row['read_clean_flush_gbps']:5d} GB/s", flush=True)
    if args.json:  # raw samples and the device, as a run file keeps them
        import json
        import os

        Path(args.json).write_text(json.dumps({"tool": "tools/probe/ceiling.py", "git": os.environ.get("PRIMBENCH_GIT_SHA"),
                                               "device": tuner.device.info, "rows": tuner.rows}, indent=1, default=str))


def measure_target(tuner, read_probe, clean_flush, label: str, nbytes: int) -> dict:
    """Cold medians over `nbytes`: the read probe after the harness's memset flush and after a
    read flush, and a device-to-device copy of nbytes / 2."""
    import cupy

    from primbench.measuring.timing import PRIMBENCH_COLD, ColdProtocol
    from primbench.runfile import stats

    def cold_samples_ms(operation, protocol=PRIMBENCH_COLD) -> list:
        return [round(t, 6) for t in tuner.timer.measure(operation, tuner.policy, protocol=protocol).cold_ms]

    data = cupy.random.default_rng(7).integers(0, 2**31 - 1, size=nbytes // 4, dtype=cupy.int32)
    half = data[: data.size // 2]
    dst = cupy.empty_like(half)
    samples = {"read": cold_samples_ms(lambda: read_probe(data)),
               "copy": cold_samples_ms(lambda: dst.data.copy_from_device_async(half.data, half.nbytes))}
    samples["read_clean_flush"] = cold_samples_ms(lambda: read_probe(data), ColdProtocol(flush=clean_flush))
    row = dict(label=label, bytes=nbytes, samples_ms=samples)
    for name, values in samples.items():
        us = stats.summarize(values).median * 1e3
        row[f"{name}_us"] = round(us, 2)
        row[f"{name}_gbps"] = round(gbps_of(nbytes, us))
    tuner.rows.append(row)
    return row


if __name__ == "__main__":
    main()
