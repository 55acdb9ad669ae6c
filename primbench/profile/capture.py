"""`primbench profile CONFIG`: every selected case's plan run once under Nsight Compute (ncu), in a
child process (primbench/profile/child.py), with one fixed set of counters per kernel launch.

Timing never runs under ncu: ncu locks the clocks to base and replays each kernel once per group of
counters, so its durations are not the run's. The counters explain the timings instead (the bytes
each kernel really moves, its bank conflicts, its divergence, its occupancy) and land in a counters
file beside the run (profile/counters.py reads ncu's CSV; runfile/counters.py writes the file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from primbench.errors import UserError
from primbench.resources import child_environment
from primbench.runfile.locations import RESULTS_DIR

# What each counter is for (docs/counters.md): the name primbench stores -> ncu's metric.
METRICS = {
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "l2_hit_rate_pct": "lts__t_sector_hit_rate.pct",
    "shared_load_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_store_bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "shared_load_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_store_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "active_threads_per_warp": "smsp__average_thread_inst_executed_per_inst_executed.ratio",
    "predicated_on_threads_per_warp": "smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio",
    "thread_instructions_pred_on": "smsp__thread_inst_executed_pred_on.sum",
    "divergent_branches": "smsp__sass_branch_targets_threads_divergent.sum",
    "uniform_branch_pct": "smsp__sass_average_branch_targets_threads_uniform.pct",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "registers_per_thread": "launch__registers_per_thread",
    "local_load_bytes": "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "local_store_bytes": "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    "issue_slot_pct": "sm__inst_issued.avg.pct_of_peak_sustained_active",
    "warp_instructions": "smsp__inst_executed.sum",
    "thread_instructions": "smsp__thread_inst_executed.sum",
    "fp32_add": "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "fp32_mul": "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "fp32_fma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "duration_ns": "gpu__time_duration.sum",
    "sm_clock_hz": "smsp__cycles_elapsed.avg.per_second",
}
NCU_TIMEOUT_S = 3600


def _usual_places() -> tuple[str, ...]:
    home = os.environ.get("CUDA_HOME")
    return (*([f"{home}/bin/ncu"] if home else []), "/usr/local/cuda/bin/ncu")


def find_ncu() -> str:
    """ncu on the PATH, or in the CUDA toolkit's usual places."""
    for candidate in (shutil.which("ncu"), *_usual_places()):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise UserError("profile: Nsight Compute (ncu) is not installed here; it comes with the CUDA toolkit "
                    "(put its bin/ on the PATH, or set CUDA_HOME)")


def ncu_command(ncu: str, request: Path, manifest: Path, log: Path, metrics=None) -> list[str]:
    """The child under ncu: only the profiler ranges profiled, every counter in base units."""
    return [ncu, "--profile-from-start", "off", "--target-processes", "all",
            "--metrics", ",".join((metrics or METRICS).values()), "--csv", "--page", "raw", "--print-units", "base",
            "--log-file", str(log),
            sys.executable, "-m", "primbench.profile.child", str(request), str(manifest)]


