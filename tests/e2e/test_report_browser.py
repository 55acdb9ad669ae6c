"""The report of the real reference run (results/reference/nvidia-h200.jsonl.gz, 1447 cases) in
headless Chromium at 1280 px, against issue 34's contract: inline SVG charts in captioned figures
whose points name their case and link to its row; no empty caption, alt or label, and none showing a
missing value or markup; every data table sorts by a number column with the blanks last either way;
long tables have a filter box; each op's cases in a folded table, one anchored row per case, and an
address of a case opens it; no identifier wraps; the page requests nothing.

One browser load (FACTS) reads every fact the checks need, clicking and typing as a reader would;
the `*_faults` functions turn those facts into the faults found, and the tests assert there are none.
A second load opens the report at a case's address. The last test gives the same checks a page
with every fault, so that each check is seen to fail."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from urllib.parse import quote, unquote

import pytest

from tests.e2e import browser

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
WIDTH, HEIGHT = 1280, 900
ANCHOR = "reduce/vector_load_sum/float32/n=2^28/block=256"  # the case the address test opens, where present
SORTED_KINDS = ("ranking", "best-per-size", "cases")  # table classes the sort test must have covered
FILTER_ROWS = 10  # a table with more rows than this has a filter box
RESULT_ID = "primbench-report-facts"


def render_reference(out: Path) -> Path:
    """`bench.py report` of the reference run into `out`."""
    result = subprocess.run([sys.executable, "bench.py", "report", str(REFERENCE), "-o", str(out)], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def report(chromium, tmp_path_factory) -> Path:
    return render_reference(tmp_path_factory.mktemp("report") / "report.html")


@pytest.fixture(scope="module")
def case_keys() -> list[str]:
    from primbench.runfile.io import load_run

    return [case.key for case in load_run(REFERENCE).cases]


def load(page: Path, body: str, *, fragment: str = "", width: int = WIDTH, height: int = HEIGHT) -> dict:
    """Open `page` (at `#fragment` if given) in headless Chromium, run `body` (the body of an async
    JS function) once it has loaded and the page's own script has run, and return what it returns
    (as JSON) under "result", with the console's messages and uncaught errors under "console".
    The pattern of test_browser.py's `_evaluate`, with a fragment and the console."""
    script = ('<script>window.addEventListener("load", async () => { let result;'
              f' try {{ result = await (async () => {{ {body} }})(); }}'
              ' catch (e) { result = {error: String(e && e.stack || e)}; }'
              f' const out = document.createElement("pre"); out.id = "{RESULT_ID}"; out.style.display = "none";'
              ' out.textContent = JSON.stringify(result); document.body.appendChild(out); });</script>')
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp) / page.name
        text = page.read_text(encoding="utf-8")
        probed.write_text(text.replace("</body>", script + "</body>") if "</body>" in text else text + script,
                          encoding="utf-8")
        url = probed.resolve().as_uri() + (f"#{quote(fragment, safe='/=^,[]')}" if fragment else "")
        result = subprocess.run([browser.chromium(), *browser.FLAGS, f"--user-data-dir={tmp}/profile",
                                 f"--window-size={width},{height}", "--virtual-time-budget=30000", "--dump-dom", url],
                                capture_output=True, text=True, timeout=180)
    found = re.search(rf'<pre id="{RESULT_ID}"[^>]*>(.*?)</pre>', result.stdout, re.S)
    assert found, "the page's actions did not report: " + result.stderr[-500:]
    data = json.loads(html.unescape(found.group(1)))
    assert not (isinstance(data, dict) and "error" in data), data
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return {"result": data, "console": console}


# Shared by both loads: visibility, a short name for an element, a chart point's target row.
HELPERS = r"""
const sleep = ms => new Promise(done => setTimeout(done, ms));
const text = el => (el.textContent || "").replace(/\s+/g, " ").trim();
// Rendered, not in a closed <details> (whose content Chromium lays out but skips: checkVisibility says so).
const visible = el => el.getClientRects().length > 0 && el.checkVisibility({visibilityProperty: true});
const shown = row => !row.hidden && getComputedStyle(row).display !== "none";
const name = el => !el ? "?" : el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  ((el.getAttribute("class") || "").trim() ? "." + el.getAttribute("class").trim().split(/\s+/).join(".") : "");
const where = el => { const s = el.closest("section[id], figure[id], details[id]");
  return name(el) + (s ? " in #" + s.id : ""); };
const hrefOf = a => a.getAttribute("href") || a.getAttribute("xlink:href") || "";
const targetOf = href => {
  if (!href.startsWith("#") || href.length < 2) return null;
  try { return document.getElementById(decodeURIComponent(href.slice(1))); } catch (e) { return null; }
};
const inView = el => { const box = el.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, height: window.innerHeight,
          inView: box.height > 0 && box.top >= -1 && box.bottom <= window.innerHeight + 1}; };
"""

