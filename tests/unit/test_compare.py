"""compare and check on real recorded runs (nothing here needs a GPU).

Test-only transformations of a real run are written to tmp_path and say what they change: a
run whose one case is 10 % slower (its raw samples multiplied by 1.10), and a run that claims
another GPU model (its header's device name changed). Nothing under results/ is modified.
"""

from __future__ import annotations

import dataclasses
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from primbench.compare import verdicts
from primbench.errors import UserError
from primbench.runfile.io import load_run
from primbench.runfile.records import RunHeader
from tests.debian_tools import ASK, debian_tool, why_not
from tests.run_copies import SLOWED_CASE, edited_copy, scale_samples

REPO = Path(__file__).resolve().parents[2]
# Two real H200 runs of tests/data/fixture.yaml from one commit, made one after the other (tests/data/README.md).
SAME_COMMIT_PAIR = ("tests/data/runs/fixture-a.jsonl.gz", "tests/data/runs/fixture-b.jsonl.gz")  # one commit, run twice


def _transformed(run_path: Path, out: Path, *, slow_key=None, factor=1.0, device_name=None) -> Path:
    """A copy of a real run with one case's samples scaled, or its GPU renamed (test-only)."""
    def edit(record):
        scale_samples(record, slow_key, factor)
        if record["kind"] == "header" and device_name:
            record["device"]["name"] = device_name

    return edited_copy(run_path, out, edit)


def test_a_run_checked_against_itself_exits_0_with_no_slower_verdict(newest_run, bench):
    result = bench("check", "--baseline", str(newest_run), str(newest_run))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SLOWER" not in result.stdout and "nothing changed" in result.stdout


def test_two_real_runs_of_the_same_commit_get_no_faster_or_slower_verdict():
    base, new = (load_run(REPO / path) for path in SAME_COMMIT_PAIR)
    code, pairs = verdicts.check(base, new)
    found = {p.verdict for p in pairs}
    assert code == 0 and len(pairs) == 352
    assert found <= {verdicts.SAME, verdicts.BELOW_FLOOR}, [p.text for p in pairs if p.verdict not in found]
    # A small kernel moved past 5 % between the runs is not called SAME: two runs cannot tell.
    below = [p for p in pairs if p.verdict == verdicts.BELOW_FLOOR]
    assert below and all(abs(p.ratio - 1) > 0.05 and abs(p.new_ms - p.base_ms) * 1e3 < verdicts.ABS_FLOOR_US
                         for p in below)


def test_a_case_made_10_percent_slower_fails_the_check_and_is_named(newest_run, tmp_path, bench):
    slowed = _transformed(newest_run, tmp_path / "slowed.jsonl", slow_key=SLOWED_CASE, factor=1.10)
    junit, markdown = tmp_path / "check.xml", tmp_path / "check.md"
    result = bench("check", "--baseline", str(newest_run), str(slowed), "--junit", str(junit), "--markdown", str(markdown))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"SLOWER    {SLOWED_CASE}" in result.stdout
    assert "check: 1 regression(s)" in result.stdout and f"  regression: {SLOWED_CASE}" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 120
    suite = ET.parse(junit).getroot()
    failures = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert [case.get("name") for case in failures] == [SLOWED_CASE]
    # The attributes Surefire's and Jenkins's schemas require of a testsuite, each a number.
    assert (suite.get("failures"), suite.get("errors")) == ("1", "0") and int(suite.get("tests")) == len(list(suite.iter("testcase")))
    assert float(suite.get("time")) > 0 and int(suite.get("skipped")) >= 0
    # Each test case's time is the new run's case's elapsed seconds, not 0.
    elapsed = {record.key: record.elapsed_s for record in load_run(slowed).cases}
    timed = {case.get("name"): float(case.get("time")) for case in suite.iter("testcase")}
    assert all(abs(timed[key] - round(seconds, 3)) < 1e-9 for key, seconds in elapsed.items() if key in timed and seconds)
    assert sum(t > 0 for t in timed.values()) > len(timed) // 2
    assert all(f.get("type") and f.get("message") for f in suite.iter("failure"))
    assert "**regression**" in markdown.read_text() and SLOWED_CASE in markdown.read_text()


