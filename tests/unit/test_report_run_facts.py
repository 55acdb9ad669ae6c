"""The run as the page tells it (report/run_facts.py): the header's nested sections as dotted rows,
and the copy probe's raw samples summarized, the chosen method's and each alternative's."""

from __future__ import annotations

import types

import pytest

from primbench.report.run_facts import flatten, recorded


def test_nested_header_sections_become_dotted_rows_and_lists_stay_whole():
    rows = flatten({"name": "H200", "clocks": {"sm": {"max": 1980}, "mem": 3201}, "empty": {}, "ids": [1, 2]})
    assert rows == [("name", "H200"), ("clocks.sm.max", 1980), ("clocks.mem", 3201), ("empty", {}), ("ids", [1, 2])]
    assert flatten(None) == []  # a run that never recorded the section


def _run(copy: dict):
    header = types.SimpleNamespace(
        device={"name": "H200"}, software={}, host={}, tool={}, timing={}, energy=None, copy=copy,
        config={}, config_path="c.yaml", config_hash="h", variants={}, schema=4)
    return types.SimpleNamespace(header=header, git={"sha": "abc"}, cases=[], warnings=[], copy_gbps=4000.0)


def test_the_copy_probe_gives_its_median_time_and_each_alternative_as_median_gb_per_s():
    copy = {"n": 2**28, "bytes": 2**31, "method": "cupy.copyto", "samples_ms": [0.6, 0.5, 0.7],
            "alternatives": {"cudaMemcpyAsync": [1.0, 0.25, 0.5], "kernel": []}}
    probe = recorded(_run(copy))["copy_bandwidth"]
    assert probe["median_us"] == pytest.approx(600.0) and probe["samples"] == 3
    assert probe["rows"] == [("n", 2**28), ("bytes", 2**31), ("method", "cupy.copyto")]  # no raw samples
    assert probe["alternatives"] == [
        {"method": "cudaMemcpyAsync", "gbps": pytest.approx(2**31 / 0.5e-3 / 1e9), "samples": 3},
        {"method": "kernel", "gbps": None, "samples": 0},  # measured nothing: no figure, not a zero
    ]


def test_a_probe_without_samples_has_no_median_time():
    assert recorded(_run({"method": "cupy.copyto"}))["copy_bandwidth"]["median_us"] is None
