"""The command line: parse arguments and dispatch. Bad input becomes one line and a non-zero exit."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from primbench.cli.parser import parser
from primbench.errors import UserError
from primbench.outputs import check_writable, refuse_overwriting_inputs, write_atomically
from primbench.runfile.io import gpu_slug
from primbench.runfile.locations import baseline_path, newest_run_in, runs_in, runs_of

EXIT_OK, EXIT_FAILED_CASES, EXIT_INTERRUPTED = 0, 1, 130


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        for plugin in getattr(args, "plugin", None) or ():
            from primbench import registry

            registry.load_plugin(plugin)
        return COMMANDS[args.command](args)
    except UserError as exc:
        print(f"primbench: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("primbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def cmd_run(args) -> int:
    from primbench.cli import gpus as cli_gpus
    from primbench.run import runner

    if cli_gpus.on_several_gpus(args):
        return cli_gpus.run_on_gpus(args, _run_config)
    if args.resume and (args.config or args.variant):
        raise UserError("give a config, --variant or --resume RUN.jsonl, not two of them")
    if args.resume and (args.dry_run or args.output or args.only or args.sizes or args.blocks or args.plugin):
        raise UserError("--resume continues the run file where it is, with the config and plugins in its header; "
                        "--dry-run, --output, --only, --sizes, --blocks and --plugin do not apply")
    if args.resume:
        summary = runner.resume(args.resume)
    else:
        config = _run_config(args)
        if args.dry_run:
            cases = config.cases()
            for case in cases:
                print(case.key)
            print(f"{config.path}: {len(cases)} cases in {len(config.sweeps)} sweeps")
            return EXIT_OK
        summary = runner.run(config, output=args.output)
    print(f"run file: {summary.path}")
    if summary.context_lost:
        _after_a_lost_context(summary, args)
    if summary.interrupted:
        print(f"primbench: interrupted; every finished case is kept. Finish with: primbench run --resume {summary.path}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.no_report:
        from primbench.report.render import render_report
        from primbench.runfile.io import report_path

        print(f"report:   {render_report(summary.path, report_path(summary.path))}")
    print(f"cases: {summary.ok} ok, {summary.failed} failed, {summary.skipped} skipped")
    return EXIT_FAILED_CASES if summary.failed else EXIT_OK


def _run_config(args):
    """The config `run` measures: a YAML file narrowed by the filters, or --variant's own."""
    from primbench.config import subset
    from primbench.config.loading import load_config

    sizes, blocks = subset.parse_sizes(args.sizes), subset.parse_sizes(args.blocks, "--blocks")
    if args.variant:
        if args.config:
            raise UserError("give either a config or --variant, not both (to narrow a config, use --only)")
        if args.only:
            raise UserError("--only narrows a config; with --variant, name the variants themselves")
        dtypes = tuple(d.strip() for d in args.dtypes.split(",")) if args.dtypes else None
        return _with_plugins(subset.variant_config(tuple(args.variant), sizes=sizes, blocks=blocks, dtypes=dtypes), args)
    if not args.config:
        raise UserError("no config given; e.g. `primbench run configs/default.yaml`, or `primbench run --variant "
                        "reduce/cub_device_reduce --sizes 2^28`")
    if args.dtypes:
        raise UserError("--dtypes goes with --variant; a config names its dtypes in its sweeps")
    config = _with_plugins(load_config(args.config, allow_large=args.allow_large), args)
    return subset.narrow(config, only=subset.parse_patterns(args.only), sizes=sizes, blocks=blocks)


def _with_plugins(config, args):
    """The config with the command line's plugins recorded in it, so that --resume loads them again."""
    paths = (*config.plugins, *(str(Path(plugin).resolve()) for plugin in args.plugin or ()))
    return dataclasses.replace(config, plugins=tuple(dict.fromkeys(paths)))


MAX_RESTARTS = 50  # each restart follows a newly failed case, so a run makes progress; this only bounds a runaway


