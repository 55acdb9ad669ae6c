"""The commands that turn run files into something to read: `report` (a page per run), `publish` (a
static site) and `export` (CSV, Google Benchmark and NVBench JSON)."""

from __future__ import annotations

import sys
from pathlib import Path

from primbench.errors import EXIT_OK, UserError
from primbench.outputs import check_writable, refuse_overwriting_inputs, write_atomically
from primbench.runfile.locations import newest_run_in, runs_of


def cmd_report(args) -> int:
    from primbench.report.render import render_report
    from primbench.runfile.io import report_path

    from primbench.resources import REFERENCE_RUN

    if args.reference == bool(args.run):
        raise UserError("report: give run files, folders or globs, or --reference for the bundled reference run")
    if args.reference:  # the package's own copy may sit in a read-only site-packages: the page goes here
        out = Path(args.output) if args.output else Path(report_path(REFERENCE_RUN).name)
        if out.is_dir():
            raise UserError(f"{out}: is a folder; give the HTML file to write, e.g. -o {out / report_path(REFERENCE_RUN).name}")
        refuse_overwriting_inputs([out], [REFERENCE_RUN])
        print(render_report(REFERENCE_RUN, out))
        return EXIT_OK
    runs = runs_of(args.run)
    if args.output and len(runs) > 1:
        raise UserError(f"-o names one file, but {len(runs)} runs were given; leave -o out to write each report beside its run")
    for run_path in runs:
        out = Path(args.output) if args.output else report_path(run_path)
        refuse_overwriting_inputs([out], runs)
        if out.is_dir():
            raise UserError(f"{out}: is a folder; give the HTML file to write, e.g. -o {out / report_path(run_path).name}")
        print(render_report(run_path, out))
    return EXIT_OK


def cmd_publish(args) -> int:
    from primbench.report.publish import publish

    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: is a file; give a folder for the site")
    check_writable(out / "index.html")
    runs = runs_of(args.folder)
    refuse_overwriting_inputs([out], runs)
    print(f"site: {publish(runs, out)}")
    return EXIT_OK


def cmd_export(args) -> int:
    from primbench.compare.export import export
    from primbench.runfile.io import load_run

    run = load_run(newest_run_in(args.run))
    if args.output:
        check_writable(args.output)
        refuse_overwriting_inputs([args.output], [run.path])
    text = export(run, args.format)
    if args.output:
        write_atomically(args.output, text)
        print(f"{args.format}: {args.output} ({len(run.cases)} cases)")
    else:
        sys.stdout.write(text)
    return EXIT_OK
