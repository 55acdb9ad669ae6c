"""Hostile run files and site folders for publish and for the commands that could import plugins:
a run file's header naming a plugin imports nothing until the user confirms it; run ids that the
safe-name step maps alike (or that are too long for a file name) each get their own page; and a
damaged publish cache only means every run is read again. Every run here is a copy of
tests/data/runs/progression.jsonl.gz with its header edited (a test-only transformation)."""

from __future__ import annotations

import gzip
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from primbench.report.site.publish import page_name
from primbench.runfile import protocol
from tests.hostile import harness
from tests.hostile.corpus import GOOD_RUN, good_records, write_records

TRUST = "--trust-plugins-from-run"


def _has_gpu() -> bool:
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


def _one_line(outcome, code: int, *fragments: str) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"exit {outcome.code}; stderr: {outcome.stderr[-600:]!r}"
    assert "Traceback" not in outcome.stderr + outcome.stdout, where
    assert outcome.code == code, where
    assert len(lines) == 1 and lines[0].startswith("primbench"), where
    assert all(fragment in lines[0] for fragment in fragments), where
    return lines[0]


def _no_traceback(outcome, code: int = 0) -> None:
    where = f"exit {outcome.code}; stderr: {outcome.stderr[-600:]!r}"
    assert outcome.code == code and "Traceback" not in outcome.stderr + outcome.stdout, where


def _small_run() -> list[dict]:
    """The header and first two cases of GOOD_RUN (no end record: an interrupted run), to render fast."""
    return [r for r in good_records() if r["kind"] != "end"][:3]


@pytest.fixture(scope="module")
def first_site(tmp_path_factory):
    """A run and the site published from it once (its page and cache files written)."""
    folder = tmp_path_factory.mktemp("cache")
    (folder / "runs").mkdir()
    write_records(folder / "runs" / "small.jsonl", _small_run())
    outcome = harness.run_cli(["publish", str(folder / "runs"), "-o", str(folder / "site")], folder, folder / "log")
    _no_traceback(outcome)
    return folder


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """One publish in this process first: the forked children then find pandas, jinja2, matplotlib
    and the code's fingerprint ready, and each command takes milliseconds, not a third of a second."""
    from primbench.report.site.publish import publish

    folder = tmp_path_factory.mktemp("warm")
    write_records(folder / "small.jsonl", _small_run())
    publish([folder / "small.jsonl"], folder / "site")


# -- a run file's plugins ----------------------------------------------------------------------
@pytest.fixture
def plugin_run(tmp_path):
    """(folder, an interrupted run in the current schema whose header names a plugin, the plugin,
    the file the plugin writes when it is imported, a finished run that names none)."""
    folder = tmp_path / "in"
    folder.mkdir()
    marker = tmp_path / "plugin-was-imported"
    plugin = folder / "writes_a_marker.py"
    plugin.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n")
    records = _small_run()  # interrupted: --resume would go on
    # This primbench's protocol too: a run measured by another is refused before its plugins are read.
    records[0] = dict(records[0], schema=4, config=dict(records[0]["config"], plugins=[str(plugin)]),
                      protocol=protocol.declared())
    run = folder / "names-a-plugin.jsonl"
    write_records(run, records)
    good = folder / "good.jsonl"
    good.write_bytes(gzip.decompress(GOOD_RUN.read_bytes()))
    return folder, run, plugin, marker, good


@pytest.mark.parametrize("command", [["profile", "{run}"], ["run", "--resume", "{run}"],
                                     ["run", "--resume", "{run}", "--gpus", "0,1"]],
                         ids=["profile", "resume", "resume on gpus"])
def test_a_run_files_plugin_is_not_imported_without_the_users_word(plugin_run, tmp_path, command):
    folder, run, plugin, marker, _ = plugin_run
    before = harness.fingerprint([folder])
    outcome = harness.run_cli([arg.replace("{run}", str(run)) for arg in command], folder, tmp_path / "out")
    line = _one_line(outcome, 2, TRUST, "--plugin", str(plugin), str(run))
    assert "writes_a_marker.py" in line and len(line) <= 600
    assert not marker.exists(), "the run file's plugin was imported"
    assert harness.fingerprint([folder]) == before


