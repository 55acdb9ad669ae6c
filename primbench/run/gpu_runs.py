"""`primbench run --gpus ...` and `--resume` of such a run: what each GPU runs, where each record
goes, and how the run ends (the processes and pipes are primbench/run/scheduler.py's). No CuPy here."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from primbench.errors import EXIT_BAD_INPUT, EXIT_CONTEXT_LOST, EXIT_INTERRUPTED, EXIT_NO_GPU, UserError
from primbench.progress import Progress, describe_result
from primbench.run import gpus as gpu_selection  # the module: a stand-in replaces its visible_devices
from primbench.run.gpus import Gpu, select, split
from primbench.run.restart import MAX_RESTARTS
from primbench.run.scheduler import GpusSummary, Scheduler, Sink, Worker
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import RunWriter, repair_truncated_tail
from primbench.runfile.locations import new_run_path
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, RunResume, Telemetry


@dataclass
class Plan:
    """What one invocation runs: the GPUs, each GPU's cases, and how its run files are opened."""

    mode: str
    gpus: list[Gpu]
    shards: list[list[CaseId]]
    job: dict
    open_sinks: object  # open_sinks(started, every worker) -> {worker id: Sink}, after every header is in
    check_worker: object = None  # check_worker(worker) -> None or the line refusing its GPU


def run(config, gpus_text: str, mode: str, output: str | None) -> GpusSummary:
    """A new run of `config` over the GPUs `--gpus` names."""
    gpus = select(gpus_text, gpu_selection.visible_devices())
    cases = config.cases()
    shards = split(cases, len(gpus)) if mode == "shard" else [list(cases) for _ in gpus]
    job = {"config": config.resolved(), "config_path": config.path}
    return execute(Plan(mode, gpus, shards, job, lambda started, workers: _new_files(started, workers, mode, output or config.output,
                                                                       config.path)))


def _device_entry(worker: Worker) -> dict:
    entry = {"index": worker.gpu.index, "visible": worker.gpu.visible}
    if worker.header is None:
        return dict(entry, error=f"its worker exited with code {worker.exit_code} before it started")
    entry = dict(entry, device=worker.header.device, copy=worker.header.copy, read=worker.header.read)
    if worker.header.energy:  # each GPU's own idle draw: a shard's file has one header, GPU 0's
        entry["energy"] = worker.header.energy
    return entry


def _new_files(started: list[Worker], workers: list[Worker], mode: str, output, config_path=None) -> dict:
    """The run file(s) of a new run, their headers written: the workers' own (their GPU's device and
    copy probe), with the run's id, its start, its config's path and the `gpus` block."""
    from primbench.run.runner import _now, run_file_name

    first = started[0].header
    names = {w.header.device_name for w in started}
    if mode == "shard" and len(names) > 1:
        raise UserError(f"--mode shard needs GPUs of one model, and these are {', '.join(sorted(names))}; "
                        "pick one model with --gpus, or measure each GPU with --mode replicate")
    run_id = run_file_name(first.device_name)
    if mode == "shard":
        devices = [_device_entry(w) for w in workers]
        header = replace(first, run_id=run_id, started=_now(), config_path=config_path or first.config_path,
                         gpus={"mode": "shard", "devices": devices})
        sink = Sink(_create(header, output), run_id, missing={c.key for w in workers for c in w.cases})
        return {id(w): sink for w in started}
    replicas = [f"{run_id}-gpu{w.gpu.index}" for w in started]
    sinks = {}
    for worker, name in zip(started, replicas):
        header = replace(worker.header, run_id=name, started=_now(), config_path=config_path or worker.header.config_path,
                         gpus={"mode": "replicate", "group": run_id, "replicas": replicas, "devices": [_device_entry(worker)]})
        # Seeded by the group, not the file: every GPU draws the same inputs, so only the GPU differs.
        sinks[id(worker)] = Sink(_create(header, output), run_id, missing={c.key for c in worker.cases})
    return sinks


def _create(header: RunHeader, output) -> RunWriter:
    writer = RunWriter(new_run_path(output, header.device_name, header.run_id), create=True)
    writer.append(header)
    return writer


def resume(path, gpus_text: str | None = None) -> GpusSummary:
    """Finish an interrupted run over several GPUs on the GPUs it started on (or those `--gpus` names).
    The writer's lock comes first, as in runner.resume: a second resume is refused before it reads."""
    from primbench.runfile.io import load_run

    path = Path(path)
    load_run(path) if not path.is_file() else None  # a missing file or a folder: its one line
    writer = RunWriter(path, create=False)
    try:
        return _resume_locked(path, writer, gpus_text)
    finally:
        writer.close()


