"""Which figure a verdict uses (issue 23): under compare's batch_below_us of cold median, the batch
figure where both runs timed it as a CUDA graph; else the cold samples. On copies of a real run
(tests/data/runs/fixture-a), marked test-only as graph-timed and with one case's figure scaled."""

from __future__ import annotations

import gzip
import json

import numpy as np

from primbench.compare import verdicts
from primbench.runfile.io import load_run
from tests.conftest import REPO
from tests.run_copies import edited_copy

FIXTURE = REPO / "tests" / "data" / "runs" / "fixture-a.jsonl.gz"
SMALL = "reduce/vector_float64_accumulate/float32/n=1048576/block=256/uniform"  # 8.3 us cold, 4.7 us batch


def _copy(tmp_path, name, *, method="graph", key=None, figure="batch_ms", factor=1.0):
    plain = tmp_path / "fixture.jsonl"
    if not plain.exists():  # every 6th case and SMALL: enough of each size, and quick to compare
        lines = gzip.decompress(FIXTURE.read_bytes()).decode().splitlines()
        cases = [line for line in lines if json.loads(line).get("kind") == "case"]
        kept = [line for i, line in enumerate(cases) if i % 6 == 0 or f'"{SMALL}"' in line]
        plain.write_text("\n".join([line for line in lines if line not in cases or line in kept]) + "\n")

    def edit(record):
        if record["kind"] != "case":
            return
        if record.get("samples", {}).get("batch_ms"):
            record.setdefault("timing", {})["batch_method"] = method
        if record["key"] == key:
            record["samples"][figure] = [t * factor for t in record["samples"][figure]]

    return load_run(edited_copy(plain, tmp_path / f"{name}.jsonl", edit))


def _pair(pairs, key):
    return next(p for p in pairs if p.text == key)


def test_small_cases_timed_as_graphs_are_judged_on_the_batch_figure(tmp_path):
    base = _copy(tmp_path, "base")
    _, pairs = verdicts.check(base, _copy(tmp_path, "same"))
    small = [p for p in pairs if p.figure == verdicts.BATCH]
    cold = [p for p in pairs if p.figure == verdicts.COLD and p.verdict in verdicts.SPEED_VERDICTS]
    assert len(small) > 40 and all(p.base_ms * 1e3 < 40 * 1.5 for p in small)
    record = {r.key: r for r in base.cases}
    assert all(np.median(record[p.text].cold_ms) * 1e3 >= 40 or not record[p.text].samples.batch_ms for p in cold)
    assert "batch figure: a CUDA graph of" in _pair(pairs, SMALL).note


def test_a_12_percent_slower_batch_fails_the_check_though_cold_did_not_move(tmp_path):
    base = _copy(tmp_path, "base")
    code, pairs = verdicts.check(base, _copy(tmp_path, "slower", key=SMALL, factor=1.12))
    assert code == 1 and _pair(pairs, SMALL).verdict == verdicts.SLOWER and _pair(pairs, SMALL).regressed


def test_cold_noise_under_the_batch_limit_does_not_decide(tmp_path):
    base = _copy(tmp_path, "base")
    code, pairs = verdicts.check(base, _copy(tmp_path, "noisy", key=SMALL, figure="cold_ms", factor=1.25))
    assert code == 0 and _pair(pairs, SMALL).verdict == verdicts.SAME


def test_host_launched_batches_keep_the_cold_figure(tmp_path):
    """Runs made before graphs (or where an operation could not be captured) are judged as before."""
    base = _copy(tmp_path, "base", method="stream")
    _, pairs = verdicts.check(base, _copy(tmp_path, "new", method="stream"))
    assert {p.figure for p in pairs} == {verdicts.COLD}
    mixed = verdicts.compare_runs(base, _copy(tmp_path, "graph"))
    assert {p.figure for p in mixed} == {verdicts.COLD}


def test_the_config_moves_the_limit(tmp_path):
    base = _copy(tmp_path, "base")
    thresholds = verdicts.Thresholds(batch_below_us=0.0)
    pairs = verdicts.compare_runs(base, _copy(tmp_path, "same"), thresholds)
    assert {p.figure for p in pairs} == {verdicts.COLD}
    assert json.dumps(verdicts.Thresholds().batch_below_us) == "40.0"


def test_a_case_ten_times_slower_cold_leaves_the_batch_range_and_is_judged_cold(tmp_path):
    """A change that costs only cold traffic: the batch (hot L2) did not move, the cold median
    went from 8 to 83 us, past batch_below_us on the new side."""
    base = _copy(tmp_path, "base")
    code, pairs = verdicts.check(base, _copy(tmp_path, "cold10x", key=SMALL, figure="cold_ms", factor=10.0))
    pair = _pair(pairs, SMALL)
    assert pair.figure == verdicts.COLD and pair.verdict == verdicts.SLOWER and code == 1
