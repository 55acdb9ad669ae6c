"""`primbench export --format github-action` as github-action-benchmark reads it and alerts on it,
with tool `customSmallerIsBetter`. The action's behaviour, as its documentation and its source
(src/extract.ts, src/write.ts, release v1.22.0) state it, and as written again here (its code is not
carried in this repository):
- the output file is a JSON array of entries, each `name` and `unit` (coerced to text), `value`
  (coerced to a number), and optional `range` and `extra` (text);
- a new entry alerts where an entry of the same name is in the previous run and new value / previous
  value > alert-threshold (for a smaller-is-better tool; both zero is a ratio of 1);
- entries of a name the previous run lacks are skipped.
The same checks were run with the action's own JavaScript (node, its release's npm packages) on the
same exports when this test was written, and gave the same counts (the commit that added this test says how).

The runs: the nightly baseline and the reference run (results/), the same kernels (every variant hash
of the cases they share is equal) measured by two processes, since 2026-12-05 on two H200 boards
(the README's figures of this pair are computed by tools/doc_figures). On cold medians (gbench-json's
`real_time`, what the action's tool `googlecpp` tracks) small CuPy CUB cases alert at 110 %; on the
figures the verdict rule judges (this export), nothing does. At 105 % what alerts is a library's
small case on its batch figure, which moves 5-6 % between processes: why the rule's own batch
threshold is 8 %."""

import json
import math

import pytest

from primbench.export.formats import export
from primbench.runfile.io import load_run
from tests.conftest import REFERENCE_RUN, REPO
from tests.run_copies import SLOWED_CASE, edited_copy

BASELINE = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"
SMALL_CASE = "reduce/vector_load_sum/float32/n=1048576/block=256/uniform"  # judged on its batch figure (~4 us)


def is_library(name: str) -> bool:
    return name.split("/")[1].startswith(("cub_", "cccl_"))


def entries_as_the_action_reads_them(text: str) -> list[dict]:
    """The customSmallerIsBetter file as the action parses it, refused as it would be refused."""
    entries = json.loads(text)
    assert isinstance(entries, list) and entries, "the action needs a non-empty JSON array"
    for entry in entries:
        assert isinstance(entry["name"], str) and isinstance(entry["unit"], str)
        assert isinstance(entry["value"], (int, float)) and math.isfinite(entry["value"])
        for optional in ("range", "extra"):
            assert optional not in entry or isinstance(entry[optional], str)
    return entries


def alerts(previous: list[dict], current: list[dict], threshold_percent: float) -> set[str]:
    """The names alerting when `current` follows `previous` (customSmallerIsBetter)."""
    before = {}
    for entry in previous:
        before.setdefault(entry["name"], entry)  # the first entry of a name, as the action finds it
    found = set()
    for entry in current:
        prior = before.get(entry["name"])
        if prior is None:
            continue
        ratio = 1.0 if prior["value"] == 0 and entry["value"] == 0 else entry["value"] / prior["value"]
        if ratio > threshold_percent / 100:
            found.add(entry["name"])
    return found


def cold_medians(run) -> list[dict]:
    """gbench-json's entries as tool `googlecpp` tracks them: `real_time`, the cold median."""
    return [{"name": b["name"], "unit": b["time_unit"], "value": b["real_time"]}
            for b in json.loads(export(run, "gbench-json"))["benchmarks"] if not b.get("error_occurred")]


def _slower(record: dict) -> None:
    """SLOWED_CASE (about 80 us, judged cold) and SMALL_CASE (judged on its batch) 30 % slower."""
    if record["kind"] == "case" and record["key"] in (SLOWED_CASE, SMALL_CASE):
        for name in ("cold_ms", "batch_ms"):
            record["samples"][name] = [t * 1.3 for t in record["samples"][name]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("github-action")
    return {"base": load_run(BASELINE), "new": load_run(REFERENCE_RUN),
            "slowed": load_run(edited_copy(REFERENCE_RUN, folder / "slowed.jsonl", _slower))}


def feed(run) -> list[dict]:
    return entries_as_the_action_reads_them(export(run, "github-action"))


@pytest.fixture(scope="module")
def feeds(runs) -> dict[str, list[dict]]:
    """Each run's github-action feed, exported once for the module."""
    return {side: feed(run) for side, run in runs.items()}


def test_the_pair_shares_its_kernels_so_any_alert_is_a_false_one(runs):
    base, new = ({c.key: c.variant_hash for c in runs[side].cases} for side in ("base", "new"))
    common = base.keys() & new.keys()
    assert len(common) > 100 and all(base[key] == new[key] for key in common)


def test_two_runs_of_the_same_code_raise_no_alert_at_110_percent_where_cold_medians_raise_some(runs, feeds):
    assert alerts(feeds["base"], feeds["new"], 110) == set()
    cold = alerts(cold_medians(runs["base"]), cold_medians(runs["new"]), 110)
    assert cold and all(name.split("/")[1].startswith("cub_") for name in cold)  # CuPy's CUB, small cases


def test_at_105_percent_only_library_batch_figures_alert(feeds):
    shift = alerts(feeds["base"], feeds["new"], 105)
    judged = {entry["name"]: entry["extra"] for entry in feeds["new"]}
    assert len(shift) <= 2 and all(is_library(name) and "batch" in judged[name] for name in shift)


def test_a_case_made_30_percent_slower_alerts_whether_it_is_judged_on_its_batch_or_cold(feeds):
    shift = alerts(feeds["base"], feeds["new"], 105)  # the pair's own alerts at 105 %, which stay
    assert alerts(feeds["base"], feeds["slowed"], 110) == {SLOWED_CASE, SMALL_CASE}
    assert alerts(feeds["base"], feeds["slowed"], 105) == {SLOWED_CASE, SMALL_CASE, *shift}
