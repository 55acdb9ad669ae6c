"""The library baselines' plans without a GPU (kernels/cccl.py, kernels/topk_library.py, the cupyx
stencil in kernels/stencil.py), over the stand-ins of tests/stand_in/libraries.py: `prepare` builds
the library's algorithm once and allocates what it needs, `run` only enqueues on CuPy's current
stream; where a library is missing, the case is skipped with one line that names its pip package."""

import numpy
import pytest

from primbench import library_cache, registry
from primbench.api import BASELINE_SERIES, CaseUnsupported, LaunchContext
from tests.stand_in import libraries as stand_in


@pytest.fixture(autouse=True)
def cache_in(tmp_path, monkeypatch):
    """Each test builds from nothing, and keeps what it builds in its own folder."""
    monkeypatch.setenv("PRIMBENCH_CACHE_DIR", str(tmp_path / "cache"))
    library_cache.forget()
    yield tmp_path / "cache"
    library_cache.forget()


def _context(x, n=None, dtype="float32", params=None):
    return LaunchContext(None, x, len(x) if n is None else n, None, 132, dtype=dtype, params=dict(params or {}))


def _prepare(op, name, x, **context):
    return registry.get(op, name).prepare(_context(x, **context))


CCCL_CASES = [  # (op, variant, dtype, params)
    ("reduce", "cccl_reduce", "float32", {}), ("reduce", "cccl_reduce", "float16", {}), ("reduce", "cccl_reduce", "int32", {}),
    ("reduce", "cccl_reduce_run_to_run", "float32", {}),
    ("reduce_max", "cccl_reduce_max", "float16", {}), ("scan", "cccl_inclusive_scan", "int32", {}),
    ("scan", "cccl_inclusive_scan", "float32", {}), ("histogram", "cccl_histogram_even", "uint8", {"bins": 256}),
    ("histogram", "cccl_histogram_even", "int32", {"bins": 1024}),
]


