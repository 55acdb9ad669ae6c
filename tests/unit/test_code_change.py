"""Which of a variant's two identities changed, and what compare and check say of it
(compare/code_change.py), on the real same-commit pair of tests/data (fixture-a, fixture-b) with
test-only copies in tmp_path: a machine-code hash added to every compiled variant of both headers,
and one variant's source or machine-code hash changed. No GPU and no CuPy."""

from __future__ import annotations

import hashlib

from primbench.cli.main import main
from primbench.compare import verdicts
from primbench.compare.code_change import BOTH, MACHINE_ONLY, SOURCE, SOURCE_ONLY, UNCHANGED, CodeChange, classify
from primbench.compare.digest import Fold
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import load_run
from tests.conftest import RUNS
from tests.run_copies import edited_copy

EDITED = "reduce/reduce2_sequential"  # 10 cases in each fixture run


def _machine_codes(nvrtc: str, *, source_hash: str | None = None, machine_hash: str | None = None,
                   recorded: bool = True):
    """An edit: every compiled variant's header entry gets a machine-code hash made from its key (as
    a run of this primbench on the same GPU would record), by `nvrtc` (where `recorded`); EDITED gets
    `source_hash` (in the header and each of its cases) and `machine_hash` where given."""
    def edit(record):
        if record["kind"] == "header":
            record["software"]["nvrtc"] = nvrtc
            for key, entry in record["variants"].items():
                if entry.get("source") and recorded:
                    made = hashlib.sha256(key.encode()).hexdigest()[:16]
                    entry["machine_code"] = {"hash": made, "arch": "sm_90", "nvrtc": nvrtc}
            edited = record["variants"][EDITED]
            edited["hash"] = source_hash or edited["hash"]
            if machine_hash and recorded:
                edited["machine_code"]["hash"] = machine_hash
        elif record["kind"] == "case" and f"{record['op']}/{record['variant']}" == EDITED and source_hash:
            record["variant_hash"] = source_hash

    return edit


def _runs(tmp_path, base_edit, new_edit):
    base = edited_copy(RUNS / "fixture-a.jsonl.gz", tmp_path / "base.jsonl", base_edit)
    new = edited_copy(RUNS / "fixture-b.jsonl.gz", tmp_path / "new.jsonl", new_edit)
    return base, new


def _output(capsys, *arguments) -> tuple[int, str]:
    """(exit code, everything printed) of `primbench ...` in this process."""
    try:
        code = main([*map(str, arguments)])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_source_edit_that_left_the_machine_code_alone_is_no_code_change(tmp_path, capsys):
    base, new = _runs(tmp_path, _machine_codes("13.0"), _machine_codes("13.0", source_hash="0" * 16))
    checked, check_text = _output(capsys, "check", new, "--baseline", base, "--all", "--markdown", tmp_path / "c.md")
    compared, compare_text = _output(capsys, "compare", base, new)  # folded: a line per quiet variant
    markdown = (tmp_path / "c.md").read_text()
    assert checked == 0 and compared == 0
    for text in (check_text, compare_text, markdown.replace("\\_", "_")):  # Markdown escapes the name's _
        assert "code changed" not in text, text
        assert f"source changed, machine code identical (not a code change): 1 variant(s): {EDITED}" in text, text
    # Its folded line, and its two BELOW_FLOOR pairs' notes (moves of 0.7 us between the two runs).
    fold = next(line for line in compare_text.splitlines() if line.strip().startswith(f"{EDITED}: 10 cases"))
    assert fold.rstrip().endswith("2 BELOW_FLOOR (+10.6% to +11.6%), source changed, machine code identical"), fold
    assert markdown.count("the machine code is the same in both runs, so this is likely run-to-run noise") == 2

    pairs = verdicts.compare_runs(load_run(base), load_run(new))
    edited = [p for p in pairs if f"{p.op}/{p.case.variant}" == EDITED]
    assert len(edited) == 10 and all(p.code_change == SOURCE_ONLY and not p.code_changed for p in edited)
    assert "not a code change" in edited[0].note
    assert not any(p.code_changed for p in pairs) and verdicts.changed_variants(load_run(base), load_run(new)) == []


