"""The library cases of a run (primbench/runfile/libraries.py): every one has its % of light, the
sanity rule flags those far below it where the memory binds, and the library is named as the run
records it. On the committed reference run and on hand-made frames."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from primbench.runfile import libraries
from primbench.runfile.io import load_run
from primbench.variant import LIBRARY_SERIES

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
# CuPy's CUB histogram (64-bit counters) on 2^28 uniform bytes into 256 bins: issue 51's "5 %".
SIXTY_FOUR_BIT_HISTOGRAM = "histogram/cub_histogram_even/uint8/n=268435456/block=lib/uniform/bins=256"


@pytest.fixture(scope="module")
def reference():
    run = load_run(REFERENCE)
    return run, run.frame()


def test_every_library_case_of_the_reference_run_has_its_percent_of_light(reference):
    _run, frame = reference
    timed = frame[libraries.library_mask(frame) & (frame["status"] == "ok")]
    assert len(timed) == 97 and set(timed["series"]) == {LIBRARY_SERIES}  # recorded as "baseline", read as the library
    assert timed["pct_sol"].notna().all() and (timed["pct_sol"] > 0).all()


def test_the_rule_flags_the_64_bit_counter_histogram_and_the_full_sort_and_nothing_near_its_light(reference):
    _run, frame = reference
    flagged = libraries.far_cases(frame)
    by_key = dict(zip(flagged["key"], flagged["pct_sol"]))
    assert by_key[SIXTY_FOUR_BIT_HISTOGRAM] == pytest.approx(6.62, abs=0.01)
    # Every CUB histogram from 64 MiB up (18 cases, 1.8-43 % of light) and the full sort of 512
    # rows (5 cases, 0.25 %): the libraries of reduce, max and scan run at 56-98 % and are not flagged.
    assert sorted(set(flagged["variant_name"])) == ["cub_histogram_even", "full_sort"]
    assert (flagged["op"] == "histogram").sum() == 18 and (flagged["op"] == "topk").sum() == 5
    assert flagged["pct_sol"].max() < libraries.FAR_BELOW_LIGHT_PCT and (flagged["bytes"] >= 2**26).all()
    near = frame[libraries.library_mask(frame) & frame["op"].isin(["reduce", "reduce_max", "scan"])]
    assert not libraries.far_mask(near).any() and (near.loc[near["bytes"] >= 2**26, "pct_sol"] > 55).all()


def _case(**fields) -> dict:
    return {"key": "k", "op": "reduce", "series": LIBRARY_SERIES, "status": "ok", "bytes": 2.0**26, "pct_sol": 49.9,
            "median_ms": 1.0, **fields}


@pytest.mark.parametrize("fields, flagged", [
    ({}, True),                                    # under half its light, 64 MiB: far
    ({"pct_sol": 50.0}, False),                    # half: not under it
    ({"bytes": 2.0**26 - 1}, False),               # under 64 MiB: fixed costs may weigh as much as the memory
    ({"pct_sol": float("nan")}, False),            # light unknown (a run before the sized probes): never flagged
    ({"series": "beyond"}, False),                 # our kernels are not judged by this rule
    ({"series": "baseline"}, True),                # the series' former name is the library
    ({"status": "failed"}, False),
])
def test_the_rule_is_under_half_of_its_light_with_64_mib_or_more_to_move(fields, flagged):
    assert libraries.far_mask(pd.DataFrame([_case(**fields)])).tolist() == [flagged]


def test_the_library_text_is_what_the_run_records_and_never_an_invented_version():
    software = {"cupy": "14.2.0", "numpy": "2.5.2"}
    via = {"origin": "CUB DeviceReduce::Sum through cupy.cuda.cub"}
    assert libraries.library_text(via, software) == "via cupy 14.2.0"  # the package called, at its installed version
    assert libraries.library_text({"origin": "a hand-written kernel"}, software) == ""
    assert libraries.library_text({**via, "library": {"package": "cuda-cccl", "version": "0.4.1"}}, software) == "cuda-cccl 0.4.1"
    assert libraries.library_text({"library": {"package": "torch"}}, software) == "torch (version not recorded)"
    assert libraries.library_text({"library": "x" * 300}, software) == "x" * 79 + "…"  # a header is data: bounded
