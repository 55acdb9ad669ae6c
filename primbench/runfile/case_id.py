"""What a measurement is: `CaseId`, one value from the config's expansion to the report.

A case is an op's variant at one point of a sweep: dtype, size, block size (None where a library
chooses), input distribution and the variant's own parameters (a stencil's radius). Records in a
run file carry the same fields; `CaseId.from_record` reads them back, so nothing downstream parses
a key string.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


class Params(Mapping):
    """A case's own parameters, {name: value}: read-only, hashable, ordered by name."""

    __slots__ = ("_items",)

    def __init__(self, values=()):
        pairs = values.items() if isinstance(values, Mapping) else values
        object.__setattr__(self, "_items", tuple(sorted((str(name), value) for name, value in pairs)))

    def __getitem__(self, name):
        for key, value in self._items:
            if key == name:
                return value
        raise KeyError(name)

    def __iter__(self):
        return (name for name, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other) -> bool:
        return dict(self._items) == dict(other) if isinstance(other, Mapping) else NotImplemented

    def __repr__(self) -> str:
        return f"Params({dict(self._items)!r})"

    def items_sorted(self) -> tuple:
        """(name, value) pairs in name order."""
        return self._items

    @property
    def text(self) -> str:
        """'radius=4,vocab=129280', or '' for none."""
        return ",".join(f"{name}={value}" for name, value in self._items)


@dataclass(frozen=True)
class CaseId:
    """One measurement's identity: what two runs must share for their records to be compared."""

    op: str
    variant: str
    dtype: str
    n: int
    block: int | None  # None: the library chooses
    distribution: str | None  # None only for published figures, which name none
    params: Params = field(default_factory=Params)

    def __post_init__(self):
        if not isinstance(self.params, Params):
            object.__setattr__(self, "params", Params(self.params))

    @property
    def key(self) -> str:
        """The run file's `key`: 'reduce/vector_load_sum/float32/n=268435456/block=256/uniform[/radius=4]'."""
        block = self.block if self.block is not None else "lib"
        text = f"{self.op}/{self.variant}/{self.dtype}/n={self.n}/block={block}"
        text = f"{text}/{self.distribution}" if self.distribution else text
        return text + "".join(f"/{name}={value}" for name, value in self.params.items_sorted())

    @property
    def label(self) -> str:
        """For people: 'scan/decoupled_lookback int32 n=2^28 block 1024 uniform radius=4'."""
        block = f"block {self.block}" if self.block is not None else "library block"
        parts = [f"{self.op}/{self.variant}", self.dtype, f"n={size_text(self.n)}", block, self.distribution or "",
                 self.params.text.replace(",", " ")]
        return " ".join(part for part in parts if part)

    @classmethod
    def from_record(cls, record: Mapping) -> "CaseId":
        """The identity of a run file's case record (any schema primbench reads)."""
        return cls(record["op"], record["variant"], record["dtype"], record["n"], record.get("block"),
                   record.get("distribution"), Params(record.get("params") or {}))


def size_text(n) -> str:
    """n as plain text: 2^k for a power of two, else with thousands separators ('2^20', '1,000').
    For people (labels, plot titles, which take no markup); the run file's key keeps the digits."""
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"