def test_a_baseline_from_another_gpu_model_is_unusable_unless_allowed(newest_run, tmp_path, bench):
    other = _transformed(newest_run, tmp_path / "other.jsonl", device_name="NVIDIA H100 80GB HBM3")
    refused = bench("check", "--baseline", str(other), str(newest_run))
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "not comparable" in refused.stderr and "--allow-different-gpu" in refused.stderr
    allowed = bench("check", "--baseline", str(other), str(newest_run), "--allow-different-gpu")
    assert allowed.returncode == 0 and "OTHER_GPU" in allowed.stdout


def test_a_baseline_of_no_recorded_gpu_name_is_called_an_unknown_gpu_not_none(newest_run, tmp_path):
    base = load_run(_transformed(newest_run, tmp_path / "nameless.jsonl", device_name=None))
    base = dataclasses.replace(base, header=dataclasses.replace(base.header, device={}))
    with pytest.raises(UserError, match="the baseline .* on unknown GPU; times are not comparable") as refused:
        verdicts.check(base, load_run(newest_run))
    assert "None" not in str(refused.value)


def test_a_missing_baseline_or_an_unknown_reference_is_one_line_and_exit_2(newest_run, tmp_path, bench):
    missing = bench("check", "--baseline", str(tmp_path / "none.jsonl"), str(newest_run))
    assert missing.returncode == 2 and "no such run file" in missing.stderr and "Traceback" not in missing.stderr
    unknown = bench("compare", "ref:nowhere", str(newest_run))
    assert unknown.returncode == 2 and "ref:seed002_rtx3080" in unknown.stderr


def test_compare_sets_a_run_beside_the_seeds_rtx3080_in_percent_of_each_gpus_peak(newest_run, tmp_path, bench):
    page = tmp_path / "compare.html"
    result = bench("compare", "ref:seed002_rtx3080", str(newest_run), "--html", str(page))
    assert result.returncode == 0, result.stderr
    assert "PUBLISHED" in result.stdout and "new/base % of peak" in result.stdout
    pairs = verdicts.compare_runs(verdicts.published_run("ref:seed002_rtx3080"), load_run(newest_run))
    reduce0 = next(p for p in pairs if p.case.variant == "reduce0_interleaved_divergent")
    # The seed: 5.7 ms for 2^25 floats on a 760 GB/s card.
    assert reduce0.base_pct_peak == pytest.approx(100 * 2**25 * 4 / 5.7e-3 / 1e9 / 760, rel=1e-6)
    html = page.read_text()
    assert "published figures: no raw samples" in html and "http" not in html.split("<body>")[1]


def test_a_verdict_needs_both_the_threshold_and_the_significance_test():
    rng = np.random.default_rng(0)
    base = 100 + rng.normal(0, 0.3, 200)
    assert verdicts.speed_verdict(base, base * 1.10, 0.05)[0] == verdicts.SLOWER
    assert verdicts.speed_verdict(base, base * 0.90, 0.05)[0] == verdicts.FASTER
    assert verdicts.speed_verdict(base, base * 1.03, 0.05)[0] == verdicts.SAME  # significant, but under the threshold
    noisy = np.array([60.0, 140.0, 80.0, 120.0, 100.0, 70.0, 130.0, 90.0])
    verdict, ratio, p_value = verdicts.speed_verdict(noisy, noisy[::-1] * 1.2, 0.05)
    assert ratio == pytest.approx(1.2) and 0.01 <= p_value < 1  # a big move that the samples' spread cannot back
    assert verdict == verdicts.UNSURE


def test_thresholds_come_from_the_config_most_specific_pattern_first_with_the_absolute_floor():
    thresholds = verdicts.Thresholds.from_header(RunHeader(run_id="r", config={"compare": {
        "threshold": 0.05, "thresholds": {"reduce": 0.08, "reduce/seed000_*": 0.2}, "abs_floor_us": 4.0}}))
    assert thresholds.for_case("reduce", "seed000_v1_global_atomic") == 0.2
    assert thresholds.for_case("reduce", "vector_load_sum") == 0.08
    assert thresholds.for_case("reduce_max", "vector_max") == 0.05
    assert thresholds.effective("reduce_max", "vector_max", 0.010) == pytest.approx(0.4)  # 4 us of a 10 us kernel
    assert thresholds.effective("reduce_max", "vector_max", 0.250) == 0.05


