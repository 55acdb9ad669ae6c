"""Generated blocks: Markdown between `<!-- figures:begin NAME -->` and `<!-- figures:end NAME -->`
that RENDERERS[NAME] writes from the runs (facts.py), never by hand. PLACES says which file holds
which block, so a block cannot be deleted unnoticed.

The figures are formatted by the report's own filters (report/formats.py)."""

from __future__ import annotations

import re
import textwrap

from primbench.report import formats
from primbench.runfile.frame import is_number

PLACES = {
    "results/README.md": ("tracked-runs",),
    "docs/perf-notes.md": ("tracked-runs",),
}
BLOCK = re.compile(r"<!-- figures:begin (?P<name>[a-z0-9-]+) -->\n(?P<body>.*?)<!-- figures:end (?P=name) -->", re.S)
MARKER = re.compile(r"<!-- figures:(?:begin|end) [a-z0-9-]+ -->")


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


def _statuses(run) -> str:
    counts = {}
    for case in run.cases:
        counts[case.status] = counts.get(case.status, 0) + 1
    return ", ".join(f"{count:,} {status}" for status, count in sorted(counts.items()))


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


RENDERERS = {"tracked-runs": tracked_runs}


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
