"""YAML config -> validated, frozen sweep. Every error names the file, the line and the key, what
is wrong and the valid choices; none is a traceback.

    name: default
    output: results
    timing: {min_samples: 10, max_noise: 0.005, max_median_error: 0.0025, min_time_s: 0.005, max_time_s: 0.5}
    verify: {determinism_runs: 3}
    sweeps:
      - name: sizes
        op: reduce
        variants: ["*"]              # names or globs
        sizes: {pow2: [10, 28]}      # or a list: [1000, "2^20+3", 33554432]
        block_sizes: [256]           # or {pow2: [6, 10]}
        dtypes: [float32]            # default: the op's first (reduce float32, scan int32)
        distributions: [uniform]
      - op: stencil
        variants: ["*"]
        sizes: ["2^26"]
        params: {radius: [1, 4, 16]}  # the variants' own axes (`bench.py list` names them); default: each one's first

A top-level key starting with `x-` is ignored (docker compose's extension fields): the place for
what sweeps share through YAML anchors, `x-defaults: &d {op: reduce, sizes: [1000]}` then
`- {<<: *d, variants: [...]}`. It changes nothing, not even the config's hash.
"""

from __future__ import annotations

import re
from pathlib import Path

from primbench import ops, registry
from primbench.config import numbers
from primbench.config.compare_block import compare_block as _compare
from primbench.config.sweep import Config, Sweep
from primbench.config.values import integer as _integer
from primbench.config.values import reject_unknown as _reject_unknown
from primbench.config.values import string as _string
from primbench.config.yaml_source import Source, read_yaml
from primbench.declarations import MAX_BLOCK, MIN_BLOCK  # one rule for a config's and a variant's block sizes
from primbench.errors import ConfigError, UserError
from primbench.measuring import energy_policy, policy
from primbench.measuring.energy_policy import EnergyPolicy
from primbench.measuring.policy import TimingPolicy
from primbench.resources import CONFIG_DIR, bundled_config
from primbench.runfile.locations import RESULTS_DIR
from primbench.text_safety import quoted

__all__ = ["Config", "Sweep", "config_from_dict", "config_from_header", "load_config", "parse_size"]

MAX_CASES = 100_000  # a sweep past this needs --allow-large (the full study is 1296)
MAX_SIZE = numbers.MAX_SIZE
MAX_N = 2**30  # kernels index with 32-bit int; 2^30 leaves room for i + blockDim and 2*blockDim*blockIdx
TOP_KEYS = ("schema", "name", "output", "plugins", "timing", "verify", "compare", "sweeps")
SWEEP_KEYS = ("name", "op", "variants", "sizes", "block_sizes", "dtypes", "distributions", "params")
VERIFY_KEYS = ("determinism_runs",)


def load_config(path, *, allow_large: bool = False) -> Config:
    """Read and validate a YAML config file (one of over MAX_CASES cases only with allow_large)."""
    path = Path(path)
    label = str(path)
    if not path.exists() and bundled_config(label) is not None:  # `configs/default.yaml` run outside the checkout
        path = bundled_config(label)
    if not path.exists():
        names = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yaml")))
        raise ConfigError(f"{label}: no such config file; give a YAML file, or a bundled config by name ({names})")
    if path.is_dir():
        raise ConfigError(f"{label}: is a folder; give a YAML file such as configs/default.yaml")
    raw, source = read_yaml(path, label)
    config = config_from_dict(raw, source, allow_large=allow_large)
    _refuse_energy_globs_matching_nothing(config, source if isinstance(source, Source) else Source(source))
    return config


