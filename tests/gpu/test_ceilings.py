"""The pure-read probe (primbench/measuring/ceilings.py, marker `gpu`): it must be a ceiling, so no real
read kernel may beat it by more than the noise. vector_load_sum at 2^28 reads as fast as the
H200 reads (issue 5: 90.9 % of NVML's peak); the probe must reach at least 98 % of its rate, and
stay under NVML's peak."""

import numpy as np
import pytest

from primbench import registry
from primbench.build import load_module
from primbench.config import subset
from primbench.measuring import ceilings
from primbench.run.runner import Runner, input_key, rng_seed_for
from primbench.runfile import stats

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)


def test_the_read_probe_is_at_least_as_fast_as_the_fastest_read_kernel():
    config = subset.variant_config(("reduce/vector_load_sum",), sizes=(2**28,), blocks=(256,), dtypes=("float32",))
    (case,) = config.cases()
    runner = Runner(config)
    read = ceilings.measure_read(runner.timer, config.timing, runner.device)
    probe_gbps = stats.bandwidth_gbps(read["bytes"], float(np.median(read["samples_ms"])))
    variant = registry.get(case.op, case.variant)
    x = runner._inputs_for(case, rng_seed_for("ceiling", input_key(case)))[2]
    plan = variant.prepare(runner._context(load_module(variant.source, variant.kernels), x, case))
    kernel_gbps = stats.bandwidth_gbps(x.nbytes, float(np.median(runner.timer.measure(plan.run, config.timing).cold_ms)))
    print(f"read probe {probe_gbps:.0f} GB/s, vector_load_sum {kernel_gbps:.0f} GB/s, NVML peak {runner.device.info['peak_gbps']}")
    assert probe_gbps >= 0.98 * kernel_gbps
    assert probe_gbps <= runner.device.info["peak_gbps"]


def _gbps(probe) -> float:
    return stats.bandwidth_gbps(probe["bytes"], float(np.median(probe["samples_ms"])))


def test_the_sized_probes_cover_every_byte_count_a_run_moves_and_rise_with_size():
    config = subset.variant_config(("reduce/vector_load_sum", "scan/decoupled_lookback"), sizes=(1000003, 2**25),
                                   blocks=(256,), dtypes=("float32", "int32"))
    runner = Runner(config)
    sized = runner.sized_ceilings(config.cases())
    wanted = {kind: set() for kind in ("read", "read_write")}
    for case in config.cases():
        variant = registry.get(case.op, case.variant)
        wanted[variant.traffic].add(variant.minimal_bytes(case.n, 4, dict(case.params)))
    assert {p["bytes"] for p in sized["read"]} == wanted["read"] and {p["bytes"] for p in sized["copy"]} == wanted["read_write"]
    for kind in ("read", "copy"):
        rates = [_gbps(p) for p in sorted(sized[kind], key=lambda p: p["bytes"])]
        print(kind, [(p["bytes"], round(_gbps(p))) for p in sized[kind]])
        assert rates[0] < rates[-1] <= runner.device.info["peak_gbps"]  # launch and L2 weigh on the small one


def _kernel_gbps(runner, config) -> float:
    (case,) = config.cases()
    variant = registry.get(case.op, case.variant)
    x = runner._inputs_for(case, rng_seed_for("ceiling", input_key(case)))[2]
    plan = variant.prepare(runner._context(load_module(variant.source, variant.kernels), x, case))
    return stats.bandwidth_gbps(x.nbytes, float(np.median(runner.timer.measure(plan.run, config.timing).cold_ms)))


def test_the_sized_read_probe_at_1_gib_is_the_peak_read_and_beats_the_kernel_at_32_mib():
    config = subset.variant_config(("reduce/vector_load_sum",), sizes=(2**23,), blocks=(256,), dtypes=("float32",))
    runner = Runner(config)
    read = ceilings.measure_read(runner.timer, config.timing, runner.device)
    peak = _gbps(read)
    sized = ceilings.measure_sized(runner.timer, config.timing, runner.device, {2**30, 2**25}, ())
    at = {p["bytes"]: _gbps(p) for p in sized["read"]}
    kernel_gbps = _kernel_gbps(runner, config)
    shapes = [(p["bytes"], p["method"], p["grid"], p["block"]) for p in [read, *sized["read"]]]
    print(f"read probe: 1 GiB {peak:.0f} and sized {at[2**30]:.0f} GB/s; 32 MiB {at[2**25]:.0f} GB/s, "
          f"vector_load_sum {kernel_gbps:.0f}; shapes {shapes}")
    # Two measurements of the same fastest read at 1 GiB: only the run-to-run noise apart.
    assert abs(at[2**30] / peak - 1) < 0.03
    assert at[2**25] >= 0.97 * kernel_gbps


@pytest.mark.parametrize("n", [2**24, 2**25])
def test_the_sized_read_probe_beats_one_wave_of_1024_thread_blocks_at_64_and_128_mib(n):
    """The reference run at 669687e had vector_load_sum at block 1024 reading 110.8 % (64 MiB) and
    106.3 % (128 MiB) of a probe that tried only 256-thread blocks."""
    config = subset.variant_config(("reduce/vector_load_sum",), sizes=(n,), blocks=(1024,), dtypes=("float32",))
    runner = Runner(config)
    sized = ceilings.measure_sized(runner.timer, config.timing, runner.device, {4 * n}, ())
    (probe,) = sized["read"]
    kernel_gbps = _kernel_gbps(runner, config)
    print(f"read probe at {4 * n} B: {_gbps(probe):.0f} GB/s (grid {probe['grid']} x {probe['block']}), "
          f"vector_load_sum block 1024: {kernel_gbps:.0f} GB/s")
    assert _gbps(probe) >= 0.99 * kernel_gbps
