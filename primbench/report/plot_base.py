"""What every chart of the report shares: a bare Agg figure with margins set in inches (no
constrained layout, no tight bounding box: each costs a second layout pass of every text), the
SVG data URI, line styles that tell many lines apart, and log2 axes whose tick labels never meet."""

from __future__ import annotations

import base64
import io
import math

FIGURE_DPI = 100  # 12 in = 1200 px: the content column at 1280 px, drawn 1:1
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<")
# Saturated colours only (tab10 and four darker ones): no pale shade on white, neighbours differ.
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#393b79", "#bcbd22", "#843c39", "#637939", "#7b4173", "#636363")
LEGEND_FONT = 7.5  # points
CHAR_WIDTH = 0.55  # of the font size: an average character of DejaVu Sans


def figure(width: float, height: float, *, left: float = 0.8, right: float = 0.25, top: float = 0.45,
           bottom: float = 0.6, rows: int = 1, columns: int = 1, hspace: float = 0.55, wspace: float = 0.25):
    """A figure `width` x `height` inches and its axes, with fixed margins in inches."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    # A bare Figure (no pyplot) keeps no global state between charts and needs no display.
    fig = Figure(figsize=(width, height), dpi=FIGURE_DPI)
    axes = fig.subplots(rows, columns, squeeze=False)
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height,
                        hspace=hspace, wspace=wspace)
    return fig, [axis for row in axes for axis in row]


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


def legend_width(labels, fontsize: float = LEGEND_FONT) -> float:
    """Inches a one-column legend of `labels` takes (handle, text, padding): the right margin."""
    longest = max((len(str(text)) for text in labels), default=0)
    return 0.75 + longest * fontsize * CHAR_WIDTH / 72


def side_legend(axis, fontsize: float = LEGEND_FONT, **kwargs) -> None:
    axis.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **kwargs)


def line_styles(count: int) -> list[dict]:
    """Colour, marker and line style for `count` lines: colour and marker cycle at different
    periods, so no two of the first 100 lines share all three."""
    return [{"color": COLOURS[i % len(COLOURS)], "marker": MARKERS[i % len(MARKERS)],
             "linestyle": ("-", "--", ":")[(i // len(COLOURS)) % 3]} for i in range(count)]


def styles_by_variant(variants) -> dict:
    """A fixed style per variant, so that one variant looks the same in every plot of an op."""
    return dict(zip(variants, line_styles(len(variants))))


def styles_for(variants, styles):
    styles = styles or {}
    spare = iter(line_styles(len(variants) + len(styles)))
    return [styles.get(v) or next(spare) for v in variants]


def spaced_ticks(values, *, width_in: float, label_in: float = 0.45) -> list:
    """Of the (positive) values, those that get a tick on a log2 axis `width_in` inches wide, so
    that no two labels meet: powers of two first, others only where they leave room (1000 next
    to 1024 gets no tick of its own)."""
    values = sorted({float(v) for v in values if v and v > 0})
    if not values:
        return []
    span = max(math.log2(values[-1]) - math.log2(values[0]), 1.0)
    gap = span * label_in / max(width_in, 0.5)  # in log2 units: one label's width
    powers = [v for v in values if math.log2(v).is_integer()]
    chosen: list[float] = []
    for value in powers + [v for v in values if v not in powers]:
        if all(abs(math.log2(value) - math.log2(c)) >= gap for c in chosen):
            chosen.append(value)
    return sorted(chosen)


def log2_axis(axis, values, *, as_powers: bool, width_in: float) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_xscale("log", base=2)
    axis.xaxis.set_major_locator(FixedLocator(spaced_ticks(values, width_in=width_in)))
    axis.xaxis.set_minor_locator(NullLocator())
    axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: pow2_label(v) if as_powers else f"{v:g}"))


def plain_log_labels(axis) -> None:
    """Label a log axis 50, 100, 200 (not 5 x 10^1): the major decades and the 2 and 5 between."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.6g}"))
    axis.set_minor_formatter(NullFormatter())


SUPERSCRIPTS = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def pow2_label(value: float) -> str:
    """2 to a power as '2' and superscript digits: plain text, since parsing mathtext ('$2^{10}$')
    took a third of a chart's time."""
    exponent = math.log2(value) if value > 0 else 0.5
    if abs(exponent - round(exponent)) < 1e-9:
        return "2" + str(int(round(exponent))).translate(SUPERSCRIPTS)
    return f"{value:g}"


def finish(fig, axis, title: str, *, from_zero: bool = True, grid_axis: str = "both", grid_which: str = "major",
           legend: bool = True) -> str:
    """Common ending: y from 0 (not on a log axis), title, grid, legend beside the plot; the URI."""
    if from_zero:
        axis.set_ylim(bottom=0)
    axis.set_title(label(title), fontsize=10, loc="left")
    axis.grid(alpha=0.3, axis=grid_axis, which=grid_which)
    if legend:
        side_legend(axis)
    return data_uri(fig)