def config_from_dict(raw, source: Source | str = "config", *, allow_large: bool = False) -> Config:
    """Validate an already-parsed config (a YAML file's content, or a run header's `config`)."""
    src = source if isinstance(source, Source) else Source(source)
    if not isinstance(raw, dict):
        raise src.error((), "the top level must be a mapping with a 'sweeps' list; see configs/default.yaml")
    _reject_unknown(raw, TOP_KEYS, (), src, extensions=True)  # x-defaults: &d {...}, for the sweeps to alias
    schema = raw.get("schema", 1)
    if type(schema) is not int or schema != 1:  # `schema: true` equals 1 in Python, and 1.0 does too
        raise src.error(("schema",), f"config schema {schema!r} is not known; this primbench reads schema 1")
    name = _string(raw.get("name", Path(src.label).stem), ("name",), src)
    output = _string(raw.get("output", str(RESULTS_DIR)), ("output",), src)
    plugins = _plugins(raw.get("plugins", []), src)  # before the sweeps, which may name their variants
    timing = _timing(raw.get("timing", {}), src)
    energy = _energy(raw["timing"].get("energy"), src) if isinstance(raw.get("timing"), dict) else None
    verify = raw.get("verify", {})
    if not isinstance(verify, dict):
        raise src.error(("verify",), "must be a mapping like {determinism_runs: 3}")
    _reject_unknown(verify, VERIFY_KEYS, ("verify",), src)
    runs = _integer(verify.get("determinism_runs", 3), ("verify", "determinism_runs"), src, minimum=2, maximum=100)
    sweeps_raw = raw.get("sweeps")
    if sweeps_raw is None:
        raise src.error((), "no 'sweeps' list; add at least one sweep (see configs/default.yaml)")
    if not isinstance(sweeps_raw, list) or not sweeps_raw:
        raise src.error(("sweeps",), "must be a non-empty list of sweeps")
    sweeps = tuple(_sweep(item, ("sweeps", i), src) for i, item in enumerate(sweeps_raw))
    compare = _compare(raw.get("compare", {}), src)
    config = Config(path=src.label, name=name, output=output, timing=timing, determinism_runs=runs, sweeps=sweeps,
                    compare=compare, plugins=plugins, energy=energy)
    _refuse_a_huge_sweep(config, src, allow_large)
    if not config.has_cases():
        raise src.error(("sweeps",), "the sweeps expand to no case at all (no variant accepts the block sizes and dtypes asked for)")
    return config


def _refuse_energy_globs_matching_nothing(config: Config, src: Source) -> None:
    """As --only does: a `timing: energy: cases:` glob that selects no case of the file's sweeps is
    a typo, not a wish. Checked on the YAML file only: a run header's config may be narrowed
    (`run --only scan/*`), which leaves its energy globs over the other ops selecting nothing."""
    if config.energy is None:
        return
    unmatched = {index: EnergyPolicy(cases=(pattern,)) for index, pattern in enumerate(config.energy.cases)}
    for case in config.iter_cases():  # one at a time, until every glob has matched: a huge sweep is streamed
        unmatched = {index: glob for index, glob in unmatched.items() if not glob.selects(case)}
        if not unmatched:
            return
    if unmatched:
        index = min(unmatched)
        pattern = config.energy.cases[index]
        raise src.error(("timing", "energy", "cases", index), f"{quoted(pattern, 80)} matches no case of the sweeps; give "
                        "op/variant or a case key, globs allowed (reduce/*, */cub_*); `primbench run CONFIG --dry-run` lists the cases")


def _plugins(raw, src) -> tuple[str, ...]:
    """`plugins: [my_kernels.py]`: Python files that register variants, relative to the config's
    folder; each is loaded now, and recorded as an absolute path (the run header keeps it)."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(item, str) and item.strip() for item in raw):
        raise src.error(("plugins",), "must be a list of Python files, e.g. plugins: [my_kernels.py]")
    loaded = []
    for i, item in enumerate(raw):
        path = Path(item).expanduser()
        path = path if path.is_absolute() else src.folder / path
        try:
            loaded.append(str(registry.load_plugin(path)))
        except UserError as exc:
            raise src.error(("plugins", i), str(exc)) from None
    return tuple(loaded)


def _energy(raw, src) -> EnergyPolicy | None:
    """`timing: energy:`: true (every case, the default settings), false, or a mapping of
    EnergyPolicy's settings (measuring/energy_policy.py)."""
    path = ("timing", "energy")
    if raw is None or raw is False:
        return None
    if raw is True:
        return EnergyPolicy()
    if not isinstance(raw, dict):
        raise src.error(path, "must be true, false or a mapping such as {cases: [reduce/*], window_s: 0.5}")
    _reject_unknown(raw, energy_policy.field_names(), path, src)
    problem = energy_policy.energy_problem(raw)
    if problem is not None:
        key, message = problem
        raise src.error(path + ((key,) if key else ()), message)
    return energy_policy.policy_from(raw)


