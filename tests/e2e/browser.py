"""Open a page in headless Chromium (Debian's `chromium`) and say what happened: console errors,
the requests the page itself made, what overflows sideways at a given width, which images did not
decode, and a screenshot. Used by tests/e2e/test_browser.py.

Chromium starts with its background traffic switched off (networking, component updates, sync,
...), and the page's own requests are read from the page (the Resource Timing API), so whatever the
browser fetches for itself can never count against a page, nor hide one of its requests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-default-browser-check",
         "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
         "--enable-logging=stderr", "--v=0")
PROBE_ID = "primbench-probe"
# Injected before </body>: once the page has loaded, open every <details> (long notes must fit
# too), wait for every image to decode, then write what it found into a <pre> that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", async () => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  const images = await Promise.all([...document.images].map(async (img, i) => {
    try { await img.decode(); } catch (e) { return {i, ok: false, why: String(e)}; }
    return {i, ok: img.naturalWidth > 0 && img.naturalHeight > 0, width: img.naturalWidth};
  }));
  const root = document.documentElement;
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  const overflowing = [...document.body.querySelectorAll("*")]
    .filter(el => el.id !== "%(id)s" && !(el instanceof SVGElement))  // an SVG element has no CSS box to overflow
    .filter(el => el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
    .map(el => name(el) + " " + el.scrollWidth + ">" + el.clientWidth + " " + el.textContent.trim().slice(0, 60));
  const requests = performance.getEntriesByType("resource").map(e => e.name);
  const out = document.createElement("pre");
  out.id = "%(id)s";
  out.style.display = "none";
  out.textContent = JSON.stringify({scroll: root.scrollWidth, client: root.clientWidth, overflowing, images, requests});
  document.body.appendChild(out);
});
</script>""" % {"id": PROBE_ID}


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Inspection:
    scroll_width: int  # the page's (documentElement) scroll and client widths
    client_width: int
    overflowing: list[str]  # elements whose content is wider than their box (clipped or scrolled)
    images: list[dict]  # {"i", "ok", ...} per <img>
    requests: list[str]  # what the page itself fetched beyond file: and data:
    console: list[str] = field(default_factory=list)  # console messages and uncaught errors


def _run(arguments: list[str], profile: str) -> subprocess.CompletedProcess:
    browser = chromium()
    if browser is None:
        raise RuntimeError("no chromium")
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *arguments], capture_output=True, text=True,
                          timeout=120)


def inspect(page: Path, *, width: int = 1280, height: int = 900, attempts: int = 2,
            screenshot_to: Path | None = None) -> Inspection:
    """Load a probed copy of `page` at `width` x `height` px and read back what the probe found.
    Chromium is started once more if its dump lacks the probe's report (then the browser failed,
    not the page); a report, whatever it says, is never retried. With `screenshot_to`, the same
    launch also writes a PNG of the window's top (every <details> open, as the probe leaves it):
    a second launch would load and lay out the page again for the picture alone."""
    shot = []
    if screenshot_to is not None:
        screenshot_to.parent.mkdir(parents=True, exist_ok=True)
        shot = [f"--screenshot={screenshot_to.resolve()}"]
    for _ in range(attempts):
        if screenshot_to is not None:  # an earlier run's or attempt's picture must not pass for this one
            screenshot_to.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            probed = Path(tmp) / page.name
            html = page.read_text(encoding="utf-8")
            probed.write_text(html.replace("</body>", PROBE + "</body>") if "</body>" in html else html + PROBE,
                              encoding="utf-8")
            result = _run([f"--window-size={width},{height}", "--virtual-time-budget=15000", *shot, "--dump-dom",
                           probed.resolve().as_uri()], f"{tmp}/profile")
        found = re.search(rf'<pre id="{PROBE_ID}"[^>]*>(.*?)</pre>', result.stdout, re.S)
        if found:
            break
    else:
        raise AssertionError("the probe did not report: " + result.stdout[-300:] + result.stderr[-500:])
    if screenshot_to is not None and (result.returncode != 0 or not screenshot_to.is_file()):
        raise AssertionError(f"chromium exited {result.returncode}, screenshot written: {screenshot_to.is_file()}: "
                             f"{result.stderr[-300:]}")
    import html as html_module

    data = json.loads(html_module.unescape(found.group(1)))
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    requests = sorted({u for u in data["requests"] if not u.startswith(("data:", "file:", "blob:", "about:"))})
    return Inspection(data["scroll"], data["client"], data["overflowing"], data["images"], requests, console)


def screenshot(page: Path, out: Path, *, width: int = 1280, height: int = 900) -> Path:
    """A PNG of the top `width` x `height` px of `page`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)  # an earlier run's picture must not pass for this one
    with tempfile.TemporaryDirectory() as tmp:
        result = _run([f"--screenshot={out.resolve()}", f"--window-size={width},{height}", page.resolve().as_uri()],
                      f"{tmp}/profile")
    if result.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium exited {result.returncode} without a screenshot: {result.stderr[-300:]}")
    return out
