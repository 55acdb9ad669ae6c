"""The report template's context, built once per run: the run's facts, the story, the accuracy
study, one section per op, timing quality and the header as recorded. Tables come from selection,
story, quality and sections, the run's own facts and header from run_facts; charts from plots;
numbers are formatted by render's filters."""

from __future__ import annotations

from primbench.report import case_table, energy, headline, op_sections, op_view, quality, run_facts, sections, selection, story
from primbench.report.anchors import point_records
from primbench.report.charts.energy import MAX_NAMED_POINTS
from primbench.report.charts.svg import pow2_text
from primbench.report.formats import as_records
from primbench.runfile.libraries import FAR_BELOW_LIGHT_PCT, FAR_MIN_BYTES, FAR_WORDS, far_cases
from primbench.verify import inputs


def build_context(run, published=(), views=None) -> dict:
    """Everything the template shows, computed from a loaded run and the published references
    (`views`: the run's op views, report/op_view.py, where the caller has them)."""
    from primbench.report import counters_section
    from primbench.report.charts import energy as energy_charts, op_charts, story as story_charts, value_marks

    # Inline SVG: each chart is built here in milliseconds, no drawing library and no worker pool.
    plots = _Charts(op_charts, story_charts, energy_charts)
    device = run.device
    views = views if views is not None else op_view.build(run)
    frame = views.frame
    device_name = device.get("name") or "this GPU"
    story = accuracy = None
    if views.story is not None:
        story = _story(views.story, published, device_name, plots)
        accuracy = _accuracy_section(views.story, device_name, plots)
    counters = counters_section.build(run, frame)
    # A kernel that failed to compile keeps its full compiler log beside the one-line reason.
    logs = {record.key: record.log for record in run.cases if record.log}
    plugins = run.header.config.get("plugins") or []  # the run's own, for an op whose plugin is not loaded
    per_op = [_op_section(view, device, plots, logs, plugins) for view in views.ops]
    context = {
        "run": run_facts.run_facts(run, frame, device_name),
        "peak_gbps": device.get("peak_gbps"),
        "copy_gbps": run.copy_gbps,
        "story": story,
        "accuracy": accuracy,
        "ops": per_op,
        "quality": quality.timing_section(frame),
        "meta": run_facts.recorded(run),
        "counters": counters,
        "headlines": [op["headline"] for op in per_op if op["headline"]],
        "sources": _sources_key(frame),
        "energy": energy.run_energy(run, frame),  # None for a run that never asked for energy
        # The library sanity rule (runfile/libraries.py), as the flags' hover text states it.
        "far_rule": {"pct": FAR_BELOW_LIGHT_PCT, "mib": FAR_MIN_BYTES / 2**20, "words": FAR_WORDS},
        # The light floor the run's config sets (compare.min_light), as the "under floor" badges' hover text states it.
        "floor_rule": _floor_words(run),
        "bar_span": f"{value_marks.BAR_SPAN:g}",  # past it, a chart of one value per row draws dots on a log scale
        "max_named_points": MAX_NAMED_POINTS,  # past it, the energy scatter names its points on hover only
    }
    return context


def _floor_words(run) -> str | None:
    from primbench.compare.light_floor import floor_of_run

    floor = floor_of_run(run.header.config)
    return None if floor is None else f"under the config's light floor: {floor.words()} (check fails it)"


def _sources_key(frame) -> dict:
    """The sources the page cites, and the series of this run's variants, in words."""
    from primbench.report import sources

    present = set(frame["series"]) if not frame.empty else set()
    return {"sources": sources.SOURCES, "light": sources.LIGHT,
            "series": {name: words for name, words in sources.SERIES.items() if name in present}}


class _Charts:
    """The chart functions of several modules under one name, as the sections ask for them."""

    def __init__(self, *modules):
        self._modules = modules

    def __getattr__(self, name):
        for module in self._modules:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)


