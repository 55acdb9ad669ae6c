"""Load a page in headless Chromium (Debian's `chromium`) and say what happened: console errors,
network requests, and a screenshot. Used by tests/e2e/test_browser.py; skipped where there is none."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

# Chromium's own background traffic (time sync, accounts, dictionaries), seen with an empty page
# here: not the page's requests. The flags below switch most of it off; these hosts are what is
# left. Anything else (fonts.googleapis.com, a CDN) counts against the page.
BROWSER_HOSTS = ("accounts.google.com", "clients2.google.com", "www.google.com", "android.clients.google.com")
BROWSER_HOST_SUFFIXES = (".gvt1.com",)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
         "--enable-logging=stderr", "--v=0")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageLoad:
    console: list[str]  # console messages and uncaught errors
    requests: list[str]  # URLs the page asked for beyond file: and data:
    screenshot: Path


def load(page: Path, screenshot: Path, *, width: int = 1400, height: int = 3000) -> PageLoad:
    """Open `page` (a file) in headless Chromium; keep a screenshot."""
    browser = chromium()
    if browser is None:
        raise RuntimeError("no chromium")
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        net_log = Path(tmp) / "net.json"
        result = subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp}/profile", f"--log-net-log={net_log}",
                                 f"--screenshot={screenshot}", f"--window-size={width},{height}", page.resolve().as_uri()],
                                capture_output=True, text=True, timeout=120)
        console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
        urls = set()
        if net_log.exists():
            text = net_log.read_text()
            try:
                events = json.loads(text)["events"]
            except (json.JSONDecodeError, KeyError):  # Chromium may leave the log's closing bracket off
                events = json.loads(text.rstrip().rstrip(",") + "]}")["events"]
            for event in events:
                url = (event.get("params") or {}).get("url")
                if url:
                    urls.add(url)
    def browser_own(url: str) -> bool:
        host = urlparse(url).hostname or ""
        return host in BROWSER_HOSTS or host.endswith(BROWSER_HOST_SUFFIXES)

    requests = sorted(u for u in urls if urlparse(u).scheme not in ("file", "data", "chrome", "about") and not browser_own(u))
    return PageLoad(console=console, requests=requests, screenshot=screenshot)
