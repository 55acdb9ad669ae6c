"""Render a run into one self-contained HTML file: CSS inlined, plots as data URIs, no network.

Every string from the run file reaches the page through Jinja2 with autoescape on, so a variant
name or a compiler log can never become markup.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from primbench import ops
from primbench.outputs import write_atomically
from primbench.report import selection
from primbench.resources import TEMPLATE_DIR
from primbench.runfile.io import load_run
from primbench.runfile.published import load_published

REPORT_TEMPLATE = "report.html.j2"
STYLESHEET = "style.css"


def render_report(run_path, out_path, *, reference_path=None) -> Path:
    """Write the HTML report of the run file at `run_path` to `out_path` and return that path."""
    from primbench import progress
    from primbench.outputs import check_writable

    # Bad input stays one line: the output and the run are checked before progress is shown.
    check_writable(out_path)
    run = load_run(run_path)
    progress.say(f"read {run_path}: {len(run.cases)} cases; rendering {out_path}")
    return write_report(run, out_path, story_references(reference_path))


def story_references(reference_path=None) -> list:
    """The published progressions the report sets beside a run (the story's op only)."""
    return [r for r in load_published(reference_path) if ops.story_op({r.op}) == r.op]


def write_report(run, out_path, references=(), frame=None, index_href: str | None = None) -> Path:
    """Write the report of an already loaded run to `out_path` (`frame`: its annotated case frame,
    where the caller has it already; `index_href`: the site's index, on a published site)."""
    from primbench.report.context import build_context

    return write_page(REPORT_TEMPLATE, out_path, index_href=index_href, **build_context(run, references, frame))


def render_page(template: str, **context) -> str:
    """Any of primbench's pages (report, compare, site) as one self-contained HTML string."""
    from markupsafe import Markup

    # The stylesheet is ours, not run data: it goes in verbatim (escaping would break '>' selectors).
    css = Markup((TEMPLATE_DIR / STYLESHEET).read_text(encoding="utf-8"))
    return _environment().get_template(template).render(css=css, **context)


def write_page(template: str, out_path, **context) -> Path:
    """Render a page and write it to `out_path` (folders created); return the path."""
    out_path = Path(out_path)
    write_atomically(out_path, render_page(template, **context))
    return out_path


@functools.lru_cache(maxsize=1)
def _environment():
    # One for the process: publish writes a page per run, and the templates compile once.
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,  # on for every template, whatever its file extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        us=format_us,
        gbps=format_gbps,
        pct=format_pct,
        speedup=format_speedup,
        ratio=format_ratio,
        ratio3=format_ratio3,
        size=format_size,
        block=format_block,
        value=format_value,
        sci=format_sci,
        number=format_number,
        slug=slug,
    )
    return environment


# --- number formats: one place, so every table rounds the same way --------------------------


def _missing(value) -> bool:
    return not selection.is_number(value)


def _number_format(spec: str, suffix: str = "", doc: str = ""):
    """A Jinja filter printing a number with `spec` (and `suffix`); blank when missing."""

    def format_number(value) -> str:
        return "" if _missing(value) else f"{float(value):{spec}}{suffix}"

    format_number.__doc__ = doc
    return format_number


format_us = _number_format(",.1f", doc="Microseconds with one decimal.")
format_gbps = _number_format(",.0f", doc="GB/s as an integer.")
format_pct = _number_format(".1f", doc="A percentage with one decimal.")
format_speedup = _number_format(".2f", "\u00d7", doc="A speedup as '2.34x'.")
format_ratio = _number_format(".2f", doc="A plain ratio with two decimals.")
format_ratio3 = _number_format(".3g", doc="A ratio to three significant digits: top-k's 0.0031 of a sort is not 0.00.")
format_sci = _number_format(".2e", doc="A small quantity in scientific notation.")
format_number = _number_format(".6g", doc="A number for a data-value attribute (sorting), blank when missing.")


def format_size(n):
    """n as 2<sup>k</sup> when it is a power of two, else with thousands separators."""
    from markupsafe import Markup

    if _missing(n):
        return ""
    n = int(n)
    if n > 0 and n & (n - 1) == 0:
        return Markup(f"2<sup>{n.bit_length() - 1}</sup>")  # only an int goes into the markup
    return f"{n:,}"


def size_text(n) -> str:
    """n as plain text, 2^k for a power of two (for plot titles, which take no markup)."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def format_block(block) -> str:
    """A block size, or 'library' where the library chooses."""
    return "library" if _missing(block) else str(int(block))


def format_value(value) -> str:
    """Any header value as text: nested data as JSON, booleans as yes/no, null as a dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def slug(text) -> str:
    """A string safe inside an HTML id (letters, digits, '-')."""
    return "".join(c if c.isalnum() else "-" for c in str(text)).strip("-") or "x"


# --- context ---------------------------------------------------------------------------------


def as_records(frame) -> list[dict]:
    """DataFrame rows as dicts with every missing value (NaN, NA, NaT) turned into None."""
    import pandas as pd

    if frame is None or len(frame) == 0:
        return []
    records = []
    for record in frame.to_dict("records"):
        clean = {}
        for key, value in record.items():
            if type(value) in (str, int, bool):  # most values: never missing, no numpy scalar to unwrap
                pass
            elif type(value) is float:
                value = None if math.isnan(value) else value
            elif not isinstance(value, (list, tuple, dict)) and pd.isna(value):
                value = None
            elif hasattr(value, "item"):  # numpy scalars
                value = value.item()
            clean[key] = value
        records.append(clean)
    return records


def annotated_frame(run):
    """The run's case frame with each variant's declared facts (series, order, notes) beside it."""
    return selection.annotate(run.frame(), run.header.variants)