def _story(view, published, device_name, plots) -> dict:
    """The reduce story: the opening sentence and chart, the progression at the seed's size, the ranking."""
    op, dtype, distribution, n, exact = view.op, view.dtype, view.distribution, view.n, view.n_exact
    # The story's tables first (story.py), then the page's words and charts made from them.
    progression = story.progression_table(view, n, published)
    ranking = story.ranking_table(view, n)
    differences = story.ordering_differences(progression, published)
    compared_steps = sum(len(story.compared_steps(progression, r)) for r in published)
    unranked = story.unranked_cases(view, n)
    rows, ranked = as_records(progression), as_records(ranking)
    hazards = {}
    for row in rows:
        if row.get("hazard"):
            hazards.setdefault(row["hazard"], []).append(row["variant"])
    steps = headline.story_steps(rows, published, op)
    anchor_of = {row["variant"]: row.get("anchor") for row in rows}
    for step in steps:  # each bar of this run links to its case's row
        step["anchor"] = anchor_of.get(step["variant"])
    has_energy = energy.story_energy(rows, steps, view.cases)  # each row's and step's, where measured or asked
    chart = None
    if steps:
        devices = headline.device_labels(device_name, pow2_text(n), dtype, published)
        measured = "time and energy" if has_energy else "time"
        chart = plots.story_chart(steps, devices, f"Summing {pow2_text(n)} {dtype}: {measured} per step of the progression")
    return {
        "n": n,
        "n_exact": exact,
        "preferred_n": selection.PROGRESSION_N,
        "dtype": dtype,
        "distribution": distribution,
        "progression": rows,
        "published": [
            {"id": r.id, "label": r.label, "device": r.device, "n": r.n, "dtype": r.dtype, "peak_gbps": r.peak_gbps,
             "citation": r.citation, "url_text": _without_scheme(r.url)}
            for r in published
        ],
        "differences": differences,
        "compared_steps": compared_steps,
        "hazards": [{"text": text, "variants": names} for text, names in hazards.items()],
        "ranking": ranked,
        "ranking_chart": case_table.progression_bars(
            plots, ranked, f"All {op} variants at n = {pow2_text(n)}, each at its fastest block: median time"),
        "unranked": as_records(unranked),
        "opening": headline.opening(rows, published, n, dtype),
        "steps": steps,
        "chart": chart,
        "energy": has_energy,
        # The best library at the story's size: the ranking's last column is against it.
        "library": selection.library_facts(view.libraries.get(n)),
    }


def _accuracy_section(view, device_name, plots) -> dict | None:
    """The accuracy study: the table of relative errors, its chart and the headline ratio."""
    study = sections.accuracy_study(view)
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


def _dtype_section(view) -> dict | None:
    """Every variant in every dtype at one size, when the run has more than one dtype."""
    table, where = sections.dtype_table(view)
    if where is None:
        return None
    return {**where, "rows": as_records(table)}


def _without_scheme(url) -> str | None:
    # The page must not link out (it is opened from disk or as a CI artifact): cite as plain text.
    if not url:
        return None
    return url.split("://", 1)[-1]


def _op_section(view, device, plots, logs, plugins) -> dict:
    """Per-op sections: best per size, bandwidth vs size, block sweeps, verification, failures, all
    read from the op's view (report/op_view.py); the story's op has the story's own, larger section."""
    op, frame, dtype, distribution = view.op, view.cases, view.dtype, view.distribution
    # One style per variant across all of the op's plots, in progression order: its series' colour.
    ordered = frame.sort_values(["order", "variant"]).drop_duplicates("variant")
    styles = plots.styles_by_variant(zip(ordered["variant"], ordered["series"]))
    progression = None if view.is_story else _op_progression(view)
    if progression:
        progression["chart"] = case_table.progression_bars(
            plots, progression["rows"], f"{op}: every variant at n = {pow2_text(progression['n'])}, median time")
        progression["energy"] = energy.with_case_energy(progression["rows"], energy.energy_by_key(view.compared))
    best_per_size = as_records(story.best_per_size(view))
    far = headline.far_summary(far_cases(frame))  # every slice of the op: a uint8 histogram too
    op_line = headline.op_headline(op, best_per_size, view.n, far)
    energy_section = _energy_section(view, plots, styles)
    if op_line:
        op_line["energy"] = energy.headline_energy(energy_section)
    cases = case_table.case_rows(frame)
    return {
        "name": op,
        "dtype": dtype,
        "distribution": distribution,
        "other_slices": sorted({(d, s) for d, s in zip(frame["dtype"], frame["distribution"])} - {(dtype, distribution)}, key=str),
        **_bandwidth(view, device, plots, styles),
        "progression": progression,
        "sections": op_sections.op_sections(view, plots, plugins),  # the op's own (ops/sections.py), a plugin's too
        "cases": cases,
        "case_energy": any(case["energy"] for case in cases),  # the every-case table's mJ column
        "params": view.params.text if view.params else None,  # shown in headings: "bins=256,replicas=8"
        "best_per_size": best_per_size,
        "headline": op_line,
        "far": far,
        "energy": energy_section,
        "distribution_chart": _distribution_chart(view, plots, styles),
        "sweeps": _sweep_charts(view, plots, styles),
        "verification": as_records(quality.verification_table(frame, op)),
        "reproducibility": as_records(quality.reproducibility_table(frame, op)),
        "dtypes": _dtype_section(view),
        "failures": [{**case, "log": logs.get(case["key"])} for case in as_records(quality.failures_table(frame, op))],
    }


