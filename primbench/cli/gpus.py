"""`primbench run --gpus ...` on the command line: which runs go to one worker per GPU, and what
the user is told when they end (cli/run.py hands them here; primbench/run/gpu_runs.py runs them)."""

from __future__ import annotations

import sys

from primbench.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UserError


def on_several_gpus(args) -> bool:
    """Whether `run` goes to one worker per GPU (primbench/run/gpu_runs.py): --gpus other than 0, or the
    resumption of a run that did. Bad --gpus and --mode values are refused here, before any work."""
    from primbench.run import gpus
    from primbench.run.gpu_runs import started_on_several

    gpus.check_mode(args.gpus, args.mode)
    today = gpus.is_today(args.gpus)
    if args.resume and started_on_several(args.resume):
        return True
    if args.resume and not today:
        from primbench.runfile.io import load_run

        load_run(args.resume)  # a missing or damaged file is said so first
        raise UserError(f"{args.resume}: was run on one GPU; resume it without --gpus (it continues on GPU 0)")
    return not today


def run_on_gpus(args, run_config) -> int:
    """`run --gpus`: the workers, then the run files' reports and what the GPUs' summary says."""
    from primbench.run import gpu_runs

    if args.resume:
        if args.config or args.variant or args.dry_run or args.output or args.only or args.sizes or args.blocks \
                or args.mode:
            raise UserError("--resume continues the run file where it is, with the config and mode in its header; "
                            "only --gpus (the GPUs to finish it on), --no-report and the plugins' --plugin or "
                            "--trust-plugins-from-run apply")
        summary = gpu_runs.resume(args.resume, args.gpus)
    else:
        config = run_config(args)
        if args.dry_run:
            return _dry_run_on_gpus(config, args)
        summary = gpu_runs.run(config, args.gpus, args.mode or "shard", args.output)
    for path in summary.paths:
        print(f"run file: {path}")
    # Only the files with cases left: a replica that finished needs no --resume (it would refuse it).
    finish = "; ".join(f"primbench run --resume {path}" for path in summary.unfinished) or \
        "nothing to resume: every run file is complete (a GPU whose worker never started has no file; run it again)"
    if summary.interrupted:
        kept = f"every finished case is kept. Finish with: {finish}" if summary.paths else "no run file was started"
        print(f"primbench: interrupted; {kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"cases: {summary.ok} ok, {summary.failed} failed, {summary.skipped} skipped, {summary.not_run} not run")
    if summary.crashes:
        print(f"primbench: {'; '.join(summary.crashes)}; every other case is kept. Finish with: {finish}", file=sys.stderr)
        return EXIT_FAILED
    if not args.no_report:
        from primbench.report.render import render_report
        from primbench.runfile.io import report_path

        for path in summary.paths:
            print(f"report:   {render_report(path, report_path(path))}")
    if summary.mode == "replicate" and len(summary.paths) > 1:
        from primbench.compare import replicas

        replicas.print_summary(replicas.compare_replicas(summary.paths))
    return EXIT_FAILED if summary.failed else EXIT_OK


def _dry_run_on_gpus(config, args) -> int:
    """--dry-run --gpus: the cases, and in shard mode which GPU index would run how many."""
    from primbench.run import gpus

    cases = config.cases()
    for case in cases:
        print(case.key)
    indices = gpus.parse_selection(args.gpus)
    if (args.mode or "shard") == "shard" and indices is not None:
        shards = gpus.split(cases, len(indices))
        print("shard: " + ", ".join(f"GPU {index} runs {len(shard)}" for index, shard in zip(indices, shards)))
    print(f"{config.path}: {len(cases)} cases in {len(config.sweeps)} sweeps")
    return EXIT_OK


def cmd_replicas(args) -> int:
    """`primbench replicas RUN...`: exit 1 when a GPU is flagged, so that a fleet's CI can gate on it."""
    from primbench.compare import replicas
    from primbench.runfile.locations import runs_of

    if not 0 < args.threshold < 1:
        raise UserError(f"--threshold {args.threshold}: give a fraction between 0 and 1, e.g. 0.05 for 5 %")
    result = replicas.compare_replicas(runs_of(args.runs), threshold=args.threshold)
    replicas.print_summary(result)
    return EXIT_FAILED if replicas.flagged(result) else EXIT_OK
