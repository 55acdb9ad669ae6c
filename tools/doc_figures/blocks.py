"""Generated blocks: Markdown between `<!-- figures:begin NAME -->` and `<!-- figures:end NAME -->`
that RENDERERS[NAME] writes from the runs (facts.py), never by hand. PLACES says which file holds
which block, so a block cannot be deleted unnoticed.

The figures are the report's own: each op's best kernel and its library come from the report's
context (report/context.py, op_view.py, story.py, headline.py), formatted by the report's own
filters (report/formats.py), so the README says what `make report` shows, whatever baseline or
selection the report adopts."""

from __future__ import annotations

import re
import textwrap

from primbench.report import formats
from primbench.runfile.frame import is_number
from tools.doc_figures.facts import wall_seconds

PLACES = {
    "README.md": ("reference-run", "op-lines", "light-floor"),
    "results/README.md": ("tracked-runs",),
    "docs/perf-notes.md": ("tracked-runs",),
}
BLOCK = re.compile(r"<!-- figures:begin (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)<!-- figures:end (?P=name) -->", re.S)
MARKER = re.compile(r"<!-- figures:(?:begin|end) [a-z0-9-]+ -->")


def n_text(n: int, unit: str = "elements") -> str:
    """A size as the README writes it: '2^28', or '512 rows' for an op counted in rows."""
    if unit == "elements" and n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}" + ("" if unit == "elements" else f" {unit}")


def wrapped(text: str, bullet: bool = False) -> str:
    """A paragraph (or a list item) wrapped at 100 columns, as the docs' sources are."""
    first, rest = ("- ", "  ") if bullet else ("", "")
    return textwrap.fill(text, 100, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False)


def _short_sha(git: dict) -> str:
    return (git.get("sha") or "unknown")[:7]


def _short_uuid(device: dict) -> str:
    # 'GPU-69251176-cd04-...' -> '69251176': enough to tell two boards apart, as the docs name them.
    return (device.get("uuid") or "unknown").removeprefix("GPU-").split("-")[0]


def _duration(run) -> str:
    """The run's wall time: '4 min 52 s'."""
    seconds = wall_seconds(run)
    if seconds is None:
        return "an unknown time (it has no end record)"
    return f"{round(seconds) // 60} min {round(seconds) % 60} s"


def _statuses(run) -> str:
    counts = {}
    for case in run.cases:
        counts[case.status] = counts.get(case.status, 0) + 1
    return ", ".join(f"{count:,} {status}" for status, count in sorted(counts.items()))


def reference_run(facts) -> str:
    """The run's facts and the story's sentence, in the report's words and figures."""
    run, context = facts.reference, facts.context
    facts_line = (
        f"`make report` renders the bundled reference run `{run.header.run_id}`: {run.header.config_path} on an "
        f"{run.device.get('name')} (GPU {_short_uuid(run.device)}) from commit {_short_sha(run.git)}, "
        f"{len(run.cases):,} cases ({_statuses(run)}; a case is timed only once verified), in {_duration(run)}. "
        f"Its ceilings, measured at its start: copy {formats.format_gbps(run.copy_gbps)} GB/s and pure read "
        f"{formats.format_gbps(run.read_gbps)} GB/s at 1 GiB, against an NVML peak of "
        f"{formats.format_gbps(run.header.peak_gbps)} GB/s.")
    return wrapped(facts_line) + "\n\n" + wrapped(_story_sentence(context["story"]))


