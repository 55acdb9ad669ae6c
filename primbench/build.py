"""Compile the CUDA sources through NVRTC: for the GPU in hand (CuPy RawModule), or for a named
architecture with no GPU at all (CI: `compile_for_arch`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from primbench.resources import KERNEL_DIR
from primbench.variant import COMPILE_OPTIONS

# Same options on every path, so that what CI compiles is what the GPU runs.
BASE_OPTIONS = (*COMPILE_OPTIONS, f"-I{KERNEL_DIR}")

_MODULES: dict = {}


class KernelBuildError(Exception):
    """A kernel source failed to compile; the message carries NVRTC's log."""


def _options(path: Path) -> tuple[str, ...]:
    # A plugin's source finds its own headers beside it, and primbench's common.cuh after them.
    return BASE_OPTIONS if path.parent == KERNEL_DIR else (f"-I{path.parent}", *BASE_OPTIONS)


def source_path(source: str) -> Path:
    """`source` is a name under primbench's kernels/, or a plugin's absolute path."""
    return KERNEL_DIR / source


def load_module(source: str, name_expressions: tuple[str, ...]):
    """Compile `source` for the current GPU (cached for the process; CuPy caches on disk)."""
    import cupy

    key = (source, tuple(sorted(name_expressions)))
    if key not in _MODULES:
        path = source_path(source)
        code = path.read_text()
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


def compile_for_arch(source: str, name_expressions, arch: str, extra_options: tuple[str, ...] = ()) -> CompiledSource:
    """Compile `source` to a cubin for `arch` (e.g. 'sm_90') with NVRTC; needs no GPU or driver."""
    from cupy.cuda import nvrtc

    path = source_path(source)
    code = path.read_text()
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
        return CompiledSource(source, arch, len(cubin), lowered, nvrtc.getProgramLog(program))
    finally:
        nvrtc.destroyProgram(program)


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
