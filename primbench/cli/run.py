"""`primbench run`: a config narrowed by the filters, `--variant` with no config, or `--resume`; on
one GPU here, on several through cli/gpus.py."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

from primbench.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UserError


def cmd_run(args) -> int:
    from primbench.cli import gpus
    from primbench.run import runner

    if args.trust_plugins_from_run and not args.resume:
        raise UserError("--trust-plugins-from-run goes with --resume RUN.jsonl: it confirms the plugins that run file names")
    if args.resume:  # before anything reads the header's config, which imports its plugins
        check_resumed_plugins(args.resume, args.plugin, trusted=args.trust_plugins_from_run)
    if gpus.on_several_gpus(args):
        return gpus.run_on_gpus(args, run_config)
    if args.resume and (args.config or args.variant):
        raise UserError("give a config, --variant or --resume RUN.jsonl, not two of them")
    if args.resume and (args.dry_run or args.output or args.only or args.sizes or args.blocks or args.energy):
        raise UserError("--resume continues the run file where it is, with the config in its header; "
                        "--dry-run, --output, --only, --sizes, --blocks and --energy do not apply")
    def on_hang(path, key, limit_s):  # a case past timing: case_limit_s, recorded as failed (measuring/case_limit.py)
        from primbench.measuring.case_limit import hung
        from primbench.run.restart import go_on_in_a_fresh_process

        go_on_in_a_fresh_process(path, key, no_restart=args.no_restart, no_report=args.no_report, what=hung(limit_s))

    if args.resume:
        summary = runner.resume(args.resume, on_hang=on_hang)
    else:
        config = run_config(args)
        if args.dry_run:
            return _dry_run(config)
        summary = runner.run(config, output=args.output, on_hang=on_hang)
    print(f"run file: {summary.path}")
    if summary.context_lost:
        from primbench.run.restart import go_on_in_a_fresh_process

        go_on_in_a_fresh_process(summary.path, summary.context_lost, no_restart=args.no_restart, no_report=args.no_report)
    if summary.interrupted:
        from primbench.run.restart import resume_arguments

        print(f"primbench: interrupted; every finished case is kept. Finish with: primbench "
              f"{' '.join(map(shlex.quote, resume_arguments(summary.path)))}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.no_report:
        from primbench.report.render import render_report
        from primbench.runfile.io import report_path

        print(f"report:   {render_report(summary.path, report_path(summary.path))}")
    print(f"cases: {summary.ok} ok, {summary.failed} failed, {summary.skipped} skipped")
    return EXIT_FAILED if summary.failed else EXIT_OK


def _dry_run(config) -> int:
    """Every case key, one a line (scripts read them), printed as the cases are made: a sweep of
    10^8 cases starts at once and holds one case in memory, and a reader that has had enough (`|
    head`) stops it. Then the count."""
    count = energy = 0
    for case in config.iter_cases():
        print(case.key)
        count += 1
        energy += config.energy_for(case)
    print(f"{config.path}: {count} cases in {len(config.sweeps)} sweeps"
          + (f"; energy for {energy} of them (about 2 s each)" if energy else ""))
    return EXIT_OK


def check_resumed_plugins(run_path, named, *, trusted: bool) -> None:
    """The plugins a run to resume names in its header: confirmed by the user (--plugin each, or
    --trust-plugins-from-run), else one line and exit 2; read from the header alone, importing nothing."""
    from primbench import registry
    from primbench.runfile.io import load_run

    header = load_run(run_path).header
    registry.check_run_plugins(run_path, header.config.get("plugins"), named or (), trusted=trusted)


def run_config(args):
    """The config `run` measures: a YAML file narrowed by the filters, or --variant's own."""
    from primbench.config import subset
    from primbench.config.loading import load_config

    sizes, blocks = subset.parse_sizes(args.sizes), subset.parse_sizes(args.blocks, "--blocks")
    if args.variant:
        if args.config:
            raise UserError("give either a config or --variant, not both (to narrow a config, use --only)")
        if args.only:
            raise UserError("--only narrows a config; with --variant, name the variants themselves")
        dtypes = subset.parse_dtypes(args.dtypes)
        config = subset.variant_config(tuple(args.variant), sizes=sizes, blocks=blocks, dtypes=dtypes)
        return _with_energy(_with_plugins(config, args.plugin), args.energy)
    if not args.config:
        raise UserError("no config given; e.g. `primbench run configs/default.yaml`, or `primbench run --variant "
                        "reduce/cub_device_reduce --sizes 2^28`")
    if args.dtypes:
        raise UserError("--dtypes goes with --variant; a config names its dtypes in its sweeps")
    config = _with_plugins(load_config(args.config, allow_large=args.allow_large), args.plugin)
    return _with_energy(subset.narrow(config, only=subset.parse_patterns(args.only), sizes=sizes, blocks=blocks), args.energy)


def _with_energy(config, energy: bool):
    """The config with `--energy`: energy for every case, the config's own energy settings kept."""
    from primbench.measuring.energy_policy import EnergyPolicy

    if not energy:
        return config
    return dataclasses.replace(config, energy=dataclasses.replace(config.energy or EnergyPolicy(), cases=("*",)))


def _with_plugins(config, plugins):
    """The config with the command line's plugins recorded in it, so that --resume loads them again."""
    paths = (*config.plugins, *(str(Path(plugin).resolve()) for plugin in plugins or ()))
    return dataclasses.replace(config, plugins=tuple(dict.fromkeys(paths)))