def capture(config_path: str | None, folder: Path, *, run_path=None, only=None, sizes=None, blocks=None,
            plugins=()) -> tuple[Path, Path]:
    """Run the child under ncu on a config's cases (or a run file's, by its header); (ncu's CSV log,
    the child's manifest) in `folder`."""
    ncu = find_ncu()
    folder.mkdir(parents=True, exist_ok=True)
    request, manifest, log = folder / "profile-request.json", folder / "profile-manifest.json", folder / "ncu.csv"
    request.write_text(json.dumps({"config": None if config_path is None else str(config_path),
                                   "run": None if run_path is None else str(run_path), "only": list(only) if only else None,
                                   "sizes": list(sizes) if sizes else None, "blocks": list(blocks) if blocks else None,
                                   "plugins": [str(p) for p in plugins]}), encoding="utf-8")
    try:
        # ncu hands its environment to the child: PYTHONPATH lets the child import this primbench
        # from the scratch folder, whether primbench is installed or run from a clone.
        done = subprocess.run(ncu_command(ncu, request, manifest, log), timeout=NCU_TIMEOUT_S, encoding="utf-8",
                              errors="replace", env=child_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired:
        raise UserError(f"profile: ncu ran past {NCU_TIMEOUT_S} s; profile fewer cases (--only, --sizes)") from None
    if not manifest.is_file():
        from primbench.profile.counters import check_ncu_errors

        check_ncu_errors(log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "")
        last = [line for line in done.stdout.splitlines() if line.strip() and not line.startswith("==")][-1:]
        raise UserError(f"profile: the profiled process stopped (ncu exit {done.returncode}): "
                        f"{(last[0] if last else 'no output')[:200]}")
    return log, manifest


def profile_cases(target: str, *, output=None, only=None, sizes=None, blocks=None, plugins=(),
                  trust_plugins: bool = False) -> tuple[Path, list]:
    """Counters for each case a config or a run file (`target`) selects, narrowed by `only` (the
    --only patterns, as given), `sizes` and `blocks` (the --sizes and --blocks text), written to
    `output`: by default beside the run (merged with what that file holds), or under results/<gpu>/
    for a config. Returns (the file, its cases). A run file's own plugins are imported only when
    `plugins` (--plugin) names each or `trust_plugins` confirms them, and that is decided first; then
    the target and the output are checked before the filters, and everything before ncu runs."""
    import datetime as dt
    import tempfile

    from primbench.config import subset
    from primbench.measuring.device import require_gpu
    from primbench.outputs import check_writable, write_atomically
    from primbench.profile.counters import cases_from_capture
    from primbench.run.runner import git_state
    from primbench.runfile import counters
    from primbench.runfile.io import gpu_slug, is_run_file

    path = Path(target)
    is_run = is_run_file(path)
    if is_run and not path.is_file():
        raise UserError(f"{path}: no such run file")
    header = _confirmed_header(path, plugins, trust_plugins) if is_run else None
    if trust_plugins and not is_run:
        raise UserError(f"profile: --trust-plugins-from-run goes with a run file; {str(path)[:200]} is a config, whose "
                        "plugins are imported as it names them")
    output = Path(output) if output else (counters.counters_path_for(path) if is_run else None)
    check_writable(output)
    old = None
    if output is not None and output.is_file():  # a file that is not a counters file is refused before ncu runs
        about_old, cases_old = counters.load(output)
        old = counters.document(cases_old, about=about_old)
    sizes, blocks = subset.parse_sizes(sizes), subset.parse_sizes(blocks, "--blocks")
    only = subset.parse_patterns(only)
    selected, run_gpu = _selected_cases(path, header, only, sizes, blocks)  # config and filter mistakes before ncu
    require_gpu()
    print(f"profile: {len(selected)} cases under Nsight Compute ({len(METRICS)} counters each; every kernel is "
          "replayed once per group of counters)", flush=True)
    with tempfile.TemporaryDirectory(prefix="primbench-profile-") as scratch:
        log, manifest_path = capture(None if is_run else resolve_config(target), Path(scratch),
                                     run_path=path if is_run else None, only=only, sizes=sizes, blocks=blocks,
                                     plugins=plugins)
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        cases = cases_from_capture(log.read_text(encoding="utf-8", errors="replace"), manifest, METRICS)
    device = manifest.get("device") or {}
    if run_gpu and device.get("name") != run_gpu:
        raise UserError(f"profile: {path.name} was measured on {run_gpu}, this GPU is "
                        f"{device.get('name') or 'unknown GPU'}; counters describe a run only on its own GPU model "
                        "(nothing written)")
    if output is None:
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d-%H%M%S")
        slug = gpu_slug(device.get("name", "gpu"))
        output = RESULTS_DIR / slug / f"{stamp}-{slug}-profile{counters.COUNTERS_SUFFIX}"
    about = {"created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
             "tool": {"name": "primbench", "version": _version()}, "git": git_state(), "device": device,
             "ncu": {"version": ncu_version()}, "metrics": dict(METRICS), "run": path.name if is_run else None}
    write_atomically(output, json.dumps(counters.merged(_same_source(old, about, output), cases, about), indent=1))
    return output, cases


def _confirmed_header(path: Path, plugins, trusted: bool):
    """The run file's header, once the plugins it names are confirmed (--plugin each, or
    --trust-plugins-from-run): a run file is data, and its config, read next, imports them."""
    from primbench import registry
    from primbench.runfile.io import load_run

    header = load_run(path).header
    registry.check_run_plugins(path, header.config.get("plugins"), plugins, trusted=trusted)
    return header


def _selected_cases(target: Path, header, only, sizes, blocks) -> tuple[list, str | None]:
    """(the cases to profile, the GPU model the run was measured on; None for a config): a run
    file's by its `header`, a config's (header None) by the file."""
    from primbench.config import subset
    from primbench.config.loading import config_from_header, load_config

    run_gpu = None
    if header is not None:
        config, run_gpu = config_from_header(header, target), header.device_name
    else:
        config = load_config(resolve_config(str(target)))
    return subset.narrow(config, only=only, sizes=sizes, blocks=blocks).cases(), run_gpu


def _same_source(old: dict | None, about: dict, output: Path) -> dict | None:
    """The file's earlier counters, kept only if the same GPU model and ncu version made them:
    counts from two sources side by side would read as one profile."""
    if old is None:
        return None
    before = ((old.get("device") or {}).get("name"), (old.get("ncu") or {}).get("version"))
    now = ((about.get("device") or {}).get("name"), about["ncu"]["version"])
    if before != now:
        print(f"profile: {output} held counters from {before[0]} with ncu {before[1]}; they are replaced, not merged")
        return None
    return old


def resolve_config(argument: str) -> str:
    from primbench.resources import bundled_config

    path = Path(argument)
    if path.is_file():
        return str(path)
    bundled = bundled_config(argument)
    if bundled is None:
        raise UserError(f"{argument[:200]}: no such config or run file; give a YAML config or a run file (.jsonl[.gz])")
    return str(bundled)


def ncu_version() -> str:
    try:
        done = subprocess.run([find_ncu(), "--version"], capture_output=True, encoding="utf-8", errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired, UserError):
        return "unknown"
    lines = [line for line in done.stdout.splitlines() if line.startswith("Version")]
    return lines[0].removeprefix("Version").strip() if lines else "unknown"


def _version() -> str:
    from primbench.version import __version__

    return __version__