def _changed_and_slower(exempt=None):
    """A documented transformation of a real run: SLOWED_CASE's kernel changed (another hash) and
    got 10 % slower; a case skipped; a case newly failed. With `exempt`, the new run's config lets
    SLOWED_CASE's variant be slower, for that reason."""
    def edit(obj):
        if obj["kind"] == "header" and exempt:
            obj["config"].setdefault("compare", {})["exempt"] = {"reduce/cub_device_reduce": exempt}
        if obj["kind"] != "case":
            return
        if obj["key"] == SLOWED_CASE:
            obj["variant_hash"] = "0" * 16
            obj["samples"]["cold_ms"] = [t * 1.10 for t in obj["samples"]["cold_ms"]]
        elif obj["key"] == "reduce/vector_load_sum/float32/n=1048576/block=1024/uniform":
            obj.update(status="skipped", reason="needs more GPU memory")
        elif obj["key"] == "reduce_max/vector_max/float32/n=1048576/block=256/normal":
            obj.update(status="failed", reason="exact check: wrong")
    return edit


def test_a_changed_kernel_10_percent_slower_fails_the_check_with_its_interval(newest_run, tmp_path, bench):
    new = edited_copy(newest_run, tmp_path / "new.jsonl", _changed_and_slower())
    result = bench("check", "--baseline", str(newest_run), str(new), "--junit", str(tmp_path / "j.xml"))
    assert result.returncode == 1, result.stdout
    assert "check: 2 regression(s)" in result.stdout
    regressions = [line.split("regression: ")[1] for line in result.stdout.splitlines() if line.startswith("  regression: ")]
    assert sorted(regressions) == sorted([SLOWED_CASE, "reduce_max/vector_max/float32/n=1048576/block=256/normal"])
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("SLOWER") and SLOWED_CASE in line)
    figures = lines[at + 1]  # the pair's figures sit on the line below its verdict and case
    assert "code changed (hash" in figures
    low, high = (float(x) for x in figures.split("[")[1].split("]")[0].split(", "))
    assert 1.0 < low < 1.10 < high < 1.2  # the interval excludes 1 and holds the 10 % put in
    not_timed = result.stdout.split("not timed against the baseline: ")[1].splitlines()[0]
    assert not_timed == "1 MISSING"
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "2" and suite.get("skipped") == "1"
    skipped = [case for case in suite.iter("testcase") if case.find("skipped") is not None]
    assert [case.get("name") for case in skipped] == ["reduce/vector_load_sum/float32/n=1048576/block=1024/uniform"]
    assert "needs more GPU memory" in skipped[0].find("skipped").get("message")