def _after_a_lost_context(summary, args) -> None:
    """A kernel broke this process's CUDA context: its case is recorded as failed, and nothing more
    can run here. Go on with the remaining cases in a fresh process: this program again, with
    `run --resume` (exec replaces the process, so no broken context survives). Never returns."""
    restarts = int(os.environ.get("PRIMBENCH_RESTARTS", "0"))
    sys.stdout.flush()
    if args.no_restart or restarts >= MAX_RESTARTS:
        why = "the run stopped" if args.no_restart else f"the run stopped after {restarts} restarts"
        print(f"primbench: {summary.context_lost} broke the CUDA context (recorded as failed); {why}. "
              f"Run the remaining cases in a fresh process: primbench run --resume {summary.path}",
              file=sys.stderr, flush=True)
        # A broken context makes CuPy's teardown print a traceback per freed buffer; every record
        # is already on disk (fsynced line by line), so leave without tearing down.
        os._exit(EXIT_FAILED_CASES)
    print(f"primbench: {summary.context_lost} broke the CUDA context (recorded as failed); "
          "going on with the remaining cases in a fresh process", file=sys.stderr, flush=True)
    # bench.py from a checkout, else the installed package (`python -m primbench`)
    script = Path(sys.argv[0])
    program = [str(script)] if script.suffix == ".py" and script.name != "__main__.py" else ["-m", "primbench"]
    command = [sys.executable, *program, "run", "--resume", str(summary.path)] + (["--no-report"] if args.no_report else [])
    os.environ["PRIMBENCH_RESTARTS"] = str(restarts + 1)
    os.execv(sys.executable, command)


def cmd_report(args) -> int:
    from primbench.report.render import render_report
    from primbench.runfile.io import report_path

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


def cmd_compare(args) -> int:
    from primbench.compare import output as compare_output
    from primbench.compare import verdicts as compare

    arguments = [a for argument in args.runs for a in ([argument] if argument.startswith("ref:") else map(str, runs_in(argument)))]
    if len(arguments) < 2:
        raise UserError("compare needs at least two runs: the baseline first, then the runs to compare with it")
    check_writable(args.html)
    refuse_overwriting_inputs([args.html], arguments)
    runs = [compare.load_comparable(argument) for argument in arguments]
    base = runs[0]
    sections = []
    for new in runs[1:]:
        metric = args.metric or compare.default_metric(base, new)
        pairs = compare.compare_runs(base, new)
        compare_output.print_terminal(pairs, _label(base), _label(new), metric=metric, everything=args.all)
        print()
        sections.append((new, pairs, metric))
    if args.html:
        from primbench.report.compare_page import render_comparison

        print(f"comparison: {render_comparison(base, sections, args.html)}")
    return EXIT_OK


def cmd_check(args) -> int:
    from primbench.compare import output as compare_output
    from primbench.compare import verdicts as compare
    from primbench.runfile.io import load_run

    new = load_run(newest_run_in(args.run))
    default = baseline_path(new.device.get("name"))
    if args.baseline is None and not default.exists():
        raise UserError(f"no baseline for {new.device.get('name')} at {default}; make one from a good run "
                        f"with `primbench baseline RUN` (make baseline), or give --baseline BASE.jsonl")
    base_path = newest_run_in(args.baseline) if args.baseline else default
    for output in (args.markdown, args.junit):
        check_writable(output)
    refuse_overwriting_inputs([args.markdown, args.junit], [new.path, base_path])
    base = load_run(base_path)
    changed = compare.changed_variants(base, new)
    if changed:
        print(f"code changed since the baseline: {len(changed)} variant(s): " + ", ".join(changed))
    code, pairs = compare.check(base, new, allow_different_gpu=args.allow_different_gpu)
    metric = compare.default_metric(base, new)
    compare_output.print_terminal(pairs, _label(base), _label(new), metric=metric, everything=args.all)
    regressed = [p.text for p in pairs if p.regressed]
    skipped = compare.not_compared(pairs)
    print(f"\ncheck: {len(regressed)} regression(s)"
          + ("; not timed against the baseline: " + ", ".join(f"{count} {verdict}" for verdict, count in skipped.items())
             if skipped else ""))
    for key in regressed[:20]:  # one a line: a line stays within the terminal's 120 columns
        print(f"  regression: {key[:106]}")
    if len(regressed) > 20:
        print(f"  ... and {len(regressed) - 20} more (above)")
    if args.markdown:
        write_atomically(args.markdown, compare_output.markdown(pairs, _label(base), _label(new), code, metric=metric))
    if args.junit:
        write_atomically(args.junit, compare_output.junit(pairs, _label(base), _label(new)))
    return code


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


