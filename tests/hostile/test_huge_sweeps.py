"""A sweep of 10^8 cases, accepted with --allow-large: `run --dry-run` prints its cases as it makes
them, from the first second, in the memory of a few cases, and stops when its reader has gone;
the cases are the same, in the same order and each once, however the sweeps overlap."""

from __future__ import annotations

import dataclasses
import itertools
import time

import pytest

import primbench.cli.main  # noqa: F401 (imported here once: the forked child then starts at once)
import primbench.config.loading  # noqa: F401
from primbench import registry
from primbench.config.loading import load_config
from tests.hostile import harness

MB = 1 << 20
# Histogram cases per size: 9 variants x 6 block sizes x 2 dtypes x 4 distributions x 15 parameter
# pairs = 6,480 at most (fewer once each variant takes its own). 20,000 sizes: up to 130 million
# cases, 14 million real ones; the old expansion held them all (gigabytes) before printing one.
SIZES = 20_000
HUGE = ("sweeps:\n  - {op: histogram, variants: ['*'], block_sizes: {pow2: [5, 10]}, dtypes: [uint8, int32],\n"
        "     distributions: [uniform, skewed, all_equal, image], params: {bins: [256, 32, 1024], replicas: [8, 2, 4, 16, 32]},\n"
        "     sizes: [" + ", ".join(str(1000 + i) for i in range(SIZES)) + "]}\n")


def test_a_dry_run_of_a_hundred_million_cases_streams_in_bounded_memory_and_stops_with_its_reader(tmp_path):
    (tmp_path / "huge.yaml").write_text(HUGE)
    streamed = harness.stream_cli(["run", "huge.yaml", "--dry-run", "--allow-large"], tmp_path, tmp_path / "out",
                                  lines=5000, memory_cap=400 * MB, timeout=20)
    where = f"exit {streamed.code}, first line after {streamed.first_line_s} s, stderr {streamed.stderr[-400:]!r}"
    assert len(streamed.lines) == 5000 and streamed.lines[0] == "histogram/seed004_global_atomic/uint8/n=1000/block=128/uniform/bins=256", where
    # About 0.6 s here, most of it PyYAML reading 20,000 sizes; the old expansion printed nothing in 90 s.
    assert streamed.first_line_s < 8, where
    assert streamed.rss_growth_bytes < 200 * MB, f"{streamed.rss_growth_bytes / MB:.0f} MB; {where}"
    # The reader has gone: the child stops at its next line, quietly, as after any closed pipe.
    assert (streamed.code, streamed.stderr) == (141, "") and streamed.exit_s < 5, where


def test_a_refused_huge_sweep_still_says_so_before_making_any_case(tmp_path):
    (tmp_path / "huge.yaml").write_text(HUGE)
    outcome = harness.run_cli(["run", "huge.yaml", "--dry-run"], tmp_path, tmp_path / "out")
    bound = len(registry.variants("histogram")) * 6 * 2 * 4 * 15 * SIZES  # the axes' product, every variant counted
    assert outcome.code == 2 and "--allow-large" in outcome.stderr and f"{bound:,}" in outcome.stderr, outcome.stderr


def _keys_as_before(config) -> list[str]:
    """The expansion as it was: every sweep's product, deduplicated by key in a dict."""
    from primbench import ops, registry
    from primbench.runfile.case_id import CaseId

    seen = {}
    for sweep in config.sweeps:
        for name in sweep.variants:
            variant = registry.get(sweep.op, name)
            blocks = [b for b in sweep.block_sizes if b in variant.block_sizes] if variant.block_sizes else [None]
            dtypes = [d for d in sweep.dtypes if d in variant.dtypes]
            for n, block, dtype, dist, params in itertools.product(sweep.sizes, blocks, dtypes, sweep.distributions,
                                                                   sweep.param_grid(variant)):
                if variant.takes(n, block) and not ops.checks(sweep.op).refuses(dtype, dict(params)):
                    case = CaseId(sweep.op, name, dtype, n, block, dist, params)
                    seen.setdefault(case.key, case.key)
    return list(seen.values())


OVERLAPS = {
    "the same sweep twice (a YAML alias)": "  - &s {op: reduce, variants: ['reduce2_*', cub_device_reduce], sizes: [1000, 4096]}\n  - *s\n",
    "a sweep inside another": "  - {op: reduce, variants: ['*'], sizes: {pow2: [10, 14]}, block_sizes: [128, 256]}\n"
                              "  - {op: reduce, variants: [vector_load_sum], sizes: [4096], block_sizes: [256]}\n",
    "two sweeps that share a corner": "  - {op: reduce, variants: ['vector_*'], sizes: [1000, 2000], dtypes: [float32, int32]}\n"
                                      "  - {op: reduce, variants: ['*_sum'], sizes: [2000, 3000], dtypes: [int32, float16]}\n",
    "repeats within one sweep's axes": "  - {op: reduce, variants: [vector_load_sum], sizes: [1000], block_sizes: [256, 128, 256],\n"
                                       "     dtypes: [float32, float32], distributions: [normal, uniform, normal]}\n",
    "parameters in two sweeps": "  - {op: stencil, variants: ['*'], sizes: [4096], params: {radius: [1, 4]}}\n"
                                "  - {op: stencil, variants: ['*'], sizes: [4096, 8192], params: {radius: [4, 16]}}\n",
    "other ops between": "  - {op: scan, variants: ['*'], sizes: [1000]}\n  - {op: reduce, variants: ['reduce2_*'], sizes: [1000]}\n"
                         "  - {op: scan, variants: ['*'], sizes: [1000, 2000], block_sizes: [256, 512]}\n",
}


@pytest.mark.parametrize("sweeps", OVERLAPS.values(), ids=OVERLAPS.keys())
def test_overlapping_sweeps_give_each_case_once_in_the_order_they_always_had(tmp_path, sweeps):
    (tmp_path / "c.yaml").write_text("sweeps:\n" + sweeps)
    config = load_config(tmp_path / "c.yaml")
    keys = [case.key for case in config.iter_cases()]
    assert keys == _keys_as_before(config) and len(keys) == len(set(keys)) and keys


def test_every_bundled_config_expands_to_the_cases_it_always_had():
    from primbench.resources import CONFIG_DIR

    for path in sorted(CONFIG_DIR.glob("*.yaml")):
        config = load_config(path, allow_large=True)
        narrowed = dataclasses.replace(config, sweeps=config.sweeps[::-1])  # the other way round too
        for each in (config, narrowed):
            assert [case.key for case in each.cases()] == _keys_as_before(each), path.name


def test_a_filter_on_a_huge_sweep_is_checked_without_making_every_case(tmp_path):
    (tmp_path / "huge.yaml").write_text(HUGE)
    started = time.monotonic()
    outcome = harness.run_cli(["run", "huge.yaml", "--dry-run", "--allow-large", "--only", "histogram/lane_columns",
                               "--sizes", "1000", "--blocks", "256"], tmp_path, tmp_path / "out")
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome.stderr[-400:]
    assert outcome.stdout.splitlines()[-1].startswith("huge.yaml: 16 cases in 1 sweeps") and time.monotonic() - started < 20