def _resume_locked(path: Path, writer: RunWriter, gpus_text: str | None) -> GpusSummary:
    from primbench.run.resumable import resumable
    from primbench.run.runner import _now, order_cases

    existing, config = resumable(path)
    block = existing.header.gpus
    mode = block.get("mode")
    recorded = [d for d in block.get("devices") or [] if isinstance(d, dict) and isinstance(d.get("device"), dict)]
    uuids = {d["device"].get("uuid") for d in recorded}
    visible = gpu_selection.visible_devices()
    if gpus_text is not None:
        gpus = select(gpus_text, visible)
    else:
        indices = ",".join(str(d.get("index")) for d in recorded) or "0"
        gpus = select(indices, visible)
    if mode == "replicate" and len(gpus) != 1:
        raise UserError(f"{path}: is one GPU's replica; resume it on one GPU (--gpus INDEX), not {len(gpus)}")
    done = {c.key for c in existing.cases}
    remaining = order_cases(config.cases(), done)
    shards = split(remaining, len(gpus)) if mode == "shard" else [remaining]
    if not remaining:  # every case was recorded before the stop, only the end record is missing
        return _close_complete(path, writer, existing, done, mode)

    def open_sinks(started, workers):
        repair_truncated_tail(path)
        writer.append(RunResume(at=_now(), done_before=len(done)))
        counts = {status: sum(1 for c in existing.cases if c.status == status) for status in ("ok", "failed", "skipped")}
        seeded_by = block.get("group") or existing.header.run_id  # a replica's inputs: its group's
        sink = Sink(writer, str(seeded_by), missing={c.key for c in remaining}, **counts)
        return {id(w): sink for w in started}

    def check_worker(worker):
        if uuids and worker.uuid not in uuids:
            return (f"{path}: GPU {worker.gpu.index} is {worker.uuid}, and the run was started on "
                    f"{', '.join(sorted(map(str, uuids)))}; resume it on those GPUs (--gpus) or start a new run")
        return None

    job = {"config": config.resolved(), "config_path": existing.header.config_path}
    return execute(Plan(mode, gpus, shards, job, open_sinks, check_worker))


def _close_complete(path: Path, writer: RunWriter, existing, done: set, mode: str) -> GpusSummary:
    """A run stopped after its last case but before its end record: no GPU is needed to finish it."""
    from primbench.run.runner import _now

    repair_truncated_tail(path)
    counts = {status: sum(1 for c in existing.cases if c.status == status) for status in ("ok", "failed", "skipped")}
    writer.append(RunResume(at=_now(), done_before=len(done)))
    writer.append(RunEnd(finished=_now(), **counts))
    return GpusSummary(paths=[path], mode=mode, interrupted=False, **counts)


def started_on_several(path) -> bool:
    """Whether a run file was written by a run over several GPUs (its header has `gpus`), from its
    first line alone; a file that cannot say is left to the one-GPU resume, which says why."""
    import json

    from primbench.runfile.lines import read_lines

    try:
        for _number, line, _ended in read_lines(Path(path), []):
            header = json.loads(line)
            return isinstance(header, dict) and isinstance(header.get("gpus"), dict) and bool(header["gpus"])
    except (OSError, ValueError, RecursionError, UserError):
        return False
    return False


def execute(plan: Plan) -> GpusSummary:
    """Start the workers, wait for every header, open the run files, stream the records."""
    scheduler = Scheduler(plan.job)
    scheduler.install_signals()
    try:
        for gpu, shard in zip(plan.gpus, plan.shards):
            if shard:
                scheduler.spawn(gpu, shard)
        started = _await_headers(scheduler, plan)
        if scheduler.stopping:
            return GpusSummary(paths=[], mode=plan.mode, interrupted=True)
        sinks = plan.open_sinks(started, scheduler.workers)
        for worker in started:
            worker.sink = sinks[id(worker)]
            _begin(worker, scheduler)
        scheduler.progress = Progress(sum(len(w.cases) for w in started))
        while scheduler.live():
            scheduler.pump(lambda w, record: _take(scheduler, w, record), lambda w: _exited(scheduler, w))
        return _finish(scheduler, plan, _unique(sinks.values()))
    finally:
        scheduler.close()
        scheduler.restore_signals()


def _unique(sinks) -> list[Sink]:
    seen = []
    for sink in sinks:
        if all(sink is not s for s in seen):
            seen.append(sink)
    return seen


