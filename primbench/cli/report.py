"""The commands that turn run files into pages to read: `report` (a page per run) and `publish` (a
static site). `export`, a run for other tools, is cli/export.py."""

from __future__ import annotations

from pathlib import Path

from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (STANDARD_OUTPUT, check_writable, goes_to_standard_output, refuse_overwriting_inputs,
                               refuse_standard_output, write_to_standard_output)
from primbench.pathnames import escaped, exists, is_dir, shown
from primbench.runfile.locations import runs_of


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
    from primbench.report.site.publish import publish

    refuse_standard_output("-o", args.output, "a site is a folder of pages")
    out = Path(args.output)
    if exists(out) and not is_dir(out):
        raise UserError(f"{shown(out)}: is a file; give a folder for the site")
    check_writable(out / "index.html", follow_links=False)  # publish replaces what is there, a link too
    unnamable: list[str] = []  # run files whose names no page can show: skipped, each named in a line
    runs = runs_of(args.folder, unnamable)
    refuse_overwriting_inputs([out], runs)
    from primbench import registry

    print(f"site: {publish(runs, out, unnamable, registry.plugins())}")
    return EXIT_OK
