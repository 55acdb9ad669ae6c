"""One way to say how fast one time is against another (formats.py): "N× faster" from 1.1,
"N % faster" below it, "N % slower" below 1, "N× slower" from twice the time; 2-3 significant
digits, never 0.00, and blank where there is nothing to state."""

import math

import pytest

from primbench.report import formats
from primbench.report.formats import format_faster, format_faster_cell, format_time_ratio, format_times

NBSP = "\u00a0"


@pytest.mark.parametrize(("speedup", "words"), [
    (13.8504, "13.9× faster"),
    (321.67, "322× faster"),
    (1.25, "1.25× faster"),
    (1.1, "1.10× faster"),  # 1.1 itself is a multiple
    (1.0996, "1.10× faster"),  # prints as 10 %: a multiple too, never "10 % faster" beside "1.10× faster"
    (1.0994, "9.9 % faster"),
    (1.04, "4.0 % faster"),
    (1.001, "0.10 % faster"),
    (1.0, "neither faster nor slower"),
    (1.00001, "neither faster nor slower"),  # under 0.01 %: equal times, or float rounding of them
    (0.99999, "neither faster nor slower"),
    (0.999, "0.10 % slower"),
    (0.93, "7.5 % slower"),  # 1 / 0.93 = 1.075: this takes 7.5 % longer
    (0.502, "99 % slower"),
    (0.5, "2.0× slower"),  # twice the time
    (0.25, "4.0× slower"),
    (1 / 3.5, "3.5× slower"),
    (0.00314, "318× slower"),
    (1.995, "2.0× faster"),  # the figure as printed picks the digits: not "2.00×"
])
def test_a_speedup_reads_in_words(speedup, words):
    assert format_faster(speedup) == words


@pytest.mark.parametrize(("ratio", "words"), [
    (0.0722, "13.9× faster"),
    (0.00314, "318× faster"),  # top-k's two stages against the full sort: once "0.00314× the time of"
    (1 / 321.67, "322× faster"),
    (1.0, "neither faster nor slower"),
    (1 / 0.93, "7.5 % slower"),
    (4.0, "4.0× slower"),
    (1 / 1.04, "4.0 % faster"),
])
def test_a_time_over_a_baseline_reads_as_the_speedup_it_is(ratio, words):
    assert format_time_ratio(ratio) == words


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf, 0, 0.0, -0.0, -2.5, "text", float("nan")])
def test_nothing_to_state_is_blank(value):
    # No time is zero or below, and an infinite ratio is a missing time: blank, like every filter.
    assert format_faster(value) == format_time_ratio(value) == format_faster_cell(value) == ""
    assert formats.format_time_ratio_cell(value) == ""


def test_a_ratio_too_small_for_a_float_reciprocal_is_blank():
    assert format_time_ratio(5e-324) == ""  # 1 / 5e-324 overflows to inf


@pytest.mark.parametrize("speedup", [1e-9, 1e-3, 0.0999, 0.9, 0.99, 0.9998, 1.0002, 1.01, 1.09, 2, 9.99, 99.96, 1e3, 1e5])
def test_no_figure_is_zero_and_none_has_more_than_three_significant_digits(speedup):
    words = format_faster(speedup)
    figure = words.split()[0].rstrip("×").replace(",", "")
    assert float(figure) > 0 and not figure.startswith("0.00"), words
    digits = figure.replace(".", "").lstrip("0")
    assert 1 <= len(digits) <= 3 or float(figure).is_integer(), words  # 12,345× keeps its integer


def test_a_speedup_and_its_inverse_mirror_each_other_in_percent():
    for speedup in (1.001, 1.02, 1.075):
        assert format_faster(speedup).replace("faster", "slower") == format_faster(1 / speedup)


def test_a_cell_is_one_line_and_says_same_time_for_equal_times():
    assert format_faster_cell(13.8504) == f"13.9×{NBSP}faster"
    assert format_faster_cell(0.93) == f"7.5{NBSP}%{NBSP}slower"
    assert format_faster_cell(1.0) == f"same{NBSP}time"
    assert formats.format_time_ratio_cell(0.00314) == f"318×{NBSP}faster"
    assert formats.format_time_ratio_cell(1 / 0.93) == f"7.5{NBSP}%{NBSP}slower"


@pytest.mark.parametrize(("value", "text"), [
    (1.38, "1.38×"), (13.85, "13.8×"), (505.0, "505×"), (12345.6, "12,346×"), (0.00314, "0.00314×"),
    (0.99999, "1.00×"), (0.0, "0×"), (-0.0, "0×"), (None, ""), (math.nan, ""), (math.inf, ""), (-1.0, ""),
])
def test_a_plain_multiple_keeps_its_digits(value, text):
    assert format_times(value) == text


def test_every_ratio_filter_is_registered_on_the_pages():
    from primbench.report.render import _environment

    filters = _environment().filters
    assert filters["faster"] is format_faster and filters["time_ratio"] is format_time_ratio
    assert filters["faster_cell"] is format_faster_cell and filters["time_ratio_cell"] is formats.format_time_ratio_cell
    assert filters["times"] is format_times
    page = _environment().from_string("{{ r | time_ratio }} than {{ b }}; {{ s | faster_cell }}")
    assert page.render(r=0.0722, b="cub_histogram_even", s=0.25) == f"13.9× faster than cub_histogram_even; 4.0×{NBSP}slower"
