"""`primbench bisect ARGS...` with a stand-in for each step's GPU timing. Both commits' declarations
of the variant are taken from git and compiled with NVRTC as the real step takes them
(ab_revision.variant_at, then build.compile_for_arch, which needs no GPU), so a commit whose plugin
does not load, or whose kernel does not build, fails its step with its real reason. B/A is then
STEP_RATIO to the power of how many more times B's CUDA source says MARK than A's, with an interval
of +-HALF_WIDTH and ab's verdict. Everything else is the real command line and search."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from primbench.cli import main as cli_main  # noqa: E402
from primbench.run import bisect  # noqa: E402

MARK = "extra pass"
STEP_RATIO = 1.03  # slower_sum's extra pass at 2^28 on the H200 (tests/plugins/slower_sum.py)
HALF_WIDTH = 0.003  # ab's interval at 2^28 on the H200 is about +-0.1-0.3 % (README)


def stand_in_timer(request):
    from primbench.build import KernelBuildError, compile_for_arch
    from primbench.errors import UserError
    from primbench.run.ab import verdict
    from primbench.run.ab_revision import variant_at
    from primbench.run.confirm import one_line_reason

    marks: dict[str, int] = {}  # a commit's count, found once (GOOD is in most steps)

    def marks_at(sha: str) -> int:
        if sha not in marks:
            variant = variant_at(sha, request.variant, option="commit")
            try:
                compile_for_arch(variant.source, variant.kernels, "sm_90")
            except KernelBuildError as exc:
                raise UserError(one_line_reason(exc)) from None
            marks[sha] = variant.source_text().count(MARK)
        return marks[sha]

    def time_pair(a, b):
        ratio = STEP_RATIO ** (marks_at(b.sha) - marks_at(a.sha))
        low, high = ratio * (1 - HALF_WIDTH), ratio * (1 + HALF_WIDTH)
        return ratio, low, high, verdict(ratio, low, high, request.threshold)

    return time_pair


if __name__ == "__main__":
    bisect.step_timer = stand_in_timer
    sys.exit(cli_main.main(sys.argv[1:]))
