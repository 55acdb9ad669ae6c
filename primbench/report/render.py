"""Render a run into one self-contained HTML file: CSS inlined, plots as data URIs, no network.

Every string from the run file reaches the page through Jinja2 with autoescape on, so a variant
name or a compiler log can never become markup.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from pathlib import Path

from primbench import inputs, ops, stats
from primbench.report import quality, sections, selection, story
from primbench.report.reference import load_published
from primbench.resources import TEMPLATE_DIR
from primbench.results import load_run, run_stem

REPORT_TEMPLATE = "report.html.j2"
STYLESHEET = "style.css"


def render_report(run_path, out_path, *, reference_path=None) -> Path:
    """Write the HTML report of the run file at `run_path` to `out_path` and return that path."""
    return write_report(load_run(run_path), out_path, story_references(reference_path))


def story_references(reference_path=None) -> list:
    """The published progressions the report sets beside a run (the story's op only)."""
    return [r for r in load_published(reference_path) if ops.story_op({r.op}) == r.op]


def write_report(run, out_path, references=(), frame=None) -> Path:
    """Write the report of an already loaded run to `out_path` (`frame`: its annotated case frame,
    where the caller has it already)."""
    return write_page(REPORT_TEMPLATE, out_path, **build_context(run, references, frame))


def render_page(template: str, **context) -> str:
    """Any of primbench's pages (report, compare, site) as one self-contained HTML string."""
    from markupsafe import Markup

    # The stylesheet is ours, not run data: it goes in verbatim (escaping would break '>' selectors).
    css = Markup((TEMPLATE_DIR / STYLESHEET).read_text(encoding="utf-8"))
    return _environment().get_template(template).render(css=css, **context)


def write_page(template: str, out_path, **context) -> Path:
    """Render a page and write it to `out_path` (folders created); return the path."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(render_page(template, **context), encoding="utf-8")
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
        size=format_size,
        block=format_block,
        value=format_value,
        sci=format_sci,
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
format_sci = _number_format(".2e", doc="A small quantity in scientific notation.")


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


def _records(frame) -> list[dict]:
    """DataFrame rows as dicts with every missing value (NaN, NA, NaT) turned into None."""
    import pandas as pd

    if frame is None or len(frame) == 0:
        return []
    records = []
    for record in frame.to_dict("records"):
        clean = {}
        for key, value in record.items():
            if not isinstance(value, (list, tuple, dict)) and pd.isna(value):
                value = None
            elif hasattr(value, "item"):  # numpy scalars
                value = value.item()
            clean[key] = value
        records.append(clean)
    return records


def annotated_frame(run):
    """The run's case frame with each variant's declared facts (series, order, notes) beside it."""
    return selection.annotate(run.frame(), run.header.get("variants") or {})


def build_context(run, references=(), frame=None) -> dict:
    """Everything the template shows, computed from a loaded run and the published references."""
    from primbench.report import plots

    header = run.header
    device = header.get("device") or {}
    if frame is None:
        frame = annotated_frame(run)
    device_name = device.get("name") or "this GPU"
    peak = device.get("peak_gbps")
    copy_gbps = run.copy_gbps
    measured_ops = selection.ops_in(frame)

    story = None
    accuracy = None
    if selection.story_op(frame):
        story = _story(frame, references, device_name, plots)
        accuracy = _accuracy_section(frame, device_name, plots)

    # A kernel that failed to compile keeps its full compiler log beside the one-line reason.
    logs = {c["key"]: c["log"] for c in run.cases if c.get("log")}
    per_op = [_op_section(frame, op, device, copy_gbps, plots, logs) for op in measured_ops]
    timing = quality.timing_quality(frame)
    end = run.end or {}
    interrupted = run.end is None  # a run file without an end record was cut short
    git = run.git
    copy = header.get("copy") or {}
    copy_samples = copy.get("samples_ms") or []
    return {
        "run": {
            "id": header.get("run_id") or run_stem(run.path),
            "path": run.path.name,
            "device_name": device_name,
            "started": header.get("started"),
            "finished": end.get("finished"),
            "interrupted": interrupted,
            "git_sha": git.get("sha"),
            "git_dirty": git.get("dirty"),
            "end": end,
            "resumes": run.resumes,
            "case_count": len(run.cases),
            "status_counts": dict(frame["status"].value_counts()) if not frame.empty else {},
        },
        "peak_gbps": peak,
        "copy_gbps": copy_gbps,
        "story": story,
        "accuracy": accuracy,
        "ops": per_op,
        "quality": {
            "measured": timing.measured,
            "stops": timing.stops,
            "flags": timing.flags,
            "flagged": _records(timing.flagged),
            "l2_resident": _records(timing.l2_resident),
            "l2_resident_by_size": sorted(Counter(int(n) for n in timing.l2_resident["n"]).items())
            if len(timing.l2_resident)
            else [],
            "over_peak": _records(timing.over_peak),
        },
        "meta": {
            "device": quality.flatten(device),
            "copy_bandwidth": {
                "median_gbps": copy_gbps,
                "samples": len(copy_samples),
                "median_us": stats.summarize(copy_samples).median * 1e3 if copy_samples else None,
                "rows": quality.flatten({k: v for k, v in copy.items() if k not in ("samples_ms", "alternatives")}),
                "alternatives": _copy_alternatives(copy),
            },
            "software": quality.flatten(header.get("software")),
            "host": quality.flatten(header.get("host")),
            "git": quality.flatten(git),
            "tool": quality.flatten(header.get("tool")),
            "timing": quality.flatten(header.get("timing")),
            "config_path": header.get("config_path"),
            "config_hash": header.get("config_hash"),
            "config_json": json.dumps(header.get("config"), indent=2, ensure_ascii=False, default=str),
            "variants": sorted(
                (header.get("variants") or {}).values(),
                key=lambda v: (str(v.get("op")), v.get("order") or 0, str(v.get("name"))),
            ),
            "warnings": list(run.warnings),
            "schema": header.get("schema"),
        },
    }


def _copy_alternatives(copy: dict) -> list[dict]:
    """The copy methods measured but not chosen, as median GB/s from their raw samples."""
    rows = []
    for method, samples in (copy.get("alternatives") or {}).items():
        summary = stats.summarize(samples or [])
        gbps = stats.bandwidth_gbps(copy.get("bytes") or 0, summary.median) if summary else None
        rows.append({"method": method, "gbps": gbps, "samples": summary.count if summary else 0})
    return rows


def _story(frame, references, device_name, plots) -> dict:
    """The reduce story: summary, progression at the seed's size, ranking, and the progression chart."""
    op = selection.story_op(frame)
    dtype, distribution = selection.primary_slice(frame, op)
    n, exact = selection.choose_progression_size(frame, op)
    progression = story.progression_table(frame, n, references, op, dtype, distribution)
    ranking = story.ranking_table(frame, op, n, dtype, distribution)
    shown = selection.slice_of(frame, op, dtype, distribution)
    largest = max(shown[shown["valid"]]["n"], default=n)
    summary = []
    for size in dict.fromkeys([n, int(largest)]):
        best = selection.best_case(frame, op, size, dtype=dtype, distribution=distribution)
        cub_ms = selection.baseline_time_ms(frame, op, size, dtype, distribution)
        if best is None:
            summary.append({"n": size, "best": None})
            continue
        summary.append(
            {
                "n": size,
                "best": _records(best.to_frame().T)[0],
                "cub_us": cub_ms * 1e3,
                "ratio_to_cub": best["median_ms"] / cub_ms if math.isfinite(cub_ms) else None,
            }
        )
    hazards = {}
    for row in _records(progression):
        if row.get("hazard"):
            hazards.setdefault(row["hazard"], []).append(row["variant"])
    chart = None
    if not progression.empty and progression["cumulative_speedup"].notna().any():
        chart = plots.progression_chart(progression, references, f"{device_name} (this run)")
    return {
        "n": n,
        "n_exact": exact,
        "preferred_n": selection.PROGRESSION_N,
        "dtype": dtype,
        "distribution": distribution,
        "progression": _records(progression),
        "references": [
            {"id": r.id, "label": r.label, "device": r.device, "n": r.n, "dtype": r.dtype, "peak_gbps": r.peak_gbps,
             "citation": r.citation, "url_text": _without_scheme(r.url)}
            for r in references
        ],
        "differences": story.ordering_differences(progression, references),
        "compared_steps": sum(len(story.compared_steps(progression, r)) for r in references),
        "hazards": [{"text": text, "variants": names} for text, names in hazards.items()],
        "ranking": _records(ranking),
        "unranked": _records(story.unranked_cases(frame, op, n)),
        "summary": summary,
        "chart": chart,
        "cub_variant": selection.baseline_variant(frame, op) or ops.declared(op, "baseline"),
    }


def _accuracy_section(frame, device_name, plots) -> dict | None:
    """The accuracy study: the table of relative errors, its chart and the headline ratio."""
    study = sections.accuracy_study(frame)
    if study is None:
        return None
    return {
        "sizes": study.sizes,
        "rows": study.rows,
        "headline": study.headline,
        "distribution": selection.ACCURACY_DISTRIBUTION,
        "description": inputs.DESCRIPTIONS.get(selection.ACCURACY_DISTRIBUTION, ""),
        "chart": plots.accuracy_chart(study, f"Sum accuracy on the {selection.ACCURACY_DISTRIBUTION} input ({device_name})"),
    }


def _dtype_section(frame, op) -> dict | None:
    """Every variant in every dtype at one size, when the run has more than one dtype."""
    table, where = sections.dtype_table(frame, op)
    if where is None:
        return None
    return {**where, "rows": _records(table)}


def _without_scheme(url) -> str | None:
    # The page must not link out (it is opened from disk or as a CI artifact): cite as plain text.
    if not url:
        return None
    return url.split("://", 1)[-1]


def _op_section(frame, op, device, copy_gbps, plots, logs) -> dict:
    """Per-op sections: best per size, bandwidth vs size, block sweeps, verification, failures."""
    import numpy as np

    dtype, distribution = selection.primary_slice(frame, op)
    lines = sections.bandwidth_lines(frame, op, dtype, distribution)
    # One colour per variant across all of the op's plots, in progression order.
    ordered = frame[frame["op"] == op].sort_values(["order", "variant"])["variant"].drop_duplicates()
    styles = plots.styles_by_variant(list(ordered))
    itemsize = inputs.ITEMSIZE.get(dtype) or (np.dtype(dtype).itemsize if dtype else 0)
    bandwidth_chart = None
    if not lines.empty:
        bandwidth_chart = plots.bandwidth_vs_size(
            lines,
            peak_gbps=device.get("peak_gbps"),
            copy_gbps=copy_gbps,
            l2_bytes=device.get("l2_bytes"),
            itemsize=itemsize,
            title=f"{op}: bandwidth vs size ({dtype}, {distribution})",
            styles=styles,
        )
    sweeps = []
    for n, sweep in sections.block_sweeps(frame, op, dtype, distribution).items():
        sweeps.append(
            {
                "n": n,
                "param": None,
                "variants": sweep["variant"].nunique(),
                "chart": plots.block_sweep_chart(sweep, n=n, title=f"{op}: GB/s vs block size at n = {size_text(n)}", styles=styles),
            }
        )
    for slice_dtype, slice_distribution in selection.slices_by_dtype(frame, op, (dtype, distribution)):
        for sweep in sections.param_sweeps(frame, op, slice_dtype, slice_distribution):
            title = f"{op}: GB/s vs {sweep['param']} at n = {size_text(sweep['n'])} ({slice_dtype}, {slice_distribution})"
            sweeps.append({"n": sweep["n"], "param": sweep["param"], "variants": len(sweep["lines"]),
                           "chart": plots.param_sweep_chart(sweep, title=title)})
    # With parameters (a stencil's radius), the comparisons across variants hold one value fixed.
    params = selection.primary_params(frame, op, dtype, distribution)
    compared = selection.with_params(frame, op, params)
    bars = sections.distribution_bars(compared, op, dtype)
    distribution_chart = None
    if not bars.empty:
        distribution_chart = {
            "n": int(bars["n"].iloc[0]),
            "chart": plots.distribution_bars_chart(
                bars, title=f"{op}: GB/s by input distribution at n = {size_text(int(bars['n'].iloc[0]))} ({dtype})", styles=styles),
            "rows": _records(bars),
        }
    progression = None
    if op != selection.story_op(frame):  # the story op has its own, larger section
        n, exact = selection.choose_progression_size(compared, op)
        table = story.progression_table(compared, n, (), op, dtype, distribution) if n else None
        if table is not None and not table.empty:
            # Variants never run at this size (a one-block kernel past its block) are named, not rowed.
            rows = _records(table)
            progression = {"n": n, "n_exact": exact, "rows": [r for r in rows if r["status"] != "absent"],
                           "absent": [r["variant"] for r in rows if r["status"] == "absent"]}
    other_slices = sorted(
        {(d, s) for d, s in zip(frame[frame["op"] == op]["dtype"], frame[frame["op"] == op]["distribution"])}
        - {(dtype, distribution)},
        key=str,
    )
    return {
        "name": op,
        "dtype": dtype,
        "distribution": distribution,
        "other_slices": other_slices,
        "l2_n": (device.get("l2_bytes") or 0) // itemsize if itemsize else None,
        "progression": progression,
        "tables": {name: _records(table) for name, table in ops.report_tables(op, frame, copy_gbps).items()},  # the op's own
        "params": params,
        "best_per_size": _records(story.best_per_size(compared, op, dtype, distribution)),
        "bandwidth_chart": bandwidth_chart,
        "distribution_chart": distribution_chart,
        "sweeps": sweeps,
        "verification": _records(quality.verification_table(frame, op)),
        "reproducibility": _records(quality.reproducibility_table(frame, op)),
        "dtypes": _dtype_section(frame, op),
        "failures": [{**case, "log": logs.get(case["key"])} for case in _records(quality.failures_table(frame, op))],
    }