def _story_sentence(story) -> str:
    """report.html.j2's summary sentence, in Markdown."""
    if not story or not story.get("opening"):
        return "The run has no progression to tell."
    o = story["opening"]
    text = (f"Summing {n_text(story['n'])} {story['dtype']} takes {formats.format_us(o['first']['us'])} µs with the seeds' "
            f"first kernel (`{o['first']['variant']}`) and {formats.format_us(o['last']['us'])} µs with warp shuffles "
            f"(`{o['last']['variant']}`, {formats.format_faster(o['last']['speedup'])}), both at block 256")
    for i, ref in enumerate(o["published"]):
        joint = "; " if i == 0 else " and "
        size = "" if ref["same_size"] else f", {n_text(ref['n'])} {ref['dtype']}"
        text += (f"{joint}{ref['label']} went from {formats.format_value(ref['first_ms'])} ms to "
                 f"{formats.format_value(ref['last_ms'])} ms ({formats.format_faster(ref['speedup'])}{size})")
    text += "."
    if o.get("beyond"):
        b = o["beyond"]
        text += (f" Past the seeds, `{b['variant']}` takes it to {formats.format_us(b['us'])} µs at block "
                 f"{formats.format_block(b['block'])} ({formats.format_faster(b['step'])} than the shuffles)")
    if o.get("library"):
        text += (", and" if o.get("beyond") else " The library,") + f" `{o['library']['variant']}` takes {formats.format_us(o['library']['us'])} µs"
    return text + "."


