"""Top-k as today's libraries do it, beside the pruning kernels and the full sort (kernels/topk.py):
torch.topk (torch, on the GPU image) and FlashInfer's top_k (pip flashinfer-python: radix select,
or CCCL's DeviceBatchedTopK where its build has it). Both optional: where one does not import, its
cases are skipped with the package to install.

Both get the case's rows as a (rows, vocab) torch tensor over the CuPy array's memory (no copy;
FlashInfer a contiguous copy made in `prepare`, untimed, when the vocabulary leaves padding between
rows), return the k largest best first (sorted=True, as the kernels' output is), and run on CuPy's
current stream through torch.cuda.ExternalStream, so the Timer's events bracket them. Neither
promises which of equal logits it returns, so their plans ask ops/topk.py to check the logits at
their indices rather than the indices themselves (`ties_in_any_order_of`).
"""

from __future__ import annotations

from primbench.api import BASELINE_SERIES, FLASHINFER, TORCH, LaunchContext, Plan, Variant, register_variant as register
from primbench.kernels.topk import BYTES, KS, VOCABS, k_of, row_stride

_STREAMS: dict = {}  # CuPy stream pointer -> its torch.cuda.ExternalStream, made once


def torch_stream(torch):
    """CuPy's current stream as torch sees it (the legacy default stream is torch's default too)."""
    import cupy

    pointer = cupy.cuda.get_current_stream().ptr
    if pointer == 0:
        return torch.cuda.default_stream()
    if pointer not in _STREAMS:
        _STREAMS[pointer] = torch.cuda.ExternalStream(pointer)
    return _STREAMS[pointer]


def rows_of(ctx: LaunchContext, contiguous: bool):
    """The case's logits as a (rows, vocab) CuPy view of the padded input, or a contiguous copy."""
    import cupy

    vocab = ctx.params["vocab"]
    view = ctx.x.reshape(ctx.n, row_stride(vocab))[:, :vocab]
    return cupy.ascontiguousarray(view) if contiguous else view


def _tensor(torch, array):
    """A torch tensor over a CuPy array's memory (its __cuda_array_interface__), on the same GPU."""
    import cupy

    return torch.as_tensor(array, device=f"cuda:{cupy.cuda.Device().id}")


def torch_topk_prepare(ctx: LaunchContext) -> Plan:
    """torch.topk(logits, k, dim=1, sorted=True) into outputs made here (out=), on CuPy's stream."""
    import cupy

    torch = TORCH.load()
    k = k_of(ctx)
    logits = _tensor(torch, rows_of(ctx, contiguous=False))
    values, index = cupy.empty((ctx.n, k), dtype=cupy.float32), cupy.empty((ctx.n, k), dtype=cupy.int64)
    out = (_tensor(torch, values), _tensor(torch, index))

    def run():
        with torch.cuda.stream(torch_stream(torch)):
            torch.topk(logits, k, dim=1, largest=True, sorted=True, out=out)

    plan = Plan(run=run, result=lambda: index.reshape(-1), depth=0, scratch=[values, index],
                launches=[{"kernel": "torch.topk", "grid": None, "block": None}])
    plan.ties_in_any_order_of = ctx.x
    return plan


def flashinfer_topk_prepare(ctx: LaunchContext) -> Plan:
    """flashinfer.top_k(logits, k, sorted=True): its outputs are its own (torch's caching allocator,
    host work only); one call here builds or loads its kernels, so that no run pays for that."""
    import cupy

    flashinfer = FLASHINFER.load()
    torch = TORCH.load()
    k = k_of(ctx)
    vocab = ctx.params["vocab"]
    logits = _tensor(torch, rows_of(ctx, contiguous=row_stride(vocab) != vocab))
    state = {}

    def run():
        with torch.cuda.stream(torch_stream(torch)):
            state["values"], state["index"] = flashinfer.top_k(logits, k, sorted=True)

    run()  # the first call compiles or loads FlashInfer's top-k module
    plan = Plan(run=run, result=lambda: cupy.asarray(state["index"]).reshape(-1), depth=0,
                launches=[{"kernel": "flashinfer.top_k", "grid": None, "block": None}])
    plan.ties_in_any_order_of = ctx.x
    return plan


_COMMON = dict(op="topk", series=BASELINE_SERIES, block_sizes=(), bytes_model=BYTES, traffic="read",
               tolerance_model="the k largest logits, best first; ties in any order (the library does not say which "
                               "of equal logits it returns)",
               deterministic_expected=False, dtypes=("float32",), params=(("vocab", VOCABS), ("k", KS)))
register(Variant(
    name="torch_topk", order=91, prepare=torch_topk_prepare, library=TORCH,
    origin="torch.topk(logits, k, dim=1, sorted=True), the call a PyTorch user makes",
    notes="Reads the padded rows in place (a strided view: no copy). Outputs written through out=, so a run allocates "
          "nothing of its own.", **_COMMON,
))
register(Variant(
    name="flashinfer_top_k", order=92, prepare=flashinfer_topk_prepare, library=FLASHINFER,
    origin="FlashInfer's top_k(logits, k, sorted=True) (pip flashinfer-python): radix select over the row, or CCCL's "
           "DeviceBatchedTopK where FlashInfer chooses it",
    notes="Sorted, as the kernels' output is (its default, unsorted, is faster). The vocabulary of 129,287 leaves padding "
          "between rows: FlashInfer gets a contiguous copy then, made before timing. Needs torch.", **_COMMON,
))
