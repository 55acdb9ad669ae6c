"""The commands that set runs side by side: `compare`, `baseline` (what check compares with; the gate
itself is cli/check.py) and `ab` (two variants timed in turn on one GPU)."""

from __future__ import annotations

from pathlib import Path

from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (check_writable, refuse_one_file_twice, refuse_overwriting_inputs, refuse_standard_output,
                               write_atomically)
from primbench.runfile.locations import newest_run_in, runs_in
from primbench.text_safety import printable


def cmd_compare(args) -> int:
    from primbench.compare import caveats, output, verdicts
    from primbench.runfile import protocol

    arguments = [a for argument in args.runs for a in ([argument] if argument.startswith("ref:") else map(str, runs_in(argument)))]
    if len(arguments) < 2:
        raise UserError("compare needs at least two runs: the baseline first, then the runs to compare with it")
    refuse_standard_output("--html", args.html, "compare prints its table there")
    check_writable(args.html)
    refuse_overwriting_inputs([args.html], arguments)
    runs = [verdicts.load_comparable(argument) for argument in arguments]
    base = runs[0]
    sections = []
    for new in runs[1:]:
        metric = args.metric or verdicts.default_metric(base, new)
        pairs = verdicts.compare_runs(base, new)
        notes = list(filter(None, [caveats.time_order(base, new), caveats.machine_shift(base, new),
                                   protocol.compare(base.header, new.header).line()]))
        output.print_terminal(pairs, run_label(base), run_label(new), metric=metric, everything=args.all, notes=notes)
        print()
        sections.append((new, pairs, metric))
    if args.html:
        from primbench.report.compare_page import render_comparison

        print(f"comparison: {render_comparison(base, sections, args.html)}")
    return EXIT_OK


def cmd_baseline(args) -> int:
    from primbench.runfile.baselines import keep_copy, kind_of
    from primbench.runfile.io import load_run

    run = load_run(newest_run_in(args.run))
    target = keep_copy(run, args.folder)
    # The GPU's name is run-file text: shown printable.
    print(printable(f"{kind_of(args.folder)} for {run.device.get('name')}: {target} (from {run.path})"))
    return EXIT_OK


def cmd_ab(args) -> int:
    """One line per size, and the chart if asked; exit 0 (the verdict is printed, not a failure:
    `check` is the gate)."""
    from primbench.config import subset
    from primbench.run import ab

    ab.check_request(args.a, args.b, base=args.base, rounds=args.rounds, threshold=args.threshold)  # before the filters
    _check_outputs({"--chart": args.chart, "--json": args.json}, "ab prints its verdicts there", [])
    label_a, results = ab.ab_variants(args.a, args.b, base=args.base, sizes=subset.parse_sizes(args.sizes),
                                      blocks=subset.parse_sizes(args.blocks, "--blocks"), dtypes=subset.parse_dtypes(args.dtypes),
                                      rounds=args.rounds, threshold=args.threshold)
    label_b = args.b or args.a
    print(f"A = {label_a}, B = {label_b}; {args.rounds} paired rounds (A, B and an A/A slice each, cold, in a random "
          f"order, over 8 separately prepared plans a side), threshold {args.threshold:.1%}")
    for result in results:
        print(result.line())
    if args.chart:
        import io

        buffer = io.BytesIO()
        ab.chart(results, buffer, label_a, label_b)
        write_atomically(args.chart, buffer.getvalue())
        print(f"chart: {args.chart}")
    if args.json:
        import json

        write_atomically(args.json, json.dumps({"a": label_a, "b": label_b, "threshold": args.threshold,
                                                "results": [result.to_dict() for result in results]}) + "\n")
        print(f"samples: {args.json}")
    return EXIT_OK


def _check_outputs(named: dict, stdout_holds: str, inputs) -> None:
    """Before any work: each output a file that can be written (standard output holds the command's
    own lines), none an input, no two the same file."""
    for flag, path in named.items():
        refuse_standard_output(flag, path, stdout_holds)
        check_writable(path)
    refuse_one_file_twice(named)
    refuse_overwriting_inputs(list(named.values()), inputs)


def run_label(run) -> str:
    """'<file> (<GPU>, <commit>, <start>)': how a run is named in compare's and check's lines."""
    device = run.device.get("name") or "unknown GPU"
    git = run.git.get("sha")
    return f"{Path(run.path).name} ({device}, {git[:7] if git else 'no commit'}, {run.header.started or '?'})"
