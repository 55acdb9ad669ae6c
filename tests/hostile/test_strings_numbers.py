"""Every string and number survives every writer (issue 37, items 5 and 6, and the first corpus's
leftovers). Run-file text (a hostname, a failure reason, a variant name) holding escape sequences,
lone surrogates, bidirectional overrides, markup and formulas reaches the terminal, Markdown, JUnit,
CSV, JSON and HTML only escaped; numbers in a config or on the command line are read with limits,
ASCII digits only, and refused in one line. Every run here is a copy of
tests/data/runs/progression.jsonl.gz with strings edited in (a test-only transformation)."""

from __future__ import annotations

import csv
import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import primbench.cli.main  # noqa: F401 (imported once here: each forked case then starts at once)
from primbench.runfile.case_id import CaseId
from tests.hostile import harness
from tests.hostile.corpus import GOOD_RUN, good_records, write_records

# An OSC retitling the terminal, a BEL, a colour, a lone surrogate, markup, a formula, a pipe, a
# backtick, a newline, a right-to-left override.
EVIL = "\x1b]0;pwned\x07\x1b[31m<script>alert(1)</script>\ud800 =HYPERLINK(\"x\")|`x`\nsecond\u202e"
EVIL_VARIANT = "=cmd\x1b[2J\ud800<b>"
ACTS_ON_A_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SWEEP = "sweeps:\n  - {op: reduce, variants: [reduce2_sequential], sizes: [1024]}\n"


def _edited_run(path: Path, *, hostname=None, device=None, reason=None, variant=None) -> Path:
    """The small real run with the given strings put in: the hostname, the GPU's name, the second
    case failed with `reason`, the third case's variant renamed (its key respelled); the end record
    counts what the cases now say."""
    records = good_records()
    header, cases, end = records[0], [r for r in records if r["kind"] == "case"], records[-1]
    if hostname is not None:
        header["host"]["hostname"] = hostname
    if device is not None:
        header["device"]["name"] = device
    if reason is not None:
        cases[1].update(status="failed", reason=reason)
        end.update(ok=end["ok"] - 1, failed=end["failed"] + 1)
    if variant is not None:
        cases[2]["variant"] = variant
        cases[2]["key"] = CaseId.from_record(cases[2]).key
    write_records(path, records)
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    """good.jsonl (the small real run) and evil.jsonl (it with EVIL as hostname and failure reason,
    and EVIL_VARIANT as a variant's name)."""
    where = tmp_path / "case"
    where.mkdir()
    (where / "good.jsonl").write_bytes(gzip.decompress(GOOD_RUN.read_bytes()))
    _edited_run(where / "evil.jsonl", hostname=EVIL, reason=EVIL, variant=EVIL_VARIANT)
    return where


def _cli(argv, folder: Path):
    return harness.run_cli(argv, folder, folder.parent / "output")


def _one_line(outcome, code: int, *fragments: str) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"exit {outcome.code}; stderr {outcome.stderr[-600:]!r}"
    assert outcome.code == code and "Traceback" not in outcome.stderr + outcome.stdout, where
    assert len(lines) == 1 and lines[0].startswith("primbench"), where
    assert all(fragment in lines[0] for fragment in fragments), where
    assert not ACTS_ON_A_TERMINAL.search(lines[0]), where
    return lines[0]


def _finished(outcome, code: int = 0) -> None:
    """A command that took hostile text and did its work: its exit code, no traceback, at most
    one line of progress on stderr, and nothing on either stream that a terminal would act on."""
    where = f"exit {outcome.code}; stderr {outcome.stderr[-600:]!r}; stdout {outcome.stdout[-300:]!r}"
    assert outcome.code == code and "Traceback" not in outcome.stderr + outcome.stdout, where
    assert len([line for line in outcome.stderr.splitlines() if line.strip()]) <= 1, where
    assert not ACTS_ON_A_TERMINAL.search(outcome.stdout + outcome.stderr), where


def _unchanged(folder: Path, before: dict, *written: str) -> None:
    after = harness.fingerprint([folder])
    assert {path: digest for path, digest in after.items() if Path(path).name not in written} == before


# -- item 5: every writer survives every string ------------------------------------------------
def test_compare_prints_hostile_names_and_reasons_with_nothing_a_terminal_acts_on(folder):
    before = harness.fingerprint([folder])
    outcome = _cli(["compare", "good.jsonl", "evil.jsonl", "--all"], folder)
    _finished(outcome)
    assert "\\x1b]0;pwned" in outcome.stdout and "=cmd\\x1b[2J\\ud800" in outcome.stdout  # shown, as escapes
    _unchanged(folder, before)


