"""`primbench export --cases GLOB --common-with BASE` (primbench/export/case_selection.py): every
format holds only the cases asked for, two runs of different case sets export to the same cases, and
bad input is one line with exit 2, nothing written. The runs: the nightly baseline (136 cases) and
fixture-a (352 cases, 37 of them also in the baseline)."""

import csv
import io
import json
import os
import stat
import threading

import pytest

from primbench.cli.main import main
from primbench.export.formats import FORMATS
from primbench.runfile.io import load_run
from tests.conftest import REPO, RUNS

BASELINE = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"
FIXTURE = RUNS / "fixture-a.jsonl.gz"


def _export(capsys, *arguments) -> tuple[int, str, str]:
    """(exit code, standard output, standard error) of `primbench export ...` run in this process."""
    try:
        code = main(["export", *map(str, arguments)])
    except SystemExit as exit_:  # argparse's own refusals
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _names(text: str, fmt: str) -> list[str]:
    """The case keys an export holds, read back as its reader reads them."""
    if fmt == "csv":
        return [row["key"] for row in csv.DictReader(io.StringIO(text))]
    document = json.loads(text)
    if fmt == "gbench-json":
        return [b["name"] for b in document["benchmarks"]]
    if fmt == "github-action":
        return [e["name"] for e in document]
    return [f"{b['name']} {s['name']}" for b in document["benchmarks"] for s in b["states"]]  # nvbench-json


@pytest.mark.parametrize("fmt", FORMATS)
def test_cases_keeps_the_cases_any_glob_matches_in_every_format(fmt, capsys):
    globs = ("reduce/vector_load_sum/*", "scan/*/int32/n=1048576/*")
    code, text, _ = _export(capsys, BASELINE, "--format", fmt, "--cases", globs[0], "--cases", globs[1])
    wanted = [r for r in load_run(BASELINE).cases if r.key.startswith("reduce/vector_load_sum/")
              or (r.key.startswith("scan/") and "/int32/n=1048576/" in r.key)]
    assert code == 0 and len(_names(text, fmt)) == len(wanted) and len(wanted) > 5
    if fmt != "nvbench-json":
        assert _names(text, fmt) == [r.key for r in wanted]


@pytest.mark.parametrize("fmt", FORMATS)
def test_two_runs_exported_each_common_with_the_other_hold_the_same_cases(fmt, capsys):
    exports = [_export(capsys, run, "--format", fmt, "--common-with", other)
               for run, other in ((BASELINE, FIXTURE), (FIXTURE, BASELINE))]
    assert [code for code, _, _ in exports] == [0, 0]
    names = [sorted(_names(text, fmt)) for _, text, _ in exports]
    common = {r.key for r in load_run(BASELINE).cases} & {r.key for r in load_run(FIXTURE).cases}
    assert names[0] == names[1] and len(names[0]) == len(common) > 20


def test_a_glob_that_matches_no_case_is_one_line_and_nothing_is_written(capsys, tmp_path):
    code, _, error = _export(capsys, BASELINE, "--cases", "reduce/*", "--cases", "redcue/*", "-o", tmp_path / "out.csv")
    count = len(load_run(BASELINE).cases)
    assert code == 2 and error.count("\n") == 1 and f"--cases 'redcue/*' matches none of the {count} cases" in error
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("content, says", [("not a run\n", "not valid JSON"), (None, "no such run file")])
def test_common_with_a_file_that_is_not_a_run_is_one_line_and_nothing_is_written(content, says, capsys, tmp_path):
    base = tmp_path / "notes.txt"
    if content is not None:
        base.write_text(content)
    code, _, error = _export(capsys, BASELINE, "--common-with", base, "-o", tmp_path / "out.csv")
    assert code == 2 and error.count("\n") == 1 and "export --common-with:" in error and says in error
    assert not (tmp_path / "out.csv").exists()


def test_common_with_a_run_that_shares_no_case_is_one_line(capsys, tmp_path):
    code, _, error = _export(capsys, BASELINE, "--cases", "topk/*", "--common-with", RUNS / "progression.jsonl.gz",
                             "-o", tmp_path / "out.csv")
    assert code == 2 and error.count("\n") == 1 and "have no case in common" in error
    assert not (tmp_path / "out.csv").exists()


def test_common_with_its_own_output_is_refused_before_anything_is_written(capsys, tmp_path):
    base = tmp_path / "base.jsonl.gz"
    base.write_bytes(BASELINE.read_bytes())
    code, _, error = _export(capsys, FIXTURE, "--common-with", base, "-o", base)
    assert code == 2 and error.count("\n") == 1 and base.read_bytes() == BASELINE.read_bytes()


