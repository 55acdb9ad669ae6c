"""Every chart of the reference report tells the truth it claims: the "fits in L2" band holds only
cases whose own bytes fit in L2, each point names a case of the run, colours do not repeat, and
no caption, label or title shows an empty value."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from primbench.report.charts.svg import COLOURS, line_style
from primbench.report.render import render_report
from primbench.runfile.io import load_run

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference" / "nvidia-h200.jsonl.gz"
EMPTY_VALUE = re.compile(r"(=|:)\s*(:|,|\)|$)|=\s\s|\bat n =\s+for\b")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    render_report(REFERENCE, out)
    html = out.read_text(encoding="utf-8")
    charts = [ET.fromstring(svg) for svg in re.findall(r"<svg\b.*?</svg>", html, re.S)]
    return load_run(REFERENCE), html, charts


def _points(chart):
    return [a for a in chart.iter("a") if "point" in (a.get("class") or "").split()]


def test_every_case_inside_an_l2_band_fits_in_l2_by_its_own_bytes(reference):
    run, _, charts = reference
    l2_bytes = run.device["l2_bytes"]
    bytes_of = {record.key: record.bytes for record in run.cases}
    banded = 0
    for chart in charts:
        for band in (r for r in chart.iter("rect") if r.get("class") == "band"):
            banded += 1
            edge = float(band.get("data-n-max"))
            inside = [p for p in _points(chart) if p.get("data-n") and int(p.get("data-n")) <= edge]
            too_big = [p.get("data-key") for p in inside if bytes_of[p.get("data-key")] > l2_bytes]
            assert not too_big, (chart.get("aria-label"), too_big[:5])
            # The band is not drawn past what the cases say: the first size right of it overflows L2.
            outside = [p for p in _points(chart) if p.get("data-n") and int(p.get("data-n")) > edge]
            assert not outside or any(bytes_of[p.get("data-key")] > l2_bytes for p in outside), chart.get("aria-label")
    assert banded >= 5  # every op's bandwidth chart has its band


def test_top_k_is_banded_in_rows_where_its_bytes_say_not_over_the_whole_chart(reference):
    run, _, charts = reference
    (topk,) = [c for c in charts if (c.get("aria-label") or "").startswith("topk: bandwidth vs size")]
    (band,) = [r for r in topk.iter("rect") if r.get("class") == "band"]
    rows = sorted({int(p.get("data-n")) for p in _points(topk)})
    assert rows[0] <= float(band.get("data-n-max")) < rows[-1]  # 512 rows x 129,280 logits overflow L2
    assert any(t.text == "n (rows, log2)" for t in topk.iter("text"))


def test_every_point_names_a_case_of_the_run_and_links_to_its_row(reference):
    run, html, charts = reference
    keys = {record.key for record in run.cases}
    row_ids = set(re.findall(r'<tr id="([^"]+)"', html))
    linked = 0
    for chart in charts:
        for point in _points(chart):
            title = point.find("title")
            assert title is not None and title.text.strip(), chart.get("aria-label")
            if point.get("data-key"):
                assert point.get("data-key") in keys
            if point.get("href"):
                linked += 1
                assert point.get("href")[1:] in row_ids, point.get("href")
    assert linked > 500


def test_lines_of_one_chart_never_share_a_colour_up_to_twenty():
    assert len(set(COLOURS)) == len(COLOURS) == 20
    assert len({line_style(i)["colour"] for i in range(20)}) == 20
    assert len({tuple(line_style(i).values()) for i in range(100)}) == 100  # marker and dash go on


def test_the_reduce_charts_with_19_lines_draw_19_colours(reference):
    _, _, charts = reference
    (reduce_chart,) = [c for c in charts if (c.get("aria-label") or "").startswith("reduce: bandwidth vs size")]
    colours = [line.get("stroke") for line in reduce_chart.iter("polyline") if line.get("data-series")]
    assert len(colours) >= 15 and len(set(colours)) == len(colours)


def test_no_caption_label_or_title_shows_an_empty_value_or_markup(reference):
    _, html, charts = reference
    captions = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", html, re.S)]
    assert len(captions) == len(charts)  # a caption for every chart
    for text in captions + [c.get("aria-label") for c in charts]:
        assert text.strip() and not EMPTY_VALUE.search(" ".join(text.split())), text
    for chart in charts:
        for title in chart.iter("title"):
            assert "<" not in title.text and title.text.strip(), title.text
    # The check can fail: the captions these pages once had.
    for bad in ("n = : variants measured at more than one block size.", "at n =  for 19 variants"):
        assert EMPTY_VALUE.search(bad), bad


FLOAT_BLOCK = re.compile(r"\(\d+\.\d+\)|\bblock \d+\.\d+")  # "(256.0)", "block 256.0"


def test_every_block_size_a_chart_prints_is_an_integer(reference):
    _, _, charts = reference
    texts = [t.text for chart in charts for t in chart.iter("text")] + \
            [t.text for chart in charts for t in chart.iter("title")]
    assert sum("(256)" in text for text in texts) > 10  # the bars' labels name their blocks
    floats = [text for text in texts if FLOAT_BLOCK.search(text)]
    assert not floats, floats[:5]
    assert FLOAT_BLOCK.search("seed004_global_atomic[bins=256] (256.0)")  # the check can fail


def test_no_two_labels_of_any_chart_overlap(reference):
    from tests.svg_labels import label_boxes, overlapping_labels

    _, _, charts = reference
    assert sum(len(label_boxes(chart)) for chart in charts) > 1000  # every tick, name and value was measured
    found = {chart.get("aria-label"): overlapping_labels(chart) for chart in charts}
    assert not any(found.values()), {label: pairs[:3] for label, pairs in found.items() if pairs}


def test_the_label_check_sees_labels_that_overlap_upright_or_turned():
    from tests.svg_labels import overlapping_labels

    def svg(*texts):
        return ET.fromstring(f'<svg font-size="11">{"".join(texts)}</svg>')

    apart = svg('<text x="10" y="20">vector_load_sum</text>', '<text x="10" y="34">cub_device_reduce</text>')
    assert overlapping_labels(apart) == []
    assert overlapping_labels(svg('<text x="10" y="20">vector_load_sum</text>',
                                  '<text x="100" y="24" text-anchor="end">cub</text>'))
    # A name beside the constant-power line's name, which is turned along the line (the reduce chart's once).
    line = '<text x="700" y="100" font-size="10" transform="rotate(-20 700 100)">median draw, 519 W: the same power all along</text>'
    assert overlapping_labels(svg(line, '<text x="780" y="76" font-size="10">vector_fixed_tree_deterministic</text>'))
    assert not overlapping_labels(svg(line, '<text x="500" y="60" font-size="10">vector_fixed_tree_deterministic</text>'))


def _bar_lengths(chart):
    """(bar, its data-value, (axis, origin, length)) of each bar of a chart: a horizontal bar's left
    edge and width, a vertical one's bottom edge and height."""
    for bar in (a for a in chart.iter() if "bar" in (a.get("class") or "").split()):
        rect = bar.find("rect")
        x, y, width, height = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        vertical = "vertical" in bar.get("class").split()
        yield bar, bar.get("data-value"), ("y", y + height, height) if vertical else ("x", x, width)


