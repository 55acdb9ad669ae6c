"""`bench.py compare --html`: the comparison as one self-contained HTML page (no network, no CuPy)."""

from __future__ import annotations

from pathlib import Path

from primbench.compare import verdicts
from primbench.compare.output import headline_ratio, interval, rows


def render_comparison(base, sections, out_path) -> Path:
    """Write the page comparing `base` with each (run, pairs, metric) of `sections`; return its path."""
    from primbench.report import compare_plots
    from primbench.report.render import write_page

    context = {"base": _describe(base), "sections": []}
    for run, pairs, metric in sections:
        table = [_row(p, metric) for p in rows(pairs, everything=True)]
        by_op: dict = {}
        for row in table:
            by_op.setdefault(row["op"], []).append(row)
        same_gpu = verdicts.same_gpu_model(base, run)
        context["sections"].append({
            "run": _describe(run),
            "metric": metric,
            "same_gpu": same_gpu,
            "summary": verdicts.geometric_means(pairs),
            "ratio_chart": compare_plots.ratio_chart(by_op, metric),
            "peak_chart": None if same_gpu else compare_plots.peak_chart(table, base.device.get("name") or "baseline",
                                                                          run.device.get("name") or "new run"),
            "pairs": table,
            "hidden": sum(1 for row in table if row["verdict"] == verdicts.SAME and not row["code_changed"]),
        })
    return write_page("compare.html.j2", out_path, **context)


def _row(p, metric: str) -> dict:
    return {"text": p.text, "op": p.op, "verdict": p.verdict, "base_us": p.base_ms * 1e3, "new_us": p.new_ms * 1e3,
            "ratio": headline_ratio(p, metric), "interval": interval(p), "ci_low": p.ci_low, "ci_high": p.ci_high,
            "base_pct_peak": p.base_pct_peak, "new_pct_peak": p.new_pct_peak, "code_changed": p.code_changed,
            "threshold_pct": p.threshold * 100 if p.verdict in verdicts.SPEED_VERDICTS else None, "note": p.note}


def _describe(run) -> dict:
    device = run.device
    return {"name": run.path.name, "device": device.get("name") or "unknown GPU", "peak_gbps": device.get("peak_gbps"),
            "git": run.git.get("sha"), "started": run.header.started,
            "published": verdicts.is_published(run)}