def test_without_machine_code_hashes_the_source_hash_alone_decides_and_says_so(tmp_path, capsys):
    # Runs made before machine code was recorded: the same source edit is a code change, as before.
    base, new = _runs(tmp_path, _machine_codes("13.0", recorded=False),
                      _machine_codes("13.0", source_hash="0" * 16, recorded=False))
    _, text = _output(capsys, "check", new, "--baseline", base)
    assert f"code changed since the baseline: 1 variant(s): {EDITED}" in text, text
    assert text.count("the baseline has no machine-code hash (made before it was recorded): a changed source "
                      "hash counts as a code change") == 1, text
    assert "machine code identical" not in text


def test_a_machine_code_change_under_the_same_source_is_a_code_change_naming_both_compilers(tmp_path, capsys):
    base, new = _runs(tmp_path, _machine_codes("12.8"), _machine_codes("13.0", machine_hash="f" * 16))
    _, text = _output(capsys, "check", new, "--baseline", base)
    assert f"code changed since the baseline: 1 variant(s): {EDITED}" in text, text
    assert (f"machine code changed, source identical: 1 variant(s): {EDITED} (compiled by NVRTC 12.8 in the "
            "baseline, NVRTC 13.0 in the new run)") in text, text
    pairs = verdicts.compare_runs(load_run(base), load_run(new))
    edited = [p for p in pairs if f"{p.op}/{p.case.variant}" == EDITED]
    assert all(p.code_changed and p.code_change == MACHINE_ONLY for p in edited)
    assert "NVRTC 12.8 in the baseline, NVRTC 13.0 in the new run" in edited[0].note
    assert [p for p in pairs if p.code_changed] == edited  # every other variant: same source, same machine code


def _entry(machine_hash=None, arch="sm_90", source="reduce.cu", nvrtc="13.0"):
    entry = {"hash": "s", "source": source}
    if machine_hash:
        entry["machine_code"] = {"hash": machine_hash, "arch": arch, "nvrtc": nvrtc}
    return entry


def test_the_rule_for_each_combination():
    assert classify(("a", "b"), (_entry("m"), _entry("n"))).kind == BOTH
    assert classify(("a", "b"), (_entry("m"), _entry("m"))).kind == SOURCE_ONLY
    assert classify(("a", "a"), (_entry("m"), _entry("n"))).kind == MACHINE_ONLY
    assert classify(("a", "a"), (_entry("m"), _entry("m"))).kind == UNCHANGED
    # Two architectures' machine code is not compared: the source hash decides, and says why.
    other_gpu = classify(("a", "b"), (_entry("m", arch="sm_80"), _entry("m")))
    assert other_gpu.kind == SOURCE and other_gpu.counts and "sm_80 and sm_90" in other_gpu.fallback
    # A library variant's identity is its library's version, in the source hash: nothing to say.
    library = classify(("a", "b"), (_entry(source=None), _entry(source=None)))
    assert library.kind == SOURCE and library.fallback == ""
    assert classify(("a", "a"), (None, None)) == CodeChange(UNCHANGED, ("a", "a"))
    # The compiler comes from the software block where an entry does not name it.
    names = classify(("a", "a"), (_entry("m", nvrtc=None), _entry("n")), ({"nvrtc": "12.4"}, {})).compilers
    assert names == ("NVRTC 12.4", "NVRTC 13.0")


def test_below_the_floor_a_source_edit_alone_reads_as_noise_and_the_fold_says_what_changed():
    case = CaseId("reduce", "reduce2_sequential", "float32", 1024, 256, "uniform")
    pair = verdicts.Pair(case, verdicts.BELOW_FLOOR, base_ms=0.010, new_ms=0.0106, ratio=1.06, code_change=SOURCE_ONLY)
    note = verdicts.below_floor_note(pair, verdicts.Thresholds(), "abc")
    assert "the machine code is the same in both runs" in note and "primbench ab" not in note
    pair.code_changed, pair.code_change = True, BOTH
    assert "primbench ab reduce/reduce2_sequential --base abc" in verdicts.below_floor_note(pair, verdicts.Thresholds(), "abc")
    same = verdicts.Pair(case, verdicts.SAME)
    edited = verdicts.Pair(case, verdicts.SAME, code_change=SOURCE_ONLY)
    assert Fold("reduce", ["x"], [edited, edited]).code() == "source changed, machine code identical"
    assert Fold("reduce", ["x"], [edited, same]).code() == "source changed in 1, machine code identical"
    assert Fold("reduce", ["x"], [pair, edited]).code() == "code changed in 1"