def test_check_escapes_hostile_text_in_the_terminal_the_markdown_and_the_junit(folder):
    before = harness.fingerprint([folder])
    outcome = _cli(["check", "--baseline", "good.jsonl", "evil.jsonl", "--markdown", "c.md", "--junit", "j.xml"], folder)
    _finished(outcome, code=1)  # the failing case is a regression
    markdown = (folder / "c.md").read_text(encoding="utf-8")
    outside_code = re.sub(r"(`+)(?:.+?)\1", "", markdown)  # a code span shows its text literally
    assert not re.search(r"(?<!\\)<(?!/?(details|summary)>)", outside_code) and not ACTS_ON_A_TERMINAL.search(markdown)
    reason_row = next(line for line in markdown.splitlines() if "pwned" in line)
    assert "\\<script\\>" in reason_row and "\\|" in reason_row and "second" in reason_row  # escaped, on one row
    assert "`reduce/=cmd\\x1b[2J\\ud800<b>/" in markdown  # a case key is a code span: shown literally
    suite = ET.parse(folder / "j.xml").getroot()  # it parses: no character XML forbids
    texts = [text for element in suite.iter() for text in (element.text or "", *element.attrib.values())]
    assert any("<script>" in text for text in texts) and not any(ACTS_ON_A_TERMINAL.search(text) for text in texts)
    _unchanged(folder, before, "c.md", "j.xml")


def test_replicas_prints_a_hostile_hostname_as_escapes(folder):
    before = harness.fingerprint([folder])
    outcome = _cli(["replicas", "good.jsonl", "evil.jsonl"], folder)
    _finished(outcome)
    assert "\\x1b]0;pwned\\x07" in outcome.stdout and "\\u202e" in outcome.stdout
    _unchanged(folder, before)


def test_baseline_names_a_hostile_gpu_as_escapes(folder):
    _edited_run(folder / "gpu.jsonl", device="NVIDIA\x1b]0;pwned\x07 H200\ud800")
    before = harness.fingerprint([folder])
    outcome = _cli(["baseline", "gpu.jsonl", "--folder", str(folder.parent / "kept")], folder)
    _finished(outcome)
    assert "NVIDIA\\x1b]0;pwned\\x07 H200\\ud800" in outcome.stdout
    _unchanged(folder, before)


def test_list_prints_a_plugins_hostile_text_as_escapes_and_refuses_a_hostile_name(folder):
    def plugin(name: str) -> str:
        return ("import dataclasses\nfrom primbench import registry\nfrom primbench.api import register_variant\n"
                f"register_variant(dataclasses.replace(registry.get('reduce', 'vector_load_sum'), name={name!r}, "
                "series='s\\x1b]0;t\\x07', origin='o\\x1b[2J\\ud800', order=999, version=1, notes='n'))\n")

    (folder / "evil_plugin.py").write_text(plugin("evil_red"))
    (folder / "evil_name.py").write_text(plugin("evil\x1b[31mred"))
    before = harness.fingerprint([folder])
    outcome = _cli(["list", "--op", "reduce", "--plugin", "evil_plugin.py"], folder)
    _finished(outcome)
    assert "reduce/evil_red" in outcome.stdout and "s\\x1b]0;t\\x07" in outcome.stdout
    # A name is refused before it is printed anywhere (primbench/declarations.py), shown as an escape.
    _one_line(_cli(["list", "--plugin", "evil_name.py"], folder), 2, "evil_name.py: line 4", "'evil\\x1b[31mred'")
    _unchanged(folder, before)


def test_an_error_line_shows_a_junk_files_name_and_a_gpus_name_as_escapes(folder):
    runs = folder / "runs"
    runs.mkdir()
    (runs / "a.jsonl").write_bytes((folder / "good.jsonl").read_bytes())
    (runs / "\x1b]0;pwned\x07.jsonl").write_text("junk\n")
    _edited_run(folder / "gpu.jsonl", device="\x1b[2JGPU\x07")
    before = harness.fingerprint([folder])
    line = _one_line(_cli(["compare", "runs"], folder), 2, "\\x1b]0;pwned\\x07.jsonl")
    assert "rename it" in line
    _one_line(_cli(["check", "gpu.jsonl"], folder), 2, "no baseline for \\x1b[2JGPU\\x07")
    _unchanged(folder, before)