def test_readers_never_import_a_run_files_plugin(plugin_run, tmp_path):
    folder, run, _, marker, good = plugin_run
    before = harness.fingerprint([folder])
    out = tmp_path / "written"
    for argv in (["report", str(run), "-o", str(out / "r.html")], ["compare", str(good), str(run)],
                 ["export", str(run), "-o", str(out / "r.csv")], ["publish", str(run), "-o", str(out / "site")]):
        outcome = harness.run_cli(argv, folder, tmp_path / "log")
        _no_traceback(outcome)
        assert not marker.exists(), f"{argv[0]} imported the run file's plugin"
    assert harness.fingerprint([folder]) == before


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU: the command would go on to run")
@pytest.mark.parametrize("confirm", [[TRUST], ["--plugin", "{plugin}"]], ids=["trusted", "named again"])
@pytest.mark.parametrize("command", [["profile", "{run}"], ["run", "--resume", "{run}"]], ids=["profile", "resume"])
def test_a_confirmed_plugin_is_imported_and_the_command_goes_on_to_the_gpu(plugin_run, tmp_path, command, confirm):
    folder, run, plugin, marker, _ = plugin_run
    argv = [arg.replace("{run}", str(run)).replace("{plugin}", str(plugin)) for arg in command + confirm]
    outcome = harness.run_cli(argv, folder, tmp_path / "out")
    _one_line(outcome, 3, "GPU")  # past the plugin question: stopped only for want of a GPU
    assert marker.read_text() == "imported"


def test_a_restart_names_this_processs_plugins_again(monkeypatch):
    from primbench import registry
    from primbench.run.restart import resume_arguments

    monkeypatch.setattr(registry, "plugins", lambda: [Path("/p/a.py"), Path("/p/b.py")])
    assert resume_arguments("r.jsonl") == ["run", "--resume", "r.jsonl", "--plugin", "/p/a.py", "--plugin", "/p/b.py"]


# -- page names --------------------------------------------------------------------------------
ALIKE = ["run x", "run_x", "run/x", ".", "..", "r" * 300]


def test_page_names_are_distinct_bounded_and_keep_primbenchs_own_run_ids():
    ids = [*ALIKE, "RUN_X", "Run_x", "con", "run_x--0123456789", "../../x", "\n", "x" * 80, "x" * 81, "-"]
    names = [page_name(run_id) for run_id in ids]
    assert len({name.lower() for name in names}) == len(ids)  # distinct, even where case is ignored
    assert all(re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}", name) for name in names), names
    assert page_name("2026-12-01-155225-nvidia-h200-9fbb40") == "2026-12-01-155225-nvidia-h200-9fbb40"
    assert page_name("run_x") == "run_x" and page_name("con") != "con"


def _runs_with_ids(folder: Path, run_ids) -> dict[str, Path]:
    folder.mkdir()
    runs = {}
    for i, run_id in enumerate(run_ids):
        records = _small_run()
        records[0] = dict(records[0], run_id=run_id, started=f"2030-01-{i + 1:02d}T00:00:00+00:00")
        runs[run_id] = folder / f"run-{i}.jsonl"
        write_records(runs[run_id], records)
    return runs


def _index_links(site: Path) -> dict[str, str]:
    """The index's rows: run id -> the page it links."""
    rows = re.findall(r'<tr><td><a href="([^"]+)">([^<]*)</a>', (site / "index.html").read_text())
    return {html.unescape(text): href for href, text in rows}


def test_run_ids_that_map_alike_each_get_their_own_page(tmp_path):
    runs = _runs_with_ids(tmp_path / "runs", ALIKE)
    before = harness.fingerprint([tmp_path / "runs"])
    site = tmp_path / "site"
    outcome = harness.run_cli(["publish", str(tmp_path / "runs"), "-o", str(site)], tmp_path, tmp_path / "log")
    _no_traceback(outcome)
    links = _index_links(site)
    assert sorted(links) == sorted(ALIKE) and len(set(links.values())) == len(ALIKE)
    assert len(list((site / "runs").glob("*.html"))) == len(ALIKE)
    for run_id, href in links.items():  # each link opens the page of its own run (the page names its file)
        assert f'runs/{page_name(run_id)}.html' == href and runs[run_id].name in (site / href).read_text()
    assert harness.fingerprint([tmp_path / "runs"]) == before


