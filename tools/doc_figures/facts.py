"""The runs the docs quote, loaded once: the H200's reference run with the report's own context of it
(the story, each op's lines, best per size: primbench/report/context.py builds it, so the docs say
what `make report` says), and every tracked run (results/reference/ and results/baselines/)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = Path("results/reference/nvidia-h200.jsonl.gz")  # the run `make report` renders (Makefile REFERENCE)
TRACKED = ("results/reference", "results/baselines")


def wall_seconds(run) -> float | None:
    """A run's wall time, from its header's start to its end record (None for an unfinished run)."""
    from datetime import datetime

    if not (run.end and run.end.finished and run.header.started):
        return None
    return (datetime.fromisoformat(run.end.finished) - datetime.fromisoformat(run.header.started)).total_seconds()


@dataclass
class Facts:
    """What the figures are computed from; `root` is the repository holding the runs (the docs
    checked may be a copy elsewhere)."""

    root: Path = REPO
    memos: dict = field(default_factory=dict)  # what a figure computes once for all the figures that read it

    @functools.cached_property
    def reference(self):
        from primbench.runfile.io import load_run

        return load_run(self.root / REFERENCE)

    @functools.cached_property
    def views(self):
        """The reference's op views (report/op_view.py), as the report reads them."""
        from primbench.report import op_view

        return op_view.build(self.reference)

    @property
    def frame(self):
        """The reference's annotated case frame, as the report reads it."""
        return self.views.frame

    def view(self, op: str):
        """One op's view: its slice, parameters, sizes and best library per size."""
        return next(view for view in self.views.ops if view.op == op)

    @functools.cached_property
    def context(self) -> dict:
        """The report's context of the reference run (its charts too: about 1.5 s, once)."""
        from primbench.report.context import build_context
        from primbench.report.render import story_published

        return build_context(self.reference, story_published(), self.views)

    @functools.cached_property
    def tracked(self) -> dict[str, object]:
        """Every run git keeps under results/, by its path from the root, references first."""
        from primbench.runfile.io import is_run_file, load_run

        runs = {}
        for folder in TRACKED:
            for path in sorted((self.root / folder).iterdir()):
                if is_run_file(path):
                    runs[path.relative_to(self.root).as_posix()] = load_run(path)
        return runs

    @property
    def baseline(self):
        """The tracked baseline of the reference's GPU model (results/baselines/<gpu>.jsonl.gz)."""
        return self.tracked[f"results/baselines/{REFERENCE.name}"]

    def memo(self, key, compute):
        if key not in self.memos:
            self.memos[key] = compute()
        return self.memos[key]

    def op(self, name: str) -> dict:
        """The report's section of one op (best per size, headline, its own sections)."""
        return next(section for section in self.context["ops"] if section["name"] == name)
