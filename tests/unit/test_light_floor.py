"""`check --min-light F` (compare/light_floor.py): a case under F of its own speed of light fails,
among cases of at least --min-light-from minimal bytes, with or without a baseline of the GPU.
The runs are real H200 runs whose cases all have a measured light (tests/data/runs/energy-*)."""

import math
import shutil
import xml.etree.ElementTree as ElementTree

import pytest

from primbench.cli.main import main
from primbench.compare import light_floor
from primbench.runfile.frame import to_frame
from primbench.runfile.io import load_run
from tests.conftest import RUNS

BASE, NEW = RUNS / "energy-a.jsonl.gz", RUNS / "energy-b.jsonl.gz"


def _check(capsys, *arguments) -> tuple[int, str, str]:
    try:
        code = main(["check", *map(str, arguments)])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _expected_under(path, fraction, from_bytes=light_floor.DEFAULT_FROM_BYTES) -> set[str]:
    """Counted here from the frame's own columns, not through the module under test."""
    frame = to_frame(load_run(path))
    rows = frame[(frame["status"] == "ok") & (frame["bytes"] >= from_bytes) & (frame["pct_sol"] < 100 * fraction)]
    return set(rows["key"])


def test_the_floor_fails_exactly_the_big_cases_under_the_fraction_of_their_light():
    frame = to_frame(load_run(NEW))
    floor = light_floor.LightFloor(0.9)
    cases = light_floor.judge(frame, floor)
    failing = {case.key for case in light_floor.under(cases)}
    assert failing == _expected_under(NEW, 0.9) and 0 < len(failing) < len(frame)
    assert all(case.status == light_floor.MET for case in cases if case.key not in failing)
    # a bound above every case gates none of them, and says so
    none = light_floor.judge(frame, light_floor.LightFloor(0.9, from_bytes=2**40))
    assert light_floor.under(none) == [] and f"{len(frame)} smaller not gated" in light_floor.summary(none, floor)


def test_a_case_with_no_light_measured_is_counted_never_failed():
    frame = to_frame(load_run(NEW))
    frame.loc[frame.index[0], "pct_sol"] = math.nan
    cases = light_floor.judge(frame, light_floor.LightFloor(0.99))
    unknown = [case for case in cases if case.status == light_floor.UNKNOWN]
    assert [case.key for case in unknown] == [frame["key"].iloc[0]]
    assert "1 with no light measured, not gated" in light_floor.summary(cases, light_floor.LightFloor(0.99))


def test_check_with_a_baseline_fails_on_the_floor_alone_and_names_each_case(capsys):
    plain, _, _ = _check(capsys, NEW, "--baseline", BASE)
    code, out, _ = _check(capsys, NEW, "--baseline", BASE, "--min-light", "0.9")
    expected = _expected_under(NEW, 0.9)
    assert plain == 0 and code == 1
    assert f"light floor (90 % of light from 64 MiB): {len(expected)} of 34 case(s) under it" in out
    named = [line.split()[3] for line in out.splitlines() if line.startswith("  under the floor: ")]
    assert len(named) == light_floor.SHOWN and f"  ... and {len(expected) - light_floor.SHOWN} more under the floor" in out
    _, out, _ = _check(capsys, NEW, "--baseline", BASE, "--min-light", "0.9", "--all")
    assert {line.split()[3] for line in out.splitlines() if line.startswith("  under the floor: ")} == expected
    code, out, _ = _check(capsys, NEW, "--baseline", BASE, "--min-light", "0.001")  # full_sort: 0.3 % of its light
    assert code == 0 and "0 of 34 case(s) under it" in out


