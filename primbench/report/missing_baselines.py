"""The baselines a run could not time because their library was not installed, or did not import:
which variants, which pip package, and the line their cases were skipped with. A report that
compares against fewer libraries than primbench knows says so, rather than letting a missing one
pass for a slower one.

Read from the run alone: the header names each library variant's package (`variants[...].library`),
and the skipped cases carry the reason primbench/libraries.py wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from primbench.libraries import DOES_NOT_IMPORT, NOT_INSTALLED


@dataclass(frozen=True)
class MissingBaseline:
    """One library's variants that this run skipped for want of it."""

    package: str  # the pip package: "cuda-cccl"
    variants: tuple[str, ...]  # "op/name" of each, in the header's order
    cases: int  # how many cases were skipped for it
    reason: str  # the skip reason of its first case (what to install)

    @property
    def line(self) -> str:
        names = ", ".join(self.variants)
        return f"{self.package}: {len(self.variants)} baseline(s) not timed ({names}; {self.cases} cases): {self.reason}"


def _missing_library_reason(package: str | None, reason: str | None) -> bool:
    return bool(package and reason and reason.startswith(f"{package} ") and (NOT_INSTALLED in reason or DOES_NOT_IMPORT in reason))


def missing_baselines(run) -> list[MissingBaseline]:
    """Per package, the library variants of `run` (a runfile.io.Run) skipped because the package was
    missing; [] when every library the run used was there."""
    found: dict[str, dict] = {}
    for record in run.cases:
        if record.status != "skipped":
            continue
        key = f"{record.case.op}/{record.case.variant}"
        library = (run.header.variants.get(key) or {}).get("library") or {}
        package = library.get("package")
        if not _missing_library_reason(package, record.reason):
            continue
        entry = found.setdefault(package, {"variants": [], "cases": 0, "reason": record.reason})
        if key not in entry["variants"]:
            entry["variants"].append(key)
        entry["cases"] += 1
    return [MissingBaseline(package, tuple(entry["variants"]), entry["cases"], entry["reason"])
            for package, entry in sorted(found.items())]