FACTS = HELPERS + r"""
const out = {};
// A chart point clicked before anything opens the <details>: the page must show its row.
const points = [...document.querySelectorAll("svg.chart a.point")];
if (points.length) {
  const point = points.find(p => targetOf(hrefOf(p)) && !visible(targetOf(hrefOf(p)))) || points[0];
  const href = hrefOf(point), row = targetOf(href), before = row ? visible(row) : null;
  point.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, view: window}));
  await sleep(500);
  out.click = {href, hash: location.hash, found: !!row, tag: row ? row.tagName.toLowerCase() : null, before,
               visible: row ? visible(row) : false, ...(row ? inView(row) : {})};
} else out.click = null;

// Charts and figures.
out.figures = [...document.querySelectorAll("figure")].map(f => ({where: where(f),
  caption: f.querySelector("figcaption") ? text(f.querySelector("figcaption")) : null,
  charts: f.querySelectorAll("svg.chart").length, images: f.querySelectorAll("img").length}));
out.images = [...document.querySelectorAll("img")].map(img => where(img));
out.charts = [...document.querySelectorAll("svg.chart")].map((svg, i) => {
  const figure = svg.closest("figure"), caption = figure && figure.querySelector("figcaption");
  const all = [...svg.querySelectorAll(".point")];
  const untitled = all.filter(p => { const t = p.querySelector("title"); return !t || !text(t); });
  const links = all.filter(p => p.tagName.toLowerCase() === "a");
  const broken = links.filter(a => { const row = targetOf(hrefOf(a));
    return !(row && row.tagName.toLowerCase() === "tr" && row.closest("table.cases")); });
  return {where: where(svg) + " chart " + i, label: svg.getAttribute("aria-label"), inFigure: !!figure,
          caption: caption ? text(caption) : null, points: all.length, links: links.length,
          untitled: untitled.length, untitledSample: untitled.slice(0, 3).map(p => p.outerHTML.slice(0, 120)),
          broken: broken.length, brokenSample: broken.slice(0, 3).map(hrefOf)};
});

// Captions, alt and labels (every value), and any alt, aria-label, title or SVG <title> holding markup.
out.labels = [];
document.querySelectorAll("figcaption, caption").forEach(el =>
  out.labels.push({kind: el.tagName.toLowerCase(), where: where(el), value: text(el)}));
document.querySelectorAll("[alt], [aria-label]").forEach(el => ["alt", "aria-label"].forEach(attr => {
  if (el.hasAttribute(attr)) out.labels.push({kind: attr, where: where(el), value: el.getAttribute(attr)}); }));
const markup = /<\/?[a-z][^>]*>/i;
out.markup = [];
document.querySelectorAll("[alt], [aria-label], [title]").forEach(el => ["alt", "aria-label", "title"].forEach(attr => {
  const value = el.getAttribute(attr);
  if (value !== null && markup.test(value)) out.markup.push({kind: attr, where: where(el), value}); }));
document.querySelectorAll("svg title").forEach(el => {
  if (markup.test(el.textContent))
    out.markup.push({kind: "svg title", where: where(el.parentElement), value: el.textContent}); });

// Each op's table of cases: where it is and its rows' ids.
out.cases = [...document.querySelectorAll("table.cases")].map(t => ({where: where(t), inDetails: !!t.closest("details"),
  ids: [...t.tBodies].flatMap(b => [...b.rows]).map(r => r.id)}));
out.caseIds = out.cases.flatMap(t => t.ids).filter(Boolean);

// Identifiers, every <details> open: a <code> on more than one line has wrapped.
document.querySelectorAll("details").forEach(d => { d.open = true; });
await sleep(100);
const codes = [...document.querySelectorAll("code")].filter(visible);
out.codes = codes.length;
out.wrapped = codes.filter(c => c.getClientRects().length > 1)
  .map(c => ({text: text(c), lines: c.getClientRects().length,
              where: where(c.closest("td, th, p, li, dd, figcaption, summary") || c)}));

// Every table (every <details> still open) and the box that holds it: wider content than box scrolls sideways.
out.tables = [...document.querySelectorAll("table")].filter(visible).map(t => {
  const box = t.parentElement;
  return {where: where(t), box: name(box), scroll: box.scrollWidth, client: box.clientWidth, width: t.scrollWidth,
          page: document.documentElement.clientWidth};
});

// Sorting: click each number header of each table.data (and table.cases) with 3 body rows or more, twice.
const bodyRows = t => [...t.tBodies].flatMap(b => [...b.rows]);
const number = cell => {
  if (!cell) return null;
  if (cell.hasAttribute("data-value")) { const v = parseFloat(cell.dataset.value); return isFinite(v) ? v : null; }
  let copy = cell;  // a copy only where a <sup> must be spelled out: 1,296 rows are read per click
  if (cell.querySelector("sup")) {
    copy = cell.cloneNode(true);
    copy.querySelectorAll("sup").forEach(s => s.replaceWith("^" + s.textContent));
  }
  const m = copy.textContent.replace(/,/g, "").replace(/\u2212/g, "-").trim()
    .match(/^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)(?:\s*\^\s*([-+]?\d+(?:\.\d+)?))?/i);
  if (!m) return null;
  const v = m[2] !== undefined ? Math.pow(parseFloat(m[1]), parseFloat(m[2])) : parseFloat(m[1]);
  return isFinite(v) ? v : null;
};
// The grid column of each cell of a table's header rows (colspan and rowspan), and a row's cell at a column.
const headColumns = head => {
  const taken = [], columns = new Map();
  [...head.rows].forEach((row, r) => { let c = 0;
    [...row.cells].forEach(cell => {
      while (taken[r] && taken[r][c]) c++;
      columns.set(cell, c);
      for (let dr = 0; dr < (cell.rowSpan || 1); dr++) for (let dc = 0; dc < (cell.colSpan || 1); dc++)
        (taken[r + dr] = taken[r + dr] || [])[c + dc] = true;
      c += cell.colSpan || 1; }); });
  return columns;
};
const cellAt = (row, column) => { let c = 0;
  for (const cell of row.cells) { if (column < c + (cell.colSpan || 1)) return cell; c += cell.colSpan || 1; }
  return null; };
out.sorts = [];
for (const table of document.querySelectorAll("table.data, table.cases")) {
  if (bodyRows(table).length < 3) continue;
  const kind = [...table.classList].filter(c => c !== "data").join(" ");
  const head = table.tHead && table.tHead.rows.length ? table.tHead : null;
  const entry = {where: where(table), kind, rows: bodyRows(table).length, columns: []};
  out.sorts.push(entry);
  if (!head) { entry.noHead = true; continue; }
  const columns = headColumns(head), last = [...head.rows[head.rows.length - 1].cells];
  const numeric = last.filter(th => th.classList.contains("num"));
  if (!numeric.length) { // no number column: clicking a header still sorts
    last[0].click();  // the page sorts in the click itself: no wait, no frame drawn
    entry.columns.push({column: text(last[0]), numeric: false, upSort: last[0].getAttribute("aria-sort")});
    continue;
  }
  for (const th of numeric) {
    const read = () => bodyRows(table).map(row => number(cellAt(row, columns.get(th))));
    th.click();
    const up = read(), upSort = th.getAttribute("aria-sort");
    th.click();
    entry.columns.push({column: text(th), numeric: true, up, upSort, down: read(),
                        downSort: th.getAttribute("aria-sort")});
  }
}

// Filtering: each table with more than FILTER_ROWS body rows has a filter box; a word hides the rows without it.
out.filters = [];
for (const table of document.querySelectorAll("table.data, table.cases")) {
  const rows = bodyRows(table);
  if (rows.length <= %(filter_rows)d) continue;
  const entry = {where: where(table), id: table.id, rows: rows.length};
  out.filters.push(entry);
  const inputs = table.id ? [...document.querySelectorAll(".table-controls input.filter")].filter(input =>
    input.dataset.table === table.id || input.closest(".table-controls").dataset.table === table.id) : [];
  const input = inputs[0];
  entry.box = !!input;
  if (!input) continue;
  const controls = input.closest(".table-controls");
  // Just before the table, or before the wrapper that holds only it (a scrolling div).
  const wrapper = table.parentElement;
  const before = table.previousElementSibling === controls || (wrapper.previousElementSibling === controls
    && wrapper.querySelectorAll("table").length === 1 && !wrapper.matches("section, details, body"));
  entry.placedBefore = before;
  entry.type = input.type;
  // A word some rows have and some lack: from the first row's identifiers, then from its text.
  const texts = rows.map(row => row.textContent.toLowerCase());
  const words = rows.slice(0, 5).flatMap(row => [...row.querySelectorAll("code")].map(text)
    .concat((row.textContent.match(/[A-Za-z_][A-Za-z0-9_]{3,}/g) || [])));
  const word = words.find(w => { const n = texts.filter(t => t.includes(w.toLowerCase())).length;
    return /^\S+$/.test(w) && n > 0 && n < rows.length; });
  entry.word = word || null;
  if (!word) continue;
  const was = rows.map(shown);
  input.value = word; input.dispatchEvent(new Event("input", {bubbles: true}));
  await sleep(50);
  const now = rows.map(shown);
  entry.lackingShown = rows.filter((r, i) => !texts[i].includes(word.toLowerCase()) && now[i]).length;
  entry.lacking = rows.filter((r, i) => !texts[i].includes(word.toLowerCase())).length;
  entry.havingHidden = rows.filter((r, i) => texts[i].includes(word.toLowerCase()) && was[i] && !now[i]).length;
  input.value = ""; input.dispatchEvent(new Event("input", {bubbles: true}));
  await sleep(50);
  entry.restored = rows.every((r, i) => shown(r) === was[i]);
}

out.requests = performance.getEntriesByType("resource").map(e => e.name)
  .filter(u => !/^(data|file|blob|about):/.test(u));
return out;
""".replace("%(filter_rows)d", str(FILTER_ROWS))