def test_csv_cells_a_spreadsheet_would_run_start_with_a_quote_and_numbers_stay_numbers(folder):
    _edited_run(folder / "formulas.jsonl", hostname=EVIL, device="@SUM(A1)", reason="+1+cmd|' /C calc'!A0",
                variant="-2+3")
    before = harness.fingerprint([folder])
    _finished(_cli(["export", "formulas.jsonl", "--format", "csv", "-o", "f.csv"], folder))
    rows = list(csv.DictReader((folder / "f.csv").open(encoding="utf-8", newline="")))
    failed = next(row for row in rows if row["status"] == "failed")
    renamed = next(row for row in rows if row["variant"] != "reduce2_sequential" and row["key"].startswith("reduce/-2"))
    assert failed["reason"] == "'+1+cmd|' /C calc'!A0" and failed["gpu"] == "'@SUM(A1)" and renamed["variant"] == "'-2+3"
    assert all(float(row["median_us"]) > 0 for row in rows)  # figures are numbers, never quoted
    text = (folder / "f.csv").read_text(encoding="utf-8")
    assert not ACTS_ON_A_TERMINAL.search(text.replace("\n", ""))
    _unchanged(folder, before, "f.csv")


def test_a_csv_cell_quotes_only_text_a_negative_number_is_written_as_it_is():
    from primbench.export.csv_table import _cell

    assert _cell(-1.5) == -1.5 and _cell(-3) == -3
    assert [_cell(text) for text in ("-1.5", "=1", "+1", "@x", "\tx", "\rx", " =1", "ok")] == \
        ["'-1.5", "'=1", "'+1", "'@x", "' x", "' x", "' =1", "ok"]


@pytest.mark.parametrize("form", ["gbench-json", "nvbench-json", "github-action"])
def test_json_exports_write_lone_surrogates_as_escape_text_so_any_json_reader_takes_them(folder, form):
    before = harness.fingerprint([folder])
    _finished(_cli(["export", "evil.jsonl", "--format", form, "-o", "e.json"], folder))
    text = (folder / "e.json").read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)\\u[dD][89a-fA-F]", text)  # no surrogate spelled as a JSON escape either
    assert "=cmd\\u001b[2J\\\\ud800<b>" in text  # the surrogate as the text \ud800, as printable shows it
    json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")  # strict UTF-8: no surrogate left
    _unchanged(folder, before, "e.json")


@pytest.mark.parametrize("form", ["gbench-json", "nvbench-json", "github-action"])
def test_two_variant_names_that_differ_only_by_a_lone_surrogate_stay_two_in_json_exports(tmp_path, form):
    # U+FFFD for each surrogate made "v\ud800" and "v\udc00" one name: a reader would pair them up.
    records = good_records()
    cases = [r for r in records if r["kind"] == "case"]
    twin = json.loads(json.dumps(cases[2]))
    for case, name in ((cases[2], "v\ud800"), (twin, "v\udc00")):
        case["variant"] = name
        case["key"] = CaseId.from_record(case).key
    records.insert(records.index(cases[2]) + 1, twin)
    records[-1]["ok"] += 1
    write_records(tmp_path / "twins.jsonl", records)
    _finished(_cli(["export", "twins.jsonl", "--format", form, "-o", "e.json"], tmp_path))
    text = (tmp_path / "e.json").read_text(encoding="utf-8")
    assert "v\\\\ud800" in text and "v\\\\udc00" in text and "\\ufffd" not in text.lower()


@pytest.mark.parametrize("argv", [["report", "evil.jsonl", "-o", "page.html"],
                                  ["compare", "good.jsonl", "evil.jsonl", "--html", "page.html"]], ids=["report", "compare"])
def test_html_pages_take_lone_surrogates_and_markup_from_a_run_file(folder, argv):
    before = harness.fingerprint([folder])
    _finished(_cli(argv, folder))
    page = (folder / "page.html").read_bytes().decode("utf-8")  # strict: each surrogate became U+FFFD
    assert "pwned" in page and "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    _unchanged(folder, before, "page.html")


# -- item 6: numbers on the command line --------------------------------------------------------
@pytest.mark.parametrize("option, value, says", [
    ("--sizes", "²", "'²' is not a whole number"),
    ("--sizes", "①", "'①' is not a whole number"),
    ("--sizes", "１０２４", "is not a whole number"),
    ("--sizes", "٣", "is not a whole number"),
    ("--sizes", "9" * 5000, "a number of 5000 digits"),
    ("--sizes", "2^" + "9" * 5000, "a number of 5000 digits"),
    ("--sizes", "2^20-" + "9" * 40, "a number of 40 digits"),
    ("--sizes", "2^41", "past 2^40"),
    ("--sizes", "2^40", "--sizes 2^40: a size is from 1 to 2^30"),
    ("--sizes", "1e400", "is not a whole number"),
    ("--blocks", "48", "--blocks 48"),
    ("--blocks", "①", "'①' is not a whole number"),
    ("--blocks", "9" * 31, "a number of 31 digits"),
    ("--gpus", "٣", "give 'all' or GPU indices"),
], ids=lambda value: value[:12] if isinstance(value, str) else None)
def test_a_number_on_the_command_line_is_ascii_digits_within_limits(tmp_path, option, value, says):
    config = tmp_path / "c.yaml"
    config.write_text(SWEEP)
    before = harness.fingerprint([tmp_path])
    extra = [] if option == "--gpus" else ["--dry-run"]
    _one_line(harness.run_cli(["run", str(config), option, value, *extra], tmp_path, tmp_path.parent / "out"), 2, says)
    assert harness.fingerprint([tmp_path]) == before


