"""Every format `primbench export` writes, found rather than listed: each module of this package that
declares `FORMAT`, an ExportFormat (records.py), is one format; a module without (a helper such as
nvbench_summaries, or this one) is passed over. A new format is then one new module, with no list to
add it to and no name to repeat in cli/: the command line reads `registered()` for `--format`'s
choices, the help's table and each option's checks.

Why discovery (pkgutil over the package's folders) rather than a list here or each module
registering itself: a list is a second place to forget, and self-registration still needs something
to import every module first, which is this walk anyway. Its cost is the import of the format
modules whenever the command line's grammar is built, about 12 ms over what `primbench` imports
already (numpy, the run-file readers). Each call walks again: Python caches the imports, listing the
folder is cheap, and a test can put a throwaway format on the package's path.

Every figure is derived from the run file's raw samples; nothing here imports CuPy.
"""

from __future__ import annotations

import importlib
import pkgutil

import primbench.export as package
from primbench.export.records import ExportFormat
from primbench.runfile.io import Run


def registered() -> dict[str, ExportFormat]:
    """{name: format} of every format module in the package, in the order they are listed in."""
    found = []
    for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        declared = getattr(importlib.import_module(module.name), "FORMAT", None)
        if isinstance(declared, ExportFormat):
            found.append(declared)
    _refuse_clashes(found)
    return {fmt.name: fmt for fmt in sorted(found, key=lambda fmt: (fmt.listed, fmt.name))}


def _refuse_clashes(found: list[ExportFormat]) -> None:
    """Two formats of one name, or one flag in two formats, is a mistake in the package: said at
    once, not left to whichever module was found last or to argparse's traceback."""
    names, flags = {}, {}
    for fmt in found:
        if fmt.name in names:
            raise ValueError(f"two export formats are named {fmt.name!r}")
        names[fmt.name] = fmt
        for option in fmt.options:
            if option.flag in flags:
                raise ValueError(f"export formats {flags[option.flag]!r} and {fmt.name!r} both declare {option.flag}")
            flags[option.flag] = fmt.name


FORMATS = tuple(registered())  # the formats' names, in their order, as found when this was first imported


def export(run: Run, fmt: str, **options) -> str:
    """The run in format `fmt`, its writer given `options` (those of the format's record, e.g.
    `long` for csv, `repetitions` for gbench-json, `jsonbin` and `json_path` for nvbench-json)."""
    formats = registered()
    if fmt not in formats:
        raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(formats)}")
    return formats[fmt].write(run, **options)


def notice(run: Run, fmt: str) -> str | None:
    """A line for standard error about what the export of `run` in `fmt` leaves out, if anything."""
    tell = registered()[fmt].notice
    return tell(run) if tell else None