@pytest.mark.parametrize("op,name,dtype,params", CCCL_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_a_cccl_plan_builds_once_in_prepare_and_its_run_only_enqueues(monkeypatch, op, name, dtype, params):
    fakes = stand_in.install(monkeypatch, "cupy", "cuda.compute")
    cupy, compute = fakes["cupy"], fakes["cuda.compute"]
    x = numpy.arange(1000).astype(dtype)
    plan = _prepare(op, name, x, dtype=dtype, params=params)
    (algorithm,) = compute.built
    assert len(algorithm.queries) == 1 and algorithm.enqueues == []  # the size asked once; nothing launched
    allocated = len(cupy.allocations)
    for _ in range(3):
        plan.run()
    assert len(compute.built) == 1 and len(cupy.allocations) == allocated  # no build, no allocation in run
    assert len(algorithm.enqueues) == 3
    for call in algorithm.enqueues:
        assert call["stream"] == (0, stand_in.CURRENT_STREAM)  # CuPy's current stream, never the legacy default
        assert call["storage"].nbytes == stand_in.Algorithm.TEMP_BYTES
        assert (call.get("d_in") if "d_in" in call else call["d_samples"]) is x
    assert plan.result() is not None and plan.launches[0]["grid"] is None


def test_each_reduce_asks_for_its_own_determinism_and_accumulates_float16_in_float32(monkeypatch):
    fakes = stand_in.install(monkeypatch, "cupy", "cuda.compute")
    compute = fakes["cuda.compute"]
    x = numpy.ones(100, dtype=numpy.float16)
    for name in ("cccl_reduce", "cccl_reduce_run_to_run"):
        _prepare("reduce", name, x, dtype="float16")
    _prepare("reduce_max", "cccl_reduce_max", x, dtype="float16")
    levels = [algorithm.arguments["determinism"] for algorithm in compute.built]
    assert levels == ["NG", "R2R", "R2R"]
    plus, maximum = compute.built[0].arguments, compute.built[2].arguments
    assert plus["op"] == "OpKind.PLUS" and plus["h_init"].dtype == numpy.float32 and plus["d_out"].dtype == numpy.float32
    assert plus["h_init"][0] == 0
    assert maximum["op"] == "OpKind.MAXIMUM" and maximum["h_init"].dtype == numpy.float16 and maximum["h_init"][0] == -numpy.inf


def test_the_histogram_counts_in_int32_over_one_level_per_bin(monkeypatch):
    compute = stand_in.install(monkeypatch, "cupy", "cuda.compute")["cuda.compute"]
    _prepare("histogram", "cccl_histogram_even", numpy.zeros(1000, dtype=numpy.uint8), dtype="uint8", params={"bins": 256})
    arguments = compute.built[0].arguments
    assert arguments["d_histogram"].dtype == numpy.int32 and arguments["d_histogram"].size == 256
    assert [int(arguments[f"h_{name}"][0]) for name in ("num_output_levels", "lower_level", "upper_level")] == [257, 0, 256]
    assert arguments["h_lower_level"].dtype == numpy.int32  # 256 does not fit the samples' uint8


def test_a_build_is_made_once_per_process_and_once_per_machine(monkeypatch, cache_in):
    compute = stand_in.install(monkeypatch, "cupy", "cuda.compute")["cuda.compute"]
    x = numpy.ones(100, dtype=numpy.float32)
    _prepare("reduce", "cccl_reduce", x)
    _prepare("reduce", "cccl_reduce", x)  # the grid probe prepares again: the process has it
    assert len(compute.built) == 1 and list(cache_in.rglob("*.bin"))
    library_cache.forget()  # a new process: loaded from the cache folder, not built
    _prepare("reduce", "cccl_reduce", x)
    assert len(compute.built) == 1 and len(compute.loaded) == 1
    _prepare("reduce", "cccl_reduce_run_to_run", x)  # another specialisation is another build
    assert len(compute.built) == 2


def test_the_cache_can_be_turned_off_and_a_damaged_entry_is_rebuilt(monkeypatch, cache_in):
    compute = stand_in.install(monkeypatch, "cupy", "cuda.compute")["cuda.compute"]
    x = numpy.ones(100, dtype=numpy.float32)
    _prepare("reduce", "cccl_reduce", x)
    (entry,) = cache_in.rglob("*.bin")
    compute.deserialize = lambda blob: (_ for _ in ()).throw(ValueError("serialization blob: unknown algorithm tag"))
    library_cache.forget()
    _prepare("reduce", "cccl_reduce", x)
    assert len(compute.built) == 2
    monkeypatch.setenv("PRIMBENCH_LIBRARY_CACHE", "0")
    assert library_cache.cache_root() is None and library_cache.entry_path("cuda-cccl 1.2.1", ("k",)) is None


def test_a_type_the_library_refuses_skips_the_case_and_any_other_error_fails_it(monkeypatch):
    compute = stand_in.install(monkeypatch, "cupy", "cuda.compute")["cuda.compute"]

    def refuse(**arguments):
        raise TypeError("reduce_into dtype mismatch")

    compute.make_reduce_into = refuse
    with pytest.raises(CaseUnsupported, match="cuda.compute refuses reduce_into .*dtype mismatch"):
        _prepare("reduce", "cccl_reduce", numpy.ones(10, dtype=numpy.float32))

    def crash(**arguments):
        raise OSError("nvJitLink failed")

    compute.make_reduce_into = crash
    with pytest.raises(RuntimeError, match="OSError: nvJitLink failed"):
        _prepare("reduce", "cccl_reduce", numpy.ones(11, dtype=numpy.float32))


@pytest.mark.parametrize("op,name", [("reduce", "cccl_reduce"), ("scan", "cccl_inclusive_scan"),
                                     ("histogram", "cccl_histogram_even"), ("topk", "torch_topk"),
                                     ("topk", "flashinfer_top_k")])
def test_without_its_library_a_plan_is_skipped_with_one_line_naming_the_pip_package(monkeypatch, op, name):
    import sys

    stand_in.install(monkeypatch, "cupy")
    variant = registry.get(op, name)
    monkeypatch.setitem(sys.modules, variant.library.module, None)  # `import` of it now fails
    monkeypatch.setattr(type(variant.library), "version", lambda self: None)
    with pytest.raises(CaseUnsupported) as caught:
        variant.prepare(_context(numpy.ones(8, dtype=numpy.float32), params={"bins": 256, "vocab": 8, "k": 8}))
    reason = str(caught.value)
    assert "\n" not in reason and len(reason) < 200
    assert reason.startswith(f"{variant.library.package} is not installed, so its baselines are skipped: pip install"), reason


def _logits(rows, vocab, stride):
    x = numpy.full((rows, stride), numpy.inf, dtype=numpy.float32)
    x[:, :vocab] = numpy.random.default_rng(3).standard_normal((rows, vocab), dtype=numpy.float32)
    return x.reshape(-1)


@pytest.mark.parametrize("k", [8, 64])
def test_torch_topk_writes_into_outputs_made_in_prepare_on_cupys_stream(monkeypatch, k):
    torch = stand_in.install(monkeypatch, "cupy", "torch")["torch"]
    from primbench.kernels.topk import row_stride

    rows, vocab = 3, 1000
    x = _logits(rows, vocab, row_stride(vocab))
    plan = _prepare("topk", "torch_topk", x, n=rows, params={"vocab": vocab, "k": k})
    assert torch.calls == []
    plan.run()
    (call,) = torch.calls
    assert (call["k"], call["dim"], call["largest"], call["sorted"], call["shape"]) == (k, 1, True, True, (rows, vocab))
    assert call["out"][1] is plan.scratch[1] and torch.streams == [("external", stand_in.CURRENT_STREAM)]
    assert plan.result().shape == (rows * k,) and plan.ties_in_any_order_of is x


def test_flashinfer_is_called_once_in_prepare_and_gets_whole_rows(monkeypatch):
    fakes = stand_in.install(monkeypatch, "cupy", "torch", "flashinfer")
    flashinfer = fakes["flashinfer"]
    from primbench.kernels.topk import row_stride

    rows, vocab = 2, 1001  # rows padded to 1024 floats: FlashInfer gets a contiguous copy
    x = _logits(rows, vocab, row_stride(vocab))
    plan = _prepare("topk", "flashinfer_top_k", x, n=rows, params={"vocab": vocab, "k": 64})
    assert len(flashinfer.calls) == 1  # its kernels built or loaded before any run
    plan.run()
    assert flashinfer.calls[-1] == {"k": 64, "sorted": True, "contiguous": True}
    assert numpy.array_equal(plan.result().reshape(rows, 64)[:, 0], numpy.argmax(x.reshape(rows, -1)[:, :vocab], axis=1))


def test_the_pruning_kernels_skip_every_k_but_8_saying_why(monkeypatch):
    stand_in.install(monkeypatch, "cupy")
    for name in ("two_stage_b16", "two_stage_b8", "two_stage_b16_fused"):
        with pytest.raises(CaseUnsupported, match="keeps the best 8 of each row .* not k = 64"):
            _prepare("topk", name, numpy.ones(8, dtype=numpy.float32), n=1, params={"vocab": 129280, "k": 64})


def test_cupyx_filters_the_same_window_with_zeros_outside(monkeypatch):
    ndimage = stand_in.install(monkeypatch, "cupy", "cupyx.scipy.ndimage")["cupyx.scipy.ndimage"]
    plan = _prepare("stencil", "cupyx_uniform_filter1d", numpy.ones(100, dtype=numpy.float32), params={"radius": 4})
    assert len(ndimage.calls) == 1  # CuPy's kernel for this window compiled in prepare
    plan.run()
    call = ndimage.calls[-1]
    assert (call["size"], call["mode"], call["cval"], call["origin"]) == (9, "constant", 0.0, 0)
    assert call["output"] is plan.result() and plan.depth == 10


def test_every_library_variant_declares_its_library_and_the_header_says_which_version(monkeypatch):
    from primbench.runfile.json_spec import compiled, object_problem
    from primbench.runfile.fields import VARIANT_INFO

    spec = compiled(VARIANT_INFO)
    for variant in registry.variants():
        described = variant.describe()
        assert object_problem(described, spec) is None, variant.key
        if variant.block_sizes == ():  # the library chooses its launch
            assert variant.library is not None and described["library"]["package"] == variant.library.package, variant.key
            assert variant.series == BASELINE_SERIES, variant.key
        else:
            assert described["library"] is None, variant.key
