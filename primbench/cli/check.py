"""`primbench check`, the CI gate: the new run against its GPU's baseline, judged by the one verdict
engine (compare/verdicts.py); with `--confirm`, each SLOWER or FASTER suspect timed again on this
GPU against the baseline's own code (run/confirm.py) before the gate fails. Exit 0 when nothing
regressed, 1 on a regression, 2 on unusable input."""

from __future__ import annotations

import os
from pathlib import Path

from primbench import progress
from primbench.cli.check_light import check_light_alone
from primbench.cli.compare import _check_outputs, run_label
from primbench.compare import light_floor
from primbench.errors import EXIT_FAILED, UserError
from primbench.outputs import write_atomically
from primbench.pathnames import exists
from primbench.runfile.locations import baseline_path, newest_run_in
from primbench.text_safety import printable

SHOWN_REGRESSIONS = 20  # one line each under the summary; the table above names every one


def cmd_check(args) -> int:
    from primbench.compare import verdicts
    from primbench.runfile.frame import to_frame
    from primbench.runfile.io import load_run

    limit, seconds = _confirm_bounds(args)
    new = load_run(newest_run_in(args.run))
    floor = light_floor.floor_from(getattr(args, "min_light", None), getattr(args, "min_light_from", None),
                                   new.header.config.get("compare"))
    if floor is not None and args.baseline is None and not exists(baseline_path(new.device.get("name"))):
        progress.warn_of(new)  # judged as it is, unfinished too: say so
        return check_light_alone(args, new, floor)  # a floor travels: no baseline of this GPU needed
    base_path = _baseline_of(new, args.baseline)
    _check_outputs({"--markdown": args.markdown, "--junit": args.junit,
                    "--markdown-summary": getattr(args, "markdown_summary", None)},
                   "check prints its table there", [new.path, base_path])
    base = load_run(base_path)
    progress.warn_of(new, unfinished=False)  # an unfinished new run is refused below, in its own line
    progress.warn_of(base)
    code, pairs = verdicts.check(base, new, allow_different_gpu=args.allow_different_gpu)
    notes, failing_notes = _notes(base, new, pairs, strict=args.strict or bool(
        (new.header.config.get("compare") or {}).get("require_baseline")), given_strict=args.strict)
    if getattr(args, "confirm", False):
        from primbench.compare.confirmation import confirm_suspects
        from primbench.run.confirm import retime_in_child, why_not_here

        notes.append(confirm_suspects(pairs, base, new, retime_in_child, limit=limit, seconds_each=seconds,
                                      cannot=why_not_here()).line())
    if floor is not None:
        floor_cases = light_floor.judge(to_frame(new), floor)
        notes.append(light_floor.summary(floor_cases, floor))
        failing_notes.extend(light_floor.lines(floor_cases, floor, everything=args.all))
    code = EXIT_FAILED if any(p.regressed for p in pairs) or failing_notes else 0
    _print(base, new, pairs, notes, failing_notes, everything=args.all)
    _write_outputs(args, base, new, pairs, code, notes)
    return code


def _confirm_bounds(args) -> tuple[int, float]:
    """--confirm's bounds, refused in one line when out of range or given without --confirm."""
    from primbench.compare.confirmation import DEFAULT_LIMIT, DEFAULT_SECONDS

    limit, seconds = getattr(args, "confirm_limit", None), getattr(args, "confirm_seconds", None)
    if (limit is not None or seconds is not None) and not getattr(args, "confirm", False):
        raise UserError("--confirm-limit and --confirm-seconds bound --confirm; give --confirm too, or neither")
    if limit is not None and not 1 <= limit <= 10_000:
        raise UserError(f"--confirm-limit {limit}: give 1 to 10000 suspects")
    if seconds is not None and not 1 <= seconds <= 3600:  # False for NaN
        raise UserError(f"--confirm-seconds {seconds:g}: give 1 to 3600 seconds a suspect")
    return (DEFAULT_LIMIT if limit is None else limit), (DEFAULT_SECONDS if seconds is None else seconds)


