"""Docs that stay true: every figure README.md, results/README.md and docs/*.md quote from the
bundled reference run (and the tracked baseline) is computed from it here, never typed.

    python -m tools.doc_figures           # check: list each stale figure, exit 1 if any
    python -m tools.doc_figures --write   # rewrite them from the runs under results/ (make docs)

Two forms, both rewritten by --write: generated blocks (blocks.py), Markdown between
`<!-- figures:begin NAME -->` and `<!-- figures:end NAME -->`, rendered whole; and figures inside
hand-written sentences (prose.py), each found by a pattern around it and replaced alone, so a
re-recorded reference run refreshes the docs in one command. tests/unit/test_doc_figures.py runs
the check, so a figure that drifts from the run fails `make test`.

Not installed with primbench: it edits this repository's own Markdown, and it names ops and
variants (the prose speaks of particular kernels), which primbench/ outside ops/ never does. Figures
of other runs, quoted by their id (docs/perf-notes.md's history of experiments), are not the
reference's and are left alone; docs/report.png and docs/report-topk.png carry the id of the run
they show, which the check compares with the reference's (tests/e2e/screenshots.py takes them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tools.doc_figures import blocks, pictures, prose
from tools.doc_figures.facts import Facts

WRITE_COMMAND = "python -m tools.doc_figures --write"


def files(root: Path) -> list[str]:
    """The Markdown files that may quote the runs, from the root: the README, results/, docs/."""
    names = ["README.md", "results/README.md"] + sorted(p.relative_to(root).as_posix() for p in (root / "docs").glob("*.md"))
    return [name for name in names if (root / name).is_file()]


@dataclass(frozen=True)
class Computed:
    """What the docs must say: each block's Markdown, each prose figure's text, the reference's id."""

    blocks: dict
    figures: dict
    libraries: dict  # for each ratio figure, the label of the library the report compares with
    run_id: str


def computed(facts: Facts) -> Computed:
    return Computed({name: render(facts) for name, render in blocks.RENDERERS.items()},
                    {figure: figure.compute(facts) for figure in prose.FIGURES},
                    {figure: figure.library(facts) for figure in prose.FIGURES if figure.library},
                    facts.reference.header.run_id)


def check(root: Path, want: Computed) -> list[str]:
    """Every stale, missing or unfindable figure in the docs under `root`, one line each."""
    found = []
    present = files(root)
    for path in sorted(set(blocks.PLACES) | {figure.file for figure in want.figures}):
        if path not in present:
            found.append(f"{path}: missing, and it should quote the reference run")
    for path in present:
        text = (root / path).read_text(encoding="utf-8")
        found += blocks.problems(path, text, want.blocks) + prose.problems(path, text, want.figures, want.libraries)
    return found + pictures.problems(root, want.run_id)


def write(root: Path, want: Computed) -> list[str]:
    """Rewrite the figures in the docs under `root` (not the pictures: they need Chromium); return the files changed."""
    changed = []
    for path in files(root):
        before = (root / path).read_text(encoding="utf-8")
        after = prose.rewritten(path, blocks.rewritten(before, want.blocks), want.figures)
        if after != before:
            (root / path).write_text(after, encoding="utf-8")
            changed.append(path)
    return changed
