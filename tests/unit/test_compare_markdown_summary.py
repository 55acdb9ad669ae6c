"""`primbench check --markdown-summary FILE` (compare/output.py markdown_summary): a Markdown that
fits a pull-request comment (GitHub refuses a body over 65,536 characters), what changed and the
counts as --markdown has them, and where the table of every pair is."""

import os
import stat
import threading

import pytest

from primbench.cli.main import main
from primbench.compare import output, verdicts
from primbench.runfile.case_id import CaseId
from tests.conftest import REFERENCE_RUN, REPO, RUNS
from tests.run_copies import edited_copy

BASELINE = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"
LIMIT = 65_536


def _check(capsys, *arguments) -> tuple[int, str]:
    """(exit code, standard error) of `primbench check ...` in this process."""
    try:
        code = main(["check", *map(str, arguments)])
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def test_a_1447_pair_check_summary_fits_a_comment_and_says_where_the_full_table_is(capsys, tmp_path):
    full, summary = tmp_path / "full.md", tmp_path / "summary.md"
    code, _ = _check(capsys, REFERENCE_RUN, "--baseline", BASELINE, "--markdown", full, "--markdown-summary", summary)
    full_text, text = full.read_text(), summary.read_text()
    assert code == 0 and len(full_text) > LIMIT and len(text) <= LIMIT and "<details>" not in text
    assert text.rstrip().splitlines()[-1] == f"The table of every pair (1447) is in `{full}`."
    # Above its table of every pair, --markdown says what the summary says.
    assert text.rstrip().splitlines()[:-2] == full_text.split("<details>")[0].rstrip().splitlines()


def test_without_markdown_the_summary_says_how_to_get_the_full_table(capsys, tmp_path):
    code, _ = _check(capsys, REFERENCE_RUN, "--baseline", BASELINE, "--markdown-summary", tmp_path / "summary.md")
    last = (tmp_path / "summary.md").read_text().rstrip().splitlines()[-1]
    assert code == 0 and last == "`primbench check --markdown FILE` writes the table of every pair (1447)."


def _slower(record: dict) -> None:
    if record["kind"] == "case":
        record["samples"]["cold_ms"] = [t * 1.3 for t in record["samples"]["cold_ms"]]


def test_a_check_where_every_case_is_slower_tables_the_first_40_and_counts_the_rest(capsys, tmp_path):
    slower = edited_copy(RUNS / "fixture-a.jsonl.gz", tmp_path / "slower.jsonl", _slower)
    code, _ = _check(capsys, slower, "--baseline", RUNS / "fixture-a.jsonl.gz", "--markdown", tmp_path / "full.md",
                     "--markdown-summary", tmp_path / "summary.md")
    text = (tmp_path / "summary.md").read_text()
    slower_rows = [line for line in text.splitlines() if line.startswith("| SLOWER |")]
    assert code == 1 and len(slower_rows) == output.MARKDOWN_LEAD_ROWS
    changed = int(text.split("### Changed: ")[1].split(" pairs")[0])
    assert f"... and {changed - 40} more, in the table of every pair (352) (`{tmp_path / 'full.md'}`)" in text


def _pairs(count: int, note: str) -> list:
    return [verdicts.Pair(CaseId("reduce", f"variant_{i}", "float32", 2**20, 256, "uniform"), verdicts.SLOWER,
                          base_ms=0.010, new_ms=0.013, ratio=1.3, threshold=0.05, note=note) for i in range(count)]


def test_rows_with_long_notes_are_fewer_so_that_the_summary_still_fits():
    text = output.markdown_summary(_pairs(100, "code changed; " * 400), "base", "new", 1, full_table="full.md")
    assert len(text.encode()) <= LIMIT and "... and 95 more, in the table of every pair (100) (`full.md`)" in text
    assert sum(line.startswith("| SLOWER |") for line in text.splitlines()) == 5


def test_warnings_too_long_for_a_comment_are_cut_at_a_line_and_the_summary_still_says_where_the_table_is():
    notes = [f"warning {i}: " + "x" * 2000 for i in range(50)]
    text = output.markdown_summary(_pairs(3, ""), "base", "new", 1, notes=notes, full_table="full.md")
    assert len(text.encode()) <= LIMIT and text.endswith("The table of every pair (3) is in `full.md`.\n")
    assert "- warning 0: x" in text and "warning 49" not in text


def test_a_fifo_given_as_the_summary_is_written_in_place(capsys, tmp_path):
    fifo = tmp_path / "comment.md"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    code, _ = _check(capsys, REFERENCE_RUN, "--baseline", BASELINE, "--markdown-summary", fifo)
    reader.join(10)
    assert code == 0 and got and got[0].startswith("## primbench check: no regression")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["comment.md"]


@pytest.mark.parametrize("target", ["folder", "same"])
def test_a_summary_path_that_cannot_be_written_is_one_line_before_any_work(target, capsys, tmp_path):
    (tmp_path / "folder").mkdir()
    summary = tmp_path / "folder" if target == "folder" else tmp_path / "full.md"
    code, error = _check(capsys, REFERENCE_RUN, "--baseline", BASELINE, "--markdown", tmp_path / "full.md",
                         "--markdown-summary", summary)
    says = "is a folder" if target == "folder" else "--markdown-summary"
    assert code == 2 and error.count("\n") == 1 and says in error
    assert not (tmp_path / "full.md").exists()
