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

pytestmark = pytest.mark.gpu


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
