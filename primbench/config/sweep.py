"""A validated config as values: the sweeps, the timing policy they run under, and their cases.

primbench/config/loading.py reads and validates YAML into these; nothing here reads files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
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
        """Every case of every sweep, in sweep order, each key once."""
        seen: dict[str, CaseId] = {}
        for sweep in self.sweeps:
            refuses = ops.checks(sweep.op).refuses
            for name in sweep.variants:
                variant = registry.get(sweep.op, name)
                blocks = [b for b in sweep.block_sizes if b in variant.block_sizes] if variant.block_sizes else [None]
                dtypes = [d for d in sweep.dtypes if d in variant.dtypes]
                grid = itertools.product(sweep.sizes, blocks, dtypes, sweep.distributions, sweep.param_grid(variant))
                for n, block, dtype, distribution, params in grid:
                    if not variant.takes(n, block):  # a one-block kernel past its block size
                        continue
                    if refuses(dtype, dict(params)):  # e.g. uint8 samples with 1024 bins
                        continue
                    case = CaseId(sweep.op, name, dtype, n, block, distribution, params)
                    seen.setdefault(case.key, case)
        return list(seen.values())
