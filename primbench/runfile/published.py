"""Published figures (results/reference/published.json): quoted numbers, not measurements.

The file maps each published kernel to the primbench variant that implements it, so the report
can set the seed's RTX 3080 and Harris's G80 progressions beside a run. No CuPy here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from primbench.errors import UserError
from primbench.resources import PUBLISHED_FIGURES

REFERENCE_SCHEMA = 1
DEFAULT_PATH = PUBLISHED_FIGURES


class ReferenceFileError(UserError):
    """The published-reference file is missing, malformed, or of an unknown schema."""


@dataclass(frozen=True)
class PublishedEntry:
    """One published kernel: its primbench variant, its name in the source, its time and GB/s."""

    variant: str
    kernel: str
    time_ms: float | None
    gbps: float | None
    note: str = ""


@dataclass(frozen=True)
class PublishedProgression:
    """A published progression of kernels for one op on one device."""

    id: str
    label: str
    op: str
    device: str
    dtype: str
    n: int
    peak_gbps: float | None
    citation: str
    url: str | None
    entries: tuple[PublishedEntry, ...] = field(default_factory=tuple)

    def time_ms(self, variant: str) -> float | None:
        """The published time of the kernel mapped to `variant`, or None where there is none."""
        for entry in self.entries:
            if entry.variant == variant:
                return entry.time_ms
        return None

    def first_time_ms(self) -> float | None:
        """The time of the first kernel with a figure: what cumulative speedups are relative to."""
        return next((e.time_ms for e in self.entries if e.time_ms), None)


def load_published(path=None) -> list[PublishedProgression]:
    """Read the published progressions, refusing a file that is not marked as published data."""
    path = Path(path) if path is not None else DEFAULT_PATH
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReferenceFileError(f"{path}: no published-reference file; restore it from git") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReferenceFileError(f"{path}: cannot read it as JSON ({exc})") from None
    if data.get("schema") != REFERENCE_SCHEMA:
        raise ReferenceFileError(
            f"{path}: schema {data.get('schema')!r}, this primbench reads schema {REFERENCE_SCHEMA}"
        )
    # The marks keep quoted figures from ever being mistaken for (or compared as) measurements.
    if data.get("kind") != "published" or data.get("raw_samples") is not False:
        raise ReferenceFileError(f"{path}: must say \"kind\": \"published\" and \"raw_samples\": false")
    progressions = []
    for item in data.get("progressions", []):
        try:
            entries = tuple(
                PublishedEntry(
                    variant=e["variant"],
                    kernel=e["kernel"],
                    time_ms=e.get("time_ms"),
                    gbps=e.get("gbps"),
                    note=e.get("note") or "",
                )
                for e in item["entries"]
            )
            source = item["source"]
            progressions.append(
                PublishedProgression(
                    id=item["id"],
                    label=item["label"],
                    op=item["op"],
                    device=item["device"],
                    dtype=item["dtype"],
                    n=int(item["n"]),
                    peak_gbps=item.get("peak_gbps"),
                    citation=source["citation"],
                    url=source.get("url"),
                    entries=entries,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReferenceFileError(f"{path}: progression {item.get('id', '?')!r} lacks or mangles {exc}") from None
    return progressions
