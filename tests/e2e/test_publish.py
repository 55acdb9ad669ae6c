"""primbench publish on real recorded runs (tests/data/runs): one entry per run, a history per GPU
(inline SVG, each point a link to its run's page) that marks where step detection finds a slowdown
begin, and the GPU models side by side. Nothing here needs a GPU.

The regression test copies a real run twice into tmp_path as two later runs (a test-only
transformation: new run ids and start times, and in the second one case's samples multiplied by
1.10); nothing under tests/data is modified. tools/probe/site_scale.py measures a site of 365 runs."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

from primbench.runfile.io import is_run_file, load_run
from tests.run_copies import SLOWED_CASE, edited_copy, scale_samples, toy_scale_run

REPO = Path(__file__).resolve().parents[2]


def _copy_as(run: Path, out: Path, run_id: str, started: str, factor: float = 1.0) -> Path:
    def edit(record):
        if record["kind"] == "header":
            record["run_id"], record["started"] = run_id, started
        scale_samples(record, SLOWED_CASE, factor)

    return edited_copy(run, out, edit)


def test_the_site_lists_each_run_once_and_links_every_report(published_site):
    index = (published_site / "index.html").read_text()
    run_ids = {load_run(p).header.run_id for p in (REPO / "tests" / "data" / "runs").rglob("*") if is_run_file(p)}
    assert len(run_ids) == 6  # fixture-a, -b, progression, the schema-1 excerpt, energy-a, -b (tests/data/README.md)
    linked = re.findall(r'href="runs/([^"]+)\.html"', index)
    assert sorted(linked) == sorted(run_ids)
    assert all((published_site / "runs" / f"{run_id}.html").exists() for run_id in linked)


def test_the_history_and_gpu_pages_draw_inline_charts_whose_points_open_existing_run_pages(published_site):
    history = next(published_site.glob("history-*.html")).read_text()
    assert "<img" not in history and history.count("<svg") >= 3
    links = re.findall(r'<a class="point"[^>]* href="([^"]+)"', history)
    assert links and all((published_site / href).is_file() for href in set(links)), sorted(set(links))[:5]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", history, re.S)
    assert len(captions) == history.count("<svg") and all(c.strip() and "None" not in c for c in captions)
    gpus = (published_site / "gpus.html").read_text()
    bars = re.findall(r'<a class="point bar"[^>]* href="#([^"]+)"', gpus)
    assert bars and all(f'<tr id="{anchor}">' in gpus for anchor in bars)


def test_the_history_marks_where_a_run_10_percent_slower_began(newest_run, tmp_path, bench):
    runs = tmp_path / "runs"
    runs.mkdir()
    _copy_as(newest_run, runs / "a.jsonl", "test-run-a", "2030-01-01T00:00:00+00:00")
    _copy_as(newest_run, runs / "b.jsonl", "test-run-b", "2030-01-02T00:00:00+00:00", factor=1.10)
    result = bench("publish", str(runs), "-o", str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    history = next((tmp_path / "site").glob("history-*.html")).read_text()
    found = re.findall(r"<li><strong>(\w+)</strong> at n = 2<sup>(\d+)</sup>: <code>([^<]+)</code> ([\d.]+) % slower "
                       r'from <a href="([^"]+)">', history)
    # Only the slowed case (at 2^25; the fixture has no 2^28), dated at the run where it began.
    assert found == [("reduce", "25", "cub_device_reduce", "10.0", "runs/test-run-b.html")]
    assert 'href="index.html"' in history  # and the page links back to the index


def test_adding_a_run_reads_and_renders_only_that_run(newest_run, tmp_path, monkeypatch):
    from primbench.report.site import publish as publishing

    runs = tmp_path / "runs"
    runs.mkdir()
    first = _copy_as(newest_run, runs / "a.jsonl", "test-run-a", "2030-01-01T00:00:00+00:00")
    publishing.publish([first], tmp_path / "site")
    page = tmp_path / "site" / "runs" / "test-run-a.html"
    rendered = page.stat().st_mtime_ns
    read = []
    monkeypatch.setattr(publishing, "load_run", lambda path: read.append(Path(path).name) or load_run(path))
    second = _copy_as(newest_run, runs / "b.jsonl", "test-run-b", "2030-01-02T00:00:00+00:00")
    index = publishing.publish([first, second], tmp_path / "site").read_text()
    assert read == ["b.jsonl"]  # the first run's digest and page came from the cache
    assert page.stat().st_mtime_ns == rendered
    assert "test-run-a" in index and "test-run-b" in index


def test_publishing_a_folder_without_runs_is_one_line_and_exit_2(tmp_path, bench):
    result = bench("publish", str(tmp_path), "-o", str(tmp_path / "site"))
    assert result.returncode == 2 and "no run files" in result.stderr and "Traceback" not in result.stderr


def test_a_run_id_that_climbs_out_of_the_site_folder_stays_inside_it(newest_run, tmp_path, bench):
    # A run file is data: a header whose run_id is a path must not make publish write outside -o.
    runs = tmp_path / "runs"
    runs.mkdir()
    _copy_as(newest_run, runs / "a.jsonl", "../../escaped", "2030-01-01T00:00:00+00:00")
    result = bench("publish", str(runs), "-o", str(tmp_path / "site"))
    assert result.returncode == 0, result.stderr
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    assert all(path.startswith("site/") for path in written), written
    # '/' made '_', the leading dots dropped, and a hash of the whole id: no other id gets this page
    assert any(re.fullmatch(r"site/runs/_\.\._escaped--[0-9a-f]{10}\.html", path) for path in written), written


def test_publish_renders_a_page_again_only_when_its_run_or_the_code_changed(tmp_path, bench):
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(REPO / "tests" / "data" / "runs" / "progression.jsonl.gz", runs / "p.jsonl.gz")
    site = tmp_path / "site"
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    (page,) = (site / "runs").glob("*.html")
    first = page.stat().st_mtime_ns
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    assert page.stat().st_mtime_ns == first  # the same run and code: not rendered again
    (site / ".primbench-pages.json").write_text("{not json")  # a damaged cache only costs a render
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    assert page.stat().st_mtime_ns > first
    second = page.stat().st_mtime_ns
    # The run file changed (here: recompressed, other bytes, same records): its page is rendered again.
    (runs / "p.jsonl.gz").write_bytes(gzip.compress(gzip.decompress((runs / "p.jsonl.gz").read_bytes()), compresslevel=1))
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    assert page.stat().st_mtime_ns > second
    third = page.stat().st_mtime_ns
    (runs / "p.jsonl.gz").rename(runs / "renamed.jsonl.gz")  # the page shows the file's name: rendered again
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    assert page.stat().st_mtime_ns > third and "renamed.jsonl.gz" in page.read_text()
    assert list(json.loads((site / ".primbench-pages.json").read_text())) == [page.name]


def test_publish_with_a_plugin_draws_its_ops_sections_and_renders_again_when_the_plugin_changes(tmp_path, bench):
    runs, site = tmp_path / "runs", tmp_path / "site"
    runs.mkdir()
    toy_scale_run(runs / "toy.jsonl")
    plugin = tmp_path / "toy_scale.py"  # a copy, edited below; its kernel source stays beside the original
    plugin.write_text((REPO / "tests" / "plugins" / "toy_scale.py").read_text().replace(
        'str(Path(__file__).with_name("toy_scale.cu"))', repr(str(REPO / "tests" / "plugins" / "toy_scale.cu"))))
    own_section = "toy_scale: time per element</h3>"
    assert bench("publish", str(runs), "-o", str(site), "--plugin", str(plugin)).returncode == 0
    (page,) = (site / "runs").glob("*.html")
    assert own_section in page.read_text()
    drawn = page.stat().st_mtime_ns
    assert bench("publish", str(runs), "-o", str(site), "--plugin", str(plugin)).returncode == 0
    assert page.stat().st_mtime_ns == drawn  # the same run, code and plugin: not rendered again
    # Without the plugin the page is drawn again, not kept with the plugin's section in it.
    assert bench("publish", str(runs), "-o", str(site)).returncode == 0
    assert page.stat().st_mtime_ns > drawn and own_section not in page.read_text()
    assert bench("publish", str(runs), "-o", str(site), "--plugin", str(plugin)).returncode == 0
    drawn = page.stat().st_mtime_ns
    assert own_section in page.read_text()
    plugin.write_text(plugin.read_text().replace('title="time per element"', 'title="time per item"'))
    assert bench("publish", str(runs), "-o", str(site), "--plugin", str(plugin)).returncode == 0
    assert page.stat().st_mtime_ns > drawn and "toy_scale: time per item</h3>" in page.read_text()
