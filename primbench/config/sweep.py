"""A validated config as values: the sweeps, the timing policy they run under, and their cases.

primbench/config/loading.py reads and validates YAML into these; nothing here reads files.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from primbench import ops, registry
from primbench.measuring.energy_policy import EnergyPolicy
from primbench.measuring.policy import TimingPolicy
from primbench.runfile.case_id import CaseId


@dataclass(frozen=True)
class Sweep:
    name: str
    op: str
    variants: tuple[str, ...]
    sizes: tuple[int, ...]
    block_sizes: tuple[int, ...]
    dtypes: tuple[str, ...]
    distributions: tuple[str, ...]
    explicit: frozenset = field(default_factory=frozenset)  # variants named, not globbed
    params: tuple[tuple[str, tuple[int, ...]], ...] = ()  # values named in the sweep, by parameter

    def as_dict(self) -> dict:
        resolved = {"name": self.name, "op": self.op, "variants": list(self.variants), "sizes": list(self.sizes),
                    "block_sizes": list(self.block_sizes), "dtypes": list(self.dtypes),
                    "distributions": list(self.distributions), "explicit": sorted(self.explicit)}
        if self.params:  # absent otherwise, so that configs without parameters hash as they always did
            resolved["params"] = {name: list(values) for name, values in self.params}
        return resolved

    def case_count_bound(self) -> int:
        """At most this many cases: the product of the axes' lengths (the variants' own parameters
        at their largest), without making a case."""
        widest_params = 1
        for _, values in self.params:
            widest_params *= len(values)
        return (len(self.variants) * len(self.sizes) * len(self.block_sizes) * len(self.dtypes) * len(self.distributions)
                * widest_params)

    def axes_text(self) -> str:
        """'44 variants x 19 sizes x 5 block sizes x 1 dtype x 1 distribution'."""
        axes = [(len(self.variants), "variant"), (len(self.sizes), "size"), (len(self.block_sizes), "block size"),
                (len(self.dtypes), "dtype"), (len(self.distributions), "distribution")]
        axes += [(len(values), f"{name} value") for name, values in self.params]
        return " x ".join(f"{count} {what}{'s' if count != 1 else ''}" for count, what in axes)

    def param_grid(self, variant) -> list[tuple[tuple[str, int], ...]]:
        """Every combination of the variant's parameters: the sweep's values, else the variant's default."""
        named = dict(self.params)
        axes = [[(name, v) for v in named.get(name, allowed[:1]) if v in allowed] for name, allowed in sorted(variant.params)]
        return [tuple(combination) for combination in itertools.product(*axes)]

    def iter_cases(self) -> Iterator[CaseId]:
        """This sweep's cases, one at a time, each once (an axis written with a repeat counts it once)."""
        refuses = ops.checks(self.op).refuses
        sizes, distributions = _distinct(self.sizes), _distinct(self.distributions)
        for name in _distinct(self.variants):
            variant = registry.get(self.op, name)
            dtypes = [d for d in _distinct(self.dtypes) if d in variant.dtypes]
            grid = itertools.product(sizes, self._blocks_of(variant), dtypes, distributions, self.param_grid(variant))
            for n, block, dtype, distribution, params in grid:
                if not variant.takes(n, block):  # a one-block kernel past its block size
                    continue
                if refuses(dtype, dict(params)):  # e.g. uint8 samples with 1024 bins
                    continue
                yield CaseId(self.op, name, dtype, n, block, distribution, params)

    def _blocks_of(self, variant) -> list:
        """The sweep's block sizes the variant takes; [None] for a library variant, which chooses its own."""
        return [b for b in _distinct(self.block_sizes) if b in variant.block_sizes] if variant.block_sizes else [None]

    @functools.cached_property
    def _axes(self) -> dict:
        """Each axis as a set, for makes() and covers(): asked once per case, they must not scan a list."""
        return {"variant": frozenset(self.variants), "n": frozenset(self.sizes), "block": frozenset(self.block_sizes),
                "dtype": frozenset(self.dtypes), "distribution": frozenset(self.distributions)}

    @functools.cached_property
    def _param_sets(self) -> dict:
        return {}

    def _param_set(self, variant) -> frozenset:
        """The variant's parameter combinations in this sweep, as a set (made once per variant)."""
        if variant.name not in self._param_sets:
            self._param_sets[variant.name] = frozenset(self.param_grid(variant))
        return self._param_sets[variant.name]

    def makes(self, case: CaseId) -> bool:
        """Whether this sweep makes `case` too. The variant's and the op's own checks (takes,
        refuses) depend on the case alone: where it was made it passed them, so here it would."""
        axes = self._axes
        if case.op != self.op or case.variant not in axes["variant"] or case.n not in axes["n"]:
            return False
        if case.dtype not in axes["dtype"] or case.distribution not in axes["distribution"]:
            return False
        variant = registry.get(self.op, case.variant)
        if (case.block is None) != (not variant.block_sizes) or (case.block is not None and case.block not in axes["block"]):
            return False
        return case.params.items_sorted() in self._param_set(variant)

    def may_overlap(self, other: Sweep) -> bool:
        """False where no case of `other` can be one of this sweep's (another op, or an axis apart)."""
        mine, theirs = self._axes, other._axes
        return self.op == other.op and all(mine[axis] & theirs[axis] for axis in ("variant", "n", "dtype", "distribution"))

    def covers(self, other: Sweep) -> bool:
        """Whether every case of `other` is one of this sweep's: each axis of it is within this one's."""
        mine, theirs = self._axes, other._axes
        if self.op != other.op or not all(theirs[axis] <= mine[axis] for axis in mine):
            return False
        variants = [registry.get(self.op, name) for name in other.variants]
        return all(self._param_set(v) >= other._param_set(v) for v in variants)