def test_without_a_baseline_of_the_gpu_the_floor_alone_gates(capsys, tmp_path, monkeypatch):
    run = tmp_path / "run.jsonl.gz"
    shutil.copy(NEW, run)
    monkeypatch.chdir(tmp_path)  # no results/baselines/ here
    junit = tmp_path / "floor.xml"
    code, out, err = _check(capsys, run, "--min-light", "0.5", "--junit", junit)
    expected = _expected_under(NEW, 0.5)
    assert code == (1 if expected else 0) and err == ""
    assert "no baseline for NVIDIA H200: the light floor alone gates this run" in out
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert int(suite.get("tests")) == 34 and int(suite.get("failures")) == len(expected)
    failed = {case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None}
    assert failed == expected
    # and without the floor, no baseline is still the one line it was
    code, _, err = _check(capsys, run)
    assert code == 2 and "no baseline for NVIDIA H200" in err


def test_the_config_sets_the_floor_and_the_command_line_wins():
    assert light_floor.floor_from(None, None, {"min_light": 0.8}) == light_floor.LightFloor(0.8)
    assert light_floor.floor_from(0.9, 2**20, {"min_light": 0.8, "min_light_from_bytes": 5}) == light_floor.LightFloor(0.9, 2**20)
    assert light_floor.floor_from(None, None, {}) is None


@pytest.mark.parametrize("arguments,words", [
    (["--min-light", "1.5"], "at most 1"), (["--min-light", "0"], "above 0"), (["--min-light", "nan"], "above 0"),
    (["--min-light-from", "1024"], "give --min-light too"),
])
def test_a_floor_out_of_range_is_one_line_and_exit_2(capsys, arguments, words):
    code, _, err = _check(capsys, NEW, "--baseline", BASE, *arguments)
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


@pytest.mark.parametrize("block,words", [
    ("{min_light: 2}", "at most 1"), ("{min_light: 0}", "above 0"), ("{min_light: 0.9, min_light_from_bytes: 0}", "minimum"),
    ("{min_light_from_bytes: 1.5}", "whole number"),
])
def test_the_config_keys_are_checked_where_they_are_written(tmp_path, block, words):
    from primbench.config.loading import load_config
    from primbench.errors import ConfigError

    path = tmp_path / "c.yaml"
    path.write_text(f"compare: {block}\nsweeps:\n  - op: reduce\n    variants: [vector_load_sum]\n    sizes: [1024]\n")
    with pytest.raises(ConfigError, match=words):
        load_config(path)
    path.write_text("compare: {min_light: 0.9, min_light_from_bytes: 1024}\nsweeps:\n  - op: reduce\n"
                    "    variants: [vector_load_sum]\n    sizes: [1024]\n")
    assert load_config(path).compare == {"min_light": 0.9, "min_light_from_bytes": 1024}


def test_the_report_marks_each_case_under_the_floor_its_config_sets(tmp_path):
    from primbench.report.render import render_report
    from tests.run_copies import edited_copy

    def set_floor(record):
        if record["kind"] == "header":
            record["config"]["compare"] = {**(record["config"].get("compare") or {}), "min_light": 0.9}

    floored = edited_copy(NEW, tmp_path / "floored.jsonl", set_floor)
    page = render_report(floored, tmp_path / "floored.html").read_text()
    badge = '<span class="badge bad" title="under the config&#39;s light floor: 90 % of light from 64 MiB (check fails it)">under floor</span>'
    assert page.count(badge) == len(_expected_under(NEW, 0.9))
    plain = render_report(NEW, tmp_path / "plain.html").read_text()
    assert "under floor</span>" not in plain


def test_a_case_with_no_bytes_is_never_gated_and_never_breaks_the_floor():
    import pandas as pd

    frame = pd.DataFrame({"status": ["ok", "ok", "ok"], "bytes": [math.nan, 2.0**27, 2.0**27],
                          "pct_sol": [50.0, math.nan, 80.0], "key": ["no bytes", "no light", "slow"]})
    cases = light_floor.judge(frame, light_floor.LightFloor(0.9))
    assert [(c.key, c.status) for c in cases] == [("no bytes", light_floor.SMALL), ("no light", light_floor.UNKNOWN),
                                                   ("slow", light_floor.UNDER)]
    assert light_floor.under_mask(frame, light_floor.LightFloor(0.9)).tolist() == [False, False, True]
