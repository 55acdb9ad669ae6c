"""The report, the compare page and the published site in a real browser (headless Chromium) at
1280 px: no console error, no request made by the page, nothing wider than the window (the page
does not scroll sideways and no element clips or scrolls its content sideways, <details> opened),
every image decodes. A screenshot of each is kept under test-artifacts/.

Chromium is Debian's: tests/debian_tools.py installs it where it is missing, the tests run as root
with apt, and the run is CI's (CI=true) or asked for it (PRIMBENCH_INSTALL_TEST_TOOLS=1); elsewhere
the tests skip in one line saying how to get it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import browser
from tests.run_copies import SLOWED_CASE, edited_copy, scale_samples, toy_scale_run

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
WIDTH = 1280
SAME_COMMIT = ("tests/data/runs/fixture-a.jsonl.gz", "tests/data/runs/fixture-b.jsonl.gz")
BASELINE_VS_REFERENCE = ("results/baselines/nvidia-h200.jsonl.gz", "results/reference/nvidia-h200.jsonl.gz")


@pytest.fixture(scope="module")
def pages(chromium, tmp_path_factory, newest_run, published_site) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("pages")
    # Test-only: a copy of the newest run with one case's raw samples 10 % slower, so that a pair leads.
    slowed = edited_copy(newest_run, out / "slowed.jsonl", lambda record: scale_samples(record, SLOWED_CASE, 1.10))
    commands = [
        ("report", "report", [str(newest_run), "-o", str(out / "report.html")]),
        ("compare", "compare", ["ref:seed002_rtx3080", str(newest_run), "--html", str(out / "compare.html")]),
        ("compare-changed", "compare", [str(newest_run), str(slowed), "--html", str(out / "compare-changed.html")]),
        # Two runs of one commit: nothing leads, every case folded, some BELOW_FLOOR.
        ("compare-same-commit", "compare", [*SAME_COMMIT, "--html", str(out / "compare-same-commit.html")]),
        # The committed baseline against the reference run: most cases on one side only (no ratio).
        ("compare-baseline", "compare", [*BASELINE_VS_REFERENCE, "--html", str(out / "compare-baseline.html")]),
    ]
    for _, command, args in commands:
        result = subprocess.run([sys.executable, "bench.py", command, *args], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    return {**{name: out / f"{name}.html" for name, _, _ in commands}, "site-index": published_site / "index.html",
            "site-history": next(published_site.glob("history-*.html")), "site-gpus": published_site / "gpus.html",
            "site-run": sorted((published_site / "runs").glob("*.html"))[-1]}


# The others draw their charts as inline SVG (or are tables only); only the compare page of two GPU models
# keeps a picture, its % of peak scatter.
PAGES_WITH_PLOTS = {"compare"}


@pytest.mark.parametrize("name", ["report", "compare", "compare-changed", "compare-same-commit", "compare-baseline",
                                  "site-index", "site-history", "site-gpus", "site-run"])
def test_at_1280_px_nothing_overflows_every_image_decodes_and_the_page_requests_nothing(name, pages):
    page, shot = pages[name], ARTIFACTS / f"{name}.png"
    seen = browser.inspect(page, width=WIDTH, screenshot_to=shot)
    print(f"{name}: {seen.scroll_width}/{seen.client_width} px, {len(seen.images)} images, "
          f"{len(seen.overflowing)} overflowing, {len(seen.requests)} requests")
    assert seen.console == [], seen.console
    assert seen.requests == [], seen.requests
    assert seen.scroll_width <= seen.client_width, (seen.scroll_width, seen.client_width)
    assert seen.overflowing == [], seen.overflowing
    assert bool(seen.images) == (name in PAGES_WITH_PLOTS), len(seen.images)
    assert all(image["ok"] and image["width"] > 100 for image in seen.images), seen.images
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


ACTIONS_ID = "primbench-actions"


def _evaluate(page: Path, body: str, *, width: int = WIDTH, height: int = 900):
    """Run `body` (the body of an async JS function) in `page` once it has loaded, in headless
    Chromium, and return what it returns (as JSON). The page's own script has run by then: this
    clicks and reads the page as a reader's browser would."""
    import html
    import json
    import re
    import tempfile

    script = ('<script>window.addEventListener("load", async () => { let result;'
              f' try {{ result = await (async () => {{ {body} }})(); }}'
              ' catch (e) { result = {error: String(e && e.stack || e)}; }'
              f' const out = document.createElement("pre"); out.id = "{ACTIONS_ID}"; out.style.display = "none";'
              ' out.textContent = JSON.stringify(result); document.body.appendChild(out); });</script>')
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp) / page.name
        probed.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
        result = subprocess.run([browser.chromium(), *browser.FLAGS, f"--user-data-dir={tmp}/profile",
                                 f"--window-size={width},{height}", "--virtual-time-budget=15000", "--dump-dom",
                                 probed.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(rf'<pre id="{ACTIONS_ID}"[^>]*>(.*?)</pre>', result.stdout, re.S)
    assert found, "the page's actions did not report: " + result.stderr[-500:]
    data = json.loads(html.unescape(found.group(1)))
    assert not (isinstance(data, dict) and "error" in data), data
    return data


SORT = """
const table = document.querySelector("table.compare-pairs");
document.querySelector(".show-all").click();
const read = column => [...table.tBodies[0].rows].map(row => row.cells[column].dataset.value);
const out = {};
for (const name of %s) {
  const th = [...table.tHead.rows[0].cells].find(cell => cell.textContent.trim() === name);
  th.click();
  const up = read(th.cellIndex), upSort = th.getAttribute("aria-sort");
  th.click();
  out[name] = {up, down: read(th.cellIndex), upSort, downSort: th.getAttribute("aria-sort"),
               shown: [...table.tBodies[0].rows].filter(row => !row.hidden).length};
}
return out;
"""


def test_sorting_a_number_column_either_way_keeps_the_rows_without_a_number_last(pages):
    # The baseline against the reference run: most cases are on one side only, with no ratio and
    # no time on one side; an empty value once parsed as 0 and sorted first.
    columns = ["ratio", "baseline µs"]
    seen = _evaluate(pages["compare-baseline"], SORT % columns)
    for name in columns:
        up, down = seen[name]["up"], seen[name]["down"]
        numbers = [float(v) for v in up if v]
        blanks = len(up) - len(numbers)
        print(f"{name}: {len(numbers)} rows with a number, {blanks} without")
        assert numbers and blanks and seen[name]["shown"] == len(up)  # both kinds, every row shown
        assert all(up[:len(numbers)]) and not any(up[len(numbers):]), name  # ascending: blanks last
        assert numbers == sorted(numbers), name
        assert all(down[:len(numbers)]) and not any(down[len(numbers):]), name  # descending: blanks still last
        assert [float(v) for v in down[:len(numbers)]] == sorted(numbers, reverse=True), name
        assert (seen[name]["upSort"], seen[name]["downSort"]) == ("ascending", "descending")


# Every heading of every data table with rows to sort: a <button> (in the tab order, taking the focus)
# whose activation sorts. Enter and Space activate a focused button: the browser's own behaviour, which
# a page's script cannot fake with synthetic key events, so the button is activated with click().
KEYBOARD = """
document.querySelectorAll("details").forEach(d => { d.open = true; });  // a folded table is opened to be read
const out = [];
for (const table of document.querySelectorAll("table.data")) {
  const head = table.tHead, body = table.tBodies[0];
  if (!head || !body || body.rows.length < 2) continue;
  const headings = [...head.rows[head.rows.length - 1].cells].filter(th => th.textContent.trim());
  const buttons = headings.map(th => th.querySelector("button.sort"));
  const focusable = buttons.filter(b => { if (!b) return false; b.focus(); return document.activeElement === b && b.tabIndex >= 0; });
  const th = headings[headings.length - 1], button = buttons[buttons.length - 1], first = () => body.rows[0].id || body.rows[0].textContent;
  const before = first();
  let sorts = [];
  if (button) { button.click(); sorts.push(th.getAttribute("aria-sort")); button.click(); sorts.push(th.getAttribute("aria-sort")); }
  out.push({table: table.className + (table.id ? "#" + table.id : ""), headings: headings.length,
            buttons: buttons.filter(Boolean).length, focusable: focusable.length, sorts, rows: body.rows.length});
}
return out;
"""


@pytest.mark.parametrize("name", ["report", "compare-baseline", "site-index", "site-gpus"])
def test_every_table_heading_is_a_button_that_sorts_from_the_keyboard(name, pages):
    tables = _evaluate(pages[name], KEYBOARD)
    print(f"{name}: {len(tables)} tables, {sum(t['headings'] for t in tables)} headings")
    assert tables
    for table in tables:
        assert table["buttons"] == table["focusable"] == table["headings"], table
        assert table["sorts"] == ["ascending", "descending"], table


HOVER = """
const width = document.documentElement.clientWidth;
const points = [...document.querySelectorAll("svg.ratio-chart a.point")];
const seen = points.map(point => {
  const dot = point.querySelector("circle:not(.target)");
  dot.scrollIntoView({block: "center"});
  const box = dot.getBoundingClientRect();
  // What the pointer is over at the dot's centre: the element whose <title> the browser shows.
  const under = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  const hit = under && under.closest("a.point");
  return {case: point.dataset.case, title: point.querySelector("title").textContent, href: point.getAttribute("href"),
          hitsItself: hit === point, hitTitle: hit ? hit.querySelector("title").textContent : null,
          inside: box.width > 0 && box.left >= 0 && box.right <= width};
});
const row = point => document.getElementById(point.getAttribute("href").slice(1));
const point = points.find(p => row(p).hidden) || points[0];
const before = row(point).hidden;
point.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, view: window}));
await new Promise(done => setTimeout(done, 200));
const top = row(point).getBoundingClientRect().top;
return {seen, click: {href: point.getAttribute("href"), before, after: row(point).hidden, hash: location.hash,
                      inView: top >= 0 && top < window.innerHeight}};
"""


@pytest.mark.parametrize("name", ["compare", "compare-changed", "compare-same-commit"])
def test_every_chart_point_shows_its_case_under_the_pointer_and_clicking_it_shows_its_row(name, pages):
    found = _evaluate(pages[name], HOVER)
    seen, click = found["seen"], found["click"]
    print(f"{name}: {len(seen)} points; clicked {click}")
    assert seen
    for point in seen:
        assert point["title"].split("\n")[0] == point["case"], point
        assert point["hitsItself"] and point["hitTitle"] == point["title"], point  # not a neighbour's title
        assert point["inside"], point  # on screen at 1280 px, not clipped off the side
    # Clicking a point goes to its row, shown first where it was folded away.
    assert click["hash"] == click["href"] and not click["after"] and click["inView"], click
    if name == "compare-same-commit":
        assert click["before"]  # nothing changed: the points are folded rows, hidden until clicked


OWN_SECTION = """
document.querySelectorAll("details").forEach(d => { d.open = true; });
const heading = document.getElementById("per-element-toy-scale");
const table = document.querySelector("table.op-section.per-element");
const chart = document.querySelector('svg[aria-label="toy_scale: median time of each case"]');
const marks = chart ? [...chart.querySelectorAll("a.point")] : [];
const box = el => el ? el.getBoundingClientRect() : null;
return {heading: heading ? heading.textContent.trim() : null, shown: !!heading && box(heading).height > 0,
        rows: table ? table.tBodies[0].rows.length : 0, tableShown: !!table && box(table).width > 0,
        marks: marks.length, linked: marks.filter(m => document.getElementById(m.getAttribute("href").slice(1))).length,
        scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth};
"""


def test_a_plugin_ops_own_section_shows_on_its_report_page(chromium, tmp_path):
    # tests/plugins/toy_scale.py's OpChecks returns a Section (ops/sections.py): `report --plugin`
    # draws it on the op's page, its chart's marks linked to the cases' rows.
    run, page = toy_scale_run(tmp_path / "toy.jsonl"), tmp_path / "toy.html"
    result = subprocess.run([sys.executable, "bench.py", "report", str(run), "--plugin", "tests/plugins/toy_scale.py",
                             "-o", str(page)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    html = page.read_text(encoding="utf-8")
    cases = html.count('<tr id="toy_scale/one_per_thread/')
    assert cases >= 3 and "toy_scale: time per element</h3>" in html and "<th class=\"num\">ns per element</th>" in html
    seen = _evaluate(page, OWN_SECTION)
    print(seen)
    assert seen["heading"] == "toy_scale: time per element" and seen["shown"] and seen["tableShown"], seen
    assert seen["rows"] == seen["marks"] == seen["linked"] == cases, seen
    assert seen["scroll"] <= seen["client"], seen
