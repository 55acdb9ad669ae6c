"""Plugins on the GPU (marker `gpu`): the example's own reduce kernel and the toy op run through
the real CLI, every case verified (exact input, float64 reference, determinism) and timed at sizes
that are multiples of no block size or vector width, and the example appears in the report beside
the built-in variants."""

import subprocess
import sys

import pytest

from primbench.runfile.io import load_run
from tests.conftest import EXAMPLE_PLUGIN, REPO

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)


def _run(tmp_path, *args):
    result = subprocess.run([sys.executable, REPO / "bench.py", "run", *map(str, args), "--output", tmp_path],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    run_file = next(tmp_path.glob("*/*.jsonl"))
    return run_file, load_run(run_file).cases


def test_the_example_plugin_is_verified_at_awkward_sizes_at_every_block_size(tmp_path):
    config = tmp_path / "awkward.yaml"
    config.write_text(f"plugins: [{EXAMPLE_PLUGIN}]\nsweeps:\n  - op: reduce\n    variants: [my_float4_atomic]\n"
                      "    sizes: [1, 3, 1000, '2^20+3', '2^25+1']\n    block_sizes: [128, 256, 512]\n"
                      "    distributions: [uniform, normal, ill_conditioned]\n")
    _run_file, cases = _run(tmp_path, config, "--no-report")
    assert len(cases) == 45 and all(c.status == "ok" for c in cases), [(c.key, c.reason) for c in cases if c.reason]


def test_the_example_plugin_is_verified_timed_and_reported_beside_the_built_in_variants(tmp_path):
    run_file, cases = _run(tmp_path, EXAMPLE_PLUGIN.with_name("config.yaml"), "--sizes", "2^20,2^24+3")
    assert {c.case.variant for c in cases} == {"my_float4_atomic", "vector_load_sum", "cub_device_reduce"}
    assert all(c.status == "ok" and len(c.cold_ms) >= 10 for c in cases), [c.reason for c in cases]
    html = run_file.with_suffix(".html").read_text()
    assert "my_float4_atomic" in html and "vector_load_sum" in html


def test_a_plugin_op_runs_through_the_runner(tmp_path):
    _run_file, cases = _run(tmp_path, REPO / "tests" / "plugins" / "toy_scale.yaml", "--no-report")
    assert len(cases) == 6 and all(c.status == "ok" for c in cases), [c.reason for c in cases]
