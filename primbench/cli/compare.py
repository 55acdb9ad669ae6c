"""The commands that set runs side by side: `compare`, `baseline` (what check compares with; the gate
itself is cli/check.py), `ab` (two variants timed in turn on one GPU) and `bisect` (the commit that
made a variant slower, an A/B a step)."""

from __future__ import annotations

from pathlib import Path

from primbench import progress
from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (check_writable, refuse_one_file_twice, refuse_overwriting_inputs, refuse_standard_output,
                               write_atomically)
from primbench.runfile.locations import newest_run_in, runs_in
from primbench.text_safety import printable


def cmd_compare(args) -> int:
    from primbench.compare import caveats, output, verdicts
    from primbench.compare.code_change import CodeChanges
    from primbench.compare.library_lines import library_lines
    from primbench.compare.rule import Thresholds, rule_words
    from primbench.runfile import protocol

    arguments = [a for argument in args.runs for a in ([argument] if argument.startswith("ref:") else map(str, runs_in(argument)))]
    if len(arguments) < 2:
        raise UserError("compare needs at least two runs: the baseline first, then the runs to compare with it")
    refuse_standard_output("--html", args.html, "compare prints its table there")
    check_writable(args.html)
    refuse_overwriting_inputs([args.html], arguments)
    runs = [verdicts.load_comparable(argument) for argument in arguments]
    for run in runs:
        if not verdicts.is_published(run):  # a published progression has no end record to lack
            progress.warn_of(run)
    base = runs[0]
    sections = []
    for new in runs[1:]:
        metric = args.metric or verdicts.default_metric(base, new)
        pairs = verdicts.compare_runs(base, new)
        notes = list(filter(None, [caveats.time_order(base, new), caveats.machine_shift(base, new),
                                   protocol.compare(base.header, new.header).line(),
                                   *CodeChanges(base.header, new.header).notes()]))
        rule = rule_words(Thresholds.from_header(new.header)) if not verdicts.is_published(new) else None
        output.print_terminal(pairs, run_label(base), run_label(new), metric=metric, everything=args.all, notes=notes,
                              rule=rule, libraries=library_lines(new))
        print()
        sections.append((new, pairs, metric))
    if args.html:
        from primbench.report.compare_page import render_comparison

        print(f"comparison: {render_comparison(base, sections, args.html)}")
    return EXIT_OK


def cmd_baseline(args) -> int:
    """One run kept as its GPU's baseline (or reference); several runs of one config made one baseline
    that knows each case's spread across them."""
    from primbench.runfile.baselines import keep_copy, keep_merged, kind_of, skipped_words
    from primbench.runfile.io import load_run

    runs = [load_run(newest_run_in(argument)) for argument in args.run]
    target = keep_copy(runs[0], args.folder) if len(runs) == 1 else keep_merged(runs, args.folder)
    # The GPU's name is run-file text: shown printable.
    sources = str(runs[0].path) if len(runs) == 1 else f"{len(runs)} runs: " + ", ".join(str(run.path) for run in runs)
    print(printable(f"{kind_of(args.folder)} for {runs[0].header.device_name}: {target} (from {sources})"))
    skipped = skipped_words(runs[-1])
    if skipped:
        print(printable(skipped))
    if len(runs) > 1:
        print(spread_summary(load_run(target)))
    return EXIT_OK


def spread_summary(baseline) -> str:
    """'spread across the 3 runs: median 0.8 %, p95 3.1 %, widest 6.2 % (case); each case's threshold is at least
    2 x its spread', of the figure each case would be judged on."""
    import numpy as np

    from primbench.compare.rule import Thresholds, run_spread

    thresholds = Thresholds.from_header(baseline.header)
    spreads = sorted((run_spread(record, thresholds.lone_figure(record)), record.key) for record in baseline.cases if record.ok)
    values = np.array([spread for spread, _ in spreads])
    widest, case = spreads[-1]
    multiple = baseline.header.baseline.get("spread_multiple")
    return (f"spread across the {len(baseline.header.baseline.get('runs') or [])} runs: median {np.median(values):.1%}, "
            f"p95 {np.percentile(values, 95):.1%}, widest {widest:.1%} ({printable(case)[:80]}); each case's "
            f"threshold is at least {multiple:g} x its spread")


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


def cmd_bisect(args) -> int:
    """Each step as it is timed, then the outcome in one line; exit 0 whatever it found (the outcome
    is printed, not a failure), 2 on a request that cannot be bisected."""
    import json

    from primbench import registry
    from primbench.config import subset
    from primbench.run import bisect

    _check_outputs({"--json": args.json}, "bisect prints its steps there", [])
    request = bisect.prepare(args.good, args.bad, args.variant, sizes=subset.parse_sizes(args.sizes),
                             blocks=subset.parse_sizes(args.blocks, "--blocks"), dtypes=subset.parse_dtypes(args.dtypes),
                             rounds=args.rounds, threshold=args.threshold, max_steps=args.max_steps)
    time_pair = bisect.step_timer(request)
    print(request.header(), flush=True)
    steps, outcome = bisect.search(request, time_pair, lambda step: print(step.line(request.history), flush=True))
    print(outcome.line)
    if outcome.detail:
        print(f"  {outcome.detail}")
    if command := bisect.next_command(request, outcome, registry.plugins()):
        print(f"to go on: {command}")
    if args.json:
        write_atomically(args.json, json.dumps(bisect.to_json(request, steps, outcome)) + "\n")
        print(f"steps: {args.json}")
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