# Opened at a case's address: the row shown (its <details> opened) and in the window.
AT_ADDRESS = HELPERS + r"""
await sleep(500);
const row = targetOf(location.hash);
const closed = row ? [...document.querySelectorAll("details")].filter(d => !d.open && d.contains(row)).length : null;
return {hash: location.hash, found: !!row, tag: row ? row.tagName.toLowerCase() : null, closedAround: closed,
        visible: row ? visible(row) : false, ...(row ? inView(row) : {})};
"""


@pytest.fixture(scope="module")
def facts(report) -> dict:
    return load(report, FACTS)


# --- the checks: facts in, faults out -------------------------------------------------------------------------

EMPTY_VALUE = [re.compile(p, re.I) for p in (
    r"=\s*(?:[:,;)\]]|$)",  # "n = :", "n = ,", "= )", "n =" at the end: a label followed by nothing
    r"=\s+(?:for|at|and|of|in|on|with|to|from|per|by|over|under|vs)\b",  # "at n =  for": the value left out
    r"\(\s*\)",  # "()"
)]


def chart_faults(facts: dict) -> list[str]:
    found = facts["result"]
    faults = [] if found["charts"] else ["no svg.chart in the page"]
    for figure in found["figures"]:
        if figure["images"]:
            faults.append(f"{figure['where']}: {figure['images']} <img> (a chart must be inline svg.chart)")
        if not figure["charts"]:
            faults.append(f"{figure['where']}: a figure without an svg.chart")
    for chart in found["charts"]:
        w = chart["where"]
        if not (chart["label"] or "").strip():
            faults.append(f"{w}: no aria-label")
        if not chart["inFigure"]:
            faults.append(f"{w}: not inside a <figure>")
        elif not chart["caption"]:
            faults.append(f"{w}: its figure has no (or an empty) <figcaption>")
        if not chart["points"]:
            faults.append(f"{w}: no .point")
        if chart["untitled"]:
            faults.append(f"{w}: {chart['untitled']} .point without a <title>, e.g. {chart['untitledSample']}")
        if chart["broken"]:
            faults.append(f"{w}: {chart['broken']} a.point linking to no row of a table.cases, e.g. "
                          f"{chart['brokenSample']}")
    return faults


