"""The report, the compare page and the published site in a real browser (headless Chromium):
no console errors, no network requests, every image a decodable PNG, a screenshot kept under
test-artifacts/. Skipped with the reason where Chromium is not installed (apt-get install chromium)."""

from __future__ import annotations

import base64
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"

pytestmark = pytest.mark.skipif(browser.chromium() is None,
                                reason="no chromium here: install Debian's chromium (apt-get install chromium) to run the browser tests")


@pytest.fixture(scope="module")
def pages(tmp_path_factory, newest_run, published_site) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("pages")
    commands = [
        ("report", [str(newest_run), "-o", str(out / "report.html")]),
        ("compare", ["ref:seed002_rtx3080", str(newest_run), "--html", str(out / "compare.html")]),
    ]
    for command, args in commands:
        result = subprocess.run([sys.executable, "bench.py", command, *args], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    return {"report": out / "report.html", "compare": out / "compare.html", "site-index": published_site / "index.html",
            "site-history": next(published_site.glob("history-*.html")), "site-gpus": published_site / "gpus.html",
            "site-run": sorted((published_site / "runs").glob("*.html"))[-1]}


PAGES_WITH_PLOTS = {"report", "compare", "site-history", "site-run"}  # the others are tables only


@pytest.mark.parametrize("name", ["report", "compare", "site-index", "site-history", "site-gpus", "site-run"])
def test_the_page_loads_in_chromium_with_no_console_error_no_network_request_and_every_image(name, pages):
    page = pages[name]
    loaded = browser.load(page, ARTIFACTS / f"{name}.png")
    assert loaded.console == [], loaded.console
    assert loaded.requests == [], loaded.requests
    assert loaded.screenshot.stat().st_size > 10_000  # a rendered page, not a blank one
    from PIL import Image

    html = page.read_text(encoding="utf-8")
    sources = re.findall(r'<img[^>]*\ssrc="([^"]+)"', html)
    assert bool(sources) == (name in PAGES_WITH_PLOTS), len(sources)
    for source in sources:
        assert source.startswith("data:image/png;base64,"), source[:60]
        image = Image.open(io.BytesIO(base64.b64decode(source.split(",", 1)[1])))
        assert image.width > 100 and image.height > 100


def test_every_link_of_the_site_points_at_a_page_that_exists(pages):
    site = pages["site-index"].parent
    for page in [site / "index.html", site / "gpus.html", *site.glob("history-*.html")]:
        targets = re.findall(r'href="([^"#]+)"', page.read_text(encoding="utf-8"))
        assert targets, f"{page.name} links nowhere"
        for target in targets:
            assert not re.match(r"[a-z]+:", target), f"{page.name} links out to {target}"
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_browser_check_itself_sees_a_console_error_and_a_network_request(tmp_path):
    # The check must be able to fail: a page with both faults.
    page = tmp_path / "bad.html"
    page.write_text('<html><body><img src="https://example.com/x.png"><script>console.error("boom")</script></body></html>')
    loaded = browser.load(page, tmp_path / "bad.png", width=400, height=300)
    assert any("boom" in line for line in loaded.console)
    assert "https://example.com/x.png" in loaded.requests


def _layout(page: Path, tmp_path: Path, width: int) -> dict:
    """The page's scroll and client widths at `width` px, read by a probe script in a copy of it."""
    probe = tmp_path / f"probe-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", '<script>document.title = "W=" + document.documentElement.scrollWidth + " C=" + '
                   'document.documentElement.clientWidth;</script></body>'), encoding="utf-8")
    result = subprocess.run([browser.chromium(), *browser.FLAGS, f"--user-data-dir={tmp_path}/profile",
                             f"--window-size={width},900", "--dump-dom", probe.resolve().as_uri()],
                            capture_output=True, text=True, timeout=120)
    found = re.search(r"<title>W=(\d+) C=(\d+)</title>", result.stdout)
    assert found, result.stdout[-500:] + result.stderr[-500:]
    return {"scroll": int(found.group(1)), "client": int(found.group(2))}


def test_the_compare_page_needs_no_horizontal_scroll_at_1280_px(pages, tmp_path):
    layout = _layout(pages["compare"], tmp_path, 1280)
    assert layout["scroll"] <= layout["client"], layout
    # The probe can fail: a page with a 3000 px wide table scrolls sideways.
    wide = tmp_path / "wide.html"
    wide.write_text('<html><head><title>x</title></head><body><table style="width:3000px"><tr><td>x</td></tr></table></body></html>')
    layout = _layout(wide, tmp_path, 1280)
    assert layout["scroll"] > layout["client"], layout