def _timing(raw, src) -> TimingPolicy:
    path = ("timing",)
    if not isinstance(raw, dict):
        raise src.error(path, "must be a mapping such as {min_samples: 10, max_noise: 0.005}")
    raw = {key: value for key, value in raw.items() if key != "energy"}  # its own block: _energy
    _reject_unknown(raw, policy.field_names(), path, src)
    problem = policy.timing_problem(raw)
    if problem is not None:
        key, message = problem
        raise src.error(path + ((key,) if key else ()), message + numbers.text_number_hint(raw.get(key)))
    return TimingPolicy(**{name: value if name in policy.integer_fields() else float(value) for name, value in raw.items()})


# ASCII digits only ([0-9], not \d, which takes any script's digits); lengths are checked before int().
_SIZE_EXPR = re.compile(r"^\s*2\s*\^\s*([0-9]+)\s*(?:([+-])\s*([0-9]+))?\s*$")


def parse_size(value, path, src, *, what="size") -> int:
    """A size: an integer, or text like '1000', '2^25', '2^20+3'; past 2^40 (numbers.MAX_SIZE) refused."""
    if isinstance(value, bool):
        raise src.error(path, f"{what} {value!r} is not a number")
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SIZE:
        value = int(value)
    elif isinstance(value, float) and value.is_integer():
        raise _past_the_largest(f"{value:g}", path, src, what)
    if isinstance(value, str) and numbers.is_ascii_digits(value.strip()):
        value = _digits(value.strip(), value, path, src, what)
    if isinstance(value, int):
        if abs(value) > MAX_SIZE:
            raise _past_the_largest(numbers.shown(value), path, src, what)
        return value
    match = _SIZE_EXPR.match(value) if isinstance(value, str) else None
    if match:
        exponent = _digits(match.group(1), value, path, src, what)
        if exponent > numbers.MAX_SIZE_EXPONENT:
            raise _past_the_largest(repr(value.strip())[:60], path, src, what)
        base, sign, offset = 2**exponent, match.group(2), _digits(match.group(3) or "0", value, path, src, what)
        size = base + offset if sign != "-" else base - offset
        if abs(size) > MAX_SIZE:
            raise _past_the_largest(repr(value.strip())[:60], path, src, what)
        return size
    raise src.error(path, f"{what} {value!r} is not a whole number or an expression like '2^25' or '2^20+3'")


def _digits(text: str, value, path, src, what) -> int:
    if len(text) > numbers.MAX_DIGITS:
        raise src.error(path, f"{what} {value[:40]!r}...: a number of {len(text)} digits, past anything a {what} can be "
                        f"(at most {numbers.MAX_DIGITS} digits)")
    return int(text)


def _past_the_largest(shown: str, path, src, what) -> ConfigError:
    """Refusing a value past 2^40 (`shown` as the line quotes it), which no axis takes."""
    limit = f"; the largest allowed is 2^30 = {MAX_N}" if what == "size" else ""
    return src.error(path, f"{what} {shown} is past 2^{numbers.MAX_SIZE_EXPONENT}, beyond anything a GPU can hold{limit}")


def _size_list(raw, path, src, *, what) -> list[int]:
    """A list of sizes, or a power-of-two range {pow2: [lo, hi]} (exponents)."""
    if isinstance(raw, dict):
        _reject_unknown(raw, ("pow2",), path, src)
        bounds = raw.get("pow2")
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)):
            raise src.error(path + ("pow2",), "must be two exponents [lo, hi], e.g. {pow2: [10, 28]}")
        lo, hi = bounds
        if hi > numbers.MAX_SIZE_EXPONENT:
            raise _past_the_largest(f"2^{numbers.shown(hi)}", path + ("pow2",), src, what)
        if lo > hi or lo < 0:
            raise src.error(path + ("pow2",), f"[{lo}, {hi}] is not a range of exponents lo <= hi")
        return [2**e for e in range(lo, hi + 1)]
    if isinstance(raw, (int, str)) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise src.error(path, f"must be a non-empty list of {what}s or {{pow2: [lo, hi]}}")
    return [parse_size(v, path + (i,), src, what=what) for i, v in enumerate(raw)]


def _text_list(raw, path, src) -> list[str]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw):
        raise src.error(path, "must be a non-empty list of names")
    return raw


