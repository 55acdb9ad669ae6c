"""Hostile inputs to energy, clocks and the JUnit text found by a blind sweep (2026-12-04): energy
windows each of whose counts is in range while their quotients are not (1e-321 mJ over one
operation, 100 mJ in a picosecond), an idle draw above a case's, an NVML clock of 1e303 MHz, a
run header whose timing holds an integer past any float, a newly failing case in JUnit, and a
config's energy glob that selects no case. Every command refuses the damaged file in one line
naming the field, exit 2, nothing changed; what it accepts prints no inf, nan or negative energy."""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest

from primbench.runfile.io import load_run
from tests.conftest import RUNS
from tests.hostile import harness
from tests.hostile.corpus import good_records, write_records
from tests.hostile.test_runfile_validator import COMMANDS, _cli, _first_case, _refused

READERS = ["report", "compare", "compare as baseline", "check", "check baseline",
           "export csv", "export gbench-json", "export nvbench-json"]
STEADY = {"seconds": 0.5, "mj": 100000.0, "ops": 1000.0}  # 200 W, 100 mJ and 0.5 ms an operation


def _with_energy(windows, header_idle_w=None, **case_fields) -> list[dict]:
    records = good_records()
    case = _first_case(records)
    case["energy"] = {"windows": windows}
    case.update(case_fields)
    if header_idle_w is not None:
        records[0]["energy"] = {"available": True, "reason": None, "idle_w": header_idle_w, "counter_step_s": 0.1}
    return records


# Each count within its own bounds; the figure readers divide out of them is not.
QUOTIENTS = {
    "mJ per operation under a nanojoule": ({"seconds": 0.5, "mj": 1e-321, "ops": 1}, ("'energy.windows[1]' gives", "mJ per operation")),
    "mJ per operation rounding to 0": ({"seconds": 0.5, "mj": 1e-300, "ops": 1e18}, ("'energy.windows[1]' gives", "mJ per operation")),
    "a picosecond window at 100 GW": ({"seconds": 1e-12, "mj": 100, "ops": 10}, ("'energy.windows[1]' gives 1e+11 W",)),
    "a draw under a watt": ({"seconds": 100.0, "mj": 1.0, "ops": 10}, ("'energy.windows[1]' gives 1e-05 W",)),
    # JSON holds integers past any float: the field itself refuses them, before any division.
    "mJ of 400 digits": ({"seconds": 0.5, "mj": 10**400, "ops": 10}, ("'energy.windows[1].mj'",)),
    "operations of 400 digits": ({"seconds": 0.5, "mj": 1.0, "ops": 10**400}, ("'energy.windows[1].ops'",)),
    "seconds of 400 digits": ({"seconds": 10**400, "mj": 1.0, "ops": 10}, ("'energy.windows[1].seconds'",)),
}


@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("damage", QUOTIENTS, ids=list(QUOTIENTS))
def test_a_window_whose_quotients_no_gpu_gives_is_refused_by_every_reader(tmp_path, damage, command):
    window, says = QUOTIENTS[damage]
    _refused(tmp_path, COMMANDS[command], _with_energy([STEADY, window]), says=("bad.jsonl:2:", *says))


def test_a_recorded_mj_per_operation_under_a_nanojoule_is_refused(tmp_path):
    records = _with_energy([])
    _first_case(records)["energy"] = {"mj_per_op": 1e-321}
    _refused(tmp_path, COMMANDS["export csv"], records, says=("'energy.mj_per_op'", "from 1e-06 to 1e+12"))


def _accepted(tmp_path: Path, records: list[dict]) -> dict[str, str]:
    """Every reader's output for a run the validator accepts: {command: what it printed or wrote}."""
    folder = tmp_path / "accepted"
    folder.mkdir(parents=True)
    write_records(folder / "good.jsonl", good_records())
    write_records(folder / "run.jsonl", records)
    said = {}
    for command, argv, written in (
            ("report", ["report", "run.jsonl", "-o", "out.html"], "out.html"),
            ("compare", ["compare", "good.jsonl", "run.jsonl"], None),
            ("export csv", ["export", "run.jsonl", "--format", "csv"], None),
            ("export gbench-json", ["export", "run.jsonl", "--format", "gbench-json", "-o", "out.json"], "out.json"),
            ("export nvbench-json", ["export", "run.jsonl", "--format", "nvbench-json", "-o", "nv.json"], "nv.json")):
        outcome = harness.run_cli(argv, folder, tmp_path / "output" / command.replace(" ", "-"))
        assert outcome.code == 0 and "Traceback" not in outcome.stderr, (command, outcome.stderr[-400:])
        said[command] = (folder / written).read_text(encoding="utf-8") if written else outcome.stdout
    return said


