"""Every hostile input of tests/hostile/corpus.py (issue 21): one line, the right exit code, no
traceback, no hang past the timeout, memory under the cap, every input file unchanged (by hash)
and nothing written. docs/reliability.md tabulates the classes and their counts."""

from __future__ import annotations

import glob
import shutil
from pathlib import Path

import pytest

from tests.hostile import harness
from tests.hostile.corpus import GOOD_RUN, corpus

CASES = corpus()


def _has_gpu() -> bool:
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


def _expand(argv: list[str], folder: Path) -> list[str]:
    bad = next((str(p) for p in sorted(folder.glob("bad.*"))), str(folder / "bad.jsonl"))
    return [arg.replace("{dir}", str(folder)).replace("{bad}", bad) for arg in argv]


def test_the_corpus_is_large_and_covers_every_class():
    classes = {case.klass for case in CASES}
    assert len(CASES) >= 100 and classes == {"config", "run file", "output path", "argument"}
    assert len({case.id for case in CASES}) == len(CASES)


def test_docs_reliability_gives_the_corpus_counts():
    import re
    from collections import Counter

    text = (Path(__file__).parents[2] / "docs" / "reliability.md").read_text()
    assert f"holds {len(CASES)} hostile inputs" in text and f"All {len(CASES)} pass" in text
    documented = {klass: int(count) for klass, count in re.findall(r"^\| (config|run file|output path|argument) \| (\d+) \|", text, re.M)}
    assert documented == dict(Counter(case.klass for case in CASES))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_hostile_input_gets_one_line_and_changes_nothing(case, tmp_path):
    if case.no_gpu_ok and _has_gpu():
        pytest.skip("this machine has a GPU: the command would run")
    folder = tmp_path / "case"
    folder.mkdir()
    import gzip

    (folder / "good.jsonl").write_bytes(gzip.decompress(GOOD_RUN.read_bytes()))
    if case.make:
        case.make(folder)
    before = harness.fingerprint([folder])
    outcome = harness.run_cli(_expand(case.argv, folder), folder, tmp_path / "output")
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"{case.id}: exit {outcome.code} in {outcome.seconds:.1f} s; stderr: {outcome.stderr[-600:]!r}"
    assert outcome.code is not None, f"{case.id}: still running after {harness.TIMEOUT_S:.0f} s"
    assert "Traceback" not in outcome.stderr and "Traceback" not in outcome.stdout, where
    assert outcome.code == case.code, where
    assert len(lines) == 1 and lines[0].startswith("primbench") and len(lines[0]) <= 600, where
    assert case.says in lines[0], where
    assert harness.fingerprint([folder]) == before, f"{case.id}: an input changed or a file was left behind"
    assert not glob.glob(str(folder / "**" / "*.tmp*"), recursive=True)
