"""Compile the CUDA sources through NVRTC: for the GPU in hand (CuPy RawModule), or for a named
architecture with no GPU at all (CI: `compile_for_arch`)."""

from __future__ import annotations

from dataclasses import dataclass

from kernels import KERNEL_DIR

# Same options on every path, so that what CI compiles is what the GPU runs.
BASE_OPTIONS = ("-std=c++17", f"-I{KERNEL_DIR}")

_MODULES: dict = {}


class KernelBuildError(Exception):
    """A kernel source failed to compile; the message carries NVRTC's log."""


def load_module(source: str, name_expressions: tuple[str, ...]):
    """Compile `kernels/<source>` for the current GPU (cached for the process; CuPy caches on disk)."""
    import cupy

    key = (source, tuple(sorted(name_expressions)))
    if key not in _MODULES:
        code = (KERNEL_DIR / source).read_text()
        try:
            module = cupy.RawModule(code=code, options=BASE_OPTIONS, name_expressions=list(key[1]), backend="nvrtc")
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


def compile_for_arch(source: str, name_expressions, arch: str) -> CompiledSource:
    """Compile `kernels/<source>` to a cubin for `arch` (e.g. 'sm_90') with NVRTC; needs no GPU or driver."""
    from cupy.cuda import nvrtc

    code = (KERNEL_DIR / source).read_text()
    program = nvrtc.createProgram(code, source, [], [])
    try:
        for expression in name_expressions:
            nvrtc.addNameExpression(program, expression)
        try:
            nvrtc.compileProgram(program, [*BASE_OPTIONS, f"-arch={arch}"])
        except nvrtc.NVRTCError:
            raise KernelBuildError(f"{source} for {arch}: NVRTC failed:\n{nvrtc.getProgramLog(program)}") from None
        lowered = {expr: nvrtc.getLoweredName(program, expr) for expr in name_expressions}
        cubin = nvrtc.getCUBIN(program)
        return CompiledSource(source, arch, len(cubin), lowered, nvrtc.getProgramLog(program))
    finally:
        nvrtc.destroyProgram(program)
