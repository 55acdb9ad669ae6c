"""The HTML report of a run: tables (pandas), plots (matplotlib), render (jinja2). No CuPy here."""

from primbench.report.render import render_report

__all__ = ["render_report"]
