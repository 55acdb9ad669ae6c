"""The libraries the baseline variants call, each named by its pip package: CuPy (its bundled CUB,
cupyx), cuda.compute (pip `cuda-cccl`), torch and FlashInfer. A library variant declares one
(`Variant.library`); from it come its version in the run header and in the variant's hash, and the
one line its cases are skipped with where the library is not installed, which names the package
to install. Only CuPy is a dependency of a GPU run; the others are optional (README, "Baselines").

Nothing here imports a library at module level: listing, hashing and compiling variants work
without any of them.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass

from primbench.variant import CaseUnsupported

# The words every skip reason of a missing library carries: the report finds those cases by them
# (primbench/report/missing_baselines.py), whatever the package.
NOT_INSTALLED = "is not installed"
DOES_NOT_IMPORT = "does not import"


@dataclass(frozen=True)
class Library:
    """A library a baseline variant calls."""

    name: str  # what the hash and the header call it: "cupy", "cuda-cccl"
    module: str  # what its variants import: "cuda.compute"
    distributions: tuple[str, ...]  # pip distributions that provide it, the first installed one counts
    install: str  # the command that installs it, for the skip reason
    probe: str = ""  # an attribute the module must have to be usable (cuda.compute without CUDA bindings has none)

    @property
    def package(self) -> str:
        """The pip package the skip reason names."""
        return self.distributions[0]

    def version(self) -> str | None:
        """The installed version (package metadata: nothing is imported), or None where none is installed."""
        for distribution in self.distributions:
            try:
                return importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None

    def identity(self) -> str:
        """What a library variant's hash covers: 'cuda-cccl 1.2.1', or 'cuda-cccl missing'."""
        return f"{self.name} {self.version() or 'missing'}"

    def describe(self) -> dict:
        """The run header's record of it, under the variant: {"package": ..., "version": ... or null}."""
        return {"package": self.package, "version": self.version()}

    def load(self):
        """The library's module, imported; CaseUnsupported with unavailable()'s one line where it cannot be."""
        module, reason = self._import()
        if reason:
            raise CaseUnsupported(reason)
        return module

    def unavailable(self) -> str | None:
        """Why this library's cases are skipped on this machine (one line naming the pip package), or None."""
        return self._import()[1]

    def _import(self):
        try:
            module = importlib.import_module(self.module)
            if self.probe:
                getattr(module, self.probe)
            return module, None
        except ImportError as exc:
            if self.version() is None:
                return None, f"{self.package} {NOT_INSTALLED}, so its baselines are skipped: {self.install}"
            return None, self._broken(exc)
        except Exception as exc:  # noqa: BLE001 (an import can fail any way: a missing CUDA library, no driver)
            return None, self._broken(exc)

    def _broken(self, exc: Exception) -> str:
        detail = " ".join(str(exc).split())[:120]
        return f"{self.package} {self.version()} {DOES_NOT_IMPORT} {self.module} ({type(exc).__name__}: {detail}); {self.install}"


CUPY = Library("cupy", "cupy", ("cupy-cuda13x", "cupy-cuda12x", "cupy"), "pip install 'primbench[cuda13]' (or [cuda12])")
CUPYX_NDIMAGE = Library("cupy", "cupyx.scipy.ndimage", CUPY.distributions, CUPY.install)
CUDA_CCCL = Library("cuda-cccl", "cuda.compute", ("cuda-cccl",),
                    "pip install 'cuda-cccl[minimal-cu13]' (CUDA 12: [minimal-cu12]), or primbench[cuda13]",
                    probe="make_reduce_into")
TORCH = Library("torch", "torch", ("torch",), "pip install torch")
FLASHINFER = Library("flashinfer-python", "flashinfer", ("flashinfer-python",), "pip install flashinfer-python (it needs torch)",
                     probe="top_k")
OPTIONAL = (CUDA_CCCL, TORCH, FLASHINFER)  # the header's `software` lists the versions of those installed


def installed_versions() -> dict[str, str]:
    """{package: version} of the optional libraries installed here (for the header's `software`)."""
    return {library.package: version for library in OPTIONAL if (version := library.version())}


class CurrentStream:
    """CuPy's current stream through the `__cuda_stream__` protocol (version 0, the handle), read at
    each call: a library given it enqueues on the stream the Timer times, never on the legacy default
    stream that `stream=None` would mean."""

    def __cuda_stream__(self):
        import cupy

        return 0, cupy.cuda.get_current_stream().ptr