def label_faults(facts: dict) -> list[str]:
    found = facts["result"]
    faults = []
    for label in found["labels"]:
        value = re.sub(r"\s+", " ", label["value"] or "").strip()
        if not value:
            faults.append(f"empty {label['kind']}: {label['where']}")
        elif any(p.search(value) for p in EMPTY_VALUE):
            faults.append(f"{label['kind']} shows an empty value: {label['where']}: {value!r}")
    faults += [f"{m['kind']} holds markup: {m['where']}: {m['value']!r}" for m in found["markup"]]
    return faults


def _order_faults(values: list, *, descending: bool) -> list[str]:
    """What is out of order in a column's numbers read top to bottom (None: no number)."""
    faults = []
    first_blank = next((i for i, v in enumerate(values) if v is None), len(values))
    if any(v is not None for v in values[first_blank:]):
        faults.append(f"a row without a number before one with a number (row {first_blank} of {len(values)})")
    numbers = [(i, v) for i, v in enumerate(values) if v is not None]
    for (i, a), (j, b) in zip(numbers, numbers[1:]):
        if (a < b) if descending else (a > b):
            faults.append(f"rows {i} and {j}: {a:g} then {b:g}")
            break
    return faults


def sort_faults(facts: dict, required=SORTED_KINDS) -> list[str]:
    found = facts["result"]
    faults = []
    covered = set()
    for table in found["sorts"]:
        if table.get("noHead"):
            faults.append(f"{table['where']} ({table['rows']} rows): no <thead> to sort by")
            continue
        for column in table["columns"]:
            label = f"{table['where']} column {column['column']!r}"
            if not column["numeric"]:
                if column["upSort"] != "ascending":
                    faults.append(f"{label}: a click gave aria-sort {column['upSort']!r}, not 'ascending'")
                continue
            for direction, values, aria in (("ascending", column["up"], column["upSort"]),
                                            ("descending", column["down"], column["downSort"])):
                wrong = _order_faults(values, descending=direction == "descending")
                faults += [f"{label}, {direction}: {fault}" for fault in wrong]
                if aria != direction:
                    faults.append(f"{label}: aria-sort {aria!r} where {direction!r}")
            covered.update(table["kind"].split())
    faults += [f"no sortable table.{kind} with a number column" for kind in required if kind not in covered]
    return faults


