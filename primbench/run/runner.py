"""Runs a sweep: for each case make inputs, verify, time, and append the record to the run file."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from primbench import machine_code, ops, registry
from primbench.build import KernelBuildError, load_module
from primbench.config.loading import Config
from primbench.errors import UserError
from primbench.measuring import ceilings
from primbench.progress import Progress, describe_result
from primbench.resources import IMPORT_ROOT
from primbench.run import restart, resumable
from primbench.run.case_energy import CaseEnergy
from primbench.runfile import protocol, stats
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import RunWriter, gpu_slug, load_run, repair_truncated_tail
from primbench.runfile.locations import new_run_path
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, RunResume
from primbench.variant import CaseUnsupported
from primbench.verify import inputs
from primbench.verify.sequence import verify_case
from primbench.version import __version__

COPY_N = 2**28  # 1 GiB each way: far beyond L2, long enough that launch costs vanish


class ContextLost(Exception):
    """A kernel left a sticky CUDA error (e.g. an illegal address): this process can run nothing more."""

    def __init__(self, record: CaseRecord | None):
        super().__init__(record.reason if record else "the CUDA context was lost")
        self.record = record


def _context_alive() -> bool:
    import cupy

    try:
        cupy.cuda.runtime.deviceSynchronize()
        return True
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError):
        return False


@dataclass
class RunSummary:
    path: Path
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    context_lost: str | None = None  # the case whose kernel broke the CUDA context
    # With a broken context, every CUDA object freed afterwards (the timer's events, pooled memory)
    # prints a traceback; the summary holds the runner so that nothing is freed before the CLI exits.
    keep_alive: object = None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def git_state() -> dict:
    """The commit the code came from. PRIMBENCH_GIT_SHA (and PRIMBENCH_GIT_DIRTY) win when set: a copy
    of the tree on another machine may carry a stale .git (seen on the device: the session's first
    commit, marked dirty), and only the caller knows which commit the copy is."""
    sha = os.environ.get("PRIMBENCH_GIT_SHA")
    if sha:
        dirty = os.environ.get("PRIMBENCH_GIT_DIRTY")
        return {"sha": sha, "dirty": None if dirty is None else dirty == "1", "source": "environment"}
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=IMPORT_ROOT, capture_output=True, encoding="utf-8",
                             errors="replace", check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=IMPORT_ROOT,
                                    capture_output=True, encoding="utf-8", errors="replace", check=True).stdout.strip())
        return {"sha": sha, "dirty": dirty, "source": "git"}
    except (OSError, subprocess.CalledProcessError):
        return {"sha": None, "dirty": None, "source": "none"}


def run_file_name(device_name: str) -> str:
    """results/<UTC date and time>-<gpu>-<id>.jsonl, e.g. 2026-12-01-045210-nvidia-h200-1a2b3c:
    names sort in the order the runs started, so 'the newest run' is the last name."""
    return f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d-%H%M%S}-{gpu_slug(device_name)}-{uuid.uuid4().hex[:6]}"


def input_key(case: CaseId) -> str:
    """What decides a case's input and its reference: every variant and block size of one op sees
    the same data; of the parameters, only those the op's inputs or reference depend on count."""
    shaping = ops.checks(case.op).input_params
    params = "".join(f"/{name}={value}" for name, value in case.params.items() if name in shaping)
    return f"{case.op}/{case.dtype}/n={case.n}/{case.distribution}{params}"


def rng_seed_for(run_id: str, key: str) -> int:
    """A seed fixed by run and input key, so that a resumed case draws the same inputs and every
    variant of an op meets the same data (the report compares their results bit for bit)."""
    return int.from_bytes(hashlib.sha256(f"{run_id}|{key}".encode()).digest()[:4], "little")


