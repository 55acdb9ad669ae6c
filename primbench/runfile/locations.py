"""Where runs live, and the run arguments commands take.

A run is written to `<output>/<gpu>/<run id>.jsonl` (results/ by default, git-ignored), so that a
fleet's hosts can share one folder. What git keeps is small: each GPU model's baseline
(results/baselines/<gpu>.jsonl.gz, what `check` compares with) and reference run
(results/reference/<gpu>.jsonl.gz, what `make report` renders). results/README.md states the policy.
"""

from __future__ import annotations

import glob
from pathlib import Path

from primbench.errors import UserError
from primbench.pathnames import exists, is_dir, shown
from primbench.runfile.io import ARCHIVED_RUN_SUFFIX, RUN_SUFFIX, gpu_slug, is_run_file
from primbench.text_safety import printable

RESULTS_DIR = Path("results")
BASELINE_DIR = RESULTS_DIR / "baselines"
REFERENCE_DIR = RESULTS_DIR / "reference"
GLOB_CHARACTERS = "*?["


def new_run_path(output, device_name: str, run_id: str) -> Path:
    """<output>/<gpu>/<run id>.jsonl."""
    return Path(output) / gpu_slug(device_name) / f"{run_id}{RUN_SUFFIX}"


def is_kept_copy(path) -> bool:
    """Whether a run file is a copy git keeps (a baseline or a reference), not a run of its own."""
    return bool({BASELINE_DIR.name, REFERENCE_DIR.name} & set(Path(path).parent.parts))


def _in_start_order(paths, unnamable: list | None) -> list[Path]:
    # Run names start with their UTC start time; the full path breaks ties between copies.
    found = sorted((Path(p) for p in paths if is_run_file(p) and Path(p).is_file()), key=lambda p: (p.name, str(p)))
    kept = []
    for path in found:
        problem = _unprintable_name(path)
        if problem is not None and unnamable is None:
            raise UserError(problem)
        if problem is not None:
            unnamable.append(problem)
        else:
            kept.append(path)
    return kept


def _unprintable_name(path: Path) -> str | None:
    """A name found by a walk, not typed by the user, reaches error lines and reports: one with a
    control character (an escape sequence) or bytes that are not UTF-8 is refused, shown escaped."""
    text = str(path)
    if printable(text) != text:  # shown: bytes that are not UTF-8 as \xNN; printable: controls as \x1b
        return (f"{printable(shown(path))}: a run file whose name holds control characters or bytes that "
                "are not UTF-8; rename it (or move it out of the folder)")
    return None


def runs_in(argument, unnamable: list | None = None) -> list[Path]:
    """The run files an argument names: a file as it is, every run file under a folder (at any
    depth), or a glob's matches; in start order. Nothing found is an error naming the argument.
    A file found with a name no line can show is an error too, or, given `unnamable` (publish: one
    such file among a year of runs must not stop the site), its line is added there and it is left out."""
    text = str(argument)
    path = Path(text)
    if is_dir(path):  # a name too long to look up is one line here, before anything opens it
        before = len(unnamable or ())
        found = _in_start_order(path.rglob("*"), unnamable)
        if not found and len(unnamable or ()) == before:  # none at all, not only names left out
            raise UserError(f"{shown(text)}: a folder with no run files (*.jsonl, *.jsonl.gz) in it")
        return found
    if any(ch in text for ch in GLOB_CHARACTERS) and not exists(path):
        before = len(unnamable or ())
        found = _in_start_order(glob.glob(text, recursive=True), unnamable)
        if not found and len(unnamable or ()) == before:
            raise UserError(f"{shown(text)[:200]}: the pattern matches no run file (*.jsonl, *.jsonl.gz)")
        return found
    return [path]  # load_run says what is wrong with it, if anything


def runs_of(arguments, unnamable: list | None = None) -> list[Path]:
    """Every run file the arguments name, in order, each once (`unnamable`: as runs_in takes it)."""
    return list(dict.fromkeys(p for argument in arguments for p in runs_in(argument, unnamable)))


def newest_run_in(argument) -> Path:
    """The one run an argument names: a file, or the newest run in a folder or a glob's matches,
    baseline and reference copies left out (unless they are all there is)."""
    found = runs_in(argument)
    return ([p for p in found if not is_kept_copy(p)] or found)[-1]


def baseline_path(device_name: str, folder=BASELINE_DIR) -> Path:
    """results/baselines/<gpu>.jsonl.gz; a baseline made before baselines were compressed
    (<gpu>.jsonl) is still found."""
    packed = kept_copy_path(folder, device_name)
    legacy = packed.with_suffix("")
    return legacy if exists(legacy) and not exists(packed) else packed


def kept_copy_path(folder, device_name: str) -> Path:
    """<folder>/<gpu>.jsonl.gz: where a GPU model's baseline or reference copy is written."""
    return Path(folder) / f"{gpu_slug(device_name)}{ARCHIVED_RUN_SUFFIX}"
