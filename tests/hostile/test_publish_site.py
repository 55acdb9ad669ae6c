"""publish in a site folder someone else can write to, and over run files with hostile names (issue
52, Outputs). Every name inside a site is publish's own: a link planted at one (to a file outside
the site, to /dev/null, to nothing yet) or a FIFO is replaced by the page or cache, never written
through, and a runs/ folder that is a link is refused before any page. A run file found with a name
that is not UTF-8 (or holds an escape sequence) is skipped in one line, shown escaped, and the rest
of the site is published."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import primbench.cli.main  # noqa: F401 (imported here once: each forked case then starts at once)
import primbench.report.context  # noqa: F401
from tests.hostile import harness
from tests.hostile.corpus import good_records, write_records

PAGE = "runs/2026-12-01-155225-nvidia-h200-9fbb40.html"  # the page of the run below (its run id)
OWN_NAMES = ("index.html", "gpus.html", "history-nvidia-h200.html", PAGE, ".primbench-pages.json", ".primbench-digests.json")


def _small_run() -> list[dict]:
    """The header and first two cases of the small real run (no end record), to render fast."""
    return [r for r in good_records() if r["kind"] != "end"][:3]


@pytest.fixture
def folder(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    write_records(tmp_path / "in" / "small.jsonl", _small_run())
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept.txt").write_text("not the site's\n")
    (tmp_path / "site" / "runs").mkdir(parents=True)
    return tmp_path


def _publish(folder: Path, *arguments: str):
    return harness.run_cli(["publish", *arguments, "-o", "site"], folder, folder / "log")


def _ok(outcome) -> None:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"exit {outcome.code}; stderr {outcome.stderr[-800:]!r}"
    assert outcome.code == 0 and "Traceback" not in outcome.stderr + outcome.stdout, where
    assert all(line.startswith("primbench: ") for line in lines), where


def _is_the_sites_own(path: Path) -> None:
    assert not path.is_symlink() and path.is_file(), path
    text = path.read_text()
    assert text.rstrip().endswith("</html>") if path.suffix == ".html" else json.loads(text), path


def test_links_and_a_fifo_planted_at_the_sites_names_are_replaced_never_written_through(folder):
    site, outside = folder / "site", folder / "outside"
    before = harness.fingerprint([outside])
    (site / "index.html").symlink_to(outside / "kept.txt")  # a file outside the site
    (site / ".primbench-pages.json").symlink_to(outside / "kept.txt")
    (site / ".primbench-digests.json").symlink_to(outside / "new.json")  # a name outside, to be made
    (site / "history-nvidia-h200.html").symlink_to(os.devnull)  # a device: written in place, were it followed
    (site / PAGE).symlink_to(outside / "page.html")
    os.mkfifo(site / "gpus.html")  # were it written in place, publish would wait for a reader
    outcome = _publish(folder, "in")
    _ok(outcome)
    assert harness.fingerprint([outside]) == before and sorted(os.listdir(outside)) == ["kept.txt"]
    for name in OWN_NAMES:
        _is_the_sites_own(site / name)


def test_a_link_put_in_place_of_a_fresh_page_is_drawn_again_not_trusted(folder):
    _ok(_publish(folder, "in"))
    page = folder / "site" / PAGE
    page.unlink()
    page.symlink_to(folder / "outside" / "kept.txt")  # the cache still says the page is fresh
    outcome = _publish(folder, "in")
    _ok(outcome)
    assert f"rendering {PAGE}" in outcome.stderr and (folder / "outside" / "kept.txt").read_text() == "not the site's\n"
    _is_the_sites_own(page)


def test_a_runs_folder_that_is_a_link_is_refused_before_any_page(folder):
    site = folder / "site"
    (site / "runs").rmdir()
    (site / "runs").symlink_to(folder / "outside", target_is_directory=True)
    before = harness.fingerprint([folder / "outside", folder / "in"])
    outcome = _publish(folder, "in")
    lines = outcome.stderr.strip().splitlines()
    assert outcome.code == 2 and len(lines) == 1 and "site/runs: is a link" in lines[0] and "remove it" in lines[0], outcome.stderr
    assert harness.fingerprint([folder / "outside", folder / "in"]) == before and os.listdir(site) == ["runs"]


NOT_UTF8, ESCAPE = os.fsdecode(b"r\xff.jsonl"), "r\x1b[31m.jsonl"


def test_run_files_with_names_no_page_can_show_are_skipped_each_in_a_line_and_the_site_is_published(folder):
    for name in (NOT_UTF8, ESCAPE):
        write_records(folder / "in" / name, _small_run())
    before = harness.fingerprint([folder / "in"])
    outcome = _publish(folder, "in")
    _ok(outcome)
    skipped = [line for line in outcome.stderr.splitlines() if line.startswith("primbench: skipped ")]
    assert len(skipped) == 2 and any("in/r\\xff.jsonl" in line for line in skipped), skipped
    assert any("in/r\\x1b[31m.jsonl" in line for line in skipped) and "\x1b" not in outcome.stderr, skipped
    index = (folder / "site" / "index.html").read_text()
    assert "r\\xff.jsonl" in index and "publishing 1 run(s)" in outcome.stderr
    _is_the_sites_own(folder / "site" / PAGE)
    assert harness.fingerprint([folder / "in"]) == before


def test_a_run_file_named_not_utf8_on_the_command_line_is_published(folder):
    os.rename(folder / "in" / "small.jsonl", folder / "in" / NOT_UTF8)
    _ok(_publish(folder, os.path.join("in", NOT_UTF8)))
    _is_the_sites_own(folder / "site" / PAGE)


@pytest.mark.parametrize("argument", ["in", "in/*.jsonl"])
def test_a_folder_or_glob_of_only_such_names_is_one_line_naming_them_escaped(folder, argument):
    os.rename(folder / "in" / "small.jsonl", folder / "in" / NOT_UTF8)
    outcome = _publish(folder, argument)
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert outcome.code == 2 and "Traceback" not in outcome.stderr, outcome.stderr
    assert lines[-1].startswith("primbench: ") and "no readable run files" in lines[-1] and "r\\xff.jsonl" in lines[-1]
    assert os.listdir(folder / "site") == ["runs"]  # nothing written


def test_other_commands_still_refuse_such_a_name_in_a_folder(folder):
    write_records(folder / "in" / NOT_UTF8, _small_run())
    outcome = harness.run_cli(["report", "in"], folder, folder / "log")
    assert outcome.code == 2 and "r\\xff.jsonl: a run file whose name holds" in outcome.stderr, outcome.stderr
