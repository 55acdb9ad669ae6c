"""Every string that comes from a run file reaches HTML escaped: the report, the compare page and
the published site. The hostile run is a test-only transformation of the newest real run: a
variant name, a failure reason, the device name and the config name replaced by markup."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    runs = sorted((REPO / "results").glob("*.jsonl"))
    if not runs:
        pytest.skip("no recorded run under results/ yet")
    out = tmp_path_factory.mktemp("hostile") / "runs"
    out.mkdir()
    lines = []
    for number, line in enumerate(runs[-1].read_text().splitlines()):
        obj = json.loads(line)
        if obj["kind"] == "header":
            obj["device"]["name"] = "NVIDIA H200 " + HOSTILE
            obj["config"]["name"] = HOSTILE
            info = obj["variants"].pop("reduce/reduce2_sequential")
            obj["variants"]["reduce/" + HOSTILE] = dict(info, name=HOSTILE, notes=HOSTILE, origin=HOSTILE)
        elif obj["kind"] == "case" and obj["variant"] == "reduce2_sequential":
            obj["variant"] = HOSTILE
            obj["key"] = obj["key"].replace("reduce2_sequential", HOSTILE)
            if number % 2:
                obj.update(status="failed", reason=HOSTILE)
        lines.append(json.dumps(obj))
    path = out / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _bench(*args):
    result = subprocess.run([sys.executable, "bench.py", *args], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def test_markup_in_a_run_file_is_escaped_in_the_report_the_compare_page_and_the_site(hostile_run, tmp_path):
    _bench("report", str(hostile_run), "-o", str(tmp_path / "report.html"))
    _bench("compare", str(hostile_run), str(hostile_run), "--html", str(tmp_path / "compare.html"), "--all")
    _bench("publish", str(hostile_run.parent), "-o", str(tmp_path / "site"))
    pages = [tmp_path / "report.html", tmp_path / "compare.html", *sorted((tmp_path / "site").rglob("*.html"))]
    assert len(pages) >= 6
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html and "<img src=x" not in html, page.name  # no raw tag from the run file
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in report  # it is shown, as text