class Runner:
    """Holds the GPU state of one run: device, timer, compiled modules."""

    def __init__(self, config: Config):
        from primbench.measuring.device import Device
        from primbench.measuring.timing import Timer

        self.config = config
        self.device = Device()
        self.timer = Timer(self.device.l2_bytes)
        reference_mhz = self.device.info.get("default_sm_clock_mhz") or self.device.info.get("max_sm_clock_mhz")
        if reference_mhz:
            self.timer.min_clock_mhz = self.config.timing.min_clock_fraction * reference_mhz
        # The last inputs made, kept while the next cases use the same ones (same input key).
        self._inputs: dict = {}
        # Energy per operation for the cases `timing: energy:` selects (run/case_energy.py).
        self.energy = CaseEnergy(self.device, self.timer.gpu, config.energy) if config.energy else None

    # -- the header ----------------------------------------------------------------------------
    def measure_copy(self) -> dict:
        """Device-to-device copy bandwidth at run start: the achievable peak the report compares to."""
        import cupy

        src = inputs.random_input(COPY_N, "float32", "uniform", rng_seed=1)
        dst = cupy.empty_like(src)
        policy = self.config.timing
        candidates = {
            "cudaMemcpyAsync": lambda: dst.data.copy_from_device_async(src.data, src.nbytes),
            "cupy.copyto": lambda: cupy.copyto(dst, src),
        }
        measured = {name: self.timer.measure(op, policy).cold_ms for name, op in candidates.items()}
        best = min(measured, key=lambda name: stats.summarize(measured[name]).median)
        del src, dst
        return {"n": COPY_N, "bytes": 2 * COPY_N * 4, "method": best, "samples_ms": [round(t, 6) for t in measured[best]],
                "alternatives": {name: [round(t, 6) for t in samples] for name, samples in measured.items() if name != best}}

    def sized_ceilings(self, cases) -> dict:
        """The read and copy probes at each byte count `cases` move (measuring/ceilings.py), by their variants' traffic."""
        by_traffic: dict[str, set[int]] = {"read": set(), "read_write": set()}
        for case in cases:
            variant = registry.get(case.op, case.variant)
            if variant.traffic in by_traffic:
                by_traffic[variant.traffic].add(variant.minimal_bytes(case.n, inputs.itemsize(case.dtype), dict(case.params)))
        return ceilings.measure_sized(self.timer, self.config.timing, self.device, by_traffic["read"], by_traffic["read_write"])

    def header(self, run_id: str, variants_used: list, cases=()) -> RunHeader:
        from primbench.measuring.device import software_versions

        energy = self.energy.header() if self.energy else {}  # first: the idle draw before the probes warm the GPU
        return RunHeader(
            run_id=run_id,
            started=_now(),
            tool={"name": "primbench", "version": __version__},
            git=git_state(),
            config_path=self.config.path,
            config_hash=self.config.hash(),
            config=self.config.resolved(),
            host={"hostname": socket.gethostname(), "platform": platform.platform(),
                  "python": platform.python_version(), "processor": platform.processor() or platform.machine()},
            device=self.device.info,
            copy=self.measure_copy(),
            read=ceilings.measure_read(self.timer, self.config.timing, self.device),
            ceilings=self.sized_ceilings(cases),
            software=software_versions(),
            timing=self.config.timing.as_dict(),
            protocol=protocol.declared(),
            # each variant's description, with the hash of its kernels compiled for this GPU
            variants=machine_code.described(variants_used, self.device.info.get("compute_capability")),
            energy=energy,
        )

    # -- one case ------------------------------------------------------------------------------
    def run_case(self, case: CaseId, rng_seed: int) -> CaseRecord:
        """Verify then time one case; never raises for a kernel's own failure."""
        variant = registry.get(case.op, case.variant)
        itemsize = inputs.itemsize(case.dtype)
        # What the case record will hold besides its identity, filled in as the case goes.
        record = {"variant_hash": variant.hash(), "bytes": variant.minimal_bytes(case.n, itemsize, dict(case.params)),
                  "seed": rng_seed, "started": _now(), "status": "ok", "reason": None}
        started = time.perf_counter()
        try:
            self._run_case(case, variant, itemsize, rng_seed, record)
        except ContextLost:
            record["elapsed_s"] = round(time.perf_counter() - started, 3)
            raise ContextLost(CaseRecord(case, **record)) from None
        record["elapsed_s"] = round(time.perf_counter() - started, 3)
        return CaseRecord(case, **record)

    def _run_case(self, case: CaseId, variant, itemsize: int, rng_seed: int, record: dict) -> None:
        import cupy

        needed = ops.checks(case.op).working_bytes(case, itemsize)
        self._release_inputs_unless(input_key(case), rng_seed)
        free = self.device.free_memory() if needed > (1 << 30) else None
        try:
            # A library that is not installed skips its cases before any input is made for them.
            missing = variant.library.unavailable() if variant.library is not None else None
            if missing:
                record.update(status="skipped", reason=missing)
                return
            if free is not None and needed > free:
                record.update(status="skipped", reason=f"needs about {needed / 2**30:.1f} GiB of GPU memory, {free / 2**30:.1f} GiB free")
                return
            module = load_module(variant.source, variant.kernels) if variant.source else None
            self._verify_and_time(case, variant, module, rng_seed, record)
        except KernelBuildError as exc:
            record.update(status="failed", reason=str(exc).splitlines()[0], log=str(exc))
        except CaseUnsupported as exc:
            record.update(status="skipped", reason=str(exc))
        except cupy.cuda.memory.OutOfMemoryError as exc:
            record.update(status="skipped", reason=f"out of GPU memory: {exc}")
            self._inputs.clear()
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError, RuntimeError) as exc:
            record.update(status="failed", reason=f"{type(exc).__name__}: {exc}")
            self._inputs.clear()
            if not _context_alive():
                raise ContextLost(None) from None

    def _release_inputs_unless(self, key: str, rng_seed: int) -> None:
        """Free the kept inputs (and CuPy's pool) unless the next case uses them: before its memory check."""
        import cupy

        if self._inputs and self._inputs.get("key") != (key, rng_seed):
            self._inputs.clear()
            cupy.get_default_memory_pool().free_all_blocks()

    def _inputs_for(self, case: CaseId, rng_seed: int):
        """(exact input, its expected result, random input, its reference), made once per input key."""
        self._release_inputs_unless(input_key(case), rng_seed)
        if not self._inputs:
            checks = ops.checks(case.op)
            x_exact, expected = checks.exact_input(case, rng_seed)
            x = checks.random_input(case, rng_seed + 1)
            reference = checks.reference(x, case, rng_seed + 1)
            self._inputs = {"key": (input_key(case), rng_seed), "value": (x_exact, expected, x, reference)}
        return self._inputs["value"]

    def _context(self, module, x, case: CaseId, grid_scale: float = 1.0):
        from primbench.variant import LaunchContext

        return LaunchContext(module, x, case.n, case.block, self.device.sm_count, dtype=case.dtype,
                             grid_scale=grid_scale, params=dict(case.params), **self.device.sm_limits)

    def _verify_and_time(self, case: CaseId, variant, module, rng_seed: int, record: dict) -> None:
        verified = verify_case(case, variant, self._inputs_for(case, rng_seed),
                               lambda x, grid_scale: self._context(module, x, case, grid_scale),
                               checks=ops.checks(case.op), determinism_runs=self.config.determinism_runs)
        record.update(launches=verified.launches, verify=verified.verify, determinism=verified.determinism)
        if verified.reason:
            record.update(status="failed", reason=verified.reason)
            return
        plan = verified.plan
        if plan.restore is not None:
            plan.restore()
        before = self.device.clock_state()
        measurement = self.timer.measure(plan.run, self.config.timing, batch_as_graph=True)
        record["samples"], record["timing"] = measurement.as_record()
        after = self.device.clock_state()
        record["nvml"] = dict(after, before=before)
        # NVML is sampled, not traced: reading on both sides catches a clock dip that lasted the case.
        flags = sorted(set(self.device.clock_flags(before)) | set(self.device.clock_flags(after)))
        if measurement.stop not in ("converged", "median_converged"):
            flags.append("noise_target_missed")
        if self.config.energy_for(case):
            record["energy"] = self.energy.measure(plan, measurement)
            if record["energy"].get("settled") is False:
                flags.append("energy_not_settled")
        record["flags"] = tuple(flags)