def test_a_run_id_no_page_can_be_written_in_is_skipped_with_one_line(tmp_path):
    _runs_with_ids(tmp_path / "runs", ["fine", "\ud800lone surrogate"])
    before = harness.fingerprint([tmp_path / "runs"])
    site = tmp_path / "site"
    outcome = harness.run_cli(["publish", str(tmp_path / "runs"), "-o", str(site)], tmp_path, tmp_path / "log")
    _no_traceback(outcome)
    skipped = [line for line in outcome.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and "run-1.jsonl" in skipped[0] and "run id" in skipped[0], outcome.stderr
    assert list(_index_links(site)) == ["fine"]
    assert harness.fingerprint([tmp_path / "runs"]) == before


# -- a damaged publish cache -------------------------------------------------------------------
DIGESTS = ".primbench-digests.json"


def _with_digest(change):
    """Damage: the real cache file with its one digest changed by `change(digest)`."""
    def damage(path: Path):
        saved = json.loads(path.read_text())
        (digest,) = saved["digests"].values()
        change(digest)
        path.write_text(json.dumps(saved))
    return damage


DAMAGE = {
    "not json": lambda p: p.write_text("{not json"),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "binary": lambda p: p.write_bytes(b"\xff\xfe\x00\x9c" * 64),
    "a list": lambda p: p.write_text("[1, 2]"),
    "digests a list": lambda p: p.write_text('{"schema": 2, "digests": []}'),
    "a digest a number": lambda p: p.write_text(json.dumps({"schema": 2, "digests": dict.fromkeys(
        json.loads(p.read_text())["digests"], 5)})),
    "points not a list": _with_digest(lambda d: d.update(points="many")),
    "a point without its fields": _with_digest(lambda d: d["points"].__setitem__(0, {"op": 1})),
    "cases as text": _with_digest(lambda d: d.update(cases="20")),
    "id a number": _with_digest(lambda d: d.update(id=7)),
    "a page outside the site": _with_digest(lambda d: d.update(page="../../elsewhere.html")),
    "nested thousands deep": lambda p: p.write_text("[" * 100_000 + "]" * 100_000),
    "a folder": lambda p: (p.unlink(), p.mkdir(), (p / "inside").write_text("kept")),
    "a fifo": lambda p: (p.unlink(), os.mkfifo(p)),
}




@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_damaged_digest_cache_means_every_run_is_read_again(first_site, tmp_path, damage):
    site = tmp_path / "site"
    shutil.copytree(first_site / "site", site)
    DAMAGE[damage](site / DIGESTS)
    runs = first_site / "runs"
    before = harness.fingerprint([runs])
    outcome = harness.run_cli(["publish", str(runs), "-o", str(site)], tmp_path, tmp_path / "log")
    _no_traceback(outcome)
    (run_id,) = _index_links(site)
    assert _index_links(site) == {run_id: f"runs/{page_name(run_id)}.html"}
    if damage == "a folder":  # cannot be replaced: a warning, and the folder left as it was
        assert (site / DIGESTS / "inside").read_text() == "kept" and "warning" in outcome.stderr
    elif damage != "a fifo":  # read again and saved whole (a FIFO is left alone, never read)
        saved = json.loads((site / DIGESTS).read_text())
        assert [d["id"] for d in saved["digests"].values()] == [run_id]
    assert harness.fingerprint([runs]) == before


def test_an_unreadable_digest_cache_means_every_run_is_read_again(first_site, tmp_path, monkeypatch):
    site = tmp_path / "site"
    shutil.copytree(first_site / "site", site)
    real = Path.read_bytes

    def refuse(path):
        if path.name == DIGESTS:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)  # (root reads a file of mode 000) the forked child inherits it
    outcome = harness.run_cli(["publish", str(first_site / "runs"), "-o", str(site)], tmp_path, tmp_path / "log")
    _no_traceback(outcome)
    assert len(_index_links(site)) == 1
