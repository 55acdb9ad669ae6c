"""The measuring protocol's identity: what each part of the way a figure is measured is, and its
revision. The runner writes it into every run header (`declared`); `compare` and `check` set two
headers' protocols side by side (`compare`), so that a change of protocol is never mistaken for a
change of kernel. No CuPy: the code each part names is named, not imported.

A part's revision goes up when a change to it can move the figures it makes, and only then. Each
part names the code that carries it; tests/unit/test_protocol.py holds a hash of that code
(comments and docstrings left out) and fails when the code changes, asking whether the revision
must go up: a refactor that moves no figure only records the new hash.

The history behind the revisions (`recorded` infers them for run files made before the protocol
was recorded, from what their headers hold):
- cold 1: flush L2 (memset of 2 x L2), hold, events. cold 2 (6a1b1a0): the host waits for the
  flush before the hold, as nvbench does: 5-20 us cases timed 0.7 us faster. A batch's size K
  comes from the cold median, so a cold change also moves the batch figure.
- batch 1 (756fc3a): K back-to-back operations as one CUDA graph where it captures.
- throttle 0: every sample kept. throttle 1 (6a17993): a cold sample whose SM clock is under
  min_clock_fraction of the default clock is discarded and retaken.
- ceilings 0: the 1 GiB copy and read probes only. ceilings 1 (669687e): the read and copy probes at
  every byte count the cases move. ceilings 2 (6bac5e4): the peak read is the fastest of the sized
  probe's shapes at 1 GiB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PROTOCOL_FORMAT = 1  # the shape of the header's `protocol` block


@dataclass(frozen=True)
class Part:
    """One part of the protocol: its revision, what it does in a line, the figures a change of it
    moves, and the functions ("module:qualified name") that carry it."""

    revision: int
    what: str
    moves: tuple[str, ...]
    code: tuple[str, ...]


PARTS = {
    "cold": Part(2, "L2 flushed by a memset of 2 x L2, the host waits for it, a hold kernel, events around one operation",
                 ("cold", "batch"),
                 ("primbench.measuring.timing:Timer.measure", "primbench.measuring.timing:Timer.cold_sample",
                  "primbench.measuring.timing:spin_us", "primbench.measuring.timing:Timer.flush_l2",
                  "primbench.measuring.timing:Timer.hold", "primbench.measuring.gpu_calls:CupyCalls.hold",
                  "primbench.measuring.gpu_calls:CupyCalls.memset")),
    "batch": Part(1, "K operations a sample (a CUDA graph where it captures), K from the cold median, hot L2",
                  ("batch",),
                  ("primbench.measuring.timing:Timer._batches", "primbench.measuring.gpu_calls:CupyCalls.capture",
                   "primbench.measuring.gpu_calls:CupyCalls.launch")),
    "throttle": Part(1, "a cold sample under min_clock_fraction of the default SM clock is discarded and retaken",
                     ("cold",),
                     ("primbench.measuring.timing:Timer._sample", "primbench.measuring.gpu_calls:CupyCalls.sm_clocks_mhz")),
    "ceilings": Part(2, "read and copy probes at every byte count; the peak read the fastest screened shape at 1 GiB",
                     (),
                     ("primbench.measuring.ceilings:measure_read", "primbench.measuring.ceilings:measure_sized",
                      "primbench.measuring.ceilings:_sized_reads", "primbench.measuring.ceilings:_sized_copies")),
}


def declared() -> dict:
    """The header's `protocol` block for a run measured by this code."""
    return {"format": PROTOCOL_FORMAT,
            "parts": {name: {"revision": part.revision, "what": part.what} for name, part in PARTS.items()}}


