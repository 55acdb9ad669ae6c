"""Every string that comes from a run file reaches HTML escaped: the report, the compare page and
the published site. The hostile run is a test-only transformation of the newest real run: a
variant name, a failure reason, the device name and the config name replaced by markup."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.run_copies import edited_copy

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def hostile_run(newest_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "runs"
    out.mkdir()
    renamed = []

    def edit(record):
        if record["kind"] == "header":
            record["device"]["name"] = "NVIDIA H200 " + HOSTILE
            record["config"]["name"] = HOSTILE
            info = record["variants"].pop("reduce/reduce2_sequential")
            record["variants"]["reduce/" + HOSTILE] = dict(info, name=HOSTILE, notes=HOSTILE, origin=HOSTILE)
        elif record["kind"] == "case" and record["variant"] == "reduce2_sequential":
            record["variant"] = HOSTILE
            record["key"] = record["key"].replace("reduce2_sequential", HOSTILE)
            renamed.append(record["key"])
            if len(renamed) % 2:  # every other one failed, so that the reason is shown too
                record.update(status="failed", reason=HOSTILE)

    return edited_copy(newest_run, out / "hostile.jsonl", edit)


def test_markup_in_a_run_file_is_escaped_in_the_report_the_compare_page_and_the_site(hostile_run, tmp_path, bench):
    def _bench(*args):
        result = bench(*args)
        assert result.returncode == 0, result.stderr

    _bench("report", str(hostile_run), "-o", str(tmp_path / "report.html"))
    _bench("compare", str(hostile_run), str(hostile_run), "--html", str(tmp_path / "compare.html"), "--all")
    _bench("publish", str(hostile_run.parent), "-o", str(tmp_path / "site"))
    pages = [tmp_path / "report.html", tmp_path / "compare.html", *sorted((tmp_path / "site").rglob("*.html"))]
    assert len(pages) >= 6
    for page in pages:
        html = page.read_text(encoding="utf-8")
        # Every page carries the one shared table script (tables.js), and nothing else that is a script.
        assert html.count("<script") == 1 and "<img src=x" not in html, page.name  # no raw tag from the run file
        assert "&lt;script&gt;" in html, page.name  # and the name is shown, as text, not dropped