def test_the_largest_and_smallest_windows_accepted_give_finite_figures_everywhere(tmp_path):
    # At the validator's edges (1e-6 mJ an operation at 1 W; 1e12 mJ at 1e6 W), every output is a number.
    edges = [{"seconds": 1.0, "mj": 1000.0, "ops": 1e9}, {"seconds": 1000.0, "mj": 1e12, "ops": 1.0}]
    for index, window in enumerate(edges):
        records = _with_energy([window])
        path = tmp_path / f"edge{index}.jsonl"
        write_records(path, records)
        row = load_run(path).frame().iloc[0]
        for column in ("energy_mj", "energy_w", "gb_per_j"):
            assert math.isfinite(row[column]) and row[column] > 0, (column, row[column])
        said = _accepted(tmp_path / f"edge{index}", records)
        for command, text in said.items():
            assert not re.search(r"\b(-?inf|infinity)\b", text, re.IGNORECASE), command
        # The CSV writes NaN for a figure a case lacks (export/csv_table.py); the case with energy lacks none.
        header, first = (line.split(",") for line in said["export csv"].splitlines()[:2])
        for column in ("energy_mj", "energy_w", "gb_per_j"):
            assert math.isfinite(float(first[header.index(column)])) and float(first[header.index(column)]) > 0, column


def test_an_idle_draw_above_a_cases_draw_gives_no_negative_energy_above_idle(tmp_path):
    for idle_w, expected in ((1000.0, None), (120.0, (200.0 - 120.0) * 0.5)):
        path = tmp_path / f"idle{idle_w:g}.jsonl"
        write_records(path, _with_energy([STEADY], header_idle_w=idle_w))
        above = load_run(path).frame().iloc[0]["energy_above_idle_mj"]
        assert math.isnan(above) if expected is None else above == pytest.approx(expected)
    page = _accepted(tmp_path, _with_energy([STEADY], header_idle_w=1000.0))["report"]
    assert "mJ above idle" in page and not re.search(r"[-\u2212][0-9.,]+ mJ above idle", page)


@pytest.mark.parametrize("command", ["export nvbench-json", "report", "check"])
@pytest.mark.parametrize("field, value", [("sm_clock_mhz", 1e303), ("mem_clock_mhz", -5.0), ("power_w", 1e9),
                                          ("temperature_c", -500.0)])
def test_an_nvml_reading_no_gpu_gives_is_refused(tmp_path, command, field, value):
    records = good_records()
    case = _first_case(records)
    case["samples"].pop("cold_clock_mhz", None)
    case.setdefault("nvml", {})[field] = value
    _refused(tmp_path, COMMANDS[command], records, says=("bad.jsonl:2:", f"'nvml.{field}'"))


@pytest.mark.parametrize("command", ["resume", "profile"])
@pytest.mark.parametrize("setting", [("min_time_s",), ("max_noise",), ("min_samples",), ("energy", "min_ramp_s"),
                                     ("energy", "windows")], ids=lambda s: ".".join(s))
def test_a_header_timing_of_an_integer_past_any_float_is_one_line(tmp_path, command, setting):
    # A YAML config refuses numbers past 30 digits; a run header's JSON can hold 10^400.
    # An interrupted run of today's schema (resume reads its header's config; the corpus's good run is schema 2).
    records = [json.loads(line) for line in gzip.decompress((RUNS / "energy-a.jsonl.gz").read_bytes()).decode().splitlines()][:-1]
    timing = records[0]["config"].setdefault("timing", {})
    if setting[0] == "energy":
        timing["energy"] = {setting[1]: 10**400}
    else:
        timing[setting[0]] = 10**400 if setting[0] != "min_samples" else -(10**400)
    line = _refused(tmp_path, COMMANDS[command], records, says=("(header)", f"timing.{'.'.join(setting)}"))
    assert "a number of over 30 digits" in line


def test_a_newly_failing_case_in_junit_has_no_p_of_nan(tmp_path):
    records = good_records()
    case = _first_case(records)
    case.update(status="failed", reason="by hand: wrong sum")  # its samples kept, as a run may
    records[-1].update(ok=records[-1]["ok"] - 1, failed=records[-1].get("failed", 0) + 1)
    outcome, _ = _cli(tmp_path, ["check", "{bad}", "--baseline", "{good}", "--junit", str(tmp_path / "check.xml")], records)
    text = (tmp_path / "check.xml").read_text()
    assert outcome.code == 1 and "FAILED" in text
    assert "nan" not in text.lower() and "p = -." in text


@pytest.mark.parametrize("cases", ["[reduce/vectorload_sum]", "[nomatch/*]", "['*', scan/*]"])
def test_an_energy_glob_that_selects_no_case_is_one_line_naming_it(tmp_path, cases):
    config = tmp_path / "energy.yaml"
    config.write_text(f"timing:\n  energy:\n    cases: {cases}\n"
                      "sweeps:\n  - {op: reduce, variants: [vector_load_sum], sizes: [2^20], block_sizes: [256]}\n")
    outcome, lines = _cli(tmp_path, ["run", str(config), "--dry-run"])
    assert outcome.code == 2 and len(lines) == 1 and "energy.yaml:3: timing.energy.cases[" in lines[0], outcome.stderr
    assert "matches no case of the sweeps" in lines[0]
    config.write_text(config.read_text().replace(f"cases: {cases}", "cases: [reduce/vector_*]"))
    outcome, lines = _cli(tmp_path, ["run", str(config), "--dry-run"])
    assert outcome.code == 0 and "energy for 1 of them" in outcome.stdout, outcome.stdout + outcome.stderr
