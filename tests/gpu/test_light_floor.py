"""The pytest fixture's `min_light` on the GPU (issue 54's acceptance): a temporary test times two of
primbench's own sums at 2^27 float32 with `gpubench(..., min_light=0.9)`: vector_load_sum (16-byte
loads, near its light) passes, reduce0 (the seed's divergent tree) fails in one line naming its share."""

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

FLOOR_TEST = '''
import cupy
import pytest

from primbench import registry
from primbench.api import LaunchContext
from primbench.build import load_module
from primbench.measuring.device import Device

N = 2**27


@pytest.mark.parametrize("name", ["vector_load_sum", "reduce0_interleaved_divergent"])
def test_the_sum_reaches_90_percent_of_its_speed_of_light(gpubench, name):
    variant = registry.get("reduce", name)
    x = cupy.random.default_rng(7).random(N, dtype=cupy.float32)
    device = Device()
    context = LaunchContext(load_module(variant.source, variant.kernels), x, N, 256, device.sm_count,
                            dtype="float32", **device.sm_limits)
    plan = variant.prepare(context)
    gpubench(plan.run, bytes=x.nbytes, min_light=0.9, label=name)
'''


def test_min_light_passes_the_fast_sum_and_fails_the_seed_s_first_one(tmp_path, repo):
    (tmp_path / "test_floor.py").write_text(FLOOR_TEST)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(tmp_path)],
                            capture_output=True, text=True, cwd=repo, timeout=600)
    print(result.stdout[-3000:])
    assert "1 failed, 1 passed" in result.stdout, result.stdout[-3000:]
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "reduce0_interleaved_divergent" in failed[0]
    assert "of its speed of light" in result.stdout and "under min_light=0.9 (90 %)" in result.stdout