@pytest.mark.parametrize("argv, says", [
    (["ab", "reduce/reduce2_sequential", "reduce/vector_load_sum", "--rounds", "²"], "'²' is not a whole number"),
    (["ab", "reduce/reduce2_sequential", "reduce/vector_load_sum", "--rounds", "9" * 5000], "a number of 5000 digits"),
    (["ab", "reduce/reduce2_sequential", "reduce/vector_load_sum", "--sizes", "①"], "'①' is not a whole number"),
    (["ab", "reduce/reduce2_sequential", "reduce/vector_load_sum", "--threshold", "nan"], "--threshold nan"),
    (["export", "good.jsonl", "--format", "gbench-json", "--repetitions", "②"], "--repetitions"),
    (["replicas", "good.jsonl", "good.jsonl", "--threshold", "1e999"], "--threshold inf"),
], ids=["rounds-superscript", "rounds-5000-digits", "ab-sizes-circled", "ab-threshold-nan", "repetitions-circled",
        "replicas-threshold-inf"])
def test_a_count_or_fraction_option_refuses_what_int_and_float_would_take_or_choke_on(folder, argv, says):
    before = harness.fingerprint([folder])
    _one_line(_cli(argv, folder), 2, says)
    _unchanged(folder, before)


# -- item 6 and the first corpus's leftovers: numbers and tags in a YAML config ----------------
def _config_says(tmp_path, text: str, code: int, *fragments: str) -> str:
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    before = harness.fingerprint([tmp_path])
    line = _one_line(harness.run_cli(["run", str(config), "--dry-run"], tmp_path, tmp_path.parent / "out"), code, *fragments)
    assert harness.fingerprint([tmp_path]) == before
    return line


SIZE = "sweeps:\n  - op: reduce\n    variants: [reduce2_sequential]\n    sizes: [{}]\n"


@pytest.mark.parametrize("size, says", [
    ("'²'", "'²' is not a whole number"),
    ("'①'", "'①' is not a whole number"),
    ("'٣'", "'٣' is not a whole number"),
    ("9" * 5000, "a number of 5000 digits"),
    ("-" + "9" * 5000, "a number of 5000 digits"),
    ("0x" + "f" * 5000, "digits"),
    ("1:" * 3000 + "1", "digits"),  # YAML 1.1's base 60
    ("'" + "9" * 5000 + "'", "a number of 5000 digits"),
    ("'2^" + "9" * 5000 + "'", "a number of 5000 digits"),
    ("1.0e+400", "size inf is not a whole number"),
    ("1.0e+300", "past 2^40"),
    ("'2^41'", "past 2^40"),
], ids=["superscript", "circled", "arabic-indic", "5000-digits", "negative-5000-digits", "hex-5000-digits",
        "sexagesimal", "digit-text", "power-of-5000-digits", "float-past-range", "float-past-2^40", "2^41"])
def test_a_size_in_yaml_is_ascii_digits_within_limits(tmp_path, size, says):
    _config_says(tmp_path, SIZE.format(size), 2, "c.yaml:4", says)


def test_a_pow2_range_past_2_40_is_refused_before_it_is_expanded(tmp_path):
    _config_says(tmp_path, SIZE.replace("[{}]", "{{pow2: [10, 41]}}").format(), 2, "pow2", "past 2^40")
    _config_says(tmp_path, SIZE.replace("[{}]", "{{pow2: [10, " + "9" * 50 + "]}}").format(), 2, "a number of 50 digits")


