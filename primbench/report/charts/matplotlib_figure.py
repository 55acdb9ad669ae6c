"""What the one matplotlib chart left (the compare page's % of peak scatter across GPU models)
needs: a bare Agg figure with margins set in inches, its SVG data URI, and run-file text made safe
as a matplotlib label. The report's own charts are inline SVG (svg.py)."""

from __future__ import annotations

import base64
import io

FIGURE_DPI = 100  # 12 in = 1200 px: the content column at 1280 px, drawn 1:1


def figure(width: float, height: float, *, left: float = 0.8, right: float = 0.25, top: float = 0.45,
           bottom: float = 0.6, rows: int = 1, columns: int = 1, hspace: float = 0.55, wspace: float = 0.25):
    """A figure `width` x `height` inches and its axes, with fixed margins in inches."""
    headless_matplotlib()  # the Agg backend, whatever MPLBACKEND says, before matplotlib draws
    from matplotlib.figure import Figure

    # A bare Figure (no pyplot) keeps no global state between charts and needs no display.
    fig = Figure(figsize=(width, height), dpi=FIGURE_DPI)
    axes = fig.subplots(rows, columns, squeeze=False)
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height,
                        hspace=hspace, wspace=wspace)
    return fig, [axis for row in axes for axis in row]


def headless_matplotlib():
    """matplotlib, drawing with Agg whatever MPLBACKEND says: matplotlib reads that variable when it
    is first imported and raises on a value it does not know (MPLBACKEND=junk), and primbench only
    ever draws into files. Set before the import, so the user's value is never parsed."""
    import os
    import sys

    if "matplotlib" not in sys.modules:
        os.environ["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg", force=True)
    return matplotlib


def data_uri(fig) -> str:
    """The figure as an SVG data URI. SVG, not PNG: nothing is rasterised or compressed, so drawing
    is faster (docs/perf-notes.md, "Rendering the report") and the charts stay sharp at any zoom. Text is drawn as paths (each glyph once, then reused), so a
    chart looks the same whatever fonts the reader's machine has. A fixed hash salt and no date
    make the same chart the same bytes, so a report is reproducible."""
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "primbench"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def label(text) -> str:
    """Run-file text as a matplotlib label: a '$' would start mathtext, a leading '_' hides it."""
    text = str(text).replace("$", r"\$")
    return " " + text if text.startswith("_") else text