def recorded(header) -> dict[str, int]:
    """{part: revision} of the run a header describes: as recorded, or, for a run file made before
    the protocol was recorded, inferred from what its header holds (the module docstring's history:
    sized ceilings came 4 minutes after the flush wait, and with it; the clock floor with the throttle
    rule). A part that cannot be told is left out: a published progression has none, and an older
    pytest plugin's header (which never had ceilings) only its throttle rule."""
    block = header.protocol if isinstance(header.protocol, dict) else {}
    parts = block.get("parts") if isinstance(block.get("parts"), dict) else None
    if parts is not None:
        return {name: entry["revision"] for name, entry in parts.items()
                if isinstance(entry, dict) and isinstance(entry.get("revision"), int)}
    if header.published:
        return {}
    if (header.tool or {}).get("via") == "pytest":  # the plugin measures no ceilings: they tell nothing there
        return {"throttle": 1 if "min_clock_fraction" in (header.timing or {}) else 0}
    sized = bool(header.ceilings)
    return {"cold": 2 if sized else 1, "batch": 1, "throttle": 1 if "min_clock_fraction" in (header.timing or {}) else 0,
            "ceilings": 1 if sized else 0}


# The timing policy's fields that move a figure (the others decide only when sampling stops).
POLICY_MOVES = {"warmup": ("cold", "batch"), "min_clock_fraction": ("cold",), "batch_below_us": ("batch",),
                "batch_target_ms": ("batch",)}


@dataclass
class Difference:
    """What differs between the protocols of a baseline and a new run: each changed part (or
    timing-policy field) as "name r1 -> r2", and the figures each one moves."""

    changes: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (what changed, figures it moves)
    inferred: bool = False  # a side's revisions were inferred from an older header

    def by_figure(self) -> dict[str, str]:
        """{figure: what changed that moves it}, for the verdict engine to mark those pairs."""
        moved: dict[str, list[str]] = {}
        for text, figures in self.changes:
            for figure in figures:
                moved.setdefault(figure, []).append(text)
        return {figure: ", ".join(texts) for figure, texts in moved.items()}

    @property
    def moves_figures(self) -> bool:
        """Whether a change moves a timed figure (one of the probes alone moves none)."""
        return bool(self.by_figure())

    def what(self) -> str:
        """'cold r1 -> r2; throttle r0 -> r1': each change, in the parts' order."""
        return "; ".join(text for text, _ in self.changes)

    def line(self, renew: str | None = None) -> str | None:
        """The one line compare and check print (check's names the command that renews the
        baseline), or None where nothing changed."""
        if not self.changes:
            return None
        what = self.what()
        figures = sorted({f for _, moves in self.changes for f in moves})
        effect = (f"verdicts on {' and '.join(figures)} figures are marked and not gated" if figures
                  else "no timed figure moves with it")
        inferred = " (inferred from an older run file)" if self.inferred else ""
        return (f"protocol changed since the baseline{inferred}: {what}; {effect}"
                + (f"; renew the baseline: {renew}" if renew else ""))


def compare(base_header, new_header) -> Difference:
    """The protocol difference of two run headers (nothing for a published progression)."""
    if base_header.published or new_header.published:
        return Difference()
    before, after = recorded(base_header), recorded(new_header)
    result = Difference(inferred=not (base_header.protocol and new_header.protocol))
    order = list(PARTS)
    # A part one side cannot tell (an older pytest header's cold sample) is not called changed.
    for name in sorted(before.keys() & after.keys(), key=lambda n: (order.index(n) if n in PARTS else len(order), n)):
        if before[name] != after[name]:
            moves = PARTS[name].moves if name in PARTS else ("cold", "batch")  # an unknown part: assume the worst
            result.changes.append((f"{name} r{before[name]} -> r{after[name]}", moves))
    base_policy, new_policy = base_header.timing or {}, new_header.timing or {}
    for name, moves in POLICY_MOVES.items():
        if name in base_policy and name in new_policy and base_policy[name] != new_policy[name]:
            result.changes.append((f"timing.{name} {base_policy[name]} -> {new_policy[name]}", moves))
    return result