def _await_headers(scheduler: Scheduler, plan: Plan) -> list[Worker]:
    """Every worker's header (its GPU opened and probed), or its exit; the workers that started."""
    def on_line(worker, record):
        if isinstance(record, RunHeader) and worker.header is None:
            worker.header = record
        elif isinstance(record, Telemetry):
            worker.early.append(record)

    while any(w.header is None and w.exit_code is None for w in scheduler.workers) and not scheduler.stopping:
        scheduler.pump(on_line, lambda worker: None)
    started = [w for w in scheduler.workers if w.header is not None and w.exit_code is None]
    refusals = [line for line in (plan.check_worker(w) for w in started) if line] if plan.check_worker else []
    if refusals:
        raise UserError(refusals[0])
    if not started and not scheduler.stopping:
        codes = ", ".join(f"GPU {w.gpu.index} exited with code {w.exit_code}" for w in scheduler.workers)
        error = UserError(f"no GPU worker started ({codes}); each worker's own line, if any, is above")
        error.exit_code = EXIT_NO_GPU if all(w.exit_code == EXIT_NO_GPU for w in scheduler.workers) else EXIT_BAD_INPUT
        raise error
    return started


def _begin(worker: Worker, scheduler: Scheduler) -> None:
    for record in worker.early:
        worker.sink.writer.append(record)
    worker.early.clear()
    scheduler.start_cases(worker, worker.sink.run_id)


def _take(scheduler: Scheduler, worker: Worker, record) -> None:
    """One record from a worker that is running cases."""
    if isinstance(record, RunHeader):  # a fresh worker, after a lost context: the same GPU?
        worker.header = record
        if record.device.get("uuid") != worker.expect_uuid:
            print(f"primbench: warning: GPU {worker.gpu.index} is now {record.device.get('uuid')}, not "
                  f"{worker.expect_uuid}; its remaining cases are not run", file=sys.stderr)
            scheduler.tell(worker, None)
            return
        _begin(worker, scheduler)
    elif isinstance(record, Telemetry) and worker.sink is not None:
        worker.sink.writer.append(record)
    elif isinstance(record, CaseRecord) and worker.sink is not None:
        if record.key not in {c.key for c in worker.cases}:
            print(f"primbench: warning: the worker on GPU {worker.gpu.index} sent case {record.key[:120]!r}, "
                  "which it was not given; ignored", file=sys.stderr)
            return
        worker.sink.add(replace(record, device_uuid=worker.uuid))
        worker.cases = [c for c in worker.cases if c.key != record.key]
        scheduler.progress.line(f"gpu{worker.gpu.index} " + describe_result(record.case, record, worker.header.device))


def _exited(scheduler: Scheduler, worker: Worker) -> None:
    """A worker left: after a lost CUDA context or a hung case, a fresh one takes its remaining cases."""
    if worker.exit_code == EXIT_CONTEXT_LOST and worker.cases and not scheduler.stopping and worker.restarts < MAX_RESTARTS:
        print(f"primbench: GPU {worker.gpu.index}: a kernel broke the CUDA context or made no progress within timing: "
              "case_limit_s (its case is recorded as failed, with which); going on with its remaining cases in a fresh "
              "worker", file=sys.stderr, flush=True)
        fresh = scheduler.spawn(worker.gpu, worker.cases, restarts=worker.restarts + 1)
        fresh.sink, fresh.expect_uuid = worker.sink, worker.uuid
        worker.cases = []


def _ended(code: int | None) -> str:
    """How a worker's process ended, in words: 'was killed by SIGKILL', 'exited with code 1'."""
    import signal

    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    if code == EXIT_INTERRUPTED:
        return "stopped on a SIGINT or SIGTERM sent to it alone"
    return f"exited with code {code}"


def _finish(scheduler: Scheduler, plan: Plan, sinks: list[Sink]) -> GpusSummary:
    from primbench.run.runner import _now

    summary = GpusSummary(paths=[s.writer.path for s in sinks], mode=plan.mode, interrupted=scheduler.stopping)
    for worker in scheduler.workers:
        if worker.cases and not scheduler.stopping:
            when = "before its GPU was ready" if worker.header is None else "early"
            summary.crashes.append(f"the worker on {worker.label} {_ended(worker.exit_code)} {when}; its {len(worker.cases)} "
                                   "unfinished case(s) were not run")
    for sink in sinks:
        summary.ok, summary.failed, summary.skipped = summary.ok + sink.ok, summary.failed + sink.failed, summary.skipped + sink.skipped
        summary.not_run += len(sink.missing)
        if sink.missing:
            summary.unfinished.append(sink.writer.path)
        else:  # complete, even when a stop came after its last case
            sink.writer.append(RunEnd(finished=_now(), ok=sink.ok, failed=sink.failed, skipped=sink.skipped))
        sink.writer.close()
    return summary
