"""Compile the CUDA sources through NVRTC: for the GPU in hand (CuPy RawModule), or for a named
architecture with no GPU at all (CI: `compile_for_arch`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from primbench import cuda_source
from primbench.resources import KERNEL_DIR
from primbench.variant import COMPILE_OPTIONS, expand_includes

# Same options on every path, so that what CI compiles is what the GPU runs.
BASE_OPTIONS = (*COMPILE_OPTIONS, f"-I{KERNEL_DIR}")
# What CuPy's RawModule adds to those when it compiles for the GPU (cupy/cuda/compiler.py, besides
# its include folders and the -arch it picks): -ftz=true changes the machine code of float kernels,
# so the machine-code identity (machine_code.py) compiles with them, to hash the cubin the GPU runs.
# tests/unit/test_machine_code.py checks that CuPy's cubin and ours are the same bytes.
CUPY_OPTIONS = ("-ftz=true", "--device-as-default-execution-space")
# Kernels the harness launches itself (kernels/harness.cu), compiled and checked like the variants.
HARNESS_SOURCE = "harness.cu"
HARNESS_KERNELS = ("primbench_hold", "primbench_read_probe", "primbench_hold_stamped", "primbench_read_probe_no_allocate")

_MODULES: dict = {}


class KernelBuildError(Exception):
    """A kernel source failed to compile; the message carries NVRTC's log."""


def _options(path: Path) -> tuple[str, ...]:
    # A plugin's source finds its own headers beside it, and primbench's common.cuh after them.
    return BASE_OPTIONS if path.parent == KERNEL_DIR else (f"-I{path.parent}", *BASE_OPTIONS)


def source_path(source: str) -> Path:
    """`source` is a name under primbench's kernels/, or a plugin's absolute path."""
    return KERNEL_DIR / source


def source_code(path: Path) -> str:
    """The text NVRTC compiles, read as UTF-8 whatever the locale. Every header it includes is read
    first the same way: one that is missing is NVRTC's to report, but a folder, a FIFO (on which
    NVRTC would wait forever) or a file that is not UTF-8 is one line here."""
    expand_includes(path)
    return cuda_source.read(path)


def load_module(source: str, name_expressions: tuple[str, ...]):
    """Compile `source` for the current GPU (cached for the process; CuPy caches on disk)."""
    import cupy

    key = (source, tuple(sorted(name_expressions)))
    if key not in _MODULES:
        path = source_path(source)
        code = source_code(path)
        try:
            module = cupy.RawModule(code=code, options=_options(path), name_expressions=list(key[1]), backend="nvrtc")
            module.compile()
        except cupy.cuda.compiler.CompileException as exc:
            raise KernelBuildError(f"{source}: NVRTC failed:\n{exc.get_message() if hasattr(exc, 'get_message') else exc}") from None
        _MODULES[key] = module
    return _MODULES[key]


@dataclass(frozen=True)
class CompiledSource:
    source: str
    arch: str
    cubin_bytes: int
    lowered_names: dict[str, str]
    log: str
    cubin: bytes = field(default=b"", repr=False, compare=False)  # what machine_code.py hashes


def compile_for_arch(source: str, name_expressions, arch: str, extra_options: tuple[str, ...] = ()) -> CompiledSource:
    """Compile `source` to a cubin for `arch` (e.g. 'sm_90') with NVRTC; needs no GPU or driver."""
    from cupy.cuda import nvrtc

    path = source_path(source)
    code = source_code(path)
    program = nvrtc.createProgram(code, path.name, [], [])
    try:
        for expression in name_expressions:
            nvrtc.addNameExpression(program, expression)
        try:
            nvrtc.compileProgram(program, [*_options(path), f"-arch={arch}", *extra_options])
        except nvrtc.NVRTCError:
            raise KernelBuildError(f"{source} for {arch}: NVRTC failed:\n{nvrtc.getProgramLog(program)}") from None
        lowered = {expr: nvrtc.getLoweredName(program, expr) for expr in name_expressions}
        cubin = nvrtc.getCUBIN(program)
        return CompiledSource(source, arch, len(cubin), lowered, nvrtc.getProgramLog(program), cubin)
    finally:
        nvrtc.destroyProgram(program)


def require_nvrtc() -> None:
    """NVRTC loads, or one line says what to install (compiling needs no GPU, only CuPy and NVRTC)."""
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # noqa: BLE001 (ImportError, or the library loader's own error types)
        from primbench.errors import UserError

        raise UserError(f"cannot load NVRTC to compile ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); "
                        "install CuPy and NVRTC: pip install 'primbench[cuda13]' (or [cuda12])") from None


def compile_all(sources: dict, archs, harness: tuple[str, tuple[str, ...]]):
    """Compile each of `sources` ({source: kernel names}) for each arch, yielding (source, arch,
    CompiledSource or the KernelBuildError). The harness compiles first: a target NVRTC does not
    know fails every source alike, so it is refused once, in one line, before any output."""
    from primbench.errors import UserError

    compiled_harness = {}
    for arch in archs:
        if arch.startswith("compute_"):  # NVRTC would make PTX and no cubin, and the checks read the cubin
            raise UserError(f"--arch {arch[:40]}: compile makes cubins for real GPUs; give targets like sm_90 sm_80")
        try:
            compiled_harness[arch] = compile_for_arch(*harness, arch)
        except KernelBuildError as exc:
            detail = next((line for line in str(exc).splitlines()[1:] if line.strip()), "")[:160]
            raise UserError(f"--arch {arch[:40]}: NVRTC cannot compile for it ({detail}); give targets like sm_90 sm_80") from None
    for source, names in sources.items():
        for arch in archs:
            try:
                yield source, arch, compiled_harness[arch] if source == harness[0] else compile_for_arch(source, names, arch)
            except KernelBuildError as exc:
                yield source, arch, exc


@dataclass(frozen=True)
class KernelUsage:
    """What ptxas reports for one kernel: registers per thread, stack frame and spill bytes."""

    registers: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int

    @property
    def spilled(self) -> int:
        return self.spill_stores + self.spill_loads


def ptxas_usage(source: str, name_expressions, arch: str) -> tuple[dict[str, KernelUsage], str]:
    """({name expression: its KernelUsage}, ptxas's log) for `source` compiled for `arch` with
    `--ptxas-options=-v` (no GPU needed): how the tuning tools and tests check registers and spills."""
    import re

    compiled = compile_for_arch(source, name_expressions, arch, ("--ptxas-options=-v",))
    log = compiled.log.decode() if isinstance(compiled.log, bytes) else compiled.log
    expression_of = {lowered: expression for expression, lowered in compiled.lowered_names.items()}
    usage, current, frame = {}, None, (0, 0, 0)
    for line in log.splitlines():
        if entry := re.search(r"Compiling entry function '(\w+)'", line):
            current, frame = expression_of.get(entry.group(1), entry.group(1)), (0, 0, 0)
        elif match := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            frame = tuple(int(g) for g in match.groups())
        elif current and (used := re.search(r"Used (\d+) registers", line)):
            usage[current] = KernelUsage(int(used.group(1)), *frame)
    return usage, log
