"""`bench.py compare --html`: the comparison as one self-contained HTML page (no network, no CuPy)."""

from __future__ import annotations

from pathlib import Path

from primbench import compare
from primbench.compare_output import headline_ratio, interval, rows


def render_comparison(base, sections, out_path) -> Path:
    """Write the page comparing `base` with each (run, pairs, metric) of `sections`; return its path."""
    from primbench.report.render import write_page

    context = {"base": _describe(base), "sections": []}
    for run, pairs, metric in sections:
        shown = rows(pairs, everything=True)
        context["sections"].append({
            "run": _describe(run),
            "metric": metric,
            "same_gpu": compare.same_gpu_model(base, run),
            "summary": compare.geometric_means(pairs),
            "pairs": [{"text": p.text, "verdict": p.verdict, "base_us": p.base_ms * 1e3, "new_us": p.new_ms * 1e3,
                       "ratio": headline_ratio(p, metric), "interval": interval(p), "base_pct_peak": p.base_pct_peak, "new_pct_peak": p.new_pct_peak,
                       "threshold_pct": p.threshold * 100 if p.verdict in compare.SPEED_VERDICTS else None, "note": p.note}
                      for p in shown],
        })
    return write_page("compare.html.j2", out_path, **context)


def _describe(run) -> dict:
    device = run.device
    return {"name": run.path.name, "device": device.get("name") or "unknown GPU", "peak_gbps": device.get("peak_gbps"),
            "git": run.git.get("sha"), "started": run.header.started,
            "published": compare.is_published(run)}
