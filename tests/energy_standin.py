"""Energy fields for rendering and comparing tests that need figures a real run cannot give (watts
chosen per case, energy lost from one side; the real energy runs are tests/data/runs/energy-*): a
copy of a real run with stand-in `energy` objects written into its header and cases. The
figures are made up from each case's own median (avg_w x op_ms), so tests can tell them apart;
they are never measurements and never leave a temporary folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.run_copies import edited_copy


def with_energy(source: Path, target: Path, *, watts=lambda key, i: 300.0 + 5.0 * (i % 50), idle_w: float = 75.0,
                only=lambda key: True) -> Path:
    """Write `source` (a run file) to `target` (plain .jsonl) with energy on every ok case `only` accepts."""
    position = iter(range(10**9))  # the record's index, which `watts` may use

    def add_energy(obj):
        i = next(position)
        if obj.get("kind") == "header":
            obj["energy"] = {"available": True, "reason": None, "idle_w": idle_w, "counter_step_s": 0.1,
                             "method": "nvmlDeviceGetTotalEnergyConsumption", "policy": {}}
        elif obj.get("kind") == "case" and obj.get("status") == "ok" and only(obj["key"]):
            cold = obj.get("samples", {}).get("cold_ms") or []
            if not cold:
                return
            op_ms = float(np.median(cold))
            w = float(watts(obj["key"], i))
            windows = [{"seconds": 0.5, "mj": w * 0.5 * 1e3 * f, "ops": 0.5e3 / op_ms, "op_ms": op_ms, "avg_w": w * f}
                       for f in (0.995, 1.0, 1.004)]
            pooled = sum(x["mj"] for x in windows) / sum(x["ops"] for x in windows)  # as the writer pools them
            obj["energy"] = {"mj_per_op": pooled, "avg_w": w, "peak_w": w * 1.05, "op_ms": op_ms, "windows": windows,
                             "ramp_s": 0.4, "settled": True, "window_s": 0.5, "counter_step_s": 0.1,
                             "counter_step_mj": w * 100.0, "ops_per_launch": 1, "method": "stream", "reason": None,
                             "discarded_windows": 0}

    return edited_copy(source, target, add_energy, respell_keys=False)
