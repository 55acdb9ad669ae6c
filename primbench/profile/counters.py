"""Hardware counters per case: ncu's CSV read back into typed records, and the counters file.

ncu (`--csv --page raw --print-units base`) writes one row per profiled kernel launch: a header
row, a units row, then the launches in order, with its own messages on lines that start with "==".
The child (profile/child.py) launched a marker kernel whose grid's x size is the case's index + 1
before each case's plan, so every launch after a marker, up to the next one, belongs to that case.

The counters file (`<run>.counters.json`, beside the run whose cases were profiled) is one JSON
document: format name, schema, who made it (tool, git, device, ncu) and per case its launches with
their counters. Nothing here imports CuPy: the report reads it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from primbench.errors import UserError
from primbench.runfile.json_spec import F, between, compiled, object_problem, two_texts
from primbench.runfile.fields import BYTES_CEILING, DEVICE, GIT, NUMBER_OR_NULL, TEXT_OR_NULL, TOOL

FORMAT = "primbench-counters"
SCHEMA = 1
MARKER_NAME = "primbench_case_marker"  # the kernel profile/child.py launches before each case's plan
PERMISSION_HELP = ("profiling is not permitted on this machine (ERR_NVGPUCTRPERM): run as root, or load the driver "
                   "with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)")


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


def _number(text: str) -> float | None:
    text = (text or "").strip().replace(",", "")
    if text in ("", "n/a", "N/A", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _dims(text: str) -> tuple[int, int, int]:
    numbers = [int(n) for n in re.findall(r"\d+", text or "")]
    return tuple((numbers + [1, 1, 1])[:3]) if numbers else (0, 0, 0)


def ncu_messages(text: str) -> list[str]:
    """ncu's own lines (==PROF==, ==WARNING==, ==ERROR==)."""
    return [line.strip() for line in text.splitlines() if line.startswith("==")]


def check_ncu_errors(text: str) -> None:
    """One clear line for the faults that leave nothing to read."""
    errors = [m for m in ncu_messages(text) if m.startswith("==ERROR==")]
    if any("ERR_NVGPUCTRPERM" in m for m in errors):
        raise UserError(f"profile: {PERMISSION_HELP}")
    if errors and not [line for line in text.splitlines() if line and not line.startswith("==")]:
        raise UserError(f"profile: ncu failed: {errors[0][len('==ERROR=='):].strip()[:200]}")


def parse_launches(text: str, metrics: dict[str, str]) -> dict[int, list[Launch]]:
    """{case index: its launches} from ncu's raw-page CSV; `metrics` maps primbench's counter
    names to ncu's metric names (profile.capture.METRICS). Launches before the first marker belong to no case."""
    check_ncu_errors(text)
    rows = list(csv.reader(io.StringIO("\n".join(line for line in text.splitlines() if line and not line.startswith("==")))))
    if not rows:
        return {}
    header = rows[0]
    column = {name: index for index, name in enumerate(header)}
    for needed in ("Kernel Name", "Grid Size", "Block Size"):
        if needed not in column:
            raise UserError(f"profile: ncu's CSV has no {needed!r} column; was it written with --csv --page raw?")
    wanted = {name: column.get(metric) for name, metric in metrics.items()}
    launches: dict[int, list[Launch]] = {}
    current = None
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        name = row[column["Kernel Name"]]
        if not name or (row[column["ID"]] == "" if "ID" in column else False):  # the units row
            continue
        grid = _dims(row[column["Grid Size"]])
        if MARKER_NAME in name:
            current = grid[0] - 1
            launches.setdefault(current, [])
            continue
        if current is None:
            continue
        counters = {key: (_number(row[index]) if index is not None else None) for key, index in wanted.items()}
        launches[current].append(Launch(name, grid, _dims(row[column["Block Size"]]), counters))
    return launches


def cases_from_capture(csv_text: str, manifest: dict, metrics: dict[str, str]) -> list[CaseCounters]:
    """The child's manifest joined with ncu's launches: one CaseCounters per case, in order."""
    launches = parse_launches(csv_text, metrics)
    cases = []
    for entry in manifest["cases"]:
        claim = entry.get("counter_claim")
        case = CaseCounters(entry["key"], entry.get("variant_hash"), entry.get("minimal_bytes"),
                            counter_claim=tuple(claim) if claim else None)
        if not entry.get("profiled"):
            case.reason = entry.get("reason") or "not profiled"
        elif not launches.get(entry["index"]):
            case.reason = "ncu recorded no kernel of this case (a kernel ncu could not profile?)"
        else:
            case.launches = launches[entry["index"]]
        cases.append(case)
    return cases


COUNTERS_SUFFIX = ".counters.json"


# -- the counters file ------------------------------------------------------------------------------

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


def case_line(case: CaseCounters) -> str:
    """One line per case for the terminal: DRAM bytes against the declared ones, or why none."""
    if not case.profiled:
        return f"not profiled  {case.key}: {case.reason}"
    dram = case.dram_bytes()
    if dram is None or not case.minimal_bytes:
        return f"profiled      {case.key}: {len(case.launches)} launches"
    return (f"profiled      {case.key}: {len(case.launches)} launches, DRAM {dram / 1e6:,.1f} MB, "
            f"{dram / case.minimal_bytes - 1:+.1%} against the declared {case.minimal_bytes / 1e6:,.1f} MB")
