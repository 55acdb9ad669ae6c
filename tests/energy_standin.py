"""Energy fields for rendering and comparing tests, before a real energy run exists in tests/data:
a copy of a real run with stand-in `energy` objects written into its header and cases. The
figures are made up from each case's own median (avg_w x op_ms), so tests can tell them apart;
they are never measurements and never leave a temporary folder."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np


def with_energy(source: Path, target: Path, *, watts=lambda key, i: 300.0 + 5.0 * (i % 50), idle_w: float = 75.0,
                only=lambda key: True) -> Path:
    """Write `source` (a run file) to `target` (plain .jsonl) with energy on every ok case `only` accepts."""
    opener = gzip.open if str(source).endswith(".gz") else open
    with opener(source, "rt") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    for i, obj in enumerate(lines):
        if obj.get("kind") == "header":
            obj["energy"] = {"available": True, "reason": None, "idle_w": idle_w, "counter_step_s": 0.1,
                             "method": "nvmlDeviceGetTotalEnergyConsumption", "policy": {}}
        elif obj.get("kind") == "case" and obj.get("status") == "ok" and only(obj["key"]):
            cold = obj.get("samples", {}).get("cold_ms") or []
            if not cold:
                continue
            op_ms = float(np.median(cold))
            w = float(watts(obj["key"], i))
            windows = [{"seconds": 0.5, "mj": w * 0.5 * 1e3 * f, "ops": 0.5e3 / op_ms, "op_ms": op_ms, "avg_w": w * f}
                       for f in (0.995, 1.0, 1.004)]
            pooled = sum(x["mj"] for x in windows) / sum(x["ops"] for x in windows)  # as the writer pools them
            obj["energy"] = {"mj_per_op": pooled, "avg_w": w, "peak_w": w * 1.05, "op_ms": op_ms, "windows": windows,
                             "ramp_s": 0.4, "settled": True, "window_s": 0.5, "counter_step_s": 0.1,
                             "counter_step_mj": w * 100.0, "ops_per_launch": 1, "method": "stream", "reason": None,
                             "discarded_windows": 0}
    target.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    return target
