"""What `compare` says of the new run's libraries (compare/library_lines.py): under each op's summary
line its best library, and the library cases far from their light with the rule's words, within
the terminal's 60 lines and 120 columns. On the committed runs and a slowed copy of the nightly one."""

from __future__ import annotations

from pathlib import Path

from primbench.compare import verdicts
from primbench.compare.library_lines import library_lines
from primbench.compare.output import MAX_LINES, terminal
from primbench.runfile.io import load_run
from primbench.runfile.libraries import FAR_WORDS
from tests.run_copies import edited_copy

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "reference" / "nvidia-h200.jsonl.gz"
NIGHTLY = REPO / "results" / "baselines" / "nvidia-h200.jsonl.gz"
NEAR_ITS_LIGHT = "reduce/cub_device_reduce/float32/n=268435456/block=lib/uniform"  # 97 % of its light


def _under(text: str, op: str) -> list[str]:
    """The lines under `op`'s summary line, up to the next line that is not indented."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{op}: "))
    under = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        under.append(line)
    return under


def test_compare_names_each_ops_best_library_and_flags_the_64_bit_counter_histogram(bench):
    result = bench("compare", NIGHTLY, REFERENCE)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert _under(text, "reduce") == [
        "  best library: cub_device_reduce via cupy 14.2.0; at 2^28 float32 uniform 247.2 us, 97.2 % of light"]
    histogram = _under(text, "histogram")
    assert histogram[0] == ("  best library: cub_histogram_even[bins=256] via cupy 14.2.0; at 2^28 uint8 uniform 1,062.2 us, "
                            "6.6 % of light")
    assert histogram[1:] == [f"  {FAR_WORDS}: 18 library cases under 50 % of their light",
                             "    at 64 MiB and up; the furthest cub_histogram_even[bins=256] uint8 skewed 2^28 at 1.8 %"]
    assert FAR_WORDS in " ".join(_under(text, "topk")) and _under(text, "stencil") == []
    assert len(text.rstrip("\n").splitlines()) <= MAX_LINES
    assert max(len(line) for op in ("reduce", "reduce_max", "scan", "topk", "histogram") for line in _under(text, op)) <= 120


def test_a_library_case_slowed_under_half_its_light_is_flagged_under_its_op(tmp_path):
    def slowed(record):  # CUB's reduce of 2^28 floats made 3 times slower: 33 % of its light
        if record.get("kind") == "case" and record["key"] == NEAR_ITS_LIGHT:
            record["samples"]["cold_ms"] = [t * 3 for t in record["samples"]["cold_ms"]]

    base = load_run(NIGHTLY)
    for new, flagged in ((load_run(edited_copy(NIGHTLY, tmp_path / "slowed.jsonl", slowed)), True), (base, False)):
        text = terminal(verdicts.compare_runs(base, new), "base", "new", libraries=library_lines(new))
        reduce = " ".join(_under(text, "reduce"))
        assert (FAR_WORDS in reduce and "the furthest cub_device_reduce float32 uniform 2^28 at 32." in reduce) is flagged
        assert len(text.splitlines()) <= MAX_LINES
