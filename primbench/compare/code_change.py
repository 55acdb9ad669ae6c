"""Whether a variant's code changed between two runs, from its two identities: the source hash
(variant.py: the CUDA text with includes, options, kernel names, plan values) and the machine-code
hash (machine_code.py: the cubin NVRTC made of its kernels for the run's GPU, and the plan). The
one rule that the verdict engine's pairs, the digest, `changed_variants` and check's notes follow:

- source and machine code changed: a code change;
- source changed, machine code identical (a comment, a rename the compiler erases): NOT a code
  change, only a note;
- machine code changed, source identical (a compiler upgrade): a code change, naming the compiler
  each run used;
- where a side has no machine-code hash (a run made before it was recorded, a kernel that did not
  compile) or the two runs compiled for different architectures, the source hash alone decides,
  as it did before, and the comparison says so once.
A library variant has no cubin: its machine identity is its library's name and version, which its
source hash covers, so the source hash decides for it and nothing is said. Nothing here imports CuPy.
"""

from __future__ import annotations

from dataclasses import dataclass

from primbench.runfile.records import RunHeader

UNCHANGED = ""
BOTH = "source and machine code changed"
SOURCE_ONLY = "source changed, machine code identical"
MACHINE_ONLY = "machine code changed, source identical"
SOURCE = "source changed"  # judged by the source hash alone: a side has no comparable machine-code hash
CODE_CHANGES = (BOTH, MACHINE_ONLY, SOURCE)
SIDES = ("the baseline", "the new run")


@dataclass(frozen=True)
class CodeChange:
    """One variant's change between a baseline and a new run: `kind` (one of the constants above),
    the two source hashes, the two machine-code hashes (None where not compared), the compiler each
    run used, and why the source hash alone decided, where it did."""

    kind: str = UNCHANGED
    source: tuple = (None, None)
    machine: tuple = (None, None)
    compilers: tuple = ("", "")
    fallback: str = ""

    @property
    def counts(self) -> bool:
        """Whether it is a code change: what marks a pair "code changed" and lets the config exempt it."""
        return self.kind in CODE_CHANGES

    def note(self) -> str:
        """What a pair's note says of it ('' when nothing changed)."""
        source = f"hash {self.source[0]} -> {self.source[1]}"
        machine = f"machine code {self.machine[0]} -> {self.machine[1]}"
        if self.kind == BOTH:
            return f"code changed ({source}; {machine})"
        if self.kind == SOURCE:
            return f"code changed ({source})"
        if self.kind == MACHINE_ONLY:
            return f"code changed: {MACHINE_ONLY} ({machine}; {compiled_by(self.compilers)})"
        if self.kind == SOURCE_ONLY:
            return f"{SOURCE_ONLY} ({source}): not a code change"
        return ""


def compiled_by(compilers: tuple) -> str:
    """'compiled by NVRTC 12.8 in the baseline, NVRTC 13.0 in the new run' (or 'NVRTC 13.0 in both')."""
    if compilers[0] == compilers[1]:
        return f"compiled by {compilers[0] or 'an unrecorded compiler'} in both runs"
    return "compiled by " + ", ".join(f"{name or 'an unrecorded compiler'} in {side}" for name, side in zip(compilers, SIDES))


def classify(source: tuple, entries: tuple, software: tuple = ({}, {})) -> CodeChange:
    """The change of one variant: `source` its two source hashes, `entries` its two header
    `variants` entries (None where a header has none), `software` the two headers' software blocks."""
    source_changed = source[0] != source[1]
    machines = [_machine(entry) for entry in entries]
    why = _fallback(entries, machines)
    if why is not None:
        return CodeChange(SOURCE if source_changed else UNCHANGED, tuple(source), fallback=why)
    hashes = tuple(m["hash"] for m in machines)
    compilers = tuple(_compiler(m, block) for m, block in zip(machines, software))
    machine_changed = hashes[0] != hashes[1]
    kind = (BOTH if source_changed and machine_changed else SOURCE_ONLY if source_changed
            else MACHINE_ONLY if machine_changed else UNCHANGED)
    return CodeChange(kind, tuple(source), hashes, compilers)


def _machine(entry) -> dict | None:
    machine = entry.get("machine_code") if isinstance(entry, dict) else None
    return machine if isinstance(machine, dict) and machine.get("hash") else None


def _fallback(entries, machines) -> str | None:
    """Why the source hash alone decides, or None where the machine code does. '' (nothing to say)
    for what has no cubin of its own (a library variant, a pytest test) or no header entry."""
    if not all(isinstance(entry, dict) and entry.get("source") for entry in entries):
        return ""
    for machine, side in zip(machines, SIDES):
        if machine is None:
            return f"{side} has no machine-code hash (made before it was recorded)"
    if machines[0].get("arch") != machines[1].get("arch"):
        return f"the runs compiled for {machines[0].get('arch')} and {machines[1].get('arch')}"
    return None


def _compiler(machine: dict, software) -> str:
    version = machine.get("nvrtc") or (software.get("nvrtc") if isinstance(software, dict) else None)
    return f"NVRTC {version}" if version else ""


class CodeChanges:
    """Every variant's change between a baseline's header and a new run's."""

    def __init__(self, base: RunHeader, new: RunHeader):
        self.entries = (base.variants or {}, new.variants or {})
        self.software = (base.software or {}, new.software or {})

    def of(self, key: str, base_hash, new_hash) -> CodeChange:
        """The change of variant `key` ("op/name") whose cases carry these source hashes."""
        return classify((base_hash, new_hash), tuple(entries.get(key) for entries in self.entries), self.software)

    def by_variant(self) -> dict[str, CodeChange]:
        """{variant: its change} for the variants both headers describe, by their recorded hashes."""
        before, after = self.entries
        keys = sorted(key for key in before.keys() & after.keys()
                      if isinstance(before[key], dict) and isinstance(after[key], dict))
        return {key: self.of(key, before[key].get("hash"), after[key].get("hash")) for key in keys}

    def changed(self) -> list[str]:
        """The variants whose code changed, by the rule above."""
        return [key for key, change in self.by_variant().items() if change.counts]

    def notes(self) -> list[str]:
        """The lines a comparison shows above its table: the variants whose source alone changed,
        those whose machine code alone changed (with the compilers), and once, where it decided
        something, why the source hash alone judged some."""
        changes = self.by_variant()
        lines = []
        source_only = [key for key, change in changes.items() if change.kind == SOURCE_ONLY]
        if source_only:
            lines.append(f"{SOURCE_ONLY} (not a code change): {_named(source_only)}")
        machine_only = [key for key, change in changes.items() if change.kind == MACHINE_ONLY]
        if machine_only:
            compilers = changes[machine_only[0]].compilers
            lines.append(f"{MACHINE_ONLY}: {_named(machine_only)} ({compiled_by(compilers)})")
        reasons = list(dict.fromkeys(change.fallback for change in changes.values() if change.kind == SOURCE and change.fallback))
        if reasons:
            lines.append(f"{'; '.join(reasons)}: a changed source hash counts as a code change")
        return lines


def _named(keys: list[str]) -> str:
    names = ", ".join(keys)
    return f"{len(keys)} variant(s): {names}" if len(names) <= 100 else f"{len(keys)} variant(s) (each case says so below)"
