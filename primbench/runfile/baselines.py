"""Kept copies: a clean, finished run made its GPU model's baseline (what `check` compares with) or
its reference run (what `make report` renders), as results/<folder>/<gpu>.jsonl.gz."""

from __future__ import annotations

import gzip
from pathlib import Path

from primbench.errors import UserError
from primbench.outputs import write_atomically
from primbench.runfile.lines import GZIP_MAGIC
from primbench.runfile.locations import REFERENCE_DIR, kept_copy_path


def keep_copy(run, folder) -> Path:
    """Write the loaded `run` (a runfile.io.Run) as `folder`/<gpu>.jsonl.gz and return that path.
    Refused, in one line, unless the run finished, measured something and failed no case."""
    if not run.finished:
        raise UserError(f"{run.path}: the run was interrupted (no end record); finish it with --resume before making it a baseline")
    if not run.cases:
        raise UserError(f"{run.path}: the run has no cases; a baseline must be a finished run that measured something")
    unclean = [record.key for record in run.cases if not record.ok]
    if unclean:
        raise UserError(f"{run.path}: {len(unclean)} case(s) failed or were skipped (e.g. {unclean[0]}); a baseline must be a clean run")
    target = kept_copy_path(folder, run.device.get("name"))  # always written compressed
    if target.exists() and target.resolve() == run.path.resolve():
        raise UserError(f"{run.path}: is already the baseline of {run.device.get('name')}")
    data = run.path.read_bytes()
    # Kept compressed (about 7x smaller); mtime 0 so the same run always gives the same bytes.
    write_atomically(target, data if data[:2] == GZIP_MAGIC else gzip.compress(data, mtime=0))
    return target


def kind_of(folder) -> str:
    """'reference' for the reference folder, else 'baseline' (what the command's line calls it)."""
    return "reference" if Path(folder).name == REFERENCE_DIR.name else "baseline"
