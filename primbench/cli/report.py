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


# The options that belong to one format only: what each is, for the line that refuses it elsewhere.
_FORMAT_OPTIONS = {"repetitions": ("--repetitions", "gbench-json"), "long": ("--long", "csv"),
                   "jsonbin": ("--jsonbin", "nvbench-json")}


def _export_options(args) -> dict:
    """The format's own options, as export() takes them; an option of another format is refused."""
    given = {name: getattr(args, name) for name in _FORMAT_OPTIONS if getattr(args, name) not in (None, False)}
    for name in given:
        flag, fmt = _FORMAT_OPTIONS[name]
        if args.format != fmt:
            raise UserError(f"export: {flag} goes with --format {fmt} only, not {args.format}")
    if "jsonbin" in given:
        folder = Path(given["jsonbin"])
        existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            where = "is a file" if existing == folder else f"{existing} is a file"
            raise UserError(f"{folder}: {where}; give --jsonbin a folder for the sample files")
        if args.output:
            given["json_path"] = args.output  # the sample files are named relative to the JSON's folder
    return given


def cmd_export(args) -> int:
    from primbench.compare.export import export
    from primbench.runfile.io import load_run

    options = _export_options(args)
    run = load_run(newest_run_in(args.run))
    if args.output:
        check_writable(args.output)
    refuse_overwriting_inputs([args.output, options.get("jsonbin")], [run.path])
    text = export(run, args.format, **options)
    if args.output:
        write_atomically(args.output, text)
        print(f"{args.format}: {args.output} ({len(run.cases)} cases)")
    else:
        sys.stdout.write(text)
    return EXIT_OK