@pytest.mark.parametrize("timing, says", [
    ("warmup: 1000000000000", "timing.warmup: 1000000000000 is above the maximum 1000"),
    ("warmup: 1.0e+12", "timing.warmup: must be a whole number"),
    ("warmup: 1e12", "YAML reads it as text"),  # YAML 1.1 takes 1e12 for a string
    ("min_samples: " + "9" * 29, "timing.min_samples: " + "9" * 29 + " is above the maximum 100000"),
    ("max_samples: 1000000000", "timing.max_samples: 1000000000 is above the maximum"),
    ("max_time_s: 1.0e+300", "timing.max_time_s: 1e+300 is above the maximum 600"),
    ("min_time_s: 1.0e+300", "timing.min_time_s: 1e+300 is above the maximum 600"),
    ("batch_target_ms: 1.0e+9", "timing.batch_target_ms: 1e+09 is above the maximum"),
    ("batch_below_us: 1.0e+300", "timing.batch_below_us: 1e+300 is above the maximum"),
    ("max_noise: 1.0e+300", "timing.max_noise: 1e+300 is not a fraction"),
    ("min_clock_fraction: 1.0e+300", "timing.min_clock_fraction: 1e+300 is not a fraction"),
    ("max_time_s: .inf", "must be a finite number"),
], ids=lambda value: value.split(":")[0] + value.split(":")[1][:6] if ":" in value else None)
def test_every_timing_field_is_bounded_so_no_config_holds_a_gpu_for_hours(tmp_path, timing, says):
    _config_says(tmp_path, SWEEP + f"timing: {{{timing}}}\n", 2, "c.yaml:3", says)


@pytest.mark.parametrize("schema", ["true", "1.0", "'1'"])
def test_schema_is_the_integer_1_not_a_value_python_finds_equal(tmp_path, schema):
    _config_says(tmp_path, f"schema: {schema}\n" + SWEEP, 2, "c.yaml:1: schema:", "is not known")


@pytest.mark.parametrize("tagged, says", [
    ("sizes: !!python/tuple [1024]", "!!python/tuple"),
    ("sizes: !!python/object/apply:os.system [echo]", "!!python/object/apply:os.system"),
    ("sizes: !!set {1024: null}", "!!set"),
    ("sizes: !!omap [a: 1]", "!!omap"),
    ("sizes: !custom [1024]", "!custom"),
    ("sizes: [!!python/name:os.system x]", "!!python/name:os.system"),
], ids=["tuple-on-a-list", "apply-on-a-list", "set-on-a-mapping", "omap", "local-tag", "python-on-a-value"])
def test_a_tag_naming_a_python_type_is_refused_on_any_kind_of_node(tmp_path, tagged, says):
    text = f"sweeps:\n  - op: reduce\n    variants: [reduce2_sequential]\n    {tagged}\n"
    _config_says(tmp_path, text, 2, "c.yaml:4", says, "not plain YAML")


def test_merge_keys_are_plain_yaml_and_merge_explicit_keys_winning(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("sweeps:\n  - &base {op: reduce, variants: [reduce2_sequential], sizes: [1024], block_sizes: [64]}\n"
                      "  - <<: *base\n    block_sizes: [128]\n  - {<<: [*base], sizes: [2048]}\n")
    before = harness.fingerprint([tmp_path])
    outcome = harness.run_cli(["run", str(config), "--dry-run"], tmp_path, tmp_path.parent / "out")
    _finished(outcome)
    assert [line for line in outcome.stdout.splitlines() if line.startswith("reduce/")] == [
        "reduce/reduce2_sequential/float32/n=1024/block=64/uniform", "reduce/reduce2_sequential/float32/n=1024/block=128/uniform",
        "reduce/reduce2_sequential/float32/n=2048/block=64/uniform"]
    assert harness.fingerprint([tmp_path]) == before


@pytest.mark.parametrize("character", ["\x07", "\x1b", "\x00", "\x9b"])
def test_a_control_character_in_yaml_is_one_line_naming_its_line(tmp_path, character):
    line = _config_says(tmp_path, SWEEP + f"name: a{character}b\n", 2, "c.yaml:3: the character", "not allowed in YAML")
    assert f"{ord(character):02x}" in line


def test_deep_nesting_is_blamed_on_an_alias_only_where_there_is_one(tmp_path):
    for text in ("sweeps: " + "[" * 40 + "]" * 40 + "\n", "sweeps:\n" + "".join("  " * i + "- \n" for i in range(1, 60)),
                 "sweeps: " + "[" * 5000 + "]" * 5000 + "\n"):
        line = _config_says(tmp_path, text, 2, "nests")
        assert "alias" not in line and "refers to itself" not in line
    _config_says(tmp_path, "a: &a [*a]\n" + SWEEP, 2, "nests without end", "an alias refers to itself")
    _config_says(tmp_path, "sweeps:\n  - &a {<<: *a, op: reduce}\n", 2, "an alias refers to itself")
