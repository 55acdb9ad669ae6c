"""Stand-ins for the libraries the baseline variants call, so that their plans run without a GPU:
CuPy (numpy arrays on the host, the current stream a number), cuda.compute (make_* factories whose
algorithms record every call), torch (topk into its out= tensors) with FlashInfer, and cupyx's
uniform_filter1d. Each records what the plan asked of it; none computes on a GPU.

`install(monkeypatch, *names)` puts them in sys.modules for one test."""

from __future__ import annotations

import contextlib
import types

import numpy

CURRENT_STREAM = 0x5EED


class FakeCupy(types.ModuleType):
    """`import cupy` inside a plan: host arrays, and a count of every allocation."""

    def __init__(self):
        super().__init__("cupy")
        self.allocations = []
        for name in ("uint8", "int32", "int64", "float16", "float32", "float64", "ascontiguousarray", "asarray"):
            setattr(self, name, getattr(numpy, name))
        device = types.SimpleNamespace(compute_capability="90", id=0)
        self.cuda = types.SimpleNamespace(Device=lambda: device,
                                          get_current_stream=lambda: types.SimpleNamespace(ptr=CURRENT_STREAM))

    def empty(self, shape, dtype=numpy.float32):
        self.allocations.append((shape, numpy.dtype(dtype).name))
        return numpy.empty(shape, dtype=dtype)


class Algorithm:
    """What a cuda.compute make_* returns: asked with temp_storage=None it answers a size and
    launches nothing; given storage it records an enqueue."""

    TEMP_BYTES = 4096

    def __init__(self, factory: str, arguments: dict):
        self.factory, self.arguments = factory, arguments
        self.queries, self.enqueues = [], []

    def __call__(self, *, temp_storage, stream=None, **arguments):
        if temp_storage is None:
            self.queries.append(arguments)
            return self.TEMP_BYTES
        self.enqueues.append({"storage": temp_storage, "stream": stream.__cuda_stream__(), **arguments})
        return self.TEMP_BYTES


def fake_compute(serializable: bool = True) -> types.ModuleType:
    """A cuda.compute with the factories kernels/cccl.py calls; `built` lists each build."""
    module = types.ModuleType("cuda.compute")
    module.built = []
    module.OpKind = types.SimpleNamespace(PLUS="OpKind.PLUS", MAXIMUM="OpKind.MAXIMUM")
    module.Determinism = types.SimpleNamespace(NOT_GUARANTEED="NG", RUN_TO_RUN="R2R", GPU_TO_GPU="G2G")

    def factory(name):
        def make(**arguments):
            algorithm = Algorithm(name, arguments)
            module.built.append(algorithm)
            return algorithm
        return make

    for name in ("reduce_into", "inclusive_scan", "histogram_even"):
        setattr(module, f"make_{name}", factory(name))
    if serializable:
        module.loaded = []
        module.serialize = lambda algorithm: f"{algorithm.factory}".encode()

        def deserialize(blob):
            algorithm = Algorithm(blob.decode(), {})
            module.loaded.append(algorithm)
            return algorithm

        module.deserialize = deserialize
    return module


def fake_torch() -> types.ModuleType:
    """torch with as_tensor (the array itself), topk writing into out=, and stream contexts that record."""
    module = types.ModuleType("torch")
    module.calls, module.streams = [], []

    @contextlib.contextmanager
    def stream(chosen):
        module.streams.append(chosen)
        yield

    module.cuda = types.SimpleNamespace(stream=stream, ExternalStream=lambda pointer: ("external", pointer),
                                        default_stream=lambda: ("default",))
    module.as_tensor = lambda array, device=None: array

    def topk(logits, k, dim=1, largest=True, sorted=True, out=None):
        module.calls.append({"k": k, "dim": dim, "largest": largest, "sorted": sorted, "out": out, "shape": logits.shape})
        index = numpy.argsort(-logits, axis=1, kind="stable")[:, :k]
        out[0][...], out[1][...] = numpy.take_along_axis(logits, index, axis=1), index

    module.topk = topk
    return module


def fake_flashinfer() -> types.ModuleType:
    module = types.ModuleType("flashinfer")
    module.calls = []

    def top_k(logits, k, sorted=False):
        module.calls.append({"k": k, "sorted": sorted, "contiguous": logits.flags.c_contiguous})
        index = numpy.argsort(-logits, axis=1, kind="stable")[:, :k]
        return numpy.take_along_axis(logits, index, axis=1), index

    module.top_k = top_k
    return module


def fake_ndimage() -> types.ModuleType:
    module = types.ModuleType("cupyx.scipy.ndimage")
    module.calls = []

    def uniform_filter1d(x, size, output=None, mode="reflect", cval=0.0, origin=0):
        module.calls.append({"size": size, "mode": mode, "cval": cval, "origin": origin, "output": output})

    module.uniform_filter1d = uniform_filter1d
    return module


MAKERS = {"cupy": FakeCupy, "cuda.compute": fake_compute, "torch": fake_torch, "flashinfer": fake_flashinfer,
          "cupyx.scipy.ndimage": fake_ndimage}


def install(monkeypatch, *names: str) -> dict:
    """Put the stand-ins named (keys of MAKERS) in sys.modules for this test; returns them by name."""
    import sys

    made = {name: MAKERS[name]() for name in names}
    for name, module in made.items():
        monkeypatch.setitem(sys.modules, name, module)
    return made
