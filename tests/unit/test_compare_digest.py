"""What compare and check show first, and what they fold, on real H200 runs (tests/data, and the
committed reference): line counts, BELOW_FLOOR and its JUnit skip, a stale baseline under
--strict, and the time-order warning. Test-only copies of a run are written to tmp_path and say
what they change; nothing under results/ or tests/data is modified."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from primbench.compare import digest, verdicts
from primbench.compare.output import MAX_LINES, markdown, rows, terminal
from primbench.runfile.io import load_run

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "tests" / "data" / "runs"
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
OLDEST = RUNS / "schema1-excerpt.jsonl.gz"  # the oldest run in tests/data: 40 cases of older code


def _plain(path: Path, out: Path, keep=lambda record: True, edit=lambda record: None) -> Path:
    """An uncompressed copy of a run, keeping the records `keep` accepts, each passed through `edit`;
    the end record counts the cases kept (as the runner would have written it)."""
    lines, counts = [], {"ok": 0, "failed": 0, "skipped": 0}
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        record = json.loads(line)
        if keep(record):
            edit(record)
            if record["kind"] == "case":
                counts[record["status"]] += 1
            elif record["kind"] == "end":
                record.update(counts)
            lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def _every_hash(char: str):
    """An edit giving every variant a new hash, in the header and in each case (its code "changed")."""
    def edit(record):
        if record["kind"] == "header":
            for entry in record["variants"].values():
                entry["hash"] = char * len(entry["hash"])
        elif record["kind"] == "case":
            record["variant_hash"] = char * len(record["variant_hash"])

    return edit


def _outside_details(text: str) -> list[str]:
    return text.split("<details>")[0].splitlines()


def test_the_oldest_run_against_the_reference_fits_one_screen_in_terminal_and_markdown():
    # 2,905 terminal lines and 1,463 Markdown lines before the fold; 1,407 of the pairs are one-sided.
    base, new = load_run(OLDEST), load_run(REFERENCE)
    pairs = verdicts.compare_runs(base, new)
    text = terminal(pairs, "old", "reference")
    assert len(text.splitlines()) <= MAX_LINES, text
    assert max(map(len, text.splitlines())) <= 120
    assert "683 cases only in the new run" in text  # reduce's one-sided cases, stated
    page = markdown(pairs, "old", "reference", 0)
    assert len(_outside_details(page)) <= MAX_LINES
    assert page.count("\n| ") - len(_outside_details(page)) < len(pairs) + 2  # every pair is in the <details>
    assert sum(1 for line in page.splitlines() if line.startswith("| ") and "`reduce/" in line) >= 723


def test_every_variant_with_changed_code_still_fits_and_each_fold_says_so(tmp_path):
    # As after a compiler upgrade: every variant's hash differs, each variant gets its own line (or an
    # op's quiet ones share one), within MAX_LINES, and every folded count adds up.
    base = load_run(RUNS / "fixture-a.jsonl.gz")
    new = load_run(_plain(RUNS / "fixture-b.jsonl.gz", tmp_path / "b.jsonl", edit=_every_hash("0")))
    pairs = verdicts.compare_runs(base, new)
    assert all(p.code_changed for p in pairs)
    folds = digest.folds(pairs)
    assert sum(len(f.pairs) for f in folds) + len(rows(pairs)) == len(pairs)
    assert all(f.line().endswith("code changed") for f in folds)
    text = terminal(pairs, "a", "b")
    assert len(text.splitlines()) <= MAX_LINES and "--all prints every pair" in text
    assert len(terminal(pairs, "a", "b", everything=True).splitlines()) > 2 * len(pairs)


def test_a_fold_that_would_not_fit_becomes_one_line_per_op_and_class_with_the_counts_kept():
    pairs = verdicts.compare_runs(load_run(OLDEST), load_run(REFERENCE))
    per_variant, per_op = digest.folds(pairs), digest.folds(pairs, max_lines=10)
    assert len(per_op) <= 10 < len(per_variant)
    assert sum(len(f.pairs) for f in per_op) == sum(len(f.pairs) for f in per_variant) == len(pairs)


def test_what_changed_leads_every_output(tmp_path, bench):
    from tests.run_copies import SLOWED_CASE

    def slower(record):
        if record["kind"] == "case" and record["key"] == SLOWED_CASE:
            record["samples"]["cold_ms"] = [t * 1.5 for t in record["samples"]["cold_ms"]]

    base = _plain(RUNS / "fixture-a.jsonl.gz", tmp_path / "a.jsonl")
    new = _plain(RUNS / "fixture-a.jsonl.gz", tmp_path / "slow.jsonl", edit=slower)
    junit, page = tmp_path / "check.xml", tmp_path / "check.md"
    result = bench("check", new, "--baseline", base, "--junit", junit, "--markdown", page)
    assert result.returncode == 1, result.stdout + result.stderr
    listing = result.stdout.splitlines()
    first_pair = next(i for i, line in enumerate(listing) if line.startswith(("SLOWER", "FASTER", "UNSURE", "SAME")))
    assert listing[first_pair].startswith(f"SLOWER    {SLOWED_CASE}")
    assert ET.parse(junit).getroot().find("testcase").get("name") == SLOWED_CASE
    assert page.read_text().split("### Changed")[1].split("\n| ")[2].startswith(f"SLOWER | `{SLOWED_CASE}`")


def test_a_move_under_the_floor_is_below_floor_with_the_command_and_junit_skips_it(tmp_path, bench):
    junit = tmp_path / "check.xml"
    result = bench("check", RUNS / "fixture-b.jsonl.gz", "--baseline", RUNS / "fixture-a.jsonl.gz", "--junit", junit, "--all")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BELOW_FLOOR: past the threshold but not the absolute floor" in result.stdout
    assert "under the noise floor: 38 BELOW_FLOOR" in result.stdout
    skipped = [case for case in ET.parse(junit).getroot().iter("testcase")
               if case.find("skipped") is not None and case.find("skipped").get("message").startswith("BELOW_FLOOR")]
    assert len(skipped) == 38 and all("under the 4 us floor" in case.find("skipped").get("message") for case in skipped)
    assert ET.parse(junit).getroot().get("failures") == "0"


def test_below_floor_names_ab_with_the_baselines_commit_when_the_code_changed(tmp_path):
    base = load_run(RUNS / "fixture-a.jsonl.gz")
    new = load_run(_plain(RUNS / "fixture-b.jsonl.gz", tmp_path / "b.jsonl", edit=_every_hash("f")))
    below = [p for p in verdicts.compare_runs(base, new) if p.verdict == verdicts.BELOW_FLOOR]
    sha = base.git["sha"][:12]
    assert below and all(f"primbench ab {p.case.op}/{p.case.variant} --base {sha} --sizes {p.case.n} can" in p.note
                         for p in below)
    assert not any(p.regressed for p in below)


def _without_histogram(tmp_path: Path) -> Path:
    return _plain(RUNS / "fixture-a.jsonl.gz", tmp_path / "base.jsonl",
                  keep=lambda record: not (record["kind"] == "case" and record["op"] == "histogram"))


def test_a_stale_baseline_is_named_with_the_renewing_command_and_strict_fails_on_it(tmp_path, bench):
    base = _without_histogram(tmp_path)
    loose = bench("check", RUNS / "fixture-b.jsonl.gz", "--baseline", base)
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert "stale baseline: it lacks 48 of this run's 352 cases, which are not gated:\n  48 histogram\n" in loose.stdout
    assert "  renew it from a clean run: make baseline RUN=tests/data/runs/fixture-b.jsonl.gz" in loose.stdout
    strict = bench("check", RUNS / "fixture-b.jsonl.gz", "--baseline", base, "--strict", "--markdown", tmp_path / "c.md")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "check fails (--strict): 48 cases have no baseline" in strict.stdout
    assert "- stale baseline: it lacks 48" in (tmp_path / "c.md").read_text()


def test_the_configs_require_baseline_fails_the_check_as_strict_does(tmp_path, bench):
    def require(record):
        if record["kind"] == "header":
            record["config"].setdefault("compare", {})["require_baseline"] = True

    new = _plain(RUNS / "fixture-b.jsonl.gz", tmp_path / "new.jsonl", edit=require)
    result = bench("check", new, "--baseline", _without_histogram(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "check fails (the config's compare.require_baseline): 48 cases have no baseline" in result.stdout
    whole = bench("check", new, "--baseline", RUNS / "fixture-a.jsonl.gz")
    assert whole.returncode == 0 and "stale" not in whole.stdout, whole.stdout


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_require_baseline_must_be_true_or_false(tmp_path, value):
    from primbench.config.loading import load_config
    from primbench.errors import UserError

    config = tmp_path / "c.yaml"
    config.write_text(f"compare: {{require_baseline: {json.dumps(value)}}}\nsweeps:\n  - op: reduce\n"
                      "    variants: [vector_load_sum]\n    sizes: [1024]\n")
    with pytest.raises(UserError, match="require_baseline: must be true or false"):
        load_config(config)


def test_a_new_run_older_than_its_baseline_or_the_same_run_is_warned_about(bench):
    a, b = RUNS / "fixture-a.jsonl.gz", RUNS / "fixture-b.jsonl.gz"
    backwards = bench("check", a, "--baseline", b)
    assert backwards.returncode == 0, backwards.stderr
    assert ("warning: the new run started 2026-12-01 15:51, before the baseline (2026-12-01 15:51): is the order right?"
            in backwards.stdout)
    same = bench("compare", a, a)
    assert "warning: the baseline and the new run are the same run" in same.stdout
    forwards = bench("compare", a, b)
    assert "warning" not in forwards.stdout