def _energy_section(view, plots, styles) -> dict | None:
    """GB/J against GB/s at the op's largest size with energy, and why energy is missing where asked."""
    section = energy.op_energy(view)
    if section and section["points"]:
        title = f"{view.op}: energy against speed at n = {pow2_text(section['n'])} ({section['dtype']}, {section['distribution']})"
        section["chart"] = plots.energy_scatter(section["points"], median_w=section["median_w"], title=title, styles=styles)
    return section


def _bandwidth(view, device, plots, styles) -> dict:
    """The bandwidth-vs-size chart, its size unit, and the L2 region it shades (by the cases' bytes)."""
    lines = sections.bandwidth_lines(view)
    rows = point_records(lines)
    edge = sections.l2_edge(lines, device.get("l2_bytes"))  # the largest n whose charted cases all fit in L2
    chart = None
    if rows:
        chart = plots.bandwidth_vs_size(
            rows, peak_gbps=device.get("peak_gbps"), copy_gbps=view.copy_gbps, l2_edge=edge, l2_bytes=device.get("l2_bytes"),
            unit=view.unit, title=f"{view.op}: bandwidth vs size ({view.dtype}, {view.distribution})", styles=styles)
    return {"unit": view.unit, "bandwidth_chart": chart, "l2_edge": edge, "l2_mib": (device.get("l2_bytes") or 0) / 2**20}


def _distribution_chart(view, plots, styles) -> dict | None:
    """Each variant on each input distribution at one size, when the op has two or more."""
    bars = sections.distribution_bars(view)
    if bars.empty:
        return None
    n = int(bars["n"].iloc[0])
    rows = as_records(bars)
    title = f"{view.op}: GB/s by input distribution at n = {pow2_text(n)} ({view.dtype})"
    return {"n": n, "chart": plots.distribution_bars_chart(rows, title=title, styles=styles), "rows": rows}


def _sweep_charts(view, plots, styles) -> list[dict]:
    """GB/s against block size at each size swept, then against each of the variants' own parameters."""
    op, sweeps = view.op, []
    by_size = sections.block_sweeps(view)
    if by_size:  # one figure of small multiples: a panel per size, not a near-empty chart each
        sweeps.append({"n": None, "sizes": sorted(by_size), "param": None,
                       "variants": len({v for sweep in by_size.values() for v in sweep["variant"]}),
                       "chart": plots.block_sweep_multiples(by_size, title=f"{op}: GB/s against block size, a panel per size", styles=styles)})
    for slice_dtype, slice_distribution in view.slices:
        for sweep in sections.param_sweeps(view, slice_dtype, slice_distribution):
            title = f"{op}: GB/s vs {sweep['param']} at n = {pow2_text(sweep['n'])} ({slice_dtype}, {slice_distribution})"
            sweeps.append({"n": sweep["n"], "param": sweep["param"], "variants": len(sweep["lines"]),
                           "chart": plots.param_sweep_chart(sweep, title=title)})
    return sweeps


def _op_progression(view) -> dict | None:
    """A non-story op's progression at its chosen size (the story op has its own, larger section).
    Variants never run at this size (a one-block kernel past its block) are named, not rowed."""
    table = story.progression_table(view, view.n) if view.n else None
    if table is None or table.empty:
        return None
    rows = as_records(table)
    return {"n": view.n, "n_exact": view.n_exact, "rows": [r for r in rows if r["status"] != "absent"],
            "absent": [r["variant"] for r in rows if r["status"] == "absent"]}