def _install_sigterm() -> None:
    # SIGTERM (a CI timeout, a job scheduler) ends the run like Ctrl-C: the file keeps every finished case.
    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def run(config: Config, *, output: str | None = None, on_hang=None) -> RunSummary:
    """Start a new run of `config`; returns where it was written and how the cases ended. A case
    that makes no progress for the policy's case_limit_s is recorded as failed, then
    `on_hang(run path, case key, the limit in s)` replaces the process (it never returns)."""
    runner = Runner(config)
    run_id = run_file_name(runner.device.info["name"])
    path = new_run_path(output or config.output, runner.device.info["name"], run_id)
    cases = config.cases()
    variants_used = [registry.get(c.op, c.variant) for c in cases]
    unique = list({v.key: v for v in variants_used}.values())
    _warn_other_processes(runner)
    header = runner.header(run_id, unique, cases)
    with RunWriter(path, create=True) as writer:
        writer.append(header)
        return _run_cases(runner, writer, run_id, cases, done=set(), on_hang=on_hang)


def resume(path, on_hang=None) -> RunSummary:
    """Finish an interrupted run: re-expand its config from the header and run the missing cases.
    The writer's lock comes first: a second resume of the file is refused before it reads a line,
    and this one reads the file as no other writer can change it."""
    path = Path(path)
    load_run(path) if not path.is_file() else None  # a missing file or a folder: its one line
    with RunWriter(path, create=False) as writer:
        existing, config = resumable.resumable(path)
        runner = Runner(config)
        device = existing.device
        if device.get("uuid") and device["uuid"] != runner.device.info["uuid"]:
            raise UserError(f"{path}: was started on GPU {existing.header.device_name} {device['uuid']}, this is "
                            f"{runner.device.info['uuid']}; resume it on the same GPU or start a new run")
        repair_truncated_tail(path)
        done = {c.key for c in existing.cases}
        writer.append(RunResume(at=_now(), done_before=len(done)))
        return _run_cases(runner, writer, existing.header.run_id, config.cases(), done=done,
                          counts=existing.cases, on_hang=on_hang)


