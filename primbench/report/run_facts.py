"""The run itself as the page tells it: its facts at the top (id, GPU, when, which commit, how it
ended, which figure the "% light" column shows) and its header as recorded at the bottom (device,
copy probe, software, host, commit, tool, timing policy, config, variants, the libraries it could
not time)."""

from __future__ import annotations

import dataclasses
import json
import math

from primbench.report.missing_baselines import missing_baselines
from primbench.runfile import stats
from primbench.runfile.io import run_stem


def run_facts(run, frame, device_name: str) -> dict:
    """The run itself: id, GPU, when, which commit, how it ended."""
    header, git = run.header, run.git
    end = dataclasses.asdict(run.end) if run.end else {}
    light_column = _light_column(run)
    return {
        "id": header.run_id or run_stem(run.path),
        "path": run.path.name,
        "device_name": device_name,
        "started": header.started,
        "finished": end.get("finished"),
        "interrupted": run.end is None,  # a run file without an end record was cut short
        "git_sha": git.get("sha"),
        "git_dirty": git.get("dirty"),
        "end": end,
        "resumes": [dataclasses.asdict(resume) for resume in run.resumes],
        "case_count": len(run.cases),
        "status_counts": dict(frame["status"].value_counts()) if not frame.empty else {},
        # Which figure the tables' "% light" column shows: the case's speed of light at its own
        # byte count where the run measured the sized probes; else (runs made before them, with
        # only the 1 GiB read probe) % of the peak read; else (before schema 4) % of the copy.
        "light_column": light_column,
        "has_sol": light_column == "pct_sol",
    }


def _light_column(run) -> str:
    if any(run.sized_ceilings_gbps.values()):
        return "pct_sol"
    return "pct_peak_read" if math.isfinite(run.read_gbps) else "pct_copy"


def recorded(run) -> dict:
    """The header as recorded: its sections as rows (flatten), the config and the variants, and what
    the page derives from them: the copy probe's figures, the libraries missing."""
    header = run.header
    sections = (("device", header.device), ("software", header.software), ("host", header.host), ("git", run.git),
                ("tool", header.tool), ("timing", header.timing),
                ("energy", header.energy))  # energy: [] for a run that never asked for it
    return {
        **{name: flatten(section) for name, section in sections},
        "min_clock_fraction": header.timing.get("min_clock_fraction") or 0.75,
        "throttled": sum(int(record.timing.get("throttled_discarded") or 0) for record in run.cases),
        "config_path": header.config_path,
        "config_hash": header.config_hash,
        "config_json": json.dumps(header.config, indent=2, ensure_ascii=False, default=str),
        "variants": sorted(
            header.variants.values(),
            key=lambda v: (str(v.get("op")), v.get("order") or 0, str(v.get("name"))),
        ),
        "warnings": list(run.warnings),
        "schema": header.schema,
        "copy_bandwidth": _copy_probe(run),
        "missing_baselines": [missing.line for missing in missing_baselines(run)],  # libraries not installed
    }


def _copy_probe(run) -> dict:
    """The copy probe as recorded, its samples summarized: the chosen method's median time, and each
    method measured but not chosen as median GB/s."""
    copy = run.header.copy
    samples = copy.get("samples_ms") or []
    return {
        "median_gbps": run.copy_gbps,
        "samples": len(samples),
        "rows": flatten({k: v for k, v in copy.items() if k not in ("samples_ms", "alternatives")}),
        "alternatives": _copy_alternatives(copy),
        "median_us": stats.summarize(samples).median * 1e3 if samples else None,
    }


def _copy_alternatives(copy: dict) -> list[dict]:
    """The copy methods measured but not chosen, as median GB/s from their raw samples."""
    rows = []
    for method, samples in (copy.get("alternatives") or {}).items():
        summary = stats.summarize(samples or [])
        gbps = stats.bandwidth_gbps(copy.get("bytes") or 0, summary.median) if summary else None
        rows.append({"method": method, "gbps": gbps, "samples": summary.count if summary else 0})
    return rows


def flatten(mapping, prefix: str = "") -> list[tuple[str, object]]:
    """Nested header dicts as (dotted key, value) rows; lists stay whole."""
    rows = []
    for key, value in (mapping or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, name + "."))
        else:
            rows.append((name, value))
    return rows
