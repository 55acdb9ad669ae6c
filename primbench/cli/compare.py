"""The commands that set runs side by side: `compare`, `check` (the CI gate), `baseline` (what check
compares with) and `ab` (two variants timed in turn on one GPU)."""

from __future__ import annotations

import os
from pathlib import Path

from primbench.errors import EXIT_OK, UserError
from primbench.outputs import (check_writable, refuse_one_file_twice, refuse_overwriting_inputs, refuse_standard_output,
                               write_atomically)
from primbench.pathnames import exists
from primbench.runfile.locations import baseline_path, newest_run_in, runs_in
from primbench.text_safety import printable


def cmd_compare(args) -> int:
    from primbench.compare import caveats, output, verdicts

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
        notes = list(filter(None, [caveats.time_order(base, new), caveats.machine_shift(base, new)]))
        output.print_terminal(pairs, run_label(base), run_label(new), metric=metric, everything=args.all, notes=notes)
        print()
        sections.append((new, pairs, metric))
    if args.html:
        from primbench.report.compare_page import render_comparison

        print(f"comparison: {render_comparison(base, sections, args.html)}")
    return EXIT_OK


def cmd_check(args) -> int:
    from primbench.compare import caveats, energy, output, verdicts
    from primbench.errors import EXIT_FAILED
    from primbench.resources import command_hint
    from primbench.runfile.io import load_run

    new = load_run(newest_run_in(args.run))
    base_path = _baseline_of(new, args.baseline)
    _check_outputs({"--markdown": args.markdown, "--junit": args.junit}, "check prints its table there",
                   [new.path, base_path])
    base = load_run(base_path)
    code, pairs = verdicts.check(base, new, allow_different_gpu=args.allow_different_gpu)
    strict = args.strict or bool((new.header.config.get("compare") or {}).get("require_baseline"))
    shown_path = min(str(new.path), os.path.relpath(new.path), key=len)
    renew = command_hint(f"make baseline RUN={shown_path}", f"primbench baseline {shown_path}")
    stale = caveats.stale_baseline(pairs, new, renew)
    notes = list(filter(None, [caveats.time_order(base, new), caveats.machine_shift(base, new), stale,
                               energy.not_gated_note(base, new, verdicts.Thresholds.from_header(new.header).energy_threshold)]))
    changed = verdicts.changed_variants(base, new)
    if changed:  # one line: each one's cases say "code changed" below
        names = ", ".join(changed)
        notes.insert(0, f"code changed since the baseline: {len(changed)} variant(s)"
                        + (f": {names}" if len(names) <= 60 else " (marked \"code changed\" below)"))
    if stale and strict:
        code = max(code, EXIT_FAILED)
    metric = verdicts.default_metric(base, new)
    regressed = [p.text for p in pairs if p.regressed]
    # An energy regression is named as such (compare/energy.py): the gate failed on energy, not time.
    energy_regressed = {p.text for p in pairs if p.energy is not None and p.energy.regressed}
    shown_regressions = min(len(regressed), 20)
    output.print_terminal(pairs, run_label(base), run_label(new), metric=metric, everything=args.all, notes=notes,
                          reserve=2 + shown_regressions + (len(regressed) > 20) + bool(stale and strict))
    skipped = verdicts.not_compared(pairs)
    below_floor = sum(p.verdict == verdicts.BELOW_FLOOR for p in pairs)
    energy_missing = sum(energy.missing(pairs).values())  # baseline energy the gate could not check
    print(f"\ncheck: {len(regressed)} regression(s)"
          + (f" ({len(energy_regressed)} of them ENERGY REGRESSION)" if energy_regressed else "")
          + ("; not timed against the baseline: " + ", ".join(f"{count} {verdict}" for verdict, count in skipped.items())
             if skipped else "") + (f"; under the noise floor: {below_floor} BELOW_FLOOR" if below_floor else "")
          + (f"; energy not checked: {energy_missing} ENERGY MISSING" if energy_missing else ""))
    for pair in [p for p in pairs if p.regressed][:20]:  # one a line, within the terminal's 120 columns
        print(_regression_line(pair, verdicts))
    if len(regressed) > 20:
        print(f"  ... and {len(regressed) - 20} more (above)")
    if stale and strict:
        why = "--strict" if args.strict else "the config's compare.require_baseline"
        print(f"check fails ({why}): {sum(caveats.missing_from_baseline(pairs).values())} cases have no baseline")
    if args.markdown:
        write_atomically(args.markdown, output.markdown(pairs, run_label(base), run_label(new), code, metric=metric,
                                                        notes=notes))
    if args.junit:
        elapsed_s = {record.key: record.elapsed_s for record in new.cases}  # each test case's time: the new run's
        write_atomically(args.junit, output.junit(pairs, run_label(base), run_label(new), elapsed_s=elapsed_s))
    return code


def _regression_line(pair, verdicts) -> str:
    """check's line for one failing case: its key (run-file text, cut to fit 120 columns) and, where
    energy failed it, which gates did: energy alone, or time and energy both."""
    energy_failed = pair.energy is not None and pair.energy.regressed
    also_time = energy_failed and pair.verdict in (verdicts.SLOWER, verdicts.FAILED) and not pair.exempt_reason
    why = f" ({pair.verdict} and ENERGY REGRESSION)" if also_time else " (ENERGY REGRESSION)" if energy_failed else ""
    return f"  regression: {printable(pair.text)[:106 - len(why)]}{why}"


def _baseline_of(new, given) -> Path:
    """The baseline `check` compares `new` with: the one given, else its GPU's under results/baselines/."""
    default = baseline_path(new.device.get("name"))
    if given is None and not exists(default):
        raise UserError(f"no baseline for {new.device.get('name')} at {default}; make one from a good run "
                        f"with `primbench baseline RUN` (make baseline), or give --baseline BASE.jsonl")
    return newest_run_in(given) if given else default


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