@pytest.mark.parametrize("fmt", ["github-action", "nvbench-json"])
def test_a_fifo_given_as_the_output_is_written_in_place_never_replaced(fmt, capsys, tmp_path):
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, _ = _export(capsys, BASELINE, "--format", fmt, "--cases", "scan/*", "--common-with", FIXTURE, "-o", fifo)
    reader.join(10)
    assert code == 0 and got and _names(got[0].decode(), fmt)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["feed"]


def _cut(tmp_path, keep_lines: int, *, torn: bool = False):
    """fixture-a's first `keep_lines` lines (header and cases, no end record), and half a line after
    them where `torn`: a run interrupted between two cases, or while writing one."""
    import gzip

    lines = gzip.decompress(FIXTURE.read_bytes()).decode().splitlines(keepends=True)
    run = tmp_path / "cut.jsonl"
    run.write_text("".join(lines[:keep_lines]) + (lines[keep_lines][:40] if torn else ""), encoding="utf-8")
    return run


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_interrupted_run_exports_what_it_has_and_says_it_is_unfinished(fmt, capsys, tmp_path):
    # Exported without a word, part of a run read as a whole one (the report's page said so; export,
    # compare and check did not).
    code, _, err = _export(capsys, _cut(tmp_path, 6, torn=True), "--format", fmt, "-o", tmp_path / "out")
    warnings = [line for line in err.splitlines() if line.startswith("primbench: warning: ")]
    assert code == 0 and len(warnings) == 2, err
    assert warnings[0].endswith("cut.jsonl:7: dropped a truncated last line (the run was interrupted mid-write)")
    assert warnings[1].endswith("cut.jsonl: the run was interrupted (no end record): 5 cases so far; "
                                "`primbench run --resume` finishes it")


def test_compare_warns_of_an_interrupted_run_too(capsys, tmp_path):
    code = main(["compare", str(FIXTURE), str(_cut(tmp_path, 6, torn=True))])
    err = capsys.readouterr().err
    assert code in (0, 1) and err.count("primbench: warning: ") == 2 and "5 cases so far" in err, err


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_run_with_no_case_is_one_line_and_nothing_is_written(fmt, capsys, tmp_path):
    code, out, err = _export(capsys, _cut(tmp_path, 1), "--format", fmt, "-o", tmp_path / "out")
    assert code == 2 and not out and not (tmp_path / "out").exists(), err
    assert err.splitlines()[-1] == (f"primbench: export: {tmp_path / 'cut.jsonl'} holds no case, so there is nothing "
                                    "to export (a run stopped before its first case: finish it with `primbench run "
                                    "--resume`)")
    finished = tmp_path / "finished.jsonl"  # its header and an end record counting no case: --resume would refuse it
    finished.write_text((tmp_path / "cut.jsonl").read_text() + json.dumps(
        {"kind": "end", "finished": "2026-01-01T00:00:00", "ok": 0, "failed": 0, "skipped": 0}) + "\n")
    code, _, err = _export(capsys, finished, "--format", fmt, "-o", tmp_path / "out")
    assert code == 2 and err.splitlines()[-1].endswith("(a finished run whose sweep had no case: export another run)")


def test_check_warns_of_a_cut_short_line_in_either_run_and_of_an_unfinished_baseline(capsys, tmp_path):
    cut = _cut(tmp_path, 6, torn=True)
    code = main(["check", "--baseline", str(cut), str(cut)])
    err = capsys.readouterr().err
    assert code == 2 and err.splitlines()[-1].startswith(f"primbench: {cut}: the run was interrupted (no end record)")
    assert err.count("dropped a truncated last line") == 2  # the new run's, and the baseline's
    finished = tmp_path / "finished.jsonl.gz"
    finished.write_bytes(FIXTURE.read_bytes())
    code = main(["check", "--baseline", str(cut), str(finished)])
    err = capsys.readouterr().err
    assert code in (0, 1) and "cut.jsonl: the run was interrupted (no end record): 5 cases so far" in err, err


def test_a_github_action_feed_with_no_measured_case_is_refused(capsys, tmp_path):
    # github-action-benchmark fails on an empty feed ("No benchmark result was found"), far from here.
    import gzip

    records = [json.loads(line) for line in gzip.decompress(FIXTURE.read_bytes()).decode().splitlines()][:4]
    for record in records[1:]:
        record.update(status="failed", reason="a wrong result")
    run = tmp_path / "failed.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = _export(capsys, run, "--format", "github-action", "-o", tmp_path / "feed.json")
    assert code == 2 and not (tmp_path / "feed.json").exists(), err
    assert err.splitlines()[-1] == (f"primbench: github-action: none of the 3 cases of {run} was measured (3 failed); "
                                    "the action refuses an empty feed: export a run with measured cases")
