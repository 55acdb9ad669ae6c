"""The commands that turn run files into something to read: `report` (a page per run), `publish` (a
static site) and `export` (CSV, Google Benchmark, NVBench and github-action-benchmark JSON)."""

from __future__ import annotations

import contextlib

import os
import re
import sys
from pathlib import Path

from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (STANDARD_OUTPUT, check_writable, goes_to_standard_output, refuse_overwriting_inputs,
                               refuse_standard_output, write_atomically, write_to_standard_output)
from primbench.pathnames import escaped, exists, is_dir, shown
from primbench.runfile.locations import newest_run_in, runs_of


def cmd_report(args) -> int:
    from primbench.report.render import render_report
    from primbench.runfile.io import report_path

    from primbench.resources import REFERENCE_RUN

    if args.reference == bool(args.run):
        raise UserError("report: give run files, folders or globs, or --reference for the bundled reference run")
    if args.reference:  # the package's own copy may sit in a read-only site-packages: the page goes here
        out = Path(args.output) if args.output else Path(report_path(REFERENCE_RUN).name)
        if args.output == STANDARD_OUTPUT:
            return _report_to_standard_output(REFERENCE_RUN)
        if is_dir(out):
            raise UserError(f"{shown(out)}: is a folder; give the HTML file to write, e.g. -o {shown(out / report_path(REFERENCE_RUN).name)}")
        refuse_overwriting_inputs([out], [REFERENCE_RUN])
        check_writable(out)
        _say_written(render_report(REFERENCE_RUN, out))
        return EXIT_OK
    runs = runs_of(args.run)
    if args.output and len(runs) > 1:
        raise UserError(f"-o names one file, but {len(runs)} runs were given; leave -o out to write each report beside its run")
    if args.output == STANDARD_OUTPUT:
        return _report_to_standard_output(runs[0])
    pages = [(run_path, Path(args.output) if args.output else report_path(run_path)) for run_path in runs]
    for run_path, out in pages:  # every page's path checked before the first is drawn
        refuse_overwriting_inputs([out], runs)
        if is_dir(out):
            raise UserError(f"{shown(out)}: is a folder; give the HTML file to write, e.g. -o {shown(out / report_path(run_path).name)}")
        check_writable(out)
    for run_path, out in pages:
        _say_written(render_report(run_path, out))
    return EXIT_OK


def _say_written(path) -> None:
    """The page's path on stdout, for scripts; not where the page itself went to stdout."""
    if not goes_to_standard_output(path):
        print(escaped(path))


def _report_to_standard_output(run_path) -> int:
    """`report RUN -o -`: the page on standard output, for a pipe (no progress line: stderr stays quiet)."""
    from primbench.report.context import build_context
    from primbench.report.render import REPORT_TEMPLATE, render_page, story_published
    from primbench.runfile.io import load_run

    run = load_run(run_path)
    write_to_standard_output(render_page(REPORT_TEMPLATE, index_href=None, **build_context(run, story_published())))
    return EXIT_OK


def cmd_publish(args) -> int:
    from primbench.report.publish import publish

    refuse_standard_output("-o", args.output, "a site is a folder of pages")
    out = Path(args.output)
    if exists(out) and not is_dir(out):
        raise UserError(f"{shown(out)}: is a file; give a folder for the site")
    check_writable(out / "index.html", follow_links=False)  # publish replaces what is there, a link too
    unnamable: list[str] = []  # run files whose names no page can show: skipped, each named in a line
    runs = runs_of(args.folder, unnamable)
    refuse_overwriting_inputs([out], runs)
    print(f"site: {publish(runs, out, unnamable)}")
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
        refuse_standard_output("--jsonbin", given["jsonbin"], "the sample files go into a folder")
        existing = next((p for p in (folder, *folder.parents) if exists(p)), None)
        if existing is not None and not is_dir(existing):
            where = "is a file" if existing == folder else f"{shown(existing)} is a file"
            raise UserError(f"{shown(folder)}: {where}; give --jsonbin a folder for the sample files")
        if args.output and args.output != STANDARD_OUTPUT:
            _refuse_json_among_samples(args.output, folder)
            given["json_path"] = args.output  # the sample files are named relative to the JSON's folder
    return given


SAMPLE_FILE = re.compile(r"\d+\.bin")  # how export/nvbench_json.py names each state's sample file


def _refuse_json_among_samples(json_path, folder: Path) -> None:
    """One line before any sample file is written, where the JSON would be the samples' folder
    itself or one of the sample files: written last, it would fail, or replace a sample."""
    json_real, folder_real = os.path.realpath(json_path), os.path.realpath(folder)
    if json_real == folder_real:
        raise UserError(f"-o {shown(json_path)} and --jsonbin {shown(folder)} are one path: the JSON is a file and "
                        "the samples go into a folder; give each its own")
    if os.path.dirname(json_real) == folder_real and SAMPLE_FILE.fullmatch(os.path.basename(json_real)):
        raise UserError(f"-o {shown(json_path)}: is the name of a sample file in --jsonbin {shown(folder)}; "
                        f"name the JSON otherwise, e.g. -o {shown(folder / 'results.json')}")


@contextlib.contextmanager
def _sample_files_removed_on_failure(folder):
    """--jsonbin: where the export fails before its JSON is written (a full disk, an interruption),
    the sample files it wrote are removed, and the folder if it made it: no half an export is left.
    Files that were there before are left alone."""
    if folder is None:
        yield
        return
    folder = Path(folder)
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


def _common_with(argument):
    """The run --common-with names; what is wrong with it says which option it came from."""
    from primbench.runfile.io import load_run

    try:
        return load_run(newest_run_in(argument))
    except UserError as exc:
        raise UserError(f"export --common-with: {exc}") from None


def cmd_export(args) -> int:
    from primbench.export.case_selection import select
    from primbench.export.formats import export, notice
    from primbench.runfile.io import load_run

    options = _export_options(args)
    run = load_run(newest_run_in(args.run))
    base = _common_with(args.common_with) if args.common_with else None
    to_file = args.output not in (None, STANDARD_OUTPUT)
    if to_file:
        check_writable(args.output)
    refuse_overwriting_inputs([args.output, options.get("jsonbin")], [run.path] + ([base.path] if base else []))
    every_case = len(run.cases)
    run = select(run, globs=args.cases, base=base)
    with _sample_files_removed_on_failure(options.get("jsonbin")):
        text = export(run, args.format, **options)
        if to_file:
            write_atomically(args.output, text)
    if to_file:
        if not goes_to_standard_output(args.output):
            of = f" of {every_case}" if len(run.cases) < every_case else ""
            print(f"{args.format}: {escaped(args.output)} ({len(run.cases)}{of} cases)")
    else:
        write_to_standard_output(text)
    left_out = notice(run, args.format)
    if left_out:
        print(left_out, file=sys.stderr)
    return EXIT_OK
