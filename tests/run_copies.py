"""Test-only transformations of a real run file: a copy with every record passed through an edit.
Each test that uses one says what it changes; nothing under results/ is ever modified."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from primbench.runfile.case_id import CaseId

SLOWED_CASE = "reduce/cub_device_reduce/float32/n=33554432/block=lib/uniform"  # the case tests slow down (about 80 us)
# The first 40 cases of a real run in the first schema (tests/data/README.md)
SCHEMA_1_ARCHIVED_RUN = "tests/data/runs/schema1-excerpt.jsonl.gz"
FIXTURE_A = Path(__file__).resolve().parent / "data" / "runs" / "fixture-a.jsonl.gz"


def edited_copy(run_path: Path, out: Path, edit, *, respell_keys: bool = True, add=None) -> Path:
    """Write to `out` a copy of the run at `run_path` with `edit(record)` applied to every record,
    and after each case the cases `add(record)` returns (a list of new case records; none without
    it); a case whose identity the edit changed gets the key its fields spell (unless told not to),
    and the end record counts the cases as edited (as the runner would have written it)."""
    lines, counts = [], {"ok": 0, "failed": 0, "skipped": 0}
    raw = Path(run_path).read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()  # tests/data's runs are gzipped
    for line in text.splitlines():
        original = json.loads(line)
        added = add(original) if add and original.get("kind") == "case" else []
        for record in [original, *added]:
            edit(record)
            if respell_keys and record.get("kind") == "case":
                record["key"] = CaseId.from_record(record).key
            if record.get("kind") == "case" and record.get("status") in counts:
                counts[record["status"]] += 1
            if record.get("kind") == "end":
                record.update(counts)
            lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def scale_samples(record: dict, key: str, factor: float) -> None:
    """Multiply the cold samples of the case `key` by `factor` (other records untouched)."""
    if record["kind"] == "case" and record["key"] == key:
        record["samples"]["cold_ms"] = [t * factor for t in record["samples"]["cold_ms"]]


def toy_scale_run(out: Path) -> Path:
    """A small run of the plugin op toy_scale (tests/plugins/toy_scale.py), made without a GPU:
    fixture-a's header, and its uniform float32 vector_load_sum cases spelled as toy_scale's."""
    header, *records = [json.loads(line) for line in gzip.open(FIXTURE_A, "rt", encoding="utf-8")]
    variant = {**header["variants"]["reduce/vector_load_sum"], "op": "toy_scale", "name": "one_per_thread", "series": "plugin"}
    header["variants"] = {"toy_scale/one_per_thread": variant}
    cases = [{**r, "op": "toy_scale", "variant": "one_per_thread", "variant_hash": variant["hash"]} for r in records
             if r["kind"] == "case" and r["variant"] == "vector_load_sum" and r["distribution"] == "uniform"
             and r["dtype"] == "float32" and r["status"] == "ok"]
    for case in cases:
        case["key"] = CaseId.from_record(case).key
    end = {"kind": "end", "finished": header["started"], "ok": len(cases), "failed": 0, "skipped": 0}
    out.write_text("".join(json.dumps(r) + "\n" for r in [header, *cases, end]), encoding="utf-8")
    return out