def filter_faults(facts: dict) -> list[str]:
    faults = []
    for table in facts["result"]["filters"]:
        w = f"{table['where']} ({table['rows']} rows)"
        if not table["id"]:
            faults.append(f"{w}: no id for a filter box to name")
        if not table.get("box"):
            faults.append(f"{w}: no .table-controls input.filter with data-table={table['id']!r}")
            continue
        if not table["placedBefore"]:
            faults.append(f"{w}: its .table-controls is not just before the table")
        if table["type"] != "search":
            faults.append(f"{w}: the filter is an input of type {table['type']!r}, not 'search'")
        if table["word"] is None:
            continue  # every row reads alike: no word tells them apart
        if table["lackingShown"]:
            faults.append(f"{w}: typing {table['word']!r} left {table['lackingShown']} of the "
                          f"{table['lacking']} rows without it shown")
        if table["havingHidden"]:
            faults.append(f"{w}: typing {table['word']!r} hid {table['havingHidden']} rows that have it")
        if not table["restored"]:
            faults.append(f"{w}: clearing the filter did not show the rows again")
    return faults


def size_token(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def case_anchor_forms(key: str) -> tuple[str, str, str, str]:
    """(op, distribution, the id without the distribution, the id with it) of a run's case key
    `op/variant/dtype/n=N/block=B/distribution[/param=value...]`."""
    op, variant, dtype, n, block, distribution, *params = key.split("/")
    base = f"{op}/{variant}/{dtype}/n={size_token(int(n.removeprefix('n=')))}/{block}"
    tail = "".join(f"/{p}" for p in params)
    return op, distribution, base + tail, f"{base}/{distribution}{tail}"


def case_row_faults(facts: dict, keys: list[str]) -> list[str]:
    found = facts["result"]
    faults = [] if found["cases"] else ["no table.cases in the page"]
    for table in found["cases"]:
        if not table["inDetails"]:
            faults.append(f"{table['where']}: not inside a <details>")
        if not all(table["ids"]):
            faults.append(f"{table['where']}: {table['ids'].count('')} rows without an id")
        ops = {i.split("/")[0] for i in table["ids"] if i}
        if len(ops) > 1:
            faults.append(f"{table['where']}: rows of several ops {sorted(ops)}")
    ids = found["caseIds"]
    counted = defaultdict(int)
    for i in ids:
        counted[i] += 1
    faults += [f"id {i!r} on {count} rows" for i, count in counted.items() if count > 1]
    table_of = {i: t["where"] for t in found["cases"] for i in t["ids"]}
    ids_of_op, forms_of_op = defaultdict(set), defaultdict(list)
    for i in counted:
        ids_of_op[i.split("/")[0]].add(i)
    for key in keys:
        op, distribution, short, full = case_anchor_forms(key)
        forms_of_op[op].append((distribution, short, full))
    for op in sorted(set(ids_of_op) - set(forms_of_op)):
        faults.append(f"{len(ids_of_op[op])} rows of op {op!r}, which the run does not have, e.g. "
                      f"{sorted(ids_of_op[op])[:3]}")
    for op, forms in forms_of_op.items():
        # The ids the op's cases should have with `primary` as its primary distribution; the one that
        # fits the page best is the primary (a page that names none fits no candidate well).
        def expected(primary, forms=forms):
            return {short if distribution == primary else full for distribution, short, full in forms}

        primary = min(sorted({d for d, _, _ in forms}), key=lambda p: len(expected(p) ^ ids_of_op[op]))
        want, have = expected(primary), ids_of_op[op]
        if len(want) < len(forms):
            faults.append(f"{op}: {len(forms) - len(want)} cases share an id with another")
        missing, extra = sorted(want - have), sorted(have - want)
        if not have:
            faults.append(f"{op}: no row for any of its {len(forms)} cases, e.g. {sorted(want)[:2]}")
        elif missing:
            faults.append(f"{op}: {len(missing)} of its {len(forms)} cases have no row (primary distribution "
                          f"{primary!r}), e.g. {missing[:3]}")
        if extra:
            faults.append(f"{op}: {len(extra)} rows name no case of the run, e.g. {extra[:3]}")
        tables = {table_of[i] for i in have}
        if len(tables) > 1:
            faults.append(f"{op}: its cases are in {len(tables)} tables, not one: {sorted(tables)}")
    return faults


def shown_row_faults(seen: dict | None, *, expect_hash: str | None = None) -> list[str]:
    """Faults of a row reached by a link or an address (`click` or AT_ADDRESS's result)."""
    if seen is None:
        return ["no svg.chart a.point to click"]
    faults = []
    if not seen["found"]:
        return [f"no element with the id of {seen.get('href', seen['hash'])!r}"]
    if seen["tag"] != "tr":
        faults.append(f"{seen.get('href', seen['hash'])!r} is a <{seen['tag']}>, not a row")
    if not seen["visible"]:
        faults.append(f"the row {seen.get('href', seen['hash'])!r} is not shown" +
                      (f" ({seen['closedAround']} closed <details> around it)" if seen.get("closedAround") else ""))
    elif not seen["inView"]:
        faults.append(f"the row {seen.get('href', seen['hash'])!r} is out of the window: top {seen['top']:.0f}, "
                      f"bottom {seen['bottom']:.0f} of {seen['height']} px")
    if expect_hash is not None and seen["hash"] != expect_hash:
        if unquote(seen["hash"]) != unquote(expect_hash):  # the same address, one of them percent-encoded
            faults.append(f"location.hash {seen['hash']!r}, not {expect_hash!r}")
    return faults


def click_faults(facts: dict) -> list[str]:
    click = facts["result"]["click"]
    return shown_row_faults(click, expect_hash=click["href"] if click else None)


def wrap_faults(facts: dict) -> list[str]:
    found = facts["result"]
    return [f"<code>{c['text']}</code> on {c['lines']} lines in {c['where']}" for c in found["wrapped"]]


def scroll_faults(facts: dict) -> list[str]:
    """Each table whose box scrolls sideways (its content wider than the box), or wider than the window."""
    tables = facts["result"]["tables"]
    faults = [] if tables else ["no table measured"]
    for t in tables:
        if t["scroll"] > t["client"] + 1 or t["width"] > t["page"]:
            faults.append(f"{t['where']} scrolls sideways by {max(t['scroll'] - t['client'], t['width'] - t['page'])} px "
                          f"in {t['box']} ({t['scroll']} > {t['client']} px)")
    return faults


def request_faults(facts: dict) -> list[str]:
    return [f"requested {url}" for url in facts["result"]["requests"]] + [f"console: {line}" for line in
                                                                            facts["console"]]


def anchor_target(facts: dict) -> str:
    ids = facts["result"]["caseIds"]
    return ANCHOR if ANCHOR in ids or not ids else ids[0]


# --- the report ---------------------------------------------------------------------------------------------------

def _assert_none(faults: list[str]) -> None:
    assert not faults, f"{len(faults)} faults:\n" + "\n".join(faults[:40])


def test_every_chart_is_an_inline_svg_in_a_captioned_figure_and_each_point_names_its_case(facts):
    print(f"{len(facts['result']['charts'])} charts, {sum(c['points'] for c in facts['result']['charts'])} points")
    _assert_none(chart_faults(facts))


def test_no_caption_alt_or_label_is_empty_shows_a_missing_value_or_holds_markup(facts):
    _assert_none(label_faults(facts))


def test_every_data_table_sorts_by_each_number_column_either_way_with_the_blanks_last(facts):
    sorts = facts["result"]["sorts"]
    print(f"{len(sorts)} tables, {sum(len(t['columns']) for t in sorts)} columns clicked")
    _assert_none(sort_faults(facts))


def test_every_long_table_has_a_filter_box_and_a_word_hides_the_rows_without_it(facts):
    print(f"{len(facts['result']['filters'])} tables of more than {FILTER_ROWS} rows")
    _assert_none(filter_faults(facts))


def test_each_op_lists_every_case_in_a_folded_table_one_anchored_row_each(facts, case_keys):
    print(f"{len(facts['result']['caseIds'])} case rows for {len(case_keys)} cases")
    _assert_none(case_row_faults(facts, case_keys))


def test_clicking_a_chart_point_shows_its_row_in_the_window(facts):
    print(facts["result"]["click"])
    _assert_none(click_faults(facts))


def test_the_report_opened_at_a_case_address_shows_that_row_in_the_window(report, facts):
    target = anchor_target(facts)
    seen = load(report, AT_ADDRESS, fragment=target)
    print(target, seen["result"])
    _assert_none(shown_row_faults(seen["result"], expect_hash="#" + target))


def test_no_identifier_wraps_at_1280_px(facts):
    print(f"{facts['result']['codes']} <code> shown")
    assert facts["result"]["codes"] > 100  # the tables' identifiers were seen
    _assert_none(wrap_faults(facts))


def test_no_table_scrolls_sideways_at_1280_px(facts):
    print(f"{len(facts['result']['tables'])} tables measured, every <details> open")
    _assert_none(scroll_faults(facts))


def test_the_report_requests_nothing_and_logs_no_error(report, facts):
    _assert_none(request_faults(facts))  # after every click and filter of FACTS
    seen = browser.inspect(report, width=WIDTH)  # and tests/e2e/browser.py's own look at the page
    assert seen.requests == [] and seen.console == [], (seen.requests, seen.console)


# --- the checks themselves ------------------------------------------------------------------------------------------

BAD_ROW = "reduce/a/float32/n=2^10/block=256"  # in BAD_PAGE, a hidden row
BAD_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<figure><svg class="chart" width="200" height="100" aria-label="GB/s against n">
<a class="point" href="#reduce/a/float32/n=2^10/block=256"><circle cx="10" cy="10" r="4"/></a>
<a class="point" href="#nowhere"><title>nowhere · 1 µs</title><circle cx="30" cy="10" r="4"/></a></svg>
<figcaption> </figcaption></figure>
<figure><img alt="GB/s at n = 2<sup>28</sup>" src="data:image/gif;base64,R0lGODlhAQABAAAAACwAAAAAAQABAAA="></figure>
<table class="data ranking" id="ranked"><caption>n = : variants</caption>
<thead><tr><th class="num">time µs</th><th>variant</th></tr></thead>
<tbody><tr><td class="num">9</td><td>a</td></tr><tr><td class="num">100</td><td>b</td></tr>
<tr><td class="num">-</td><td>c</td></tr><tr><td class="num">10</td><td>d</td></tr></tbody></table>
<table class="data long" id="long"><thead><tr><th>variant</th></tr></thead><tbody>
%(long_rows)s</tbody></table>
<div style="width:100px"><code>vector_load_sum / float32 / n=2^28</code></div>
<div class="table-wrap" style="overflow-x:auto;width:300px"><table class="data wide"><tbody>
<tr><td style="white-space:nowrap">seed004_replicated[bins=256,replicas=8] · 2^28 · 256 · 69,078.1 µs</td></tr></tbody></table></div>
<details><summary>cases</summary><table class="data cases" id="cases-reduce"><tbody>
<tr id="reduce/a/float32/n=2^10/block=256" hidden><td>a</td></tr>
<tr id="reduce/stray/float32/n=2^10/block=256"><td>s</td></tr></tbody>
</table></details>
<script>
/* Sorts as text, not as numbers: "10" < "100" < "9". */
document.querySelectorAll("table.data th").forEach(th => th.addEventListener("click", () => {
  const table = th.closest("table"), body = table.tBodies[0], up = th.getAttribute("aria-sort") !== "ascending";
  const rows = [...body.rows].sort((a, b) => (up ? 1 : -1) *
    a.cells[th.cellIndex].textContent.localeCompare(b.cells[th.cellIndex].textContent));
  rows.forEach(row => body.appendChild(row));
  th.setAttribute("aria-sort", up ? "ascending" : "descending");
}));
</script></body></html>""" % {"long_rows": "".join(f"<tr><td>row{i}</td></tr>" for i in range(12))}


def test_the_checks_themselves_see_each_fault_they_look_for(chromium, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(BAD_PAGE, encoding="utf-8")
    facts = load(page, FACTS)

    charts = chart_faults(facts)
    assert any("without a <title>" in f for f in charts), charts
    assert any("linking to no row" in f for f in charts), charts
    assert any("no (or an empty) <figcaption>" in f for f in charts), charts
    assert any("<img>" in f for f in charts), charts

    labels = label_faults(facts)
    assert any(f.startswith("empty figcaption") for f in labels), labels
    assert any("shows an empty value" in f and "n = :" in f for f in labels), labels
    assert any(f.startswith("alt holds markup") and "<sup>" in f for f in labels), labels

    sorts = sort_faults(facts)
    assert any("time µs" in f and "ascending: rows" in f for f in sorts), sorts  # 10 before 9: sorted as text
    assert any("without a number before" in f for f in sorts), sorts  # "-" sorted among the numbers
    assert "no sortable table.best-per-size with a number column" in sorts, sorts
    assert not any("aria-sort" in f for f in sorts), sorts  # that part it does right

    filters = filter_faults(facts)
    assert filters == ["table#long.data.long (12 rows): no .table-controls input.filter with data-table='long'"], \
        filters

    rows = case_row_faults(facts, ["reduce/a/float32/n=1024/block=256/uniform",
                                   "reduce/b/float32/n=1000/block=lib/uniform"])
    assert any("1 of its 2 cases have no row" in f and "reduce/b/float32/n=1000/block=lib" in f for f in rows), rows
    assert any("rows name no case" in f and "reduce/stray/" in f for f in rows), rows

    clicks = click_faults(facts)
    assert any("is not shown" in f for f in clicks), clicks  # a hidden row

    wraps = wrap_faults(facts)
    assert any("vector_load_sum / float32 / n=2^28" in f for f in wraps), wraps

    scrolls = scroll_faults(facts)
    assert len(scrolls) == 1 and "table.data.wide scrolls sideways by" in scrolls[0], scrolls

    at = shown_row_faults(load(page, AT_ADDRESS, fragment=BAD_ROW)["result"], expect_hash="#" + BAD_ROW)
    assert any("is not shown" in f for f in at), at

    # And a page without fault passes them: the same checks on a good version of each piece.
    good = tmp_path / "good.html"
    good.write_text(GOOD_PAGE, encoding="utf-8")
    facts = load(good, FACTS)
    key = "reduce/a/float32/n=268435456/block=256/uniform"
    for faults in (chart_faults(facts), label_faults(facts), sort_faults(facts, required=("ranking",)),
                   filter_faults(facts), case_row_faults(facts, [key]), click_faults(facts), wrap_faults(facts),
                   scroll_faults(facts), request_faults(facts)):
        assert faults == [], faults


GOOD_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>good</title>
<style>code { white-space: nowrap; }</style></head><body>
<figure><svg class="chart" width="200" height="100" aria-label="GB/s against n">
<a class="point" href="#reduce/a/float32/n=2^28/block=256"><title>a · n = 2^28 · 1 µs</title>
<circle cx="10" cy="10" r="4"/></a></svg><figcaption>One line per variant.</figcaption></figure>
<table class="data ranking" id="ranked"><thead><tr><th class="num">n</th><th>variant</th></tr></thead>
<tbody><tr><td class="num">2<sup>28</sup></td><td>a</td></tr><tr><td class="num">-</td><td>b</td></tr>
<tr><td class="num" data-value="1000">1,000 L2</td><td>c</td></tr><tr><td class="num">3,000</td><td>d</td></tr>
</tbody></table>
<div style="width:100px"><code>vector_load_sum / float32</code></div>
<div class="table-controls" data-table="long"><input type="search" class="filter"></div>
<table class="data long" id="long"><thead><tr><th>variant</th></tr></thead><tbody>
%(rows)s</tbody></table>
<div style="height:3000px"></div>
<details><summary>cases</summary><div class="table-controls" data-table="cases-reduce">
<input type="search" class="filter"></div>
<table class="data cases" id="cases-reduce"><tbody>
<tr id="reduce/a/float32/n=2^28/block=256"><td><code>a</code></td></tr></tbody></table></details>
<script>
function number(cell) {
  if (cell.dataset.value !== undefined) return parseFloat(cell.dataset.value);
  const sup = cell.querySelector("sup");
  const v = sup ? Math.pow(parseFloat(cell.firstChild.textContent), parseFloat(sup.textContent))
                : parseFloat(cell.textContent.replace(/,/g, ""));
  return isFinite(v) ? v : null;
}
document.querySelectorAll("table.data th").forEach(th => th.addEventListener("click", () => {
  const body = th.closest("table").tBodies[0], up = th.getAttribute("aria-sort") !== "ascending";
  const rows = [...body.rows].sort((a, b) => { const x = a.cells[th.cellIndex], y = b.cells[th.cellIndex];
    if (!th.classList.contains("num")) return (up ? 1 : -1) * x.textContent.localeCompare(y.textContent);
    const u = number(x), v = number(y);
    if (u === null || v === null) return (u === null) - (v === null); return up ? u - v : v - u; });
  rows.forEach(row => body.appendChild(row));
  th.setAttribute("aria-sort", up ? "ascending" : "descending");
}));
document.querySelectorAll("input.filter").forEach(input => input.addEventListener("input", () => {
  const table = document.getElementById(input.closest(".table-controls").dataset.table);
  const word = input.value.toLowerCase();
  for (const row of table.tBodies[0].rows) row.hidden = !row.textContent.toLowerCase().includes(word);
}));
function open(hash) { const row = hash.length > 1 && document.getElementById(decodeURIComponent(hash.slice(1)));
  const details = row && row.closest("details"); if (details) { details.open = true; row.scrollIntoView(); } }
document.addEventListener("click", e => { const a = e.target.closest("a"); if (a) open(a.getAttribute("href")); });
window.addEventListener("hashchange", () => open(location.hash));
open(location.hash);
</script></body></html>""" % {"rows": "".join(f"<tr id='x{i}'><td><code>other{i}</code></td></tr>" for i in range(11))}
