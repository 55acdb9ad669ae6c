"""`bench.py compare --html`: the comparison as one self-contained HTML page (no network, no CuPy).

Like the terminal and Markdown outputs (primbench/compare/digest.py), each section leads with what
changed: the changed pairs (and those set side by side) are the table's rows shown by default; the
rest are folded, one row per digest.Fold stating its counts, and the "show all" toggle shows every
pair. The ratio chart draws the cases the table shows by default, in the pairs' op order."""

from __future__ import annotations

from pathlib import Path

from primbench.compare import digest, verdicts
from primbench.compare.output import headline_ratio, interval, rows


def render_comparison(base, sections, out_path) -> Path:
    """Write the page comparing `base` with each (run, pairs, metric) of `sections`; return its path."""
    from primbench.report.render import write_page

    context = {"base": _describe(base),
               "sections": [_section(index, base, run, pairs, metric)
                            for index, (run, pairs, metric) in enumerate(sections, 1)]}
    return write_page("compare.html.j2", out_path, **context)


def _section(index: int, base, run, pairs, metric: str) -> dict:
    from primbench.report.charts import compare as compare_charts

    folds = digest.folds(pairs)
    shown, folded = rows(pairs), [p for fold in folds for p in fold.pairs]
    # Row ids carry the section's number: a page compares the baseline with several runs.
    table = [_row(p, metric, f"pair-{index}-{n}", folded=n > len(shown))
             for n, p in enumerate(shown + folded, 1)]
    row_id = {id(p): row["id"] for p, row in zip(shown + folded, table)}
    # The table's op order is the pairs' (the per-op summary and the folds follow it too); the
    # chart keeps it rather than the order in which changed cases happen to come first.
    op_order = list(dict.fromkeys(p.op for p in pairs))
    # The chart shows what the table shows by default; where nothing changed, the folded cases,
    # greyed, rather than an empty chart.
    charted = table[:len(shown)] or table[len(shown):]
    by_op = {op: [row for row in charted if row["op"] == op] for op in op_order}
    same_gpu = verdicts.same_gpu_model(base, run)
    return {
        "run": _describe(run),
        "index": index,
        "metric": metric,
        "same_gpu": same_gpu,
        "summary": verdicts.geometric_means(pairs),
        "ratio_chart": compare_charts.ratio_chart(by_op, metric, greyed=not shown),
        "chart_greyed": not shown,
        "chart_cases": sum(1 for row in charted if row["ratio"] == row["ratio"]),  # NaN != NaN: no ratio
        "legend": compare_charts.legend(row["verdict"] for row in charted if row["ratio"] == row["ratio"]),
        "peak_chart": None if same_gpu else compare_charts.peak_chart(table, base.device.get("name") or "baseline",
                                                                       run.device.get("name") or "new run"),
        "pairs": table,
        "shown": len(shown),
        "changed": len(digest.lead(pairs)),
        "folded": len(folded),
        "folds": [_fold(fold, row_id) for fold in folds],
        "below_floor": any(p.verdict == verdicts.BELOW_FLOOR for p in pairs),
    }


def _fold(fold: digest.Fold, row_id: dict) -> dict:
    """One folded line: its label, each class's count (BELOW_FLOOR with its range of moves), whether
    its code changed, and the row id of its first pair (its pairs are consecutive in the table)."""
    counts = [{"name": name, "count": count, "detail": detail} for name, count, detail in fold.classes()]
    return {"label": fold.label, "variants": fold.variants, "cases": len(fold.pairs), "counts": counts,
            "code": fold.code(), "first": row_id[id(fold.pairs[0])], "text": fold.line()}


def _row(p, metric: str, row_id: str, *, folded: bool) -> dict:
    return {"id": row_id, "folded": folded, "text": p.text, "op": p.op, "verdict": p.verdict,
            "base_us": p.base_ms * 1e3, "new_us": p.new_ms * 1e3, "ratio": headline_ratio(p, metric),
            "interval": interval(p, metric), "ci_low": (p.pct_peak_interval()[0] if metric == "pct_peak" else p.ci_low),
            "ci_high": p.ci_high, "figure": p.figure, "base_pct_peak": p.base_pct_peak,
            "new_pct_peak": p.new_pct_peak, "code_changed": p.code_changed,
            "threshold_pct": p.threshold * 100 if p.verdict in verdicts.SPEED_VERDICTS else None, "note": p.note}


def _describe(run) -> dict:
    device = run.device
    return {"name": run.path.name, "device": device.get("name") or "unknown GPU", "peak_gbps": device.get("peak_gbps"),
            "git": run.git.get("sha"), "started": run.header.started,
            "published": verdicts.is_published(run)}
