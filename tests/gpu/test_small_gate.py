"""Small kernels can be gated (issue 23, marker `gpu`): at 2^20 (about 8 us cold) a change that
adds one tiny launch is SLOWER in `check`, on the graph-batch figure, and the same code run twice
passes."""

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)
PLUGINS = REPO / "tests" / "plugins"


def _run(tmp_path, name, plugin):
    out = tmp_path / name
    done = subprocess.run([sys.executable, REPO / "bench.py", "run", "--plugin", PLUGINS / plugin, "--variant",
                           "reduce/test_only_small_sum", "--sizes", "2^20", "--no-report", "--output", out],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run_file,) = out.glob("*/*.jsonl")
    return run_file


def _check(tmp_path, new, base):
    return subprocess.run([sys.executable, REPO / "bench.py", "check", new, "--baseline", base,
                           "--markdown", tmp_path / "check.md"], capture_output=True, text=True, cwd=tmp_path)


def test_one_extra_tiny_launch_is_slower_and_the_same_code_passes(tmp_path):
    base = _run(tmp_path, "base", "small_sum.py")
    again = _run(tmp_path, "again", "small_sum.py")
    slower = _run(tmp_path, "slower", "small_sum_extra_launch.py")
    record = next(r for r in map(json.loads, base.read_text().splitlines()) if r.get("kind") == "case")
    assert record["timing"]["batch_method"] == "graph", record["timing"]
    same = _check(tmp_path, again, base)
    print(same.stdout[-1500:])
    assert same.returncode == 0, same.stdout[-2000:] + same.stderr[-2000:]
    flagged = _check(tmp_path, slower, base)
    print(flagged.stdout[-1500:])
    assert flagged.returncode == 1, flagged.stdout[-2000:] + flagged.stderr[-2000:]
    assert "test_only_small_sum" in flagged.stdout and "SLOWER" in flagged.stdout
    assert "batch figure" in (tmp_path / "check.md").read_text()
