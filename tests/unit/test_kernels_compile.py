"""Every kernel compiles with NVRTC for sm_90 and sm_80, on a machine with no GPU, without warnings;
and the launch helpers' limits that need no GPU to check."""

import re

import pytest

from primbench import registry
from primbench.build import compile_for_arch

SOURCES = sorted(registry.sources().items())


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("source,names", SOURCES, ids=[s for s, _ in SOURCES])
def test_every_kernel_compiles_cleanly_for_hopper_and_ampere(source, names, arch):
    compiled = compile_for_arch(source, names, arch)
    assert compiled.cubin_bytes > 0
    assert set(compiled.lowered_names) == set(names)
    assert compiled.log.strip() == "", compiled.log


def test_every_registered_variant_names_kernels_its_source_provides():
    for variant in registry.variants():
        if variant.source:
            assert variant.kernels, variant.key
            assert set(variant.kernels) <= set(registry.sources()[variant.source])


def test_every_templated_variant_is_instantiated_for_each_block_size_it_accepts():
    # Kernels templated on the block size take it as their first template argument
    # (reduce6_grid_stride_shuffle<256>); a first argument that is some other number (a stencil's
    # radius) or a type (histogram_global_atomic<int,1024>) is not a block size.
    checked = set()
    for variant in registry.variants():
        first = {re.match(r"[^<]*<\s*(\w+)", k).group(1) for k in variant.kernels if "<" in k}
        numbers = {int(a) for a in first if a.isdigit()}
        if numbers and numbers <= set(variant.block_sizes):
            checked.add(variant.key)
            assert numbers == set(variant.block_sizes), (variant.key, sorted(set(variant.block_sizes) - numbers))
    # The heuristic must see every kernel templated on the block size; a new one is added here.
    assert checked == {"reduce/reduce5_complete_unroll_volatile", "reduce/reduce5_complete_unroll_syncwarp",
                       "reduce/reduce6_grid_stride_shuffle"}


def test_a_kernel_with_a_syntax_error_fails_with_the_nvrtc_log(tmp_path, monkeypatch):
    from primbench import build

    broken = tmp_path / "broken.cu"
    broken.write_text('extern "C" __global__ void k(float* x) { x[0] = undefined_name; }\n')
    monkeypatch.setattr(build, "KERNEL_DIR", tmp_path)
    with pytest.raises(build.KernelBuildError, match="undefined_name"):
        build.compile_for_arch("broken.cu", ["k"], "sm_90")


def test_variant_hashes_are_stable_and_distinct():
    hashes = {v.key: v.hash() for v in registry.variants()}
    assert hashes == {v.key: v.hash() for v in registry.variants()}
    assert len(set(hashes.values())) == len(hashes)


def test_a_case_needing_more_shared_memory_than_the_gpu_allows_is_unsupported_not_a_crash():
    from primbench.api import CaseUnsupported, LaunchContext

    class Kernel:
        max_dynamic_shared_size_bytes = 0

    ctx = LaunchContext(None, None, 1, 256, 1, shared_per_block_optin=99 * 1024)  # an sm_86's limit
    kernel = Kernel()
    assert ctx.dynamic_shared(kernel, 40 * 1024) == 40 * 1024 and kernel.max_dynamic_shared_size_bytes == 0
    assert ctx.dynamic_shared(kernel, 64 * 1024) == 64 * 1024 and kernel.max_dynamic_shared_size_bytes == 64 * 1024
    with pytest.raises(CaseUnsupported, match="needs 129 KB of shared memory per block; this GPU allows 99 KB"):
        ctx.dynamic_shared(kernel, 129 * 1024)


# kWords values loaded before a barrier and stored after it are all live across it, and
# __launch_bounds__(1024, 2) caps the kernel at 32 registers: 48 words must spill, 8 fit.
LIVE_WORDS = """
template <int kWords>
__global__ void __launch_bounds__(1024, 2) live_words(const unsigned* in, unsigned* out) {
    unsigned v[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) v[i] = in[threadIdx.x + i * 1024];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kWords; ++i) out[threadIdx.x + i * 1024] = v[i] + 1u;
}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_ptxas_usage_sees_a_spill_where_ptxas_reports_one(tmp_path, arch):
    # The no-spill checks (tests/unit/test_histogram_lanes.py, the tuners' --ptxas) rest on this
    # parser. The source is named by its absolute path, as a plugin's is.
    from primbench.build import ptxas_usage

    source = tmp_path / "live_words.cu"
    source.write_text(LIVE_WORDS)
    spilling, fitting = "live_words<48>", "live_words<8>"
    usage, _log = ptxas_usage(str(source), [spilling, fitting], arch)
    assert usage[spilling].spilled > 0 and usage[spilling].registers <= 32
    assert usage[fitting].spilled == 0 and usage[fitting].stack_bytes == 0
