"""`primbench profile CONFIG|RUN`: counters for each selected case, into the counters file (beside the
run for a run file; merged with what it already holds). One line per case."""

from __future__ import annotations

from primbench.errors import EXIT_OK


def cmd_profile(args) -> int:
    from primbench.profile import counters
    from primbench.profile.capture import profile_cases

    output, cases = profile_cases(args.target, output=args.output, only=args.only, sizes=args.sizes, blocks=args.blocks,
                                  plugins=args.plugin or (), trust_plugins=args.trust_plugins_from_run)
    for case in cases:
        print(counters.case_line(case))
    print(f"counters: {output} ({sum(c.profiled for c in cases)} of {len(cases)} cases profiled)")
    return EXIT_OK
