"""Narrowing a config from the command line without editing YAML: `--only 'reduce/vector_*'`,
`--sizes 2^25,2^28`, `--blocks 256`, and the one-sweep config `--variant` makes with no YAML at all.

Filters intersect the config: a sweep keeps the variants, sizes and block sizes that pass every
filter given. The narrowed config is what the run header records, so `--resume` runs the same
cases. A filter that matches nothing is an error naming it.
"""

from __future__ import annotations

import dataclasses
import fnmatch

from primbench import ops, registry
from primbench.config import numbers
from primbench.config.loading import MAX_BLOCK, MAX_N, MIN_BLOCK, Config, Sweep, parse_size
from primbench.config.yaml_source import Source
from primbench.errors import ConfigError
from primbench.measuring.policy import TimingPolicy
from primbench.runfile.locations import RESULTS_DIR
from primbench.text_safety import quoted

DEFAULT_SIZES = ("2^20", "2^24", "2^28")  # --variant without --sizes


def parse_sizes(text: str | None, option: str = "--sizes", *, blocks: bool | None = None) -> tuple[int, ...] | None:
    """'2^25,2^28,1000' -> sizes (block sizes with option "--blocks", or blocks=True); None when the
    option was not given. `option` names what the text came from in an error: "--sizes" on the
    command line, "sizes" in primbench.ab."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise ConfigError(f"{option} {text[:200]!r}: give sizes separated by commas, e.g. {option} 2^25,2^28")
    return checked_sizes(items, option, blocks=option == "--blocks" if blocks is None else blocks)


def checked_sizes(items, option: str, *, blocks: bool) -> tuple[int, ...]:
    """Each item (text as --sizes holds it, or an int) read as a config's sizes are (ASCII digits,
    at most 2^40), then held to what the kernels take: sizes from 1 to 2^30, block sizes powers of
    two from 32 to 1024. The CLI's options and primbench.ab's arguments are checked here alike."""
    src = Source(option)
    sizes = tuple(parse_size(item, (), src, what="block size" if blocks else "size") for item in items)
    for item, n in zip(items, sizes):  # the error quotes the item as the user wrote it
        shown = item[:40] if isinstance(item, str) else numbers.shown(n)
        if blocks and (n < MIN_BLOCK or n > MAX_BLOCK or n & (n - 1)):
            raise ConfigError(f"{option} {shown}: a block size is a power of two from {MIN_BLOCK} to {MAX_BLOCK}")
        if not blocks and not 1 <= n <= MAX_N:
            raise ConfigError(f"{option} {shown}: a size is from 1 to 2^30 = {MAX_N} (the kernels index with 32-bit ints)")
    return sizes


def parse_dtypes(text: str | None) -> tuple[str, ...] | None:
    """--dtypes 'float32,int32' -> dtypes; None when the option was not given."""
    return tuple(d.strip() for d in text.split(",")) if text else None


def check_dtypes(op: str, dtypes, option: str = "--dtypes") -> None:
    """Each of `dtypes` one the op takes; refused in one line naming `option` otherwise."""
    valid = ops.dtypes(op)
    for dtype in dtypes or ():
        if dtype not in valid:
            raise ConfigError(f"{option} {quoted(dtype, 40)} is not available for {op}; valid: {', '.join(valid)}")


def parse_patterns(values: list[str] | None) -> tuple[str, ...] | None:
    """--only, repeatable and comma-separated: 'scan/*', 'reduce/vector_*,reduce/cub_*'. A pattern
    without '/' names an op ('scan' is 'scan/*')."""
    if not values:
        return None
    patterns = [p.strip() for value in values for p in value.split(",") if p.strip()]
    return tuple(p if "/" in p else f"{p}/*" for p in patterns)


def narrow(config: Config, only=None, sizes=None, blocks=None) -> Config:
    """The config with every sweep cut down to what the filters let through."""
    if only is None and sizes is None and blocks is None:
        return config
    _each_filter_matches(config, only, sizes, blocks)
    sweeps = []
    for sweep in config.sweeps:
        names = tuple(v for v in sweep.variants if only is None or _matches(f"{sweep.op}/{v}", only))
        kept_sizes = tuple(n for n in sweep.sizes if sizes is None or n in sizes)
        kept_blocks = tuple(b for b in sweep.block_sizes if blocks is None or b in blocks)
        if not kept_blocks:  # only library variants (which choose their own block) go on; the
            # sweep keeps a block size so that its header validates again on --resume
            names = tuple(v for v in names if not registry.get(sweep.op, v).block_sizes)
            kept_blocks = sweep.block_sizes
        if names and kept_sizes:
            sweeps.append(dataclasses.replace(sweep, variants=names, sizes=kept_sizes, block_sizes=kept_blocks,
                                              explicit=sweep.explicit & set(names)))
    narrowed = dataclasses.replace(config, sweeps=tuple(sweeps))
    if not sweeps or not narrowed.has_cases():
        raise ConfigError(f"{config.path}: {_describe(only, sizes, blocks)} together match no case; "
                          "each matches some, but never the same ones (`primbench run CONFIG --dry-run` lists them)")
    return narrowed


def _matches(key: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns)


def _each_filter_matches(config: Config, only, sizes, blocks) -> None:
    """Each filter must select some case. Asked of one sweep narrowed to the filter's value at a
    time, for its first case only: a sweep of 10^8 cases is not expanded to find one."""
    for pattern in only or ():
        if not any(_makes_a_case(s, variants=(v,)) for s in config.sweeps for v in s.variants
                   if fnmatch.fnmatchcase(f"{s.op}/{v}", pattern)):
            ops_there = sorted({s.op for s in config.sweeps})
            raise ConfigError(f"--only {quoted(pattern)} matches no variant of {config.path} (its ops: {', '.join(ops_there)}; "
                              "patterns are op/variant globs, e.g. 'reduce/vector_*')")
    for n in sizes or ():
        if not any(n in s.sizes and _makes_a_case(s, sizes=(n,)) for s in config.sweeps):
            there = sorted({m for s in config.sweeps for m in s.sizes if _makes_a_case(s, sizes=(m,))})
            raise ConfigError(f"--sizes {n} is not a size of {config.path}; its sizes: {_size_list(there)}")
    for block in blocks or ():
        if not any(block in s.block_sizes and _makes_a_case(s, block=block) for s in config.sweeps):
            there = sorted({b for s in config.sweeps for b in s.block_sizes if _makes_a_case(s, block=b)})
            raise ConfigError(f"--blocks {block} is not a block size of {config.path}; its block sizes: "
                              f"{', '.join(map(str, there)) or 'none (library variants choose their own)'}")


def _makes_a_case(sweep: Sweep, block: int | None = None, **axes) -> bool:
    """Whether the sweep, narrowed to these axes (or to one block size, which library variants
    do not take), makes a case."""
    if block is not None:
        blocked = tuple(v for v in sweep.variants if registry.get(sweep.op, v).block_sizes)
        axes.update(variants=blocked, block_sizes=(block,))
    return next(dataclasses.replace(sweep, **axes).iter_cases(), None) is not None


def _size_list(sizes) -> str:
    text = ", ".join(f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n) for n in sizes)
    return text if len(text) <= 200 else text[:200] + "..."


def _describe(only, sizes, blocks) -> str:
    parts = []
    if only is not None:
        parts.append("--only " + ",".join(only))
    if sizes is not None:
        parts.append("--sizes " + ",".join(map(str, sizes)))
    if blocks is not None:
        parts.append("--blocks " + ",".join(map(str, blocks)))
    return " and ".join(parts)


def variant_config(patterns: tuple[str, ...], sizes=None, blocks=None, dtypes=None) -> Config:
    """A config of one sweep per op for `run --variant op/name ...`: the default timing policy, the
    op's default dtype and distribution, the variants' block sizes (256 where they take it)."""
    by_op: dict[str, list[str]] = {}
    for pattern in patterns:
        matched = variant_names(pattern)
        op = pattern.partition("/")[0]
        by_op.setdefault(op, []).extend(name for name in matched if name not in by_op[op])
    sweeps = tuple(_variant_sweep(op, names, sizes, blocks, dtypes) for op, names in by_op.items())
    config = Config(path="--variant " + ",".join(patterns), name="cli", output=str(RESULTS_DIR), timing=TimingPolicy(),
                    determinism_runs=3, sweeps=sweeps)
    if not config.has_cases():
        raise ConfigError(f"--variant {','.join(patterns)}: no case fits these sizes and block sizes")
    return config


def variant_names(pattern: str, where: str | None = None) -> list[str]:
    """The names of the variants `pattern` (op/name, a glob allowed) matches; refused in one line
    starting with `where` (default: "--variant 'PATTERN'") when it names no op or no variant."""
    where = where or f"--variant {quoted(pattern)}"
    op, _, name = pattern.partition("/")
    if not name:
        raise ConfigError(f"{where}: give op/name, e.g. reduce/vector_load_sum (or reduce/* for all)")
    if op not in registry.ops():
        raise ConfigError(f"{where}: unknown op {quoted(op, 60)}; valid ops: {', '.join(registry.ops())}")
    matched = [v.name for v in registry.select(op, name)]
    if not matched:
        raise ConfigError(f"{where} matches no variant; `primbench list --op {op}` lists them")
    return matched


def _variant_sweep(op: str, names: list[str], sizes, blocks, dtypes) -> Sweep:
    variants = [registry.get(op, name) for name in names]
    if blocks is None:
        taken = sorted({b for v in variants for b in v.block_sizes})
        blocks = (256,) if 256 in taken or not taken else (taken[0],)
    check_dtypes(op, dtypes)
    valid = ops.dtypes(op)
    chosen_sizes = sizes or parse_sizes(",".join(DEFAULT_SIZES))
    return Sweep(name=f"--variant {op}", op=op, variants=tuple(names), sizes=tuple(chosen_sizes), block_sizes=tuple(blocks),
                 dtypes=tuple(dtypes or valid[:1]), distributions=ops.distributions(op)[:1], explicit=frozenset(names))