def _distinct(values) -> list:
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class Config:
    path: str
    name: str
    output: str
    timing: TimingPolicy
    determinism_runs: int
    sweeps: tuple[Sweep, ...]
    compare: dict = field(default_factory=dict)  # thresholds for `bench.py compare` and `check` (primbench/compare/verdicts.py)
    plugins: tuple[str, ...] = ()  # absolute paths of the plugin files the sweeps may use
    energy: EnergyPolicy | None = None  # `timing: energy:`, which cases get energy per operation, and how

    def energy_for(self, case) -> bool:
        return self.energy is not None and self.energy.selects(case)

    def resolved(self) -> dict:
        """The config with every glob and range expanded: stored in the run header, re-read by --resume."""
        resolved = {"schema": 1, "name": self.name, "output": self.output, "timing": self.timing.as_dict(),
                    "verify": {"determinism_runs": self.determinism_runs}, "sweeps": [s.as_dict() for s in self.sweeps]}
        if self.energy is not None:  # absent otherwise, so that configs without energy hash as they always did
            resolved["timing"]["energy"] = self.energy.as_dict()
        if self.compare:
            resolved["compare"] = dict(self.compare)
        if self.plugins:  # absent otherwise, so that configs without plugins hash as they always did
            resolved["plugins"] = list(self.plugins)
        return resolved

    def hash(self) -> str:
        text = json.dumps(self.resolved(), sort_keys=True)
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def cases(self) -> list[CaseId]:
        """Every case of every sweep, in sweep order, each key once (iter_cases, as a list)."""
        return list(self.iter_cases())

    def has_cases(self) -> bool:
        return next(self.iter_cases(), None) is not None

    def iter_cases(self) -> Iterator[CaseId]:
        """Every case of every sweep, in sweep order, each key once, made one at a time: `run
        --dry-run` of 10^8 cases prints its first at once, in the memory of one case.

        No set of the keys seen is kept (10^8 keys are gigabytes). Within a sweep no case comes
        twice: each is one point of the product of its axes, every axis without repeats. A case
        that an earlier sweep of the same op makes too is left out, asked of that sweep's axes
        (Sweep.makes), which the config holds anyway; a sweep an earlier one covers whole (the same
        sweep given twice, as YAML aliases allow) is not expanded at all."""
        for index, sweep in enumerate(self.sweeps):
            earlier = [other for other in self.sweeps[:index] if other.may_overlap(sweep)]
            if any(other.covers(sweep) for other in earlier):
                continue
            for case in sweep.iter_cases():
                if not any(other.makes(case) for other in earlier):
                    yield case
