"""The A/B rule of `primbench ab` (primbench/run/ab.py), and its pairing of cases; no GPU."""

import math

import pytest

from primbench.config import subset
from primbench.measuring.timing import Interleaved
from primbench.run import ab


def test_the_verdict_needs_an_interval_clear_of_one_and_a_move_past_the_threshold():
    assert ab.verdict(1.031, 1.028, 1.034, 0.01) == "SLOWER"
    assert ab.verdict(0.95, 0.94, 0.96, 0.01) == "FASTER"
    assert ab.verdict(1.002, 0.998, 1.006, 0.01) == "SAME"  # holds 1
    assert ab.verdict(1.004, 1.002, 1.006, 0.01) == "SAME"  # real but within 1 %
    assert ab.verdict(1.03, 0.99, 1.07, 0.01) == "UNSURE"  # holds 1, but too wide to rule out a 2 % change
    assert ab.verdict(1.05, 0.80, 1.30, 0.01) == "UNSURE"
    assert ab.verdict(1.001, 0.988, 1.008, 0.01) == "SAME"  # holds 1 and rules out 2 %
    assert ab.verdict(1.008, 1.002, 1.014, 0.01) == "UNSURE"  # clear of 1, but maybe past 1 % and maybe not
    assert ab.verdict(1.5, math.nan, math.nan, 0.01) == "UNSURE"


def test_a_and_b_share_every_point_of_the_sweep():
    config = subset.variant_config(("reduce/vector_load_sum", "reduce/cub_device_reduce"), sizes=(2**20, 2**28), blocks=None)
    pairs = ab.pairs_of(config, "reduce/vector_load_sum", "reduce/cub_device_reduce")
    assert [(a.n, b.n) for a, b in pairs] == [(2**20, 2**20), (2**28, 2**28)]
    assert all(b.variant == "cub_device_reduce" and (a.dtype, a.distribution) == (b.dtype, b.distribution) for a, b in pairs)
    assert all(a.block == 256 and b.block is None for a, b in pairs)  # the library keeps its own choice
    same = ab.pairs_of(subset.variant_config(("reduce/vector_load_sum",), sizes=(1000,), blocks=None),
                       "reduce/vector_load_sum", "reduce/vector_load_sum")
    assert [(a, b) for a, b in same] == [(same[0][0], same[0][0])]  # A against itself: the very same case


class _InterleavingStandIn:
    """A timer whose B side is 4 % slower than A, with a little noise; it records the setups."""

    def __init__(self):
        self.setups = None

    def interleaved(self, operations, rounds, setups=None):
        import numpy

        self.setups = setups
        rng = numpy.random.default_rng(1)
        a = list(0.250 * (1 + 0.001 * rng.standard_normal(rounds)))
        b = list(0.260 * (1 + 0.001 * rng.standard_normal(rounds)))
        again = [list(0.250 * (1 + 0.001 * rng.standard_normal(rounds))) for _ in operations[2:]]  # the A/A slice
        return Interleaved([a, b, *again], [[1980.0] * rounds for _ in operations])


def test_primbench_ab_of_two_callables_uses_the_clis_rule(monkeypatch):
    import contextlib

    import primbench
    from primbench.measuring import measure

    timer = _InterleavingStandIn()
    monkeypatch.setattr(measure, "callers_timer", lambda: contextlib.nullcontext((None, timer)))
    reset = lambda: None  # noqa: E731
    result = primbench.ab(lambda: None, lambda: None, rounds=50, setup_b=reset, label="sum vs sum + 4 %")
    assert result.verdict == "SLOWER" and 1.03 < result.ci_low <= result.ratio <= result.ci_high < 1.05
    assert (result.ratio, result.ci_low, result.ci_high, result.verdict) == ab.judge(result.a_ms, result.b_ms, result.aa_ms,
                                                                                    threshold=0.01)
    assert timer.setups == [None, reset, None] and len(result.aa_ms) == 56  # fn_a again; 50 rounds up to 7 cycles of 8
    assert str(result).startswith("sum vs sum + 4 %: A 250") and result.to_dict()["verdict"] == "SLOWER"
    clocks = result.to_dict()["clock_mhz"]
    assert clocks["b"] == [1980.0] * 56 and len(clocks["aa"]) == 56 and result.to_dict()["throttled_rounds"] == 0
    for bad in ({"rounds": 1}, {"threshold": 1.5}):
        with pytest.raises(ValueError):
            primbench.ab(lambda: None, lambda: None, **bad)
