"""One GPU's worker in a run over several GPUs: `python -m primbench.run.worker --records-fd N`, started
by primbench/run/scheduler.py with CUDA_VISIBLE_DEVICES naming its one GPU.

It speaks run-file records, one JSON line each, on the pipe `N`; the scheduler is the only writer
of the run file. The exchange:
1. stdin, line 1: `{"config": ..., "config_path": ...}` (a header's resolved config). The worker
   opens its GPU, measures the copy probe and sends its header: this GPU's device info.
2. stdin, line 2: `{"run_id": ..., "cases": [case keys]}`. The worker runs them in run order and
   sends each case record, and a telemetry record (NVML clocks, temperature, power) at the start,
   at least every TELEMETRY_EVERY_S between cases, and at the end.
It exits 0 when every case is sent, EXIT_CONTEXT_LOST (75) when a kernel broke its CUDA context or
made no progress within timing: case_limit_s (that case's record sent first, as failed; the
scheduler starts a fresh worker for the rest), 130 on SIGINT or SIGTERM (the
case under way is dropped, never half sent: the scheduler keeps only whole lines), and a user
error's code (2, 3) with its one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from primbench.errors import EXIT_CONTEXT_LOST, EXIT_INTERRUPTED, EXIT_OK, UserError

TELEMETRY_EVERY_S = 5.0


class Channel:
    """The pipe to the scheduler: whole lines, written with os.write until each is out."""

    def __init__(self, fd: int):
        self.fd = fd

    def send(self, record) -> None:
        from primbench.runfile.io import record_line

        data = record_line(record).encode()
        while data:
            data = data[os.write(self.fd, data):]


def read_job(stream) -> dict | None:
    """The scheduler's next line as a mapping; None once it closed the pipe (it gave up on the run)."""
    line = stream.readline()
    if not line.strip():
        return None
    job = json.loads(line)
    if not isinstance(job, dict):
        raise UserError("the scheduler sent a worker something other than a JSON object; this is a primbench bug")
    return job


def config_of(job: dict):
    """The config a job names, as --resume rebuilds one from a header (plugins loaded again)."""
    from primbench.config.loading import config_from_header
    from primbench.runfile.records import RunHeader

    return config_from_header(RunHeader(run_id="", config=job["config"], config_path=job.get("config_path")),
                              job.get("config_path") or "the scheduler's job")


def telemetry(runner):
    """This GPU's NVML state now, as a record."""
    from primbench.run.runner import _now
    from primbench.runfile.records import Telemetry

    state = runner.device.clock_state()
    return Telemetry.from_json(dict(state, device_uuid=runner.device.info.get("uuid") or "", at=_now()))


def run_job(channel: Channel, stream, make_runner) -> int:
    """Steps 1 and 2 above; returns the exit code."""
    from primbench import registry
    from primbench.run import restart
    from primbench.run.runner import input_key, order_cases, rng_seed_for

    job = read_job(stream)
    if job is None:
        return EXIT_OK
    config = config_of(job)
    runner = make_runner(config)
    others = runner.device.other_processes()
    if others:  # the other workers use other GPUs: these are someone else's
        print(f"primbench: warning: other processes use GPU {os.environ.get('CUDA_VISIBLE_DEVICES', '?')} (pids "
              f"{', '.join(map(str, others))}); their work will disturb its timings", file=sys.stderr)
    cases = config.cases()
    variants = list({v.key: v for v in (registry.get(c.op, c.variant) for c in cases)}.values())
    channel.send(runner.header("", variants, cases))
    channel.send(telemetry(runner))
    start = read_job(stream)
    if start is None:
        return EXIT_OK
    by_key = {case.key: case for case in cases}
    unknown = [key for key in start["cases"] if key not in by_key]
    if unknown:
        raise UserError(f"the scheduler asked for case {unknown[0][:120]!r}, which the config does not expand to; a primbench bug")
    last = time.monotonic()
    # A hung case (measuring/case_limit.py) is sent as failed, and this worker ends as after a lost
    # context: the scheduler starts a fresh one for this GPU's remaining cases.
    limit = restart.hang_watch(runner, channel.send, lambda record: os._exit(EXIT_CONTEXT_LOST))
    for case in order_cases([by_key[key] for key in start["cases"]]):
        with limit.watching(case):
            record = runner.run_case(case, rng_seed_for(start["run_id"], input_key(case)))
        channel.send(record)
        if time.monotonic() - last >= TELEMETRY_EVERY_S:
            channel.send(telemetry(runner))
            last = time.monotonic()
    channel.send(telemetry(runner))
    return EXIT_OK


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None, make_runner=None) -> int:
    """The worker's process; `make_runner(config)` opens the GPU (runner.Runner; a stand-in in tests)."""
    from primbench.run.runner import ContextLost, Runner

    parser = argparse.ArgumentParser(prog="primbench-worker")
    parser.add_argument("--records-fd", type=int, required=True)
    args = parser.parse_args(argv)
    channel = Channel(args.records_fd)
    signal.signal(signal.SIGTERM, _stop)
    try:
        return run_job(channel, sys.stdin, make_runner or Runner)
    except ContextLost as lost:
        if lost.record is not None:
            channel.send(lost.record)
        sys.stderr.flush()
        # A broken context makes CuPy's teardown print a traceback per freed buffer: leave at once.
        os._exit(EXIT_CONTEXT_LOST)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the scheduler is gone: nobody is left to record anything
        return EXIT_INTERRUPTED
    except UserError as exc:
        print(f"primbench: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