def _short_path(path) -> str:
    """The run's path as the renew hint shows it: relative to the working folder where that is
    shorter. A working folder that was deleted gives no relative path, and needs none."""
    try:
        return min(str(path), os.path.relpath(path), key=len)
    except FileNotFoundError:
        return str(path)


def _notes(base, new, pairs, *, strict: bool, given_strict: bool) -> tuple[list[str], list[str]]:
    """(the warnings printed above the table, the lines that fail the gate under --strict): runs in
    the wrong order, another board, another protocol, a stale baseline, energy not gated, changed code
    (and source edits that left the machine code alone: compare/code_change.py)."""
    from primbench.compare import caveats, energy, verdicts
    from primbench.compare.code_change import CodeChanges
    from primbench.resources import command_hint
    from primbench.runfile import protocol

    shown_path = _short_path(new.path)
    renew = command_hint(f"make baseline RUN={shown_path}", f"primbench baseline {shown_path}")
    stale = caveats.stale_baseline(pairs, new, renew)
    difference = protocol.compare(base.header, new.header)
    protocol_line = difference.line(renew)
    notes = list(filter(None, [caveats.time_order(base, new), caveats.machine_shift(base, new), protocol_line, stale,
                               energy.not_gated_note(base, new, verdicts.Thresholds.from_header(new.header).energy_threshold)]))
    code_changes = CodeChanges(base.header, new.header)
    notes[:0] = code_changes.notes()  # a source edit alone, a compiler's change alone, the source rule
    changed = code_changes.changed()
    if changed:  # one line: each one's cases say "code changed" below
        names = ", ".join(changed)
        notes.insert(0, f"code changed since the baseline: {len(changed)} variant(s)"
                        + (f": {names}" if len(names) <= 60 else " (marked \"code changed\" below)"))
    why = "--strict" if given_strict else "the config's compare.require_baseline"
    failing = []
    if stale and strict:
        failing.append(f"check fails ({why}): {sum(caveats.missing_from_baseline(pairs).values())} cases have no baseline")
    if difference.moves_figures and strict:  # a change of the probes alone moves no timed figure
        failing.append(f"check fails ({why}): the baseline was measured by another protocol; renew it")
    return notes, failing


def _print(base, new, pairs, notes, failing_notes, *, everything: bool) -> None:
    """The table (compare/output.py), then one summary line, each regression on a line of its own
    and the lines that fail a --strict gate."""
    from primbench.compare import energy, output, verdicts

    regressed = [p for p in pairs if p.regressed]
    shown = min(len(regressed), SHOWN_REGRESSIONS)
    hints = {id(pair): hint for pair in regressed[:SHOWN_REGRESSIONS] if (hint := _bisect_hint(pair, base, new, verdicts))}
    output.print_terminal(pairs, run_label(base), run_label(new), metric=verdicts.default_metric(base, new),
                          everything=everything, notes=notes, rule=_rule(new),
                          reserve=2 + shown + len(hints) + (len(regressed) > SHOWN_REGRESSIONS) + len(failing_notes))
    skipped = verdicts.not_compared(pairs)
    below_floor = sum(p.verdict == verdicts.BELOW_FLOOR for p in pairs)
    protocol_marked = sum(p.suspect and bool(p.protocol_changed) for p in pairs)
    dismissed = sum(p.confirmation == verdicts.NOT_REPRODUCED for p in pairs)
    # An energy regression is named as such (compare/energy.py): the gate failed on energy, not time.
    energy_regressed = sum(p.energy is not None and p.energy.regressed for p in pairs)
    energy_missing = sum(energy.missing(pairs).values())  # baseline energy the gate could not check
    print(f"\ncheck: {len(regressed)} regression(s)"
          + (f" ({energy_regressed} of them ENERGY REGRESSION)" if energy_regressed else "")
          + (f"; {dismissed} suspect(s) not reproduced on this GPU" if dismissed else "")
          + (f"; {protocol_marked} SLOWER or FASTER not gated (protocol changed)" if protocol_marked else "")
          + ("; not timed against the baseline: " + ", ".join(f"{count} {verdict}" for verdict, count in skipped.items())
             if skipped else "") + (f"; under the noise floor: {below_floor} BELOW_FLOOR" if below_floor else "")
          + (f"; energy not checked: {energy_missing} ENERGY MISSING" if energy_missing else ""))
    for pair in regressed[:SHOWN_REGRESSIONS]:  # one a line, within the terminal's 120 columns
        print(_regression_line(pair, verdicts))
        if id(pair) in hints:  # a command is not cut to fit: it would no longer run
            print(f"    find the commit: {hints[id(pair)]}")
    if len(regressed) > SHOWN_REGRESSIONS:
        print(f"  ... and {len(regressed) - SHOWN_REGRESSIONS} more (above)")
    for line in failing_notes:
        print(line)


