"""The command line's entry point: parse, load the plugins named with --plugin, dispatch to the
command's handler. Bad input becomes one line and a non-zero exit (errors.py has the codes)."""

from __future__ import annotations

import sys

from primbench.cli import compare, gpus, info, profile, report, run
from primbench.cli.parser import parser
from primbench.errors import EXIT_INTERRUPTED, UserError

COMMANDS = {
    "run": run.cmd_run,
    "report": report.cmd_report, "publish": report.cmd_publish, "export": report.cmd_export,
    "compare": compare.cmd_compare, "check": compare.cmd_check, "baseline": compare.cmd_baseline, "ab": compare.cmd_ab,
    "replicas": gpus.cmd_replicas,
    "profile": profile.cmd_profile,
    "info": info.cmd_info, "list": info.cmd_list, "compile": info.cmd_compile,
}


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
