"""Render a run into one self-contained HTML file: CSS and script inlined, charts as inline SVG, no network.

Every string from the run file reaches the page through Jinja2 with autoescape on, so a variant
name or a compiler log can never become markup.
"""

from __future__ import annotations

import functools
from pathlib import Path

from primbench import ops
from primbench.outputs import write_atomically, write_own_file
from primbench.report import formats
from primbench.resources import TEMPLATE_DIR
from primbench.runfile.io import load_run
from primbench.runfile.published import load_published
from primbench.text_safety import encodable

REPORT_TEMPLATE = "report.html.j2"
STYLESHEET = "style.css"
TABLE_SCRIPT = "tables.js"  # sorts and filters tables, opens the fold a link points into


def render_report(run_path, out_path, *, published_path=None) -> Path:
    """Write the HTML report of the run file at `run_path` to `out_path` and return that path."""
    from primbench import progress
    from primbench.outputs import check_writable

    # Bad input stays one line: the output and the run are checked before progress is shown.
    check_writable(out_path)
    run = load_run(run_path)
    progress.say(f"read {run_path}: {len(run.cases)} cases; rendering {out_path}")
    return write_report(run, out_path, story_published(published_path))


def story_published(published_path=None) -> list:
    """The published progressions the report sets beside a run (the story's op only)."""
    return [r for r in load_published(published_path) if ops.story_op({r.op}) == r.op]


def write_report(run, out_path, published=(), views=None, index_href: str | None = None, in_site: bool = False) -> Path:
    """Write the report of an already loaded run to `out_path` (`views`: its op views,
    report/op_view.py, where the caller has them already; `index_href`: the site's index, on a
    published site)."""
    from primbench.report.context import build_context

    return write_page(REPORT_TEMPLATE, out_path, index_href=index_href, in_site=in_site, **build_context(run, published, views))


def render_page(template: str, **context) -> str:
    """Any of primbench's pages (report, compare, site) as one self-contained HTML string."""
    from markupsafe import Markup

    # The stylesheet is ours, not run data: it goes in verbatim (escaping would break '>' selectors).
    css = Markup((TEMPLATE_DIR / STYLESHEET).read_text(encoding="utf-8"))
    script = Markup((TEMPLATE_DIR / TABLE_SCRIPT).read_text(encoding="utf-8"))  # ours too; it holds no '</script'
    return _environment().get_template(template).render(css=css, table_script=script, **context)


def write_page(template: str, out_path, *, in_site: bool = False, **context) -> Path:
    """Render a page and write it to `out_path` (folders created); return the path. `in_site`: a
    page of a published site, whose name is publish's own: what is there is replaced, a link too."""
    out_path = Path(out_path)
    # A lone surrogate in run-file text (which autoescape leaves be) would fail UTF-8: U+FFFD instead.
    (write_own_file if in_site else write_atomically)(out_path, encodable(render_page(template, **context)))
    return out_path


@functools.lru_cache(maxsize=1)
def _environment():
    # One for the process: publish writes a page per run, and the templates compile once.
    import jinja2

    from primbench.report import energy

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,  # on for every template, whatever its file extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        us=formats.format_us,
        gbps=formats.format_gbps,
        pct=formats.format_pct,
        speedup=formats.format_speedup,
        # Speed in words (formats.py has the convention): a speedup, or a time over a baseline's.
        faster=formats.format_faster,
        time_ratio=formats.format_time_ratio,
        faster_cell=formats.format_faster_cell,
        time_ratio_cell=formats.format_time_ratio_cell,
        times=formats.format_times,
        ratio=formats.format_ratio,
        ratio3=formats.format_ratio3,
        size=formats.format_size,
        block=formats.format_block,
        value=formats.format_value,
        sci=formats.format_sci,
        number=formats.format_number,
        slug=formats.slug,
        cite=formats.link_sources,
        breakable=formats.breakable,
        mj=formats.format_mj,
        gb_per_j=formats.format_gb_per_j,
        watts=formats.format_watts,
        energy_title=energy.energy_title,  # a case's energy in the words of its hover text
    )
    return environment
