"""`primbench export`: a run in a format another tool reads. The formats, their options and their
checks are export/'s records (export/formats.py finds them); this reads the arguments into plain
values, checks every path before the run is read, and writes the text where -o says."""

from __future__ import annotations

import sys

from primbench import progress
from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (STANDARD_OUTPUT, check_writable, goes_to_standard_output, refuse_overwriting_inputs,
                               write_atomically, write_to_standard_output)
from primbench.pathnames import escaped
from primbench.runfile.locations import newest_run_in


def _common_with(argument):
    """The run --common-with names; what is wrong with it says which option it came from."""
    from primbench.runfile.io import load_run

    try:
        return load_run(newest_run_in(argument))
    except UserError as exc:
        raise UserError(f"export --common-with: {exc}") from None


def cmd_export(args) -> int:
    from primbench.export.case_selection import select
    from primbench.export.formats import registered
    from primbench.export.options import files_removed_on_failure, folders_written, writer_options
    from primbench.runfile.io import load_run

    formats = registered()
    chosen = formats[args.format]
    to_file = args.output not in (None, STANDARD_OUTPUT)
    given = {option.keyword: getattr(args, option.keyword) for fmt in formats.values() for option in fmt.options}
    options = writer_options(chosen, formats.values(), given, args.output if to_file else None)
    run = load_run(newest_run_in(args.run))
    base = _common_with(args.common_with) if args.common_with else None
    for read in (run, base) if base else (run,):
        progress.warn_of(read)
    if to_file:
        check_writable(args.output)
    folders = folders_written(chosen, options)
    refuse_overwriting_inputs([args.output, *folders], [run.path] + ([base.path] if base else []))
    every_case = len(run.cases)
    run = select(run, globs=args.cases, base=base)
    with files_removed_on_failure(folders):
        text = chosen.write(run, **options)
        if to_file:
            write_atomically(args.output, text)
    if to_file:
        if not goes_to_standard_output(args.output):
            of = f" of {every_case}" if len(run.cases) < every_case else ""
            print(f"{args.format}: {escaped(args.output)} ({len(run.cases)}{of} cases)")
    else:
        write_to_standard_output(text)
    left_out = chosen.notice(run) if chosen.notice else None
    if left_out:
        print(left_out, file=sys.stderr)
    return EXIT_OK