def _sweep(raw, path, src) -> Sweep:
    """One sweep of the YAML: its op, variants, sizes, block sizes, dtypes, distributions, parameters."""
    if not isinstance(raw, dict):
        raise src.error(path, "each sweep must be a mapping with op, variants, sizes, ...")
    _reject_unknown(raw, SWEEP_KEYS, path, src)
    name = _string(raw.get("name", f"sweep {path[-1]}"), path + ("name",), src)
    if "op" not in raw:
        raise src.error(path, f"no 'op'; valid ops: {', '.join(registry.ops())}")
    op = raw["op"]
    if op not in registry.ops():
        raise src.error(path + ("op",), f"unknown op {quoted(op)}; valid ops: {', '.join(registry.ops())}")
    names, explicit = _sweep_variants(raw, path, src, op)
    sizes = _sweep_sizes(raw, path, src)
    blocks = _size_list(raw.get("block_sizes", [256]), path + ("block_sizes",), src, what="block size")
    for b in blocks:
        if b < MIN_BLOCK or b > MAX_BLOCK or b & (b - 1):
            raise src.error(path + ("block_sizes",), f"block size {b} is not a power of two from {MIN_BLOCK} to {MAX_BLOCK}; "
                            "the tree reductions halve the block at each step")
    variants = [registry.get(op, name) for name in names]
    _named_variants_fit(explicit, op, sizes, blocks, path, src)
    dtypes = _choices(raw, "dtypes", ops.dtypes(op), op, path, src)
    distributions = _choices(raw, "distributions", ops.distributions(op), op, path, src)
    if not any(not v.block_sizes or set(v.block_sizes) & set(blocks) for v in variants):
        raise src.error(path + ("block_sizes",), "no selected variant takes any of these block sizes")
    params = _params(raw.get("params"), path + ("params",), src, variants) if "params" in raw else ()
    sweep = Sweep(name=name, op=op, variants=tuple(names), sizes=tuple(sizes), block_sizes=tuple(blocks),
                  dtypes=tuple(dtypes), distributions=tuple(distributions), explicit=frozenset(explicit), params=params)
    _sweep_runs_something(sweep, variants, path, src)
    return sweep


def _sweep_variants(raw, path, src, op: str) -> tuple[list[str], set]:
    """The variants a sweep names (globs expanded, in order) and those named without a glob."""
    all_names = [v.name for v in registry.variants(op)]
    patterns = _text_list(raw.get("variants", ["*"]), path + ("variants",), src)
    names: list[str] = []
    explicit = set()
    for i, pattern in enumerate(patterns):
        matched = [v.name for v in registry.select(op, pattern)]
        if not matched:
            raise src.error(path + ("variants", i), f"no {op} variant matches {quoted(pattern)}; valid: {', '.join(all_names)}")
        if not any(ch in pattern for ch in "*?["):
            explicit.add(pattern)
        names.extend(m for m in matched if m not in names)
    if src.recorded_explicit is not None:
        explicit = set(src.recorded_explicit.get(path[-1], ())) & set(names)
    return names, explicit


def _sweep_sizes(raw, path, src) -> list[int]:
    sizes = _size_list(raw.get("sizes"), path + ("sizes",), src, what="size") if "sizes" in raw else None
    if sizes is None:
        raise src.error(path, "no 'sizes'; e.g. sizes: {pow2: [10, 28]} or sizes: [1000, '2^25']")
    for n in sizes:
        if n < 1:
            raise src.error(path + ("sizes",), f"size {n} must be at least 1")
        if n > MAX_N:
            raise src.error(path + ("sizes",), f"size {n} (2^{n.bit_length() - 1}+) is beyond the kernels' 32-bit indexing; "
                            f"the largest allowed is 2^30 = {MAX_N}")
    if len(set(sizes)) != len(sizes):
        raise src.error(path + ("sizes",), "lists a size twice; keep one")
    return sizes


def _named_variants_fit(explicit, op: str, sizes, blocks, path, src) -> None:
    """A variant the user named must be able to run in this sweep."""
    for name in explicit:
        variant = registry.get(op, name)
        accepted = [b for b in blocks if not variant.block_sizes or b in variant.block_sizes]
        if not accepted:
            raise src.error(path + ("block_sizes",), f"{name} takes none of the block sizes {blocks}; it takes "
                            f"{', '.join(map(str, variant.block_sizes))}")
        if not any(variant.takes(n, b) for n in sizes for b in accepted):
            raise src.error(path + ("sizes",), f"{name} runs in one block, so n can be at most the block size "
                            f"({max(accepted)} here); none of these sizes fits: add a size up to {max(accepted)}")


