"""A variant's machine-code identity: a hash of what NVRTC compiles its kernels to for the run's GPU
architecture, and of its plan, recorded beside the source hash (variant.py) in the run header's
`variants` entry as `machine_code: {hash, arch, nvrtc}`. compare and check (compare/code_change.py)
read the two: an edit that leaves the machine code alone (a comment) is no code change, and a
compiler upgrade that changes it is one.

The kernels are compiled here with the options CuPy compiles them with at run time
(build.CUPY_OPTIONS), so the cubin hashed is the one the GPU runs; of it, each of the variant's
kernels' code and the module's data count (primbench/cubin.py says what, and what is left out as
metadata). The plan counts as the source hash counts it: its declared version and the plain values
`prepare` reads (variant.plan_identity), with the name expression of each kernel it launches.

A library variant (no CUDA source of its own) has no cubin: its machine identity is its library's
name and version, which its source hash covers already, so it gets no `machine_code`. Nor does a
variant whose kernels NVRTC cannot compile here (its cases fail and say why): compare then judges
it by its source hash alone, as it does a run made before this was recorded.
"""

from __future__ import annotations

import functools
import hashlib

from primbench.variant import Variant, plan_identity


def run_arch(compute_capability: str | None) -> str | None:
    """The architecture CuPy compiles for on a GPU of this compute capability ("9.0" -> "sm_90"):
    the GPU's own, or the newest NVRTC knows below it; None where NVRTC is missing or knows none."""
    try:
        from cupy.cuda import nvrtc

        major, _, minor = str(compute_capability or "").partition(".")
        wanted = int(major) * 10 + int(minor or 0)
        known = [arch for arch in nvrtc.getSupportedArchs() if arch <= wanted]
    except Exception:  # noqa: BLE001 (no CuPy, no NVRTC library, or no capability: nothing to compile for)
        return None
    return f"sm_{max(known)}" if known else None


def nvrtc_version() -> str | None:
    """NVRTC's version, as the header's software block writes it ("13.0")."""
    try:
        from cupy.cuda import nvrtc

        return "{}.{}".format(*nvrtc.getVersion())
    except Exception:  # noqa: BLE001 (no CuPy or no NVRTC library)
        return None


def machine_hash(variant: Variant, cubin: bytes, lowered: dict[str, str], arch: str) -> str:
    """The machine-code hash of a variant from the cubin of its kernels (`lowered`: each name
    expression's lowered name in it), for `arch`."""
    from primbench.cubin import code_digest

    digests = code_digest(cubin, lowered.values())
    kernels = sorted((expression, digests[lowered[expression]]) for expression in variant.kernels)
    digest = hashlib.sha256()
    for part in (arch, kernels, digests[""], *plan_identity(variant)):
        digest.update(repr(part).encode())
    return digest.hexdigest()[:16]


def identity(variant: Variant, arch: str | None) -> dict | None:
    """{"hash", "arch", "nvrtc"} of a variant compiled for `arch`, or None: a library variant, no
    architecture or NVRTC here, or kernels that do not compile."""
    if variant.source is None or not variant.kernels or arch is None:
        return None
    from primbench.build import KernelBuildError

    try:
        cubin, lowered = _compiled(variant.source, variant.source_text(), tuple(variant.kernels), arch)
    except (KernelBuildError, ImportError, OSError):
        return None
    return {"hash": machine_hash(variant, cubin, lowered, arch), "arch": arch, "nvrtc": nvrtc_version()}


@functools.lru_cache(maxsize=64)
def _compiled(source: str, source_text: str, kernels: tuple[str, ...], arch: str) -> tuple[bytes, dict[str, str]]:
    """(cubin, lowered names) of `kernels`; cached by the text compiled (`source_text`, includes
    expanded), so that variants sharing a source and kernels compile once and an edit compiles again."""
    from primbench.build import CUPY_OPTIONS, compile_for_arch

    compiled = compile_for_arch(source, kernels, arch, CUPY_OPTIONS)
    return compiled.cubin, compiled.lowered_names


def described(variants, compute_capability: str | None) -> dict[str, dict]:
    """The header's `variants`: each variant's description, with its machine-code identity for the
    run's GPU where it has one."""
    arch = run_arch(compute_capability)
    entries = {}
    for variant in variants:
        entry = variant.describe()
        machine = identity(variant, arch)
        if machine is not None:
            entry["machine_code"] = machine
        entries[variant.key] = entry
    return entries