def op_lines(facts) -> str:
    """Each op at its largest size: the report's best-per-size row (its fastest kernel, any block)
    against the best library there (the fastest library case, named with what the run records of
    it), with the library's own % of light and the report's flag where it is far from it."""
    from primbench import ops

    rows = ["| op | slice | n | fastest kernel (block) | µs | % light | % peak | best library | library µs | its % light "
            "| against it |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for section in facts.context["ops"]:
        if not section["best_per_size"]:
            continue
        row = section["best_per_size"][-1]  # sizes ascending: the largest
        unit = ops.declared(section["name"], "size_unit", "elements")
        where = " ".join(str(part) for part in (section["dtype"], section["distribution"], section["params"]) if part)
        library, against, light = "none in this run", "", ""
        if row.get("library") and is_number(row.get("ratio_to_library")):
            library = f"`{row['library']}`" + (f" {row['library_text']}" if row.get("library_text") else "")
            against = formats.format_time_ratio(row["ratio_to_library"])
            light = formats.format_pct(row.get("library_pct_sol")) + (", far from the hardware" if row.get("library_far")
                                                                       else "")
        rows.append(f"| {section['name']} | {where} | {n_text(row['n'], unit)} | `{row['variant']}` "
                    f"({formats.format_block(row['block'])}) | {formats.format_us(row['time_us'])} | "
                    f"{formats.format_pct(row['pct_sol'])} | {formats.format_pct(row['pct_peak'])} | {library} | "
                    f"{formats.format_us(row.get('library_us'))} | {light} | {against} |")
    return "\n".join(rows) + "\n\n" + wrapped(_far_sentence(facts))


def _far_sentence(facts) -> str:
    """How many library cases the report flags as far from their light, per op (runfile/libraries.py)."""
    from primbench.runfile.libraries import FAR_BELOW_LIGHT_PCT, FAR_MIN_BYTES, far_cases

    flagged = far_cases(facts.frame)
    counts = ", ".join(f"{len(mine)} of {op} ({formats.format_pct(mine['pct_sol'].min())} to "
                       f"{formats.format_pct(mine['pct_sol'].max())} % of light: "
                       f"{', '.join(sorted(set(mine['variant_name'])))})" for op, mine in flagged.groupby("op", sort=True))
    return (f"Library cases under {FAR_BELOW_LIGHT_PCT:.0f} % of their own light with {FAR_MIN_BYTES // 2**20} MiB or more "
            f"to move, flagged in the report and by `compare` as far from the hardware: {counts or 'none'}. A library so "
            "far below its light is more likely called badly than beaten: CuPy's histogram counts into 64-bit integers, "
            "and a full sort is no way to take the top 8.")


def tracked_runs(facts) -> str:
    """One line per run git keeps under results/: which run it is, what made it, its ceilings, its protocol."""
    lines = []
    for path, run in facts.tracked.items():
        header = run.header
        several = header.baseline.get("runs") if isinstance(header.baseline, dict) else None
        ids = ", ".join("`%s`" % entry.get("run_id") for entry in several or ())
        made_of = f" (a baseline of {len(several)} runs: {ids})" if several else ""
        lines.append(wrapped(
            f"`{path}`: run `{header.run_id}`{made_of}, {header.config_path}, {len(run.cases):,} cases "
            f"({_statuses(run)}), on an {run.device.get('name')} (GPU {_short_uuid(run.device)}) from commit "
            f"{_short_sha(run.git)}, started {header.started}, run-file schema {header.schema}; copy "
            f"{formats.format_gbps(run.copy_gbps)} GB/s, read {formats.format_gbps(run.read_gbps)} GB/s at 1 GiB. "
            + _protocol_words(header), bullet=True))
    return "\n".join(lines)


def _protocol_words(header) -> str:
    """How the run's measuring protocol is known, and what differs from this code's (runfile/protocol.py)."""
    from primbench.runfile import protocol
    from primbench.runfile.records import RunHeader

    parts = ", ".join(f"{name} r{revision}" for name, revision in protocol.recorded(header).items())
    known = "Its header records its protocol" if header.protocol else "Its header records no protocol (older than the record); `check` infers"
    now = protocol.compare(header, RunHeader(run_id="this code", device={}, protocol=protocol.declared()))
    moved = sorted({figure for _, moves in now.changes for figure in moves})
    effect = f"it moves the {' and '.join(moved)} figures" if moved else "no timed figure moves with it"
    since = f"; since then: {now.what()} ({effect})" if now.changes else "; this code's is the same"
    return f"{known}: {parts}{since}."


def light_floor_example(facts) -> str:
    """What `check --min-light 0.9` prints of the reference run from a folder with no baseline, as
    compare/light_floor.py words it (the first case under the floor, then the count of the rest)."""
    from primbench.compare import light_floor

    floor = light_floor.LightFloor(0.9)
    cases = light_floor.judge(facts.frame, floor)
    text = light_floor.alone_lines(str(facts.reference.device.get("name")), cases, floor)
    if len(text) > 6:  # the two lines above the list, its first case, "...", and the two lines after it
        text = [*text[:3], "  ...", *text[-2:]]
    return "```text\n" + "\n".join(text) + "\n```\n"


RENDERERS = {"reference-run": reference_run, "op-lines": op_lines, "tracked-runs": tracked_runs,
             "light-floor": light_floor_example}


def body(text: str) -> str:
    """What sits between a block's markers: a blank line either side, so Markdown sees its own blocks."""
    return "\n" + text.rstrip("\n") + "\n\n"


def problems(path: str, text: str, rendered: dict[str, str]) -> list[str]:
    """What is wrong with the blocks of one file: unknown, unclosed, missing or stale."""
    found = []
    blocks = list(BLOCK.finditer(text))
    if len(MARKER.findall(text)) != 2 * len(blocks):
        found.append(f"{path}: a figures:begin without its figures:end (or the reverse)")
    names = [match["name"] for match in blocks]
    for name in PLACES.get(path, ()):
        if name not in names:
            found.append(f"{path}: block {name!r} is missing: put <!-- figures:begin {name} --> and its end back")
    for match in blocks:
        if match["name"] not in rendered:
            found.append(f"{path}: unknown block {match['name']!r} (tools/doc_figures/blocks.py RENDERERS)")
        elif match["body"] != body(rendered[match["name"]]):
            found.append(f"{path}: block {match['name']!r} is stale{_first_difference(match['body'], body(rendered[match['name']]))}")
    return found


def _first_difference(have: str, want: str) -> str:
    """': says X, the runs give Y' for the first line that differs (a block is long)."""
    pairs = zip(have.splitlines() + [""] * len(want.splitlines()), want.splitlines() + [""] * len(have.splitlines()))
    for old, new in pairs:
        if old != new:
            return f": says {old.strip()[:120]!r}, the runs give {new.strip()[:120]!r}"
    return ""


def rewritten(text: str, rendered: dict[str, str]) -> str:
    """`text` with every known block's body rendered afresh."""
    def fill(match):
        name = match["name"]
        if name not in rendered:
            return match[0]
        return f"<!-- figures:begin {name} -->\n{body(rendered[name])}<!-- figures:end {name} -->"

    return BLOCK.sub(fill, text)
