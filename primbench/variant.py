"""The public model of a benchmarked variant: `Variant`, the `Plan` its `prepare` returns, the
`LaunchContext` it gets, and the helpers plans size their grids with.

A variant declares the *whole* operation a user would call (every pass, any memset of an atomic
target) through `prepare`, which allocates what the operation needs and returns a `Plan` whose
`run()` only enqueues GPU work. Nothing here imports CuPy at module level, so variants can be
listed, hashed and compiled (through NVRTC) on a machine without a GPU. docs/extending.md says
what each class promises; plugins and the built-in kernels/ use the same classes.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from primbench import cuda_source, pathnames
from primbench.resources import KERNEL_DIR
# A variant's series; the other names stay reachable here, beside the Variant that takes them.
from primbench.series import (BASELINE_SERIES, BEYOND_SERIES, FORMER_SERIES, HARRIS_SERIES,  # noqa: F401
                              LIBRARY_SERIES, LIBRARY_SERIES_NAMES, series_name)

MAX_THREADS_PER_SM = 2048  # sm_80 and sm_90; defaults only (sm_86/89 have 1536)
MAX_BLOCKS_PER_SM = 32
STATIC_SHARED_LIMIT = 48 * 1024  # what a kernel may take without opting in to more
SHARED_PER_BLOCK_OPTIN = 227 * 1024  # sm_90's opt-in limit; a default only (sm_80: 163 KB, sm_86/89: 99 KB)


class CaseUnsupported(Exception):
    """This case cannot run on this GPU (e.g. more shared memory per block than it has): the runner
    records it as skipped with this message, and the run goes on."""


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up, for integers (grids, tiles)."""
    return -(-a // b)


def check_aligned_16(*arrays) -> None:
    """Refuse arrays a 16-byte-load kernel cannot read as whole vectors (CuPy's are 256-byte aligned)."""
    for array in arrays:
        if array.data.ptr % 16:
            raise RuntimeError("the 16-byte-load kernels need 16-byte-aligned arrays (CuPy allocations are 256-byte aligned)")


def pow2(lo: int, hi: int) -> tuple[int, ...]:
    """Powers of two from lo to hi inclusive."""
    values, v = [], lo
    while v <= hi:
        values.append(v)
        v *= 2
    return tuple(values)


@dataclass
class Plan:
    """A prepared operation: `run()` enqueues it on the current stream; `result()` is its output."""

    run: Callable[[], Any]
    result: Callable[[], Any]
    launches: list[dict]
    depth: int  # longest chain of dependent additions any element goes through (tolerance model)
    scratch: list = field(default_factory=list)  # every buffer the operation writes (poisoned first)
    unit_roundoff: float = 2.0**-24  # of the arithmetic those additions round in (float32 unless stated)
    result_rounding: float = 0.0  # + this x |result|: a final rounding the depth term does not cover
    # Puts the input back before each verified run and once before timing, for operations that
    # work in place (CuPy's CUB scan). Never timed; the timed runs rescan their own output, which
    # costs the same (integer and float additions take the same time whatever the values).
    restore: Callable[[], Any] | None = None


@dataclass
class LaunchContext:
    """What `prepare` gets: the compiled module, the input, the case, and the device's shape."""

    module: Any  # cupy.RawModule, or None for library variants
    x: Any  # the input array on the GPU
    n: int
    block: int | None
    sm_count: int
    threads_per_sm: int = MAX_THREADS_PER_SM  # the runner passes the device's own limits
    blocks_per_sm: int = MAX_BLOCKS_PER_SM
    shared_per_block_optin: int = SHARED_PER_BLOCK_OPTIN
    dtype: str = "float32"
    # Multiplies every grid the helpers below size (the reproducibility probe and tests vary it).
    grid_scale: float = 1.0
    # The case's values of the variant's own parameters (a stencil's radius, top-k's vocabulary).
    params: dict = field(default_factory=dict)

    def kernel(self, name: str):
        return self.module.get_function(name)

    def dynamic_shared(self, kernel, nbytes: int) -> int:
        """Let `kernel` take `nbytes` of dynamic shared memory per block: past 48 KB it must opt in,
        up to the device's limit; past that the case cannot run here (CaseUnsupported)."""
        if nbytes > self.shared_per_block_optin:
            raise CaseUnsupported(f"needs {nbytes / 1024:.0f} KB of shared memory per block; this GPU allows "
                                  f"{self.shared_per_block_optin / 1024:.0f} KB (use a smaller block)")
        if nbytes > STATIC_SHARED_LIMIT:
            kernel.max_dynamic_shared_size_bytes = nbytes
        return nbytes

    def _scaled(self, blocks: int, needed: int) -> int:
        return max(1, min(needed, round(blocks * self.grid_scale)))

    def one_wave_grid(self, block: int, elements_per_thread: int = 1) -> int:
        """Blocks for a grid-stride kernel: enough to fill every SM once, never more than the data needs."""
        per_sm = max(1, min(self.blocks_per_sm, self.threads_per_sm // block))
        needed = -(-self.n // (block * elements_per_thread))
        return self._scaled(self.sm_count * per_sm, needed)

    def occupancy_grid(self, kernel, block: int, elements_per_thread: int = 1, dynamic_shared: int = 0) -> int:
        """One full wave by the kernel's real occupancy (its registers and shared memory, from the driver)."""
        from cupy.cuda import driver

        function = kernel.kernel  # the cupy.RawKernel's driver function
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(function.ptr, block, dynamic_shared)
        needed = -(-self.n // (block * elements_per_thread))
        return self._scaled(self.sm_count * max(1, per_sm), needed)


@dataclass(frozen=True)
class Variant:
    """One benchmarked implementation of an op."""

    op: str
    name: str
    origin: str  # where it comes from (seed article and section, library)
    series: str  # the story it belongs to in the report: "harris", "seed000", "seed004", "library"
    order: int  # its place in the report's progression
    prepare: Callable[[LaunchContext], Plan]
    block_sizes: tuple[int, ...]  # () means the library chooses
    bytes_model: str  # the minimal traffic, as a formula of n and the item size
    tolerance_model: str  # why the float tolerance is what it is
    deterministic_expected: bool
    source: str | None = None  # a file under kernels/, or an absolute path (a plugin's own .cu)
    kernels: tuple[str, ...] = ()  # name expressions to compile (templates spelled out)
    dtypes: tuple[str, ...] = ("float32",)
    notes: str = ""
    hazard: str | None = None  # set when the code is unsafe on modern GPUs
    grid_independent: bool = False  # promises the same bits for any grid and block size (the runner checks)
    work_span: tuple[str, str] | None = None  # (work, span) as formulas of n and the block size B, for the report
    # Sweep axes of the variant's own: ((name, allowed values), ...); a sweep that names none gets
    # the first value. The bytes model may use the names.
    params: tuple[tuple[str, tuple[int, ...]], ...] = ()
    max_n_per_block: int | None = None  # set for one-block kernels: n may be at most block x this
    # What the variant's source says this step fixes against the previous step of its series, and
    # the counter (a primbench.profile.capture.METRICS name, or "idle_lanes") that should fall: ("bank conflicts",
    # "shared_load_bank_conflicts"). The report checks the claim against Nsight Compute.
    counter_claim: tuple[str, str] | None = None
    # The kind of traffic its minimal bytes are, which sets its speed of light: "read" (the run's
    # pure-read ceiling) or "read_write" (as much written as read: the copy's). None (a plugin that
    # does not say): its speed of light is unknown, rather than priced at a guessed ceiling.
    traffic: str | None = None
    # Part of the identity hash: bump it when the launch logic changes (the plan's grid, passes,
    # arguments, a constant a helper reads) in a way the CUDA source, kernel names and the values
    # `prepare` reads itself do not show.
    version: int = 1
    # For a variant that calls a library instead of a CUDA source of its own (a primbench.libraries.
    # Library): its package and version go in the run header and in the hash, and its cases are
    # skipped, with the package to install, where it is not installed.
    library: Any = None

    def __post_init__(self):
        # A kernel or plugin declared with the series' former name ("baseline") is the library's.
        object.__setattr__(self, "series", series_name(self.series))

    def takes(self, n: int, block: int | None) -> bool:
        """Whether the variant can run n elements at this block size (one-block kernels cannot go past it)."""
        return self.max_n_per_block is None or block is None or n <= block * self.max_n_per_block

    @property
    def key(self) -> str:
        return f"{self.op}/{self.name}"

    def minimal_bytes(self, n: int, itemsize: int, params: dict | None = None) -> int:
        return eval_bytes_model(self.bytes_model, n, itemsize, params)

    def source_text(self) -> str:
        """The CUDA source with every local #include it pulls in (what the hash covers)."""
        if self.source is None:
            return ""
        return expand_includes(self.source_path)

    @property
    def source_path(self) -> Path | None:
        """The CUDA file: a name under the built-in kernels/, or a plugin's absolute path."""
        return None if self.source is None else KERNEL_DIR / self.source

    def hash(self) -> str:
        """Identity of the variant: what decides its GPU work (see _variant_hash)."""
        return _variant_hash(self)

    def describe(self) -> dict:
        """What the run file's header stores about the variant, so that reports need no registry."""
        return {
            "op": self.op,
            "name": self.name,
            "hash": self.hash(),
            "origin": self.origin,
            "series": self.series,
            "order": self.order,
            "notes": self.notes,
            "hazard": self.hazard,
            "deterministic_expected": self.deterministic_expected,
            "grid_independent": self.grid_independent,
            "work_span": list(self.work_span) if self.work_span else None,
            "max_n_per_block": self.max_n_per_block,
            "params": {name: list(values) for name, values in self.params},
            "block_sizes": list(self.block_sizes),
            "bytes_model": self.bytes_model,
            "tolerance_model": self.tolerance_model,
            "source": self.source,
            "version": self.version,
            "traffic": self.traffic,
            "library": self.library.describe() if self.library is not None else None,
        }


# What decides the GPU work of a variant's launches, besides its CUDA source: NVRTC's options
# (build.BASE_OPTIONS without the include folder, which differs between machines).
COMPILE_OPTIONS = ("-std=c++17",)
_PLAIN_VALUES = (int, float, str, bool, tuple, type(None))


@functools.lru_cache(maxsize=None)
def _variant_hash(variant: Variant) -> str:
    """The variant's identity: what decides its GPU work.

    Covered: the CUDA source with every include expanded, the compile options, the kernel names
    with their template arguments, the plain values (numbers, text, tuples) `prepare` itself reads
    from its closure or its module (a kernel name a factory captured, a grid constant), the declared
    version, and the library's name and version for a library variant (the CUDA source's comments
    too: the text is hashed as written; beside this hash a run records its machine code's,
    machine_code.py, so that compare and check tell a comment edit from a change of GPU work).
    Not covered, so that editing them needs no GPU run: the Python plan's comments, docstrings and
    code text, LaunchContext's other fields.
    Not covered either, so bump `version` when one changes the launch: a constant read only inside
    a helper the plan calls, or a dict. (A tolerance constant `prepare` reads is covered, though it
    changes no GPU work.)"""
    digest = hashlib.sha256()
    for part in (variant.key, variant.source_text(), COMPILE_OPTIONS, variant.kernels, *plan_identity(variant)):
        digest.update(repr(part).encode())
    if variant.source is None:  # a library variant changes when the library does
        digest.update((variant.library.identity() if variant.library is not None else library_version(variant.op)).encode())
    return digest.hexdigest()[:16]


def plan_identity(variant: Variant) -> tuple:
    """What of the plan both hashes cover (this one and the machine-code hash, machine_code.py): the
    declared version and the plain values `prepare` reads."""
    return variant.version, _plan_values(variant)


def _plan_values(variant: Variant) -> list:
    """Plain values `prepare` reads from its closure or its module's globals, by name: the launch
    parameters a factory captured or a module constant sets (functions and modules left out)."""
    names = inspect.getclosurevars(variant.prepare)
    values = {**names.globals, **names.nonlocals}
    return sorted((name, repr(value)) for name, value in values.items() if isinstance(value, _PLAIN_VALUES))


def eval_bytes_model(model: str, n: int, itemsize: int, params: dict | None = None) -> int:
    """Evaluate a bytes model such as '2 * n * itemsize' or 'n * vocab * itemsize': only n, itemsize,
    the variant's parameter names, integers, + and * are allowed."""
    names = {"n": n, "itemsize": itemsize, **(params or {})}
    for token in re.findall(r"[A-Za-z_]\w*|\S", model):
        if not (token in names or token.isdigit() or token in "+*()"):
            raise ValueError(f"bytes model {model!r} may use only n, itemsize, {', '.join(params or ()) or 'no parameters'}, "
                             "integers, + and *")
    return int(eval(model, {"__builtins__": {}}, names))  # noqa: S307 (checked above)


def expand_includes(path: Path, seen: set | None = None) -> str:
    """Source text with local `#include "x"` files appended, each once. A name is looked up beside
    the including file, then in primbench's kernels/ (as NVRTC's -I does), so a plugin may include
    common.cuh. A name found in neither is a header NVRTC brings itself (`"cuda_fp16.h"`), or a
    missing one that NVRTC reports when it compiles: the hash leaves it out. Every file is read as
    UTF-8 whatever the locale (cuda_source.read), so the hash is the same under any locale."""
    seen = set() if seen is None else seen
    if path in seen:
        return ""
    seen.add(path)
    text = cuda_source.read(path)
    parts = [text]
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#include") and '"' in stripped:
            name = stripped.split('"')[1]
            found = next((p for p in (path.parent / name, KERNEL_DIR / name) if name and pathnames.kind_of(p)), None)
            if found is not None:
                parts.append(expand_includes(found, seen))
    return "\n".join(parts)


def library_version(op: str) -> str:
    """What the hash of a library variant that declares no `library` covers: CuPy's version (a
    plugin's library variant, or one written before Variant.library; libraries.CUPY says the same)."""
    try:
        import cupy

        return f"cupy {cupy.__version__}"
    except ImportError:
        return "cupy missing"
