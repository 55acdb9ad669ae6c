"""Screenshots of the report for a reader to look at (test-only; headless Chromium, 1280 x 900 px):

    .venv/bin/python -m tests.e2e.screenshots OUTDIR [--site DIR] [--report FILE]

renders the reference run (results/reference/nvidia-h200.jsonl.gz) with `bench.py report` and writes

    OUTDIR/report.png       the top of the report
    OUTDIR/report-topk.png  the report scrolled to the top-k op's bandwidth chart (#bandwidth-topk figure)
    OUTDIR/history.png      with --site DIR (a `primbench publish` folder): the top of its first history-*.html

--report FILE shoots an already rendered report instead of rendering one. The pictures of a report
rendered here carry the reference's run id (tools/doc_figures/pictures.py), which the docs' test
checks against the reference: `python -m tests.e2e.screenshots docs/` refreshes docs/report.png and
docs/report-topk.png after the reference changes. The scrolled picture is
of a copy of the page whose added script, on load, moves the page up until the chart is at the
window's top: Chromium's --screenshot of a scrolled page comes out blank (Chromium 150 headless), so
the body is shifted (position: relative; top: -y) instead of the window scrolled."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.e2e import browser
from tools.doc_figures import pictures

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
WIDTH, HEIGHT = 1280, 900
TOPK_CHART = "#bandwidth-topk figure"
# Added before </body>: once loaded, shift the page up so that the element (its section, failing that)
# is at the top of the window, 8 px below its edge or the page's bar.
SHIFT = """<script>window.addEventListener("load", () => {
  const el = document.querySelector(%(selector)r) || document.querySelector(%(fallback)r);
  if (!el) { console.error("screenshots: no element matches %(selector)s"); return; }
  // Below the page's own bar, where one stays at the top of the window (position fixed or sticky).
  const bars = [...document.querySelectorAll("body > *, body > * > nav")]
    .filter(e => ["fixed", "sticky"].includes(getComputedStyle(e).position)).map(e => e.getBoundingClientRect().bottom);
  const y = el.getBoundingClientRect().top + window.scrollY - Math.max(0, ...bars) - 8;
  document.body.style.position = "relative";
  document.body.style.top = -y + "px";
});</script>"""


def render_report(out: Path) -> Path:
    result = subprocess.run([sys.executable, "bench.py", "report", str(REFERENCE), "-o", str(out)], cwd=REPO,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench.py report failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return out


def scrolled_screenshot(page: Path, out: Path, selector: str, *, width: int = WIDTH, height: int = HEIGHT) -> Path:
    """A PNG of the window of `page` as if scrolled so that `selector`'s element is at its top."""
    fallback = selector.split()[0]
    script = SHIFT % {"selector": selector, "fallback": fallback}
    html = page.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(html.replace("</body>", script + "</body>") if "</body>" in html else html + script,
                        encoding="utf-8")
        return browser.screenshot(copy, out, width=width, height=height)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--site", type=Path, help="a published site folder: shoot the top of its history page")
    parser.add_argument("--report", type=Path, help="an already rendered report.html (default: render the reference)")
    args = parser.parse_args(argv)
    if browser.chromium() is None:
        raise SystemExit("no chromium on PATH: apt-get install chromium")
    args.outdir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        report = args.report or render_report(Path(tmp) / "report.html")
        shots = [browser.screenshot(report, args.outdir / "report.png", width=WIDTH, height=HEIGHT),
                 scrolled_screenshot(report, args.outdir / "report-topk.png", TOPK_CHART)]
    if not args.report:  # the reference's pictures say which run they show
        from primbench.runfile.io import load_run

        for shot in shots:
            pictures.stamp(shot, load_run(REFERENCE).header.run_id)
    written += shots
    if args.site:
        histories = sorted(args.site.glob("history-*.html"))
        if not histories:
            raise SystemExit(f"no history-*.html in {args.site}")
        written.append(browser.screenshot(histories[0], args.outdir / "history.png", width=WIDTH, height=HEIGHT))
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
