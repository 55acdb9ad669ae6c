"""`primbench profile` for real on the GPU (marker `gpu`): a run's cases under Nsight Compute, the
counters beside the run, DRAM bytes against the declared bytes."""

import subprocess
import sys

import pytest

from primbench.errors import UserError
from primbench.profile import capture
from primbench.runfile import counters
from tests.conftest import REPO

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)


def test_profiling_a_run_puts_real_counters_beside_it(tmp_path):
    try:
        capture.find_ncu()
    except UserError as exc:
        pytest.fail(f"the GPU image must have Nsight Compute: {exc}")
    out = tmp_path / "runs"
    done = subprocess.run([sys.executable, REPO / "bench.py", "run", "--variant", "reduce/vector_load_sum", "--variant",
                           "reduce/reduce1_interleaved_strided", "--sizes", "2^22", "--no-report", "--output", out],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run,) = out.glob("*/*.jsonl")
    done = subprocess.run([sys.executable, REPO / "bench.py", "profile", run], capture_output=True, text=True, cwd=tmp_path)
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    _, cases = counters.load(counters.counters_path_for(run))
    by_variant = {case.key.split("/")[1]: case for case in cases}
    assert set(by_variant) == {"vector_load_sum", "reduce1_interleaved_strided"} and all(c.profiled for c in cases)
    fast = by_variant["vector_load_sum"]
    assert abs(fast.total("dram_read_bytes") / fast.minimal_bytes - 1) < 0.03
    assert by_variant["reduce1_interleaved_strided"].total("shared_load_bank_conflicts") > 100 * max(
        1.0, fast.total("shared_load_bank_conflicts") or 0)
