"""What an interrupted run file must be for `run --resume` to continue it: unfinished, plain (not an
archive), of this schema, and of variants whose code is what the run started with. Read without a
GPU: both resumes (one GPU, run/runner.py; several, run/gpu_runs.py) ask it once they hold the
file's writer lock."""

from __future__ import annotations

import sys
from pathlib import Path

from primbench import registry
from primbench.config.loading import config_from_header
from primbench.errors import UserError
from primbench.runfile.io import load_run
from primbench.runfile.lines import is_gzip
from primbench.runfile import protocol
from primbench.runfile.records import SCHEMA_VERSION, RunHeader


def resumable(path: Path):
    """(the run as read, its config) of an interrupted run that this primbench can continue; one
    line on what stands in the way otherwise. Needs no GPU."""
    existing = load_run(path)
    if existing.finished:
        raise UserError(f"{path}: this run already finished (it has an end record); start a new run instead")
    if is_gzip(path):  # appending plain lines would corrupt the gzip stream
        raise UserError(f"{path}: is compressed (an archived run); gunzip it to continue it, or start a new run")
    if existing.written_schema != SCHEMA_VERSION:  # one file, one schema: never append newer records
        raise UserError(f"{path}: was written in run-file schema {existing.written_schema} by an older primbench; "
                        f"its cases still read, but it cannot be continued: start a new run")
    here = RunHeader(run_id="", protocol=protocol.declared(), ceilings={"read": []}, timing=existing.header.timing)
    difference = protocol.compare(existing.header, here)
    if difference.moves_figures:  # one run, one protocol: its cases would not compare with each other
        raise UserError(f"{path}: was measured by another protocol than this primbench's ({difference.what()[:120]}); "
                        "its cases still read, but it cannot be continued: start a new run")
    config = config_from_header(existing.header, path)
    for key, recorded in existing.header.variants.items():
        op, name = recorded.get("op"), recorded.get("name")
        if not op or not name or not recorded.get("hash"):
            raise UserError(f"{path}: the header's entry for variant {key[:120]!r} lacks its op, name or hash; "
                            "the file is damaged: start a new run")
        if not registry.select(op, name):
            raise UserError(f"{path}: variant {key} no longer exists in kernels/; start a new run")
        current = registry.get(op, name).hash()
        if current != recorded["hash"]:
            raise UserError(f"{path}: variant {key} changed since the run started (hash {recorded['hash']} -> {current}); "
                            "start a new run")
    for warning in existing.warnings:
        print(f"primbench: warning: {warning}", file=sys.stderr)
    return existing, config