def _choices(raw, key: str, valid, op: str, path, src) -> list[str]:
    """A sweep's dtypes or distributions: each one the op offers; default, the op's first."""
    chosen = _text_list(raw.get(key, [valid[0]]), path + (key,), src)
    what = key[:-1]  # dtype, distribution
    for value in chosen:
        if value not in valid:
            raise src.error(path + (key,), f"{what} {quoted(value)} is not available for {op}; valid: {', '.join(valid)}")
    return chosen


def _sweep_runs_something(sweep: Sweep, variants, path, src) -> None:
    """A named variant that takes none of the sweep's parameter values, or a dtype that can take none
    of them, would silently run nothing."""
    for name in sweep.explicit:
        variant = registry.get(sweep.op, name)
        if not sweep.param_grid(variant):
            takes = "; ".join(f"{p}: {', '.join(map(str, allowed))}" for p, allowed in variant.params)
            raise src.error(path + ("params",), f"{name} takes none of these values ({takes}); add one or list it in another sweep")
    for d in sweep.dtypes:
        reasons = [_refusal(sweep.op, d, dict(p), path, src) for v in variants for p in sweep.param_grid(v)]
        if reasons and all(reasons):
            raise src.error(path + ("params",) if sweep.params else path + ("dtypes",), f"dtype {d}: {reasons[0]}")


def _refusal(op: str, dtype: str, params: dict, path, src):
    """The op's `refuses` of (dtype, params): a plugin's function, asked here first of every
    combination the sweep's cases will ask it of, so that one raising is one line, here."""
    try:
        return ops.checks(op).refuses(dtype, params)
    except Exception as error:  # noqa: BLE001 - a plugin's code can raise anything
        raise src.error(path, f"op {op}'s refuses({dtype}, {params}) raised {type(error).__name__}: {str(error)[:200]}; "
                        "fix the function in the plugin that declares the op") from None


def _params(raw, path, src, variants) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The sweep's values of the variants' own parameters, e.g. {radius: [1, 4, 16]}."""
    declared: dict[str, set] = {}
    for variant in variants:
        for name, allowed in variant.params:
            declared.setdefault(name, set()).update(allowed)
    if not isinstance(raw, dict) or not raw:
        valid = ", ".join(sorted(declared)) or "none for these variants"
        raise src.error(path, f"must map a parameter to a list of values, e.g. {{radius: [1, 4]}}; parameters: {valid}")
    result = []
    for name, values in raw.items():
        if name not in declared:
            raise src.error(path + (name,), f"no selected variant has a parameter {quoted(name)}; "
                            f"parameters: {', '.join(sorted(declared)) or 'none'}")
        chosen = _size_list(values, path + (name,), src, what=f"{name} value")
        refused = [v for v in chosen if v not in declared[name]]
        if refused:
            raise src.error(path + (name,), f"{name} {refused[0]} is not available; valid: {', '.join(map(str, sorted(declared[name])))}")
        if len(set(chosen)) != len(chosen):
            raise src.error(path + (name,), "lists a value twice; keep one")
        result.append((name, tuple(chosen)))
    return tuple(sorted(result))


def _refuse_a_huge_sweep(config: Config, src: Source, allow_large: bool) -> None:
    """Over MAX_CASES cases needs allow_large (--allow-large): counted from the axes' lengths, before
    any case is made, so a sweep of millions is refused at once."""
    bounds = [(sweep.case_count_bound(), sweep) for sweep in config.sweeps]
    total = sum(bound for bound, _ in bounds)
    if total > MAX_CASES and not allow_large:
        bound, sweep = max(bounds, key=lambda item: item[0])
        raise src.error(("sweeps",), f"the sweeps expand to up to {total:,} cases, over {MAX_CASES:,}; the largest, "
                        f"{sweep.name[:60]!r}: {sweep.axes_text()} = {bound:,}; narrow it, or pass --allow-large")


def config_from_header(header, run_path) -> Config:
    """The config a run was started with, from its header (a records.RunHeader; for --resume)."""
    resolved = dict(header.config)
    resolved["sweeps"] = [dict(sweep) for sweep in resolved.get("sweeps", [])]
    explicit = {i: sweep.pop("explicit", []) for i, sweep in enumerate(resolved["sweeps"])}
    # The run was accepted when it started: its size is not refused again.
    return config_from_dict(resolved, Source(f"{run_path} (header)", recorded_explicit=explicit), allow_large=True)