def test_the_junit_file_validates_against_surefires_schema(newest_run, tmp_path, bench):
    xmllint = debian_tool("xmllint", "libxml2-utils")
    if xmllint is None:
        pytest.skip(f"no xmllint: install Debian's libxml2-utils, or run with {ASK}=1 as root ({why_not('libxml2-utils')})")
    schema = REPO / "tests" / "data" / "xsd" / "surefire-test-report-3.0.xsd"
    new = edited_copy(newest_run, tmp_path / "new.jsonl", _changed_and_slower())
    bench("check", "--baseline", str(newest_run), str(new), "--junit", str(tmp_path / "j.xml"))
    result = subprocess.run([xmllint, "--noout", "--schema", str(schema), str(tmp_path / "j.xml")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-1500:]
    # The schema can fail: a time with more than three decimals is refused, as Surefire's reader would.
    broken = (tmp_path / "j.xml").read_text().replace('time="0.', 'time="0.0000', 1)
    (tmp_path / "broken.xml").write_text(broken)
    refused = subprocess.run([xmllint, "--noout", "--schema", str(schema), str(tmp_path / "broken.xml")], capture_output=True, text=True)
    assert refused.returncode != 0 and "pattern" in refused.stderr


def test_a_changed_kernel_the_config_exempts_is_slower_but_passes_with_its_reason(newest_run, tmp_path):
    base = load_run(newest_run)
    new = load_run(edited_copy(newest_run, tmp_path / "new.jsonl", _changed_and_slower(exempt="trades speed for accuracy")))
    (pair,) = [p for p in verdicts.compare_runs(base, new) if p.text == SLOWED_CASE]
    assert pair.verdict == verdicts.SLOWER and pair.code_changed and not pair.regressed
    assert "slower allowed by the config: trades speed for accuracy" in pair.note
    others = [p for p in verdicts.compare_runs(base, new) if p.regressed]
    assert [p.text for p in others] == ["reduce_max/vector_max/float32/n=1048576/block=256/normal"]


def test_the_same_run_twice_gives_intervals_around_one(newest_run):
    run = load_run(newest_run)
    pairs = [p for p in verdicts.compare_runs(run, run) if p.verdict == verdicts.SAME]
    assert pairs and all(p.ci_low <= 1.0 <= p.ci_high for p in pairs if p.ci_low == p.ci_low)
    assert sum(p.ci_low == p.ci_low for p in pairs) > 0.9 * len(pairs)


def test_a_failure_after_a_skip_and_a_failing_new_case_are_regressions(newest_run, tmp_path):
    skipped_then_failed = "reduce/vector_load_sum/float32/n=1048576/block=1024/uniform"
    brand_new = "reduce_max/vector_max/float32/n=1048576/block=256/normal"

    def base_edit(obj):
        if obj["kind"] == "case" and obj["key"] == skipped_then_failed:
            obj.update(status="skipped", reason="needs more GPU memory")
        elif obj["kind"] == "case" and obj["key"] == brand_new:
            obj.update(n=obj["n"] + 1)  # another identity: the new run's case is not in the baseline

    def new_edit(obj):
        if obj["kind"] == "case" and obj["key"] in (skipped_then_failed, brand_new):
            obj.update(status="failed", reason="exact check: wrong")

    base = load_run(edited_copy(newest_run, tmp_path / "base.jsonl", base_edit))
    new = load_run(edited_copy(newest_run, tmp_path / "new.jsonl", new_edit))
    regressed = {p.case.key for p in verdicts.compare_runs(base, new) if p.regressed}
    assert regressed == {skipped_then_failed, brand_new}


def test_an_interrupted_run_or_one_with_no_case_in_common_is_unusable_input(newest_run, tmp_path, bench):
    header_only = tmp_path / "cut.jsonl"
    header_only.write_text(newest_run.read_text().splitlines()[0] + "\n")
    cut = bench("check", "--baseline", str(newest_run), str(header_only))
    assert cut.returncode == 2 and "interrupted" in cut.stderr
    other = edited_copy(newest_run, tmp_path / "other.jsonl",
                  lambda obj: obj.update(n=obj["n"] + 1) if obj["kind"] == "case" else None)
    disjoint = bench("check", "--baseline", str(newest_run), str(other))
    assert disjoint.returncode == 2 and "no case in common" in disjoint.stderr


def test_output_paths_that_are_folders_or_under_a_file_are_one_line_errors(newest_run, tmp_path, bench):
    for args in (["compare", str(newest_run), str(newest_run), "--html", str(tmp_path)],
                 ["check", "--baseline", str(newest_run), str(newest_run), "--junit", str(newest_run / "x.xml")],
                 ["publish", "results", "-o", str(newest_run / "site")]):
        result = bench(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1


def test_compare_takes_several_runs_each_against_the_first(newest_run, tmp_path, bench):
    page = tmp_path / "three.html"
    second, third = (REPO / path for path in SAME_COMMIT_PAIR)
    result = bench("compare", str(second), str(third), str(newest_run), "--html", str(page))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("baseline: ") == 2  # one section per run after the first
    html = page.read_text()
    assert html.count('<section id="vs-') == 2 and "code changed" in html  # the newest run's kernels changed since 574a745


def test_cases_at_different_parameter_values_are_different_measurements(newest_run):
    # A stencil at radius 1 and at radius 16, or top-k at two vocabularies, must never be paired
    # with each other: every case of the committed run keeps its own identity.
    run = load_run(newest_run)
    identities = {record.case for record in run.cases}
    assert len(identities) == len(run.cases)
    radii = {i.params.get("radius") for i in identities if i.op == "stencil"}
    assert radii == {1, 4, 16}
    pairs = verdicts.compare_runs(run, run)
    assert len(pairs) == len(run.cases)
    assert any(p.text.endswith("/radius=16") for p in pairs)


def test_a_failure_reason_with_control_characters_and_newlines_stays_valid_junit_and_markdown(newest_run, tmp_path, bench):
    # A reason is run-file text and can hold anything; XML forbids ESC, and a newline would break a Markdown row.
    def edit(obj):
        if obj["kind"] == "case" and obj["key"] == "reduce_max/vector_max/float32/n=1048576/block=256/normal":
            obj.update(status="failed", reason="exact check:\x1b[31m wrong\nsecond line\x0b")

    new = edited_copy(newest_run, tmp_path / "new.jsonl", edit)
    bench("check", "--baseline", str(newest_run), str(new), "--junit", str(tmp_path / "j.xml"), "--markdown", str(tmp_path / "c.md"))
    suite = ET.parse(tmp_path / "j.xml").getroot()  # parses: no forbidden character
    (failure,) = suite.iter("failure")
    assert "second line" in failure.text and "\x1b" not in failure.text
    row = next(line for line in (tmp_path / "c.md").read_text().splitlines() if "vector_max" in line and "FAILED" in line)
    assert "second line" in row


def test_check_and_compare_say_when_the_new_run_is_on_another_gpu_of_the_model(tmp_path, bench):
    # Two boards of one model differ by more than many kernel changes (perf-notes: up to 18 % in
    # energy, up to 20 % in the batch figure of one-wave kernels), so a gate's reader must know.
    base, same_board = REPO / "tests/data/runs/energy-a.jsonl.gz", REPO / "tests/data/runs/energy-b.jsonl.gz"
    other = edited_copy(same_board, tmp_path / "other-board.jsonl", lambda r: r["kind"] == "header" and
                        r["device"].update(uuid="GPU-ab24714d-1111-2222-3333-444455556666"))
    said = {}
    for name, new in (("same", same_board), ("other", other)):
        for command in ("check", "compare"):
            result = bench(*([command, "--baseline", str(base), str(new)] if command == "check" else [command, str(base), str(new)]))
            assert result.returncode == 0, result.stdout + result.stderr
            said[name, command] = [line for line in result.stdout.splitlines() if line.startswith("machine: ")]
    for command in ("check", "compare"):
        (line,) = said["other", command]
        assert line.startswith("machine: the new run is on another GPU (ab24714d; the baseline's b2160f74); its read ceiling ")
        (line,) = said["same", command]
        assert line.startswith("machine: the new run's read ceiling ") and "another GPU" not in line


def test_the_machine_line_counts_a_shard_runs_cases_on_another_gpu_case_by_case(tmp_path):
    # A shard file's header is its first GPU's: the board each case ran on is the case's own.
    from primbench.compare import caveats

    base_path, other = REPO / "tests/data/runs/energy-a.jsonl.gz", "GPU-ab24714d-1111-2222-3333-444455556666"
    moved = []

    def shard(record):
        if record["kind"] == "header":
            record["gpus"] = {"mode": "shard", "devices": [
                {"index": 0, "visible": "0", "device": dict(record["device"])},
                {"index": 1, "visible": "1", "device": dict(record["device"], uuid=other)}]}
        elif record["kind"] == "case" and len(moved) < 10:
            record["device_uuid"] = other
            moved.append(record["key"])

    sharded = load_run(edited_copy(REPO / "tests/data/runs/energy-b.jsonl.gz", tmp_path / "shard.jsonl", shard))
    base = load_run(base_path)
    shared = len({c.key for c in base.cases} & {c.key for c in sharded.cases})
    assert caveats.other_board(base, sharded) == f"another GPU for 10 of the {shared} cases both runs hold (ab24714d; the baseline's b2160f74)"
    assert caveats.other_board(sharded, base) == f"another GPU for 10 of the {shared} cases both runs hold (b2160f74; the baseline's ab24714d)"
    assert caveats.other_board(sharded, sharded) is None
    # Two uuids whose first groups read alike are named whole.
    twins = [load_run(edited_copy(base_path, tmp_path / f"mig{i}.jsonl", lambda r, i=i: r["kind"] == "header" and
                                  r["device"].update(uuid=f"MIG-{i}aaaaaaa-0000"))) for i in (1, 2)]
    assert caveats.other_board(*twins) == "another GPU (MIG-2aaaaaaa-0000; the baseline's MIG-1aaaaaaa-0000)"
