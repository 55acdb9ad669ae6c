"""An export format as one record: all that `primbench export` needs to offer a format (its name,
the tools that read it, an example, its options) and to make it (its writer, and a line about what
it left out). Each format's module declares one as `FORMAT`; export/formats.py finds them, and the
command line builds `--format`'s choices, the help's table of formats and each option's checks from
them, so that a format is declared once, where its writer lives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from primbench.runfile.io import Run


@dataclass(frozen=True)
class Option:
    """An option of one format only, e.g. csv's `--long`. Its value reaches the writer as the
    keyword the flag names (`--long` → long=True, `--jsonbin DIR` → jsonbin="DIR"); given with
    another format, it is refused in one line."""

    flag: str
    help: str  # what it does; the help puts "<format> only: " in front
    metavar: str | None = None  # the value's placeholder (N, DIR); None: a switch, True when given
    # The value from its text; a ValueError's message is the one line that refuses it (exit 2).
    parse: Callable[[str], Any] | None = None
    # Set where the value is a folder the export writes files into, to what they are ("the sample
    # files"): the folder is then checked like an output (not standard output, not a file, not an
    # input), and the files the export wrote there are removed if it fails before its text is written.
    folder_for: str | None = None
    # More checks of the value, given where the text will be written (None: standard output); raises
    # UserError, and returns further keywords for the writer ({} for none).
    check: Callable[[Any, str | None], dict] | None = None

    @property
    def keyword(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class ExportFormat:
    """One format `primbench export --format NAME` writes."""

    name: str  # --format's value
    short: str  # what it is, in a few words, for the export line of `primbench --help`
    readers: str  # the tools that read it, for `primbench export --help`'s table
    example: str  # a command that makes it, for the same table
    write: Callable[..., str]  # write(run, **options) -> the whole text
    options: tuple[Option, ...] = ()
    # A line for standard error about what the export of a run left out, or None where nothing was.
    notice: Callable[[Run], str | None] | None = None
    # Its place in --format's choices and the help's table (lowest first); the first is the default.
    listed: int = 100
