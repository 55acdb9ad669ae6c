"""The counters file (`<run>.counters.json`, beside the run whose cases were profiled): one JSON
document of format name, schema, who made it (tool, git, device, ncu) and per case its launches
with their counters, as `primbench profile` writes it (profile/counters.py reads ncu's CSV into
these records) and the report reads it. Nothing here imports CuPy.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from primbench.errors import UserError
from primbench.runfile.json_spec import F, between, compiled, object_problem, two_texts
from primbench.runfile.fields import BYTES_CEILING, DEVICE, GIT, NUMBER_OR_NULL, TEXT_OR_NULL, TOOL

FORMAT = "primbench-counters"
SCHEMA = 1


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a case's plan, as ncu measured it (counters by primbench's names)."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    counters: dict[str, float | None]


@dataclass
class CaseCounters:
    """A case's launches, or why it has none."""

    key: str
    variant_hash: str | None
    minimal_bytes: int | None
    launches: list[Launch] = field(default_factory=list)
    reason: str | None = None  # set when the case was not profiled
    # (what the step fixes, the counter that should fall), from the variant's declaration
    counter_claim: tuple[str, str] | None = None

    @property
    def profiled(self) -> bool:
        return self.reason is None

    def total(self, name: str) -> float | None:
        """A counter summed over the plan's launches (None when no launch has it)."""
        values = [launch.counters.get(name) for launch in self.launches]
        values = [v for v in values if v is not None]
        return float(sum(values)) if values else None

    def dram_bytes(self) -> float | None:
        read, written = self.total("dram_read_bytes"), self.total("dram_write_bytes")
        return None if read is None or written is None else read + written


COUNTERS_SUFFIX = ".counters.json"


def counters_path_for(run_path: Path) -> Path:
    """`x.jsonl` or `x.jsonl.gz` -> `x.counters.json`, beside it."""
    from primbench.runfile.io import is_run_file, run_stem

    stem = run_stem(run_path) if is_run_file(run_path) else run_path.name
    return run_path.with_name(stem + COUNTERS_SUFFIX)


def document(cases: list[CaseCounters], *, about: dict) -> dict:
    return {"format": FORMAT, "schema": SCHEMA, **about,
            "cases": [{**asdict(case), "launches": [asdict(launch) for launch in case.launches]} for case in cases]}


def merged(old: dict | None, cases: list[CaseCounters], about: dict) -> dict:
    """A new document: the old one's cases that were not profiled again, then the new ones."""
    fresh = {case.key for case in cases}
    kept = [case for case in (read_cases(old) if old else []) if case.key not in fresh]
    return document(kept + cases, about=about)


# What the report and `profile` read of a counters file, checked as it is loaded (runfile/json_spec.py).
_LAUNCH = {"name": F("string", required=True), "grid": F("array", required=True, items=F("integer"), holds="sizes"),
           "block": F("array", required=True, items=F("integer"), holds="sizes"),
           "counters": F("object", required=True, values=F(NUMBER_OR_NULL, rule=between(0, math.inf, "0 or more")))}
_DOCUMENT = compiled({
    "created": F(TEXT_OR_NULL), "tool": F("object", fields=TOOL), "git": F("object", fields=GIT),
    "device": F("object", fields=DEVICE), "ncu": F("object", fields={"version": F(TEXT_OR_NULL)}),
    "metrics": F("object", values=F("string")), "run": F(TEXT_OR_NULL),
    "cases": F("array", holds="objects", items=F("object", fields={
        "key": F("string", required=True), "variant_hash": F(TEXT_OR_NULL), "reason": F(TEXT_OR_NULL),
        "minimal_bytes": F(("integer", "null"), rule=between(0, BYTES_CEILING, "a number of bytes from 0 to 2^64")),
        "counter_claim": F(("array", "null"), rule=two_texts("reason, counter")),
        "launches": F("array", holds="objects", items=F("object", fields=_LAUNCH))})),
})


def read_cases(doc: dict) -> list[CaseCounters]:
    cases = []
    for raw in doc.get("cases", []):
        launches = [Launch(l["name"], tuple(l["grid"]), tuple(l["block"]), dict(l["counters"])) for l in raw.get("launches", [])]
        claim = raw.get("counter_claim")
        cases.append(CaseCounters(raw["key"], raw.get("variant_hash"), raw.get("minimal_bytes"), launches, raw.get("reason"),
                                  tuple(claim) if claim else None))
    return cases


def load(path: Path) -> tuple[dict, list[CaseCounters]]:
    """(the document's header fields, its cases); one UserError line for a file that is not one."""
    try:
        with open(path, "rb") as source:
            raw = source.read(64 << 20)
        doc = json.loads(raw)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError):
        raise UserError(f"{path}: not a primbench counters file (not JSON)") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UserError(f"{path}: not a primbench counters file (no \"format\": \"{FORMAT}\")")
    if doc.get("schema") != SCHEMA:
        raise UserError(f"{path}: counters schema {str(doc.get('schema'))[:20]}; this primbench reads {SCHEMA}")
    problem = object_problem(doc, _DOCUMENT)
    if problem:
        raise UserError(f"{path}: damaged counters file: {problem}; profile the run again (primbench profile RUN)")
    cases = read_cases(doc)
    return {k: v for k, v in doc.items() if k != "cases"}, cases