def test_every_bar_starts_at_zero_so_its_length_is_its_value_and_log_axes_draw_dots(reference):
    _, _, charts = reference
    bars = dots = 0
    for chart in charts:
        scale: dict = {}
        for bar, value, (axis, origin, length) in _bar_lengths(chart):
            assert value is not None, (chart.get("aria-label"), bar.find("title").text)  # a bar says what it shows
            bars += 1
            # Bars from one origin share one scale from 0: length / value the same for each (to the px).
            per = scale.setdefault((axis, round(origin)), length / float(value))
            assert abs(length - per * float(value)) <= 1.0, (chart.get("aria-label"), bar.find("title").text)
        dots += sum(1 for a in chart.iter() if "dot" in (a.get("class") or "").split())
    assert bars > 50 and dots > 30  # the ranked, per-op, top-k and energy bars; the story's and the log charts' dots
    label = "Summing 2²⁵ float32: time and energy per step of the progression"
    (story,) = [c for c in charts if c.get("aria-label") == label]
    assert not [b for b, _, (axis, origin, _) in _bar_lengths(story) if origin < 900]  # its times (40 µs to 8 ms): dots


def _hue_saturation(colour: str) -> tuple[float, float]:
    import colorsys

    red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    hue, _, saturation = colorsys.rgb_to_hsv(red, green, blue)
    return hue, saturation


def _mark_colour(point) -> str | None:
    shape = next((e for e in point if e.tag in ("circle", "polygon", "rect") and e.get("class") != "target"), None)
    return shape.get("fill") if shape is not None else None


@pytest.fixture(scope="module")
def series_of_anchor(reference):
    from primbench.report.anchors import with_anchors
    from primbench.report.selection import annotated_frame

    frame = with_anchors(annotated_frame(reference[0]))
    return dict(zip(frame["anchor"], frame["series"]))


def test_a_colour_means_one_series_on_every_chart_and_each_chart_names_its_series(reference, series_of_anchor):
    from primbench.report.charts.series_styles import series_colour

    _, _, charts = reference
    meaning: dict = {}  # colour -> the series it marks, over the whole page
    marks = 0
    for chart in charts:
        drawn = set()
        for point in _points(chart):
            series, colour = series_of_anchor.get((point.get("href") or "#")[1:]), _mark_colour(point)
            if series is None or colour is None:
                continue  # a mark of no case of the run (a published device's time, the host's loop)
            marks += 1
            drawn.add(series)
            assert meaning.setdefault(colour, series) == series, (chart.get("aria-label"), colour, series, meaning[colour])
            # A shade of the series' own colour: the same hue (and a grey stays grey).
            (hue, saturation), (own_hue, own_saturation) = _hue_saturation(colour), _hue_saturation(series_colour(series))
            assert (saturation < 0.05) == (own_saturation < 0.05), (chart.get("aria-label"), colour, series)
            assert own_saturation < 0.05 or min(abs(hue - own_hue), 1 - abs(hue - own_hue)) < 0.02, (colour, series)
        named = {item.get("data-series") for key in chart.iter("g") if key.get("class") == "series-key"
                 for item in key.iter("g")}
        assert drawn <= named, (chart.get("aria-label"), drawn - named)  # the key names every series drawn
    assert marks > 500 and len(set(meaning.values())) == 7  # harris, seed000, seed004, textbook, beyond, accuracy, library
    (topk,) = [c for c in charts if c.get("aria-label") == "topk: time of each kernel per input"]
    marks = [e for e in topk.iter() if "point" in (e.get("class") or "").split()]
    # seed004's two kernels in one colour and beyond's fused one in another, at every vocabulary.
    assert len(marks) > 40 and len({_mark_colour(mark) for mark in marks}) == 2


def test_each_roofline_point_links_to_its_own_case(reference):
    _, _, charts = reference
    (roofline,) = [c for c in charts if (c.get("aria-label") or "").startswith("roofline")]
    points = _points(roofline)
    assert len(points) > 20
    for point in points:
        op, variant = point.find("title").text.split(" at n = ")[0].split("/", 1)
        assert point.get("href").split("/")[:2] == ["#" + op, variant.split("[")[0]], point.get("href")