def cmd_baseline(args) -> int:
    import gzip

    from primbench.runfile.io import load_run

    run = load_run(newest_run_in(args.run))
    if not run.finished:
        raise UserError(f"{run.path}: the run was interrupted (no end record); finish it with --resume before making it a baseline")
    if not run.cases:
        raise UserError(f"{run.path}: the run has no cases; a baseline must be a finished run that measured something")
    unclean = [record.key for record in run.cases if not record.ok]
    if unclean:
        raise UserError(f"{run.path}: {len(unclean)} case(s) failed or were skipped (e.g. {unclean[0]}); a baseline must be a clean run")
    target = Path(args.folder) / f"{gpu_slug(run.device.get('name'))}.jsonl.gz"  # always written compressed
    if target.exists() and target.resolve() == run.path.resolve():
        raise UserError(f"{run.path}: is already the baseline of {run.device.get('name')}")
    data = run.path.read_bytes()
    # Kept compressed (about 7x smaller); mtime 0 so the same run always gives the same bytes.
    write_atomically(target, data if data[:2] == b"\x1f\x8b" else gzip.compress(data, mtime=0))
    what = "reference" if Path(args.folder).name == "reference" else "baseline"
    print(f"{what} for {run.device.get('name')}: {target} (from {run.path})")
    return EXIT_OK


def _label(run) -> str:
    device = run.device.get("name") or "unknown GPU"
    git = run.git.get("sha")
    return f"{run.path.name} ({device}, {git[:7] if git else 'no commit'}, {run.header.started or '?'})"


def cmd_info(args) -> int:
    from primbench.measuring.device import Device

    info = Device().info
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:<{width}}  {value}")
    return EXIT_OK


def cmd_list(args) -> int:
    from primbench import registry

    ops = [args.op] if args.op else registry.ops()
    for op in ops:
        if op not in registry.ops():
            raise UserError(f"unknown op {op!r}; valid ops: {', '.join(registry.ops())}")
        for v in registry.variants(op):
            blocks = ",".join(map(str, v.block_sizes)) if v.block_sizes else "library"
            flag = ("  [hazard]" if v.hazard else "") + (f"  [plugin {registry.plugin_of(v)}]" if registry.plugin_of(v) else "")
            params = "".join(f"  [{name}: {', '.join(map(str, values))}]" for name, values in v.params)
            print(f"{v.key:<48} blocks {blocks:<26} {v.origin}{params}{flag}")
    return EXIT_OK


def cmd_compile(args) -> int:
    from primbench import registry
    from primbench.build import KernelBuildError, compile_for_arch

    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # noqa: BLE001 (ImportError, or the library loader's own error types)
        raise UserError(f"cannot load NVRTC to compile ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); "
                        "install CuPy and NVRTC: pip install cupy-cuda13x 'nvidia-cuda-nvrtc==13.*' (or 12)") from None
    harness = {}
    for arch in args.arch:  # an unknown target fails every source alike: say so once
        try:
            harness[arch] = compile_for_arch(registry.HARNESS_SOURCE, registry.HARNESS_KERNELS, arch)
        except KernelBuildError as exc:
            detail = next((line for line in str(exc).splitlines()[1:] if line.strip()), "")[:160]
            raise UserError(f"--arch {arch[:40]}: NVRTC cannot compile for it ({detail}); give targets like sm_90 sm_80") from None
    plugin_sources = {v.source for v in registry.variants() if registry.plugin_of(v)}
    chosen = {source: names for source, names in registry.sources().items()
              if args.all or not plugin_sources or source in plugin_sources}
    failures = 0
    for source, names in chosen.items():
        for arch in args.arch:
            try:
                compiled = harness[arch] if source == registry.HARNESS_SOURCE else compile_for_arch(source, names, arch)
                warning = " (with warnings)" if compiled.log.strip() else ""
                print(f"{source} {arch}: {len(names)} kernels, {compiled.cubin_bytes} bytes of cubin{warning}")
            except KernelBuildError as exc:
                failures += 1
                print(str(exc), file=sys.stderr)
    return EXIT_FAILED_CASES if failures else EXIT_OK


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


def cmd_profile(args) -> int:
    from primbench.profile import capture as profile

    return profile.command(args)


def cmd_ab(args) -> int:
    from primbench.run import ab

    return ab.command(args)


def cmd_replicas(args) -> int:
    from primbench.cli.gpus import cmd_replicas as replicas

    return replicas(args)


COMMANDS = {"replicas": cmd_replicas, "ab": cmd_ab, "profile": cmd_profile, "export": cmd_export, "run": cmd_run, "report": cmd_report, "compare": cmd_compare, "check": cmd_check, "baseline": cmd_baseline, "publish": cmd_publish,
            "info": cmd_info,
            "list": cmd_list, "compile": cmd_compile}
