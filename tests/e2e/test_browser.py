"""The report, the compare page and the published site in a real browser (headless Chromium) at
1280 px: no console error, no request made by the page, nothing wider than the window (the page
does not scroll sideways and no element clips or scrolls its content sideways, <details> opened),
every image decodes. A screenshot of each is kept under test-artifacts/.

Chromium is Debian's: tests/debian_tools.py installs it where it is missing and the tests run as
root with apt (as CI does); the tests skip, saying why, only where it cannot be had."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.debian_tools import debian_tool, start_install, why_not
from tests.e2e import browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
WIDTH = 1280
start_install("chromium", "chromium")  # at collection: the install overlaps the rest of the suite


@pytest.fixture(scope="module")
def chromium():
    found = browser.chromium() or debian_tool("chromium", "chromium")
    if found is None:
        pytest.skip(f"no chromium, and it cannot be installed here ({why_not('chromium')}): apt-get install chromium")
    return found


@pytest.fixture(scope="module")
def pages(chromium, tmp_path_factory, newest_run, published_site) -> dict[str, Path]:
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
def test_at_1280_px_nothing_overflows_every_image_decodes_and_the_page_requests_nothing(name, pages):
    page = pages[name]
    seen = browser.inspect(page, width=WIDTH)
    print(f"{name}: {seen.scroll_width}/{seen.client_width} px, {len(seen.images)} images, "
          f"{len(seen.overflowing)} overflowing, {len(seen.requests)} requests")
    assert seen.console == [], seen.console
    assert seen.requests == [], seen.requests
    assert seen.scroll_width <= seen.client_width, (seen.scroll_width, seen.client_width)
    assert seen.overflowing == [], seen.overflowing
    assert bool(seen.images) == (name in PAGES_WITH_PLOTS), len(seen.images)
    assert all(image["ok"] and image["width"] > 100 for image in seen.images), seen.images
    shot = browser.screenshot(page, ARTIFACTS / f"{name}.png", width=WIDTH)
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one


def test_the_browser_check_itself_sees_each_fault_it_looks_for(chromium, tmp_path):
    # Each check must be able to fail: a page with every fault.
    page = tmp_path / "bad.html"
    page.write_text('<html><body><img src="https://example.com/x.png"><img src="data:image/png;base64,AAAA">'
                    '<table style="width:3000px"><tr><td>wide</td></tr></table>'
                    '<div style="overflow-x:auto;width:200px"><div style="width:900px">scrolls</div></div>'
                    '<script>console.error("boom")</script></body></html>')
    seen = browser.inspect(page, width=WIDTH)
    assert any("boom" in line for line in seen.console)
    assert "https://example.com/x.png" in seen.requests
    assert seen.scroll_width > seen.client_width
    assert any(line.startswith("div 900>200") for line in seen.overflowing), seen.overflowing
    assert [image["ok"] for image in seen.images] == [False, False]


def test_every_page_of_the_site_links_back_to_the_index_and_every_link_resolves(pages):
    import re

    site = pages["site-index"].parent
    for page in [site / "gpus.html", *site.glob("history-*.html"), *(site / "runs").glob("*.html")]:
        targets = re.findall(r'href="([^"#]+)"', page.read_text(encoding="utf-8"))
        assert any(Path(page.parent, t).resolve() == (site / "index.html").resolve() for t in targets), page.name
        for target in targets:
            assert not re.match(r"[a-z]+:", target), f"{page.name} links out to {target}"
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"
