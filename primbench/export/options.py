"""What every format's own options get, read from their records (records.Option): an option given
with another format is refused; a folder an option names is checked as an output before the run is
read, and what the export wrote into it is removed when the export fails. The format's own checks
(Option.check) run last. cli/export.py calls these with plain values."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterable

from primbench.errors import UserError
from primbench.export.records import ExportFormat, Option
from primbench.outputs import refuse_standard_output
from primbench.pathnames import exists, is_dir, shown


def writer_options(chosen: ExportFormat, formats: Iterable[ExportFormat], given: dict, output: str | None) -> dict:
    """The keywords `chosen`'s writer takes, from `given` ({keyword: value} of every format's
    options, None or False where not given); `output` is the file the text goes to (None: standard
    output). An option of another format is one line (exit 2)."""
    options = {}
    for fmt in formats:
        for option in fmt.options:
            if given.get(option.keyword) in (None, False):
                continue
            if fmt.name != chosen.name:
                raise UserError(f"export: {option.flag} goes with --format {fmt.name} only, not {chosen.name}")
            options[option.keyword] = given[option.keyword]
    for option in chosen.options:
        if option.keyword not in options:
            continue
        if option.folder_for:
            _check_folder(option, options[option.keyword])
        if option.check:
            options.update(option.check(options[option.keyword], output))
    return options


def _check_folder(option: Option, value) -> None:
    """A folder the export writes files into: not standard output, and neither it nor a folder
    above it a file."""
    folder = Path(value)
    refuse_standard_output(option.flag, value, f"{option.folder_for} go into a folder")
    existing = next((p for p in (folder, *folder.parents) if exists(p)), None)
    if existing is not None and not is_dir(existing):
        where = "is a file" if existing == folder else f"{shown(existing)} is a file"
        raise UserError(f"{shown(folder)}: {where}; give {option.flag} a folder for {option.folder_for}")


def folders_written(chosen: ExportFormat, options: dict) -> list:
    """The folders the export writes files into besides its text, as given."""
    return [options[o.keyword] for o in chosen.options if o.folder_for and o.keyword in options]


@contextlib.contextmanager
def files_removed_on_failure(folders):
    """Where the export fails before its text is written (a full disk, an interruption), the files
    it wrote into `folders` are removed, and each folder it made: no half an export is left. Files
    that were there before are left alone."""
    with contextlib.ExitStack() as stack:
        for folder in folders:
            stack.enter_context(_removed_on_failure(Path(folder)))
        yield


@contextlib.contextmanager
def _removed_on_failure(folder: Path):
    made = not folder.exists()
    before = set(folder.iterdir()) if folder.is_dir() else set()
    try:
        yield
    except BaseException:
        if folder.is_dir():
            for path in set(folder.iterdir()) - before:
                path.unlink(missing_ok=True)
            if made and not any(folder.iterdir()):
                folder.rmdir()
        raise