def _warn_other_processes(runner: Runner) -> None:
    others = runner.device.other_processes()
    if others:
        print(f"primbench: warning: other processes use this GPU (pids {', '.join(map(str, others))}); "
              "their work will disturb the timings", file=sys.stderr)


def order_cases(cases: list[CaseId], done=frozenset()) -> list[CaseId]:
    """The cases not yet done, in the order they run. Cases that share an input run one after
    another, so that each input (and its reference: an argsort and a host loop for the
    ill-conditioned one) is made once; otherwise in config order."""
    first_seen = {}
    for case in cases:
        first_seen.setdefault(input_key(case), len(first_seen))
    return sorted((c for c in cases if c.key not in done), key=lambda c: first_seen[input_key(c)])


def _run_cases(runner: Runner, writer, run_id: str, cases: list[CaseId], *, done: set, counts=(),
               on_hang=None) -> RunSummary:
    summary = RunSummary(path=writer.path)
    for record in counts:
        setattr(summary, record.status, getattr(summary, record.status) + 1)
    todo = order_cases(cases, done)
    progress = Progress(len(todo))
    _install_sigterm()
    limit = restart.hang_watch(runner, writer.append,
                               lambda record: on_hang(writer.path, record.key, runner.config.timing.case_limit_s)
                               if on_hang else None)
    try:
        for case in todo:
            progress.start(case)
            with limit.watching(case):
                record = runner.run_case(case, rng_seed_for(run_id, input_key(case)))
            writer.append(record)
            setattr(summary, record.status, getattr(summary, record.status) + 1)
            progress.line(describe_result(case, record, runner.device.info))
    except KeyboardInterrupt:
        summary.interrupted = True
        return summary
    except ContextLost as lost:
        # The failed case is kept; the run stops without an end record so that --resume, in a fresh
        # process, runs what is left. (Running each op in a restartable worker is the next step.)
        writer.append(lost.record)
        summary.failed += 1
        summary.context_lost = lost.record.key
        summary.keep_alive = runner
        return summary
    finally:
        limit.close()
        progress.close()
    writer.append(RunEnd(finished=_now(), ok=summary.ok, failed=summary.failed, skipped=summary.skipped))
    return summary
