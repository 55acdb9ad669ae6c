"""The command line's grammar: every command, its arguments and their help (cli/main.py dispatches)."""

from __future__ import annotations

import argparse

from primbench.config.numbers import whole_number
from primbench.runfile.locations import BASELINE_DIR, REFERENCE_DIR


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line (what is wrong, and where the usage is) and exit 2, not argparse's
    usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message[:300]}; see `{self.prog} --help`\n")


def parser() -> argparse.ArgumentParser:
    from primbench.version import __version__

    parser = _OneLineParser(prog="primbench", description="primbench: verified, properly timed GPU primitives.")
    parser.add_argument("--version", action="version", version=f"primbench {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_OneLineParser)
    plugin = argparse.ArgumentParser(add_help=False)
    plugin.add_argument("--plugin", action="append", metavar="FILE.py", help="a Python file that registers your own "
                        "variants or op (docs/extending.md); repeatable")

    _add_run(commands, plugin)
    _add_readers(commands, plugin)
    _add_gates_and_tools(commands, plugin)
    _add_ab(commands, plugin)
    _add_bisect(commands, plugin)
    _add_profile(commands, plugin)
    _add_export(commands)
    return parser


class _ExportHelp(argparse.HelpFormatter):
    """The description wrapped as usual; the epilog's table of formats kept as written."""

    def _fill_text(self, text, width, indent):
        if text.startswith("formats:"):
            return text
        return super()._fill_text(text, width, indent)


def _whole_number(text: str) -> int:
    """A count option: ASCII digits only, at most 30 of them (config/numbers.py says why), read
    before int(); argparse turns the error into one line, exit 2. Its range is the command's to check."""
    try:
        return whole_number(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_export(commands) -> None:
    """export: a run in another tool's format. The formats are export/'s records (export/formats.py):
    `--format`'s choices (the first listed is the default), the line in `primbench --help`, the
    table below and each format's own options all come from them: a new format edits nothing here.
    (The description's pointer to github-action is advice about the gate, not a list of formats.)"""
    from primbench.export.formats import registered

    formats = registered()
    width = max(map(len, formats))
    table = "\n".join(f"  {fmt.name:<{width}} read by {fmt.readers}\n  {'':<{width}} e.g. {fmt.example}"
                      for fmt in formats.values())
    export = commands.add_parser(
        "export", help=_escaped(f"a run as {_one_or_other([fmt.short for fmt in formats.values()])}"),
        formatter_class=_ExportHelp,
        description="Write a run in a format another tool reads. The CI gate is `primbench check`; for a dashboard's "
        "alerts, github-action gives each case the figure the gate judges it on (the batch figure under 40 us).",
        epilog=f"formats:\n{table}")
    export.add_argument("run", help="a run file (or the newest in a folder or a glob)")
    export.add_argument("--format", default=next(iter(formats)), choices=tuple(formats), help="(default: %(default)s)")
    export.add_argument("-o", "--output", metavar="FILE", help="where to write it (default: standard output)")
    export.add_argument("--cases", action="append", metavar="GLOB", help="only the cases whose key matches GLOB (fnmatch, "
                        "e.g. 'reduce/vector_*/float32/*'); repeatable: a case matching any is kept")
    export.add_argument("--common-with", metavar="BASE", help="only the cases the run BASE also has: export two runs "
                        "each --common-with the other, and nvbench's comparers read the pair")
    for fmt in formats.values():
        for option in fmt.options:
            export.add_argument(option.flag, help=_escaped(f"{fmt.name} only: {option.help}"), **_taking(option))


def _one_or_other(names: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return " or ".join(filter(None, [", ".join(names[:-1]), names[-1]]))


def _escaped(text: str) -> str:
    """Help text from a record, with its % kept (argparse reads %(default)s and the like in help)."""
    return text.replace("%", "%%")


def _taking(option) -> dict:
    """argparse's keywords for a format's option: a switch, or a value read by the option's parse,
    whose ValueError becomes argparse's one line (exit 2)."""
    if option.metavar is None:
        return {"action": "store_true"}
    if option.parse is None:
        return {"metavar": option.metavar}

    def parse(text: str):
        try:
            return option.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.keyword  # argparse names a value it could not read by its type's name
    return {"metavar": option.metavar, "type": parse}


def _add_ab(commands, plugin) -> None:
    """ab: two variants of one op timed in turn on the same input."""
    ab = commands.add_parser("ab", parents=[plugin], help="is B faster than A? two variants verified, then timed in turn "
                             "(each round in a random order) on one GPU, with a verdict and a 95 %% interval")
    ab.add_argument("a", metavar="A", help="op/variant, e.g. reduce/vector_load_sum")
    ab.add_argument("b", metavar="B", nargs="?", help="op/variant of the same op (or A again, to see the noise floor); "
                    "with --base it defaults to A")
    ab.add_argument("--base", metavar="REV", help="take A as git revision REV declared it (its .cu and plan), B from the "
                    "working tree: did my change to A help?")
    ab.add_argument("--sizes", metavar="N,N", help="sizes, e.g. 2^20,2^25,2^28 (default: the op's usual sweep)")
    ab.add_argument("--blocks", metavar="B", help="block size (default: 256 where both take it)")
    ab.add_argument("--dtypes", metavar="T", help="dtype (default: the op's first)")
    ab.add_argument("--rounds", type=_whole_number, default=200, help="paired rounds, each a cold sample of A, B and the A/A "
                    "slice (default: %(default)s)")
    ab.add_argument("--threshold", type=float, default=0.01, help="the smallest change called FASTER or SLOWER "
                    "(default: %(default)s, 1 %%)")
    ab.add_argument("--chart", metavar="FILE.png", help="also draw the samples in order and B/A with its interval")
    ab.add_argument("--json", metavar="FILE", help="also write each size's verdict, interval and raw samples as JSON")


def _add_bisect(commands, plugin) -> None:
    """bisect: the commit that made one case of a variant slower, an interleaved A/B a step."""
    bisect = commands.add_parser("bisect", parents=[plugin], help="which commit between GOOD and BAD made a variant "
                                 "slower? a binary search on this GPU, each step an interleaved A/B (as ab --base)")
    bisect.add_argument("good", metavar="GOOD", help="a commit where the variant was fast (e.g. the baseline's)")
    bisect.add_argument("bad", metavar="BAD", help="a later commit where it is slower (GOOD must be its ancestor)")
    bisect.add_argument("variant", metavar="OP/VARIANT", help="the variant, as the working tree or --plugin declares it")
    bisect.add_argument("--sizes", metavar="N", required=True, help="the one size to time, e.g. 2^28")
    bisect.add_argument("--blocks", metavar="B", help="the one block size (default: 256 where it takes it)")
    bisect.add_argument("--dtypes", metavar="T", help="the one dtype (default: the op's first)")
    # The default is run/bisect.py's DEFAULT_MAX_STEPS (tests/unit/test_bisect.py holds them equal):
    # the grammar does not import the GPU side.
    bisect.add_argument("--max-steps", type=_whole_number, default=10, metavar="N", help="at most this many A/B "
                        "steps, the first one BAD against GOOD (default: %(default)s)")
    bisect.add_argument("--rounds", type=_whole_number, default=200, metavar="N", help="paired rounds a step, as ab's "
                        "(default: %(default)s)")
    bisect.add_argument("--threshold", type=float, default=0.01, help="the smallest change called SLOWER, as ab's "
                        "(default: %(default)s, 1 %%)")
    bisect.add_argument("--json", metavar="FILE", help="also write every step and the outcome as JSON")


def _add_profile(commands, plugin) -> None:
    """profile: each selected case's plan once under Nsight Compute, counters into a file."""
    profile = commands.add_parser("profile", parents=[plugin], help="hardware counters (DRAM bytes, bank conflicts, "
                                  "divergence, occupancy, ...) of each case, from Nsight Compute; never timed")
    profile.add_argument("target", metavar="CONFIG|RUN", help="a YAML config, or a run file: its cases, and the "
                         "counters go beside it as <run>.counters.json")
    profile.add_argument("--trust-plugins-from-run", action="store_true", help="for a run file: import the plugins its "
                         "header names (a run file is data: else name each again with --plugin)")
    profile.add_argument("--only", action="append", metavar="OP/VARIANT", help="only these variants (globs); repeatable")
    profile.add_argument("--sizes", metavar="N,N", help="only these sizes, e.g. 2^25,2^28")
    profile.add_argument("--blocks", metavar="B,B", help="only these block sizes")
    profile.add_argument("-o", "--output", metavar="FILE.counters.json", help="where the counters go (merged with "
                         "what the file holds); default: beside the run, or results/<gpu>/ for a config")


def _add_run(commands, plugin) -> None:
    """run: a config narrowed by filters, --variant with no config, or --resume."""
    run = commands.add_parser("run", parents=[plugin], help="run a config's sweep on the GPU, write the run file and its report")
    run.add_argument("config", nargs="?", help="YAML config, e.g. configs/default.yaml or a bundled one by name (default, "
                     "progression, nightly, ...); required unless --resume or --variant is given")
    run.add_argument("--variant", action="append", metavar="OP/NAME", help="run these variants (globs allowed) with no config: "
                     "the default timing policy, the op's default dtype; repeatable")
    run.add_argument("--only", action="append", metavar="OP/VARIANT", help="only the variants matching these globs, "
                     "e.g. 'reduce/vector_*' or 'scan' (comma-separated or repeated)")
    run.add_argument("--sizes", metavar="N,N", help="only these sizes, e.g. 2^25,2^28 (with --variant: the sizes to run)")
    run.add_argument("--blocks", metavar="B,B", help="only these block sizes, e.g. 256 (library variants choose their own)")
    run.add_argument("--dtypes", metavar="T,T", help="with --variant: the dtypes to run (default: the op's first)")
    run.add_argument("--resume", metavar="RUN.jsonl", help="finish an interrupted run without re-running its finished cases")
    run.add_argument("--trust-plugins-from-run", action="store_true", help="with --resume: import the plugins the run "
                     "file's header names (a run file is data: else name each again with --plugin)")
    run.add_argument("--output", metavar="DIR", help="folder for the run file (default: the config's `output`)")
    run.add_argument("--no-report", action="store_true", help="do not render the HTML report after the run")
    run.add_argument("--dry-run", action="store_true", help="validate the config and list its cases; needs no GPU")
    run.add_argument("--energy", action="store_true", help="also measure energy per operation for every case (about 2 s "
                     "a case; the config's `timing: energy:` settings stay, its `cases:` selection is widened to all)")
    run.add_argument("--allow-large", action="store_true", help="accept a sweep of over 100,000 cases")
    run.add_argument("--no-restart", action="store_true", help="when a kernel breaks the CUDA context, stop (finish later with "
                     "--resume) instead of going on in a fresh process")
    run.add_argument("--gpus", metavar="all|I,J", help="run on these GPUs, one worker process each (docs/fleet.md); "
                     "--gpus 0, or none, is the one-GPU run")
    run.add_argument("--mode", choices=("shard", "replicate"), help="with --gpus: shard splits the cases across the GPUs "
                     "into one run file (the default); replicate runs every case on every GPU and flags a slow one")


def _add_readers(commands, plugin) -> None:
    """The commands that read runs or the registry: report, info, list, compare."""
    # --plugin: a plugin op's own report sections are its code, never imported because a run names it.
    report = commands.add_parser("report", parents=[plugin], help="render run files as self-contained HTML pages")
    report.add_argument("run", nargs="*", help="run files, folders of runs, or globs (results/nvidia-h200/, 'results/*/*.jsonl'); "
                        "each report goes beside its run")
    report.add_argument("--reference", action="store_true", help="render the H200's reference run that ships with "
                        "primbench (into the current folder, or -o); needs no GPU")
    report.add_argument("-o", "--output", metavar="FILE", help="HTML file to write (one run only; default: beside the run file)")

    commands.add_parser("info", help="print the GPU's identity, clocks and peak bandwidth")

    listing = commands.add_parser("list", parents=[plugin], help="list the ops and variants")
    listing.add_argument("--op", help="only this op")

    comparison = commands.add_parser("compare", help="compare runs case by case: medians, ratios, verdicts from raw samples")
    comparison.add_argument("runs", nargs="+", metavar="RUN", help="run files (or ref:<id>, a published progression such as "
                            "ref:seed002_rtx3080); the first is the baseline the others are compared with")
    comparison.add_argument("--metric", choices=("time", "pct_peak"), help="the ratio shown: median time, or %% of each "
                            "GPU's own peak (the default across different GPU models)")
    comparison.add_argument("--all", action="store_true", help="print every case, not only those that changed")
    comparison.add_argument("--html", metavar="FILE", help="also write the comparison as one self-contained HTML page")


def _add_gates_and_tools(commands, plugin) -> None:
    """check, publish, baseline and compile."""
    gate = commands.add_parser("check", parents=[plugin], help="the CI gate: exit 0 if nothing regressed, 1 on a "
                               "regression, 2 on unusable input")
    gate.add_argument("run", help="the new run: a file, or the newest run in a folder or a glob")
    gate.add_argument("--baseline", metavar="BASE", help="the baseline run (default: results/baselines/<the run's GPU>.jsonl.gz)")
    gate.add_argument("--allow-different-gpu", action="store_true", help="accept a baseline from another GPU model: pairs are "
                      "then listed in %% of each GPU's peak and gate nothing (only newly failed cases fail the check)")
    gate.add_argument("--markdown", metavar="FILE", help="also write the check as Markdown, every pair in a closed "
                      "table (for a CI job summary)")
    gate.add_argument("--markdown-summary", metavar="FILE", help="also write a Markdown that fits a pull-request comment "
                      "(at most 65,536 characters): what changed and the counts, not the table of every pair (--markdown)")
    gate.add_argument("--junit", metavar="FILE", help="also write JUnit XML, one test case per compared case")
    gate.add_argument("--all", action="store_true", help="print every case, not only those that changed")
    gate.add_argument("--strict", action="store_true", help="fail (exit 1) when the baseline lacks cases of the run "
                      "(a stale baseline gates nothing for them; the config's compare.require_baseline does the same), "
                      "or was measured by another protocol")
    gate.add_argument("--confirm", action="store_true", help="on a GPU: time each SLOWER or FASTER suspect again, "
                      "interleaved against the baseline's own code (as ab --base does); the gate fails only on what "
                      "this GPU confirms (needs the baseline's commit in this git clone)")
    gate.add_argument("--confirm-limit", type=_whole_number, metavar="N", help="with --confirm: time at most N "
                      "suspects, the largest moves first (default: 20); the rest stay unconfirmed and fail as SLOWER")
    gate.add_argument("--confirm-seconds", type=float, metavar="S", help="with --confirm: about S seconds of samples a "
                      "suspect, at most 3600 (default: 30)")
    gate.add_argument("--min-light", type=float, metavar="FRACTION", help="also fail each case under FRACTION of its "
                      "own speed of light (0.9: 90 %% of a cold read of its minimal bytes on this GPU), among cases of "
                      "--min-light-from bytes or more; with no baseline for the run's GPU, the floor alone gates "
                      "(default: the config's compare.min_light, else no floor)")
    gate.add_argument("--min-light-from", type=_whole_number, metavar="BYTES", help="with --min-light: the smallest case "
                      "gated, in minimal bytes (default: 67108864, 64 MiB, past the L2, where memory binds)")

    site = commands.add_parser("publish", parents=[plugin],
                               help="a static site of runs: index, reports, history, GPU models side by side")
    site.add_argument("folder", nargs="+", help="folders holding run files (results/), run files or globs")
    site.add_argument("-o", "--output", default="site", metavar="DIR", help="where to write the site (default: site/)")

    replicas = commands.add_parser("replicas", help="the same cases on several GPUs of one model (run --mode replicate, or "
                                   "one run per host): each case's spread, and the GPU that is slow (exit 1 when one is)")
    replicas.add_argument("runs", nargs="+", metavar="RUN", help="run files, folders or globs: one GPU each, one model")
    replicas.add_argument("--threshold", type=float, default=0.05, help="how far from its siblings a GPU may sit before "
                          "it is flagged, when a test across the cases agrees (default: %(default)s, 5 %%)")

    keep = commands.add_parser("baseline", help="make a finished run (or several runs of one config) its GPU model's "
                               "baseline: results/baselines/<gpu>.jsonl.gz")
    keep.add_argument("run", nargs="+", metavar="RUN", help="finished run files with no failed case (or the newest in a "
                      "folder or a glob); several runs of one config make one baseline that knows each case's spread "
                      "across them (runs on two or more machines: README, \"The verdict rule\")")
    keep.add_argument("--folder", default=str(BASELINE_DIR), metavar="DIR", help="where to keep it (default: %(default)s; "
                      f"{REFERENCE_DIR} for the reference run `make report` renders)")

    build = commands.add_parser("compile", parents=[plugin], help="compile every kernel with NVRTC for the given architectures "
                                "(no GPU needed); with --plugin, the plugins' kernels only, unless --all")
    build.add_argument("--all", action="store_true", help="with --plugin: primbench's own kernels too")
    build.add_argument("--arch", nargs="+", default=["sm_90", "sm_80"], help="targets, e.g. sm_90 sm_80")