def _write_outputs(args, base, new, pairs, code: int, notes) -> None:
    from primbench.compare import output, verdicts

    metric = verdicts.default_metric(base, new)
    if args.markdown:
        write_atomically(args.markdown, output.markdown(pairs, run_label(base), run_label(new), code, metric=metric,
                                                        notes=notes, rule=_rule(new)))
    if getattr(args, "markdown_summary", None):
        write_atomically(args.markdown_summary, output.markdown_summary(
            pairs, run_label(base), run_label(new), code, metric=metric, notes=notes, full_table=args.markdown,
            rule=_rule(new)))
    if args.junit:
        elapsed_s = {record.key: record.elapsed_s for record in new.cases}  # each test case's time: the new run's
        write_atomically(args.junit, output.junit(pairs, run_label(base), run_label(new), elapsed_s=elapsed_s,
                                                  rule=_rule(new)))


def _rule(new) -> str:
    """The verdict rule in one line, with the defaults the new run's config sets (compare/rule.py)."""
    from primbench.compare.rule import Thresholds, rule_words

    return rule_words(Thresholds.from_header(new.header))


def _regression_line(pair, verdicts) -> str:
    """check's line for one failing case: its key (run-file text, cut to fit 120 columns) and, where
    energy failed it, which gates did: energy alone, or time and energy both; and what --confirm found."""
    energy_failed = pair.energy is not None and pair.energy.regressed
    also_time = energy_failed and pair.time_regressed
    why = f" ({pair.verdict} and ENERGY REGRESSION)" if also_time else " (ENERGY REGRESSION)" if energy_failed else ""
    if pair.confirmation and not energy_failed:
        why = f" ({pair.confirmation})"
    return f"  regression: {printable(pair.text)[:106 - len(why)]}{why}"


def _bisect_hint(pair, base, new, verdicts) -> str | None:
    """For a SLOWER that --confirm confirmed on this GPU: the `primbench bisect` command that finds
    the commit between the baseline's and the new run's that made it (None where either run names
    no commit). The case's own distribution and parameters are not options of bisect: it times the
    op's first distribution and the variant's first parameters (the same case for most variants)."""
    from primbench import registry
    from primbench.run.bisect import command_line

    good, bad = base.git.get("sha"), new.git.get("sha")
    if pair.confirmation != verdicts.CONFIRMED or pair.verdict != verdicts.SLOWER or not good or not bad or good == bad:
        return None
    return command_line(good[:12], bad[:12], f"{pair.case.op}/{pair.case.variant}", pair.case, registry.plugins())


def _baseline_of(new, given) -> Path:
    """The baseline `check` compares `new` with: the one given, else its GPU's under results/baselines/."""
    default = baseline_path(new.device.get("name"))
    if given is None and not exists(default):
        raise UserError(f"no baseline for {new.header.device_name} at {default}; make one from a good run "
                        f"with `primbench baseline RUN` (make baseline), or give --baseline BASE.jsonl")
    return newest_run_in(given) if given else default
