"""After a kernel breaks the CUDA context, or makes no progress within the case limit (`hang_watch`,
measuring/case_limit.py): its case is recorded as failed, and nothing more can run in that
process. The run goes on with the remaining cases in a fresh one, up to MAX_RESTARTS times: on one
GPU this program again with `run --resume` (exec replaces the process, so no broken context
survives); on several, the scheduler starts a fresh worker for that GPU."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from primbench.errors import EXIT_FAILED
from primbench.resources import child_environment

# Each restart follows a newly failed case, so a run makes progress; this only bounds a runaway.
MAX_RESTARTS = 50


def go_on_in_a_fresh_process(run_path, broken_by: str, *, no_restart: bool, no_report: bool,
                             what: str = "broke the CUDA context") -> None:
    """exec `run --resume run_path` (or stop when no_restart, or past MAX_RESTARTS). Never returns.
    `what` the case did: broke the context, or made no progress within the case limit."""
    restarts = int(os.environ.get("PRIMBENCH_RESTARTS", "0"))
    sys.stdout.flush()
    if no_restart or restarts >= MAX_RESTARTS:
        why = "the run stopped" if no_restart else f"the run stopped after {restarts} restarts"
        print(f"\nprimbench: {broken_by} {what} (recorded as failed); {why}. "
              f"Run the remaining cases in a fresh process: primbench {' '.join(map(shlex.quote, resume_arguments(run_path)))}",
              file=sys.stderr, flush=True)
        # A broken context makes CuPy's teardown print a traceback per freed buffer; every record
        # is already on disk (fsynced line by line), so leave without tearing down.
        os._exit(EXIT_FAILED)
    print(f"\nprimbench: {broken_by} {what} (recorded as failed); "
          "going on with the remaining cases in a fresh process", file=sys.stderr, flush=True)
    # bench.py from a checkout, else the installed package (`python -m primbench`)
    script = Path(sys.argv[0])
    program = [str(script)] if script.suffix == ".py" and script.name != "__main__.py" else ["-m", "primbench"]
    command = [sys.executable, *program, *resume_arguments(run_path)] + (["--no-report"] if no_report else [])
    # The fresh process must import this primbench from any working folder, installed or not.
    os.execve(sys.executable, command, child_environment(PRIMBENCH_RESTARTS=str(restarts + 1)))


def resume_arguments(run_path) -> list[str]:
    """`run --resume run_path` with `--plugin` for each plugin this process imported (the run's own
    among them): a fresh process, like any --resume, imports none because the run file names it."""
    from primbench import registry

    return ["run", "--resume", str(run_path), *(arg for path in registry.plugins() for arg in ("--plugin", str(path)))]


def hang_watch(runner, record_it, then):
    """The case limit of a run (measuring/case_limit.py): a hung case gets a failed record, handed
    to `record_it` (the run file, or the scheduler's channel), then `then(record)` ends or replaces
    the process; where it returns (a caller with no way to go on), the process ends with one line
    and EXIT_FAILED, the run to finish with --resume."""
    import datetime as dt

    from primbench.measuring.case_limit import CaseLimit, end_process, hung, hung_reason
    from primbench.runfile.records import CaseRecord

    limit_s = runner.config.timing.case_limit_s

    def expire(case, seconds: float) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        record = CaseRecord(case, status="failed", reason=hung_reason(limit_s), elapsed_s=round(seconds, 3), started=now)
        try:
            record_it(record)
        except BaseException as exc:  # a full disk, a closed pipe: say it, and still end the stuck process
            end_process(f"{case.key}: {hung(limit_s)}; its record could not be kept ({str(exc)[:200]})", EXIT_FAILED)
        then(record)
        end_process(f"{case.key}: {hung(limit_s)} (recorded as failed); the run stopped: finish it with "
                    "`primbench run --resume`", EXIT_FAILED)

    return CaseLimit(limit_s, expire, getattr(runner, "timer", None))
