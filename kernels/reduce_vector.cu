// Reduce beyond the seeds: the kernels that take a reduction to the memory limit, keep it
// bitwise reproducible, and make it more accurate. The launches are in kernels/reduce_vector.py.
//
// Every kernel here is one template over three choices:
//   Load   - the input type and how 16 bytes of it are loaded and widened (float, half, bf16, int);
//   Policy - what a thread accumulates and how partials combine (sum, Kahan, float64, max, int sum);
//   kUnroll - how many 16-byte loads each thread keeps in flight (independent accumulators).
// Half and bfloat16 arrive as raw 16-bit words and are widened by hand (cvt / shift), so no
// CUDA header beyond what NVRTC always has is needed.
#include "common.cuh"

// ---------------------------------------------------------------------------------------
// Loads: 16 bytes -> kPerVec values of the accumulation type.
// ---------------------------------------------------------------------------------------

// ld.global.nc: the read-only path. REDUCE_VECTOR_LOAD picks another form; only
// tools/tune_reduce_vector.py sets it, to measure them against each other (docs/perf-notes.md:
// L1::no_allocate cost 4.5 % at 2^28 on the H200): 1 ld.global.nc.L1::no_allocate, 2 ld.global.
#ifndef REDUCE_VECTOR_LOAD
#define REDUCE_VECTOR_LOAD 0
#endif
#if REDUCE_VECTOR_LOAD == 1
#define REDUCE_VECTOR_LD "ld.global.nc.L1::no_allocate.v4.u32"
#elif REDUCE_VECTOR_LOAD == 2
#define REDUCE_VECTOR_LD "ld.global.v4.u32"
#else
#define REDUCE_VECTOR_LD "ld.global.nc.v4.u32"
#endif
__device__ __forceinline__ uint4 load_stream_16(const void* p) {
    uint4 r;
    asm volatile(REDUCE_VECTOR_LD " {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

__device__ __forceinline__ float half_bits_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ float bf16_bits_to_float(unsigned short b) {
    return __uint_as_float(static_cast<unsigned>(b) << 16);  // bf16 is the top half of a float
}

// unpack: 16 bytes (from a load or from shared memory) -> kPerVec values; vec: load vector i.
struct LoadF32 {
    using raw = float;
    using value = float;
    static constexpr int kPerVec = 4;
    __device__ static void unpack(const uint4& q, value (&v)[kPerVec]) {
        v[0] = __uint_as_float(q.x); v[1] = __uint_as_float(q.y);
        v[2] = __uint_as_float(q.z); v[3] = __uint_as_float(q.w);
    }
    __device__ static void vec(const raw* p, unsigned i, value (&v)[kPerVec]) { unpack(load_stream_16(p + 4ull * i), v); }
    __device__ static value one(const raw* p, unsigned i) { return p[i]; }
};

struct LoadI32 {
    using raw = int;
    using value = int;
    static constexpr int kPerVec = 4;
    __device__ static void unpack(const uint4& q, value (&v)[kPerVec]) {
        v[0] = static_cast<int>(q.x); v[1] = static_cast<int>(q.y);
        v[2] = static_cast<int>(q.z); v[3] = static_cast<int>(q.w);
    }
    __device__ static void vec(const raw* p, unsigned i, value (&v)[kPerVec]) { unpack(load_stream_16(p + 4ull * i), v); }
    __device__ static value one(const raw* p, unsigned i) { return p[i]; }
};

template <float (*Widen)(unsigned short)>
struct Load16Bit {
    using raw = unsigned short;
    using value = float;
    static constexpr int kPerVec = 8;
    __device__ static void vec(const raw* p, unsigned i, value (&v)[kPerVec]) { unpack(load_stream_16(p + 8ull * i), v); }
    __device__ static void unpack(const uint4& q, value (&v)[kPerVec]) {
        const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {  // little-endian: element 2k is the low half of word k
            v[2 * k] = Widen(static_cast<unsigned short>(w[k] & 0xffffu));
            v[2 * k + 1] = Widen(static_cast<unsigned short>(w[k] >> 16));
        }
    }
    __device__ static value one(const raw* p, unsigned i) { return Widen(p[i]); }
};
using LoadF16 = Load16Bit<half_bits_to_float>;
using LoadBF16 = Load16Bit<bf16_bits_to_float>;

// ---------------------------------------------------------------------------------------
// Policies: a thread's accumulator, the partial passed between threads, the output.
// identity() is the padding value (seed 004, point 4: pad with 0 for sums, -inf for max).
// ---------------------------------------------------------------------------------------

struct SumFloat {  // plain float32 accumulation: the textbook
    using acc = float;
    using partial = float;
    using out = float;
    __device__ static acc init() { return 0.0f; }
    __device__ static void add(acc& a, float v) { a += v; }
    __device__ static partial to_partial(const acc& a) { return a; }
    __device__ static partial identity() { return 0.0f; }
    __device__ static partial combine(partial a, partial b) { return a + b; }
    __device__ static out finish(partial p) { return p; }
};

// Kahan: each accumulator carries the rounding error of its running sum and feeds it back.
// The threads' partials (sum minus error) then meet in float64, so the tree adds nothing
// measurable; the one float32 rounding left is that of the result.
struct SumKahan {
    struct acc {
        float sum, err;
    };
    using partial = double;
    using out = float;
    __device__ static acc init() { return {0.0f, 0.0f}; }
    __device__ static void add(acc& a, float v) {
        const float y = v - a.err;
        const float t = a.sum + y;
        a.err = (t - a.sum) - y;  // what the rounding of t lost (negated); NVRTC keeps it (no fast-math)
        a.sum = t;
    }
    __device__ static partial to_partial(const acc& a) { return static_cast<double>(a.sum) - static_cast<double>(a.err); }
    __device__ static partial identity() { return 0.0; }
    __device__ static partial combine(partial a, partial b) { return a + b; }
    __device__ static out finish(partial p) { return static_cast<float>(p); }
};

// Every element widened to float64 and summed there; Hopper's FP64 rate makes this free in a
// memory-bound kernel. The result stays float64.
struct SumDouble {
    using acc = double;
    using partial = double;
    using out = double;
    __device__ static acc init() { return 0.0; }
    __device__ static void add(acc& a, float v) { a += static_cast<double>(v); }
    __device__ static partial to_partial(const acc& a) { return a; }
    __device__ static partial identity() { return 0.0; }
    __device__ static partial combine(partial a, partial b) { return a + b; }
    __device__ static out finish(partial p) { return p; }
};

// int32 sum: accumulated as unsigned so that overflow wraps (modulo 2^32, like CUB's int32
// sum) instead of being undefined behaviour; the bits are returned as int.
struct SumInt {
    using acc = unsigned;
    using partial = unsigned;
    using out = int;
    __device__ static acc init() { return 0u; }
    __device__ static void add(acc& a, int v) { a += static_cast<unsigned>(v); }
    __device__ static partial to_partial(const acc& a) { return a; }
    __device__ static partial identity() { return 0u; }
    __device__ static partial combine(partial a, partial b) { return a + b; }
    __device__ static out finish(partial p) { return static_cast<int>(p); }
};

struct MaxFloat {  // seed 004, common mistakes: a thread with no data contributes -inf, not 0
    using acc = float;
    using partial = float;
    using out = float;
    __device__ static acc init() { return __int_as_float(0xff800000); }  // -inf
    __device__ static void add(acc& a, float v) { a = fmaxf(a, v); }
    __device__ static partial to_partial(const acc& a) { return a; }
    __device__ static partial identity() { return __int_as_float(0xff800000); }
    __device__ static partial combine(partial a, partial b) { return fmaxf(a, b); }
    __device__ static out finish(partial p) { return p; }
};

struct MaxInt {
    using acc = int;
    using partial = int;
    using out = int;
    __device__ static acc init() { return INT_MIN_VALUE; }
    __device__ static void add(acc& a, int v) { a = max(a, v); }
    __device__ static partial to_partial(const acc& a) { return a; }
    __device__ static partial identity() { return INT_MIN_VALUE; }
    __device__ static partial combine(partial a, partial b) { return max(a, b); }
    __device__ static out finish(partial p) { return p; }
    static constexpr int INT_MIN_VALUE = -2147483647 - 1;
};

// ---------------------------------------------------------------------------------------
// Combining partials: a fixed shuffle tree in the warp, one partial per warp, then warp 0.
// ---------------------------------------------------------------------------------------

template <typename Policy>
__device__ __forceinline__ typename Policy::partial warp_combine(typename Policy::partial v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = Policy::combine(v, __shfl_down_sync(FULL_MASK, v, offset));
    return v;
}

// Thread 0 ends with the block's combination. Every thread must call it; blockDim.x % 32 == 0.
template <typename Policy>
__device__ __forceinline__ typename Policy::partial block_combine(typename Policy::partial v) {
    __shared__ typename Policy::partial warp_partials[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_combine<Policy>(v);
    if (lane == 0) warp_partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < static_cast<int>(blockDim.x >> 5) ? warp_partials[lane] : Policy::identity();
        v = warp_combine<Policy>(v);
    }
    return v;
}

// The last block to finish is the final pass: no second launch, and no atomics on values (the
// one atomic is an integer ticket that says which block came last; it resets itself).
// Returns true in the block that must do the final pass. Thread 0 must have written its
// block's partial(s) before calling.
__device__ __forceinline__ bool is_last_block(unsigned* ticket) {
    __shared__ bool last;
    __threadfence();  // every thread's partial writes are visible device-wide before the ticket
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) __threadfence();  // ... and the last block reads them after taking its ticket
    return last;
}

template <typename T>
__device__ __forceinline__ T load_coherent(const T* p) {
    return __ldcg(p);  // L2, never a stale L1 line: the partials were written by other SMs
}

// ---------------------------------------------------------------------------------------
// The main loop both kernels share: vectors i, i + step, i + 2 step, ... below `end` into the
// accumulators, kUnroll independent 16-byte loads issued before any is used, vector k of the
// sequence going to accumulator k % kUnroll (the remainder to accumulator 0).
//
// kPrefetch: the first kUnroll threads of each block also ask L2 to fetch, with one bulk
// prefetch each (sm_90), the 16 x blockDim bytes the block will read PREFETCH_DISTANCE loop
// turns later. The block's threads read contiguous vectors (i - threadIdx.x is the block's first).
// ---------------------------------------------------------------------------------------
#ifndef PREFETCH_DISTANCE
#define PREFETCH_DISTANCE 2
#endif

__device__ __forceinline__ void prefetch_l2_bulk(const void* p, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

template <typename Load, typename Policy, int kUnroll, int kPrefetch>
__device__ __forceinline__ void accumulate_strided(const typename Load::raw* x, unsigned i, unsigned end, unsigned step,
                                                   typename Policy::acc (&acc)[kUnroll]) {
    constexpr int W = Load::kPerVec;
    for (; i + (kUnroll - 1) * step < end; i += kUnroll * step) {
        if (kPrefetch && threadIdx.x < kUnroll) {
            const unsigned ahead = i - threadIdx.x + (PREFETCH_DISTANCE * kUnroll + threadIdx.x) * step;
            if (ahead + blockDim.x <= end) prefetch_l2_bulk(x + static_cast<size_t>(ahead) * W, blockDim.x * 16u);
        }
        typename Load::value v[kUnroll][W];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) Load::vec(x, i + u * step, v[u]);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int k = 0; k < W; ++k) Policy::add(acc[u], v[u][k]);
    }
    for (; i < end; i += step) {
        typename Load::value v[W];
        Load::vec(x, i, v);
#pragma unroll
        for (int k = 0; k < W; ++k) Policy::add(acc[0], v[k]);
    }
}

template <typename Policy, int kUnroll>
__device__ __forceinline__ typename Policy::partial combine_accumulators(const typename Policy::acc (&acc)[kUnroll]) {
    typename Policy::partial p = Policy::to_partial(acc[0]);
#pragma unroll
    for (int u = 1; u < kUnroll; ++u) p = Policy::combine(p, Policy::to_partial(acc[u]));
    return p;
}

// ---------------------------------------------------------------------------------------
// 1. The vectorised reduction: a grid-stride loop over 16-byte vectors (thread g reads vectors
// g, g + G, g + 2G, ... of G threads), kUnroll loads in flight per thread, a grid of one full
// wave sized from the kernel's occupancy, one partial per block, the last block finishes.
// The result depends on the grid and the block size (the tree's shape does), not on the run.
// ---------------------------------------------------------------------------------------

// Thread 0 holds its block's partial: store it; the last block to finish combines them all (in
// block order) and writes the result. counters[0] is the ticket, reset for the next launch.
template <typename Policy>
__device__ __forceinline__ void finish_grid(typename Policy::partial block_partial, typename Policy::partial* partials,
                                            unsigned* counters, typename Policy::out* out) {
    if (threadIdx.x == 0) partials[blockIdx.x] = block_partial;
    if (!is_last_block(counters)) return;
    typename Policy::partial q = Policy::identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) q = Policy::combine(q, load_coherent(partials + b));
    q = block_combine<Policy>(q);
    if (threadIdx.x == 0) {
        out[0] = Policy::finish(q);
        counters[0] = 0u;
    }
}

template <typename Load, typename Policy, int kUnroll, int kPrefetch>
__global__ void __launch_bounds__(1024) vector_reduce(const typename Load::raw* x, unsigned n,
                                                       typename Policy::partial* partials, unsigned* counters,
                                                       typename Policy::out* out) {
    constexpr int W = Load::kPerVec;
    typename Policy::acc acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = Policy::init();
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    accumulate_strided<Load, Policy, kUnroll, kPrefetch>(x, thread, n / W, gridDim.x * blockDim.x, acc);
    // The n % W elements after the last whole vector: one each for the first threads.
    if (n / W * W + thread < n) Policy::add(acc[0], Load::one(x, n / W * W + thread));

    finish_grid<Policy>(block_combine<Policy>(combine_accumulators<Policy, kUnroll>(acc)), partials, counters, out);
}

// ---------------------------------------------------------------------------------------
// 2. The fixed-tree reduction: the vectorised kernel run on a *virtual* grid whose size is set
// by n alone (the launch code picks `virtual_warps`). Virtual thread v (of V = 32 x virtual_warps)
// reads vectors v, v + V, v + 2V, ... exactly as thread v of a grid of V threads would, into the
// same accumulators; the 32 threads of a virtual warp meet in the fixed shuffle tree; the
// virtual warps' partials are folded by FIXED_FINAL_LANES lanes (lane l takes partials l,
// l + LANES, ... in order) and a fixed tree over the lanes. A physical warp takes virtual warps
// w, w + (warps in the grid), ...: the grid and block size decide only who computes a partial,
// never its value, so the result is bitwise the same for any of them (seed 004, points 1-4).
// Reading order in memory is the grid-stride kernel's, so the speed should be too.
// ---------------------------------------------------------------------------------------
#define FIXED_FINAL_LANES 1024

template <typename Load, typename Policy, int kUnroll, int kPrefetch>
__global__ void __launch_bounds__(1024) fixed_tree_reduce(const typename Load::raw* x, unsigned n, unsigned virtual_warps,
                                                           typename Policy::partial* warp_partials, unsigned* counters,
                                                           typename Policy::out* out) {
    constexpr int W = Load::kPerVec;
    const unsigned lane = threadIdx.x & 31;
    const unsigned virtual_threads = 32 * virtual_warps;
    const unsigned warps_in_grid = gridDim.x * (blockDim.x >> 5);
    for (unsigned vw = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); vw < virtual_warps; vw += warps_in_grid) {
        const unsigned v = 32 * vw + lane;
        typename Policy::acc acc[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc[u] = Policy::init();
        accumulate_strided<Load, Policy, kUnroll, kPrefetch>(x, v, n / W, virtual_threads, acc);
        if (n / W * W + v < n) Policy::add(acc[0], Load::one(x, n / W * W + v));  // the tail, by virtual thread
        const typename Policy::partial p = warp_combine<Policy>(combine_accumulators<Policy, kUnroll>(acc));
        if (lane == 0) warp_partials[vw] = p;
    }
    if (!is_last_block(counters)) return;

    __shared__ typename Policy::partial lanes[FIXED_FINAL_LANES];
    for (unsigned l = threadIdx.x; l < FIXED_FINAL_LANES; l += blockDim.x) {
        typename Policy::partial q = Policy::identity();
        for (unsigned t = l; t < virtual_warps; t += FIXED_FINAL_LANES) q = Policy::combine(q, load_coherent(warp_partials + t));
        lanes[l] = q;
    }
    __syncthreads();
    for (unsigned half = FIXED_FINAL_LANES / 2; half > 0; half >>= 1) {
        for (unsigned l = threadIdx.x; l < half; l += blockDim.x) lanes[l] = Policy::combine(lanes[l], lanes[l + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = Policy::finish(lanes[0]);
        counters[0] = 0u;
    }
}

// ---------------------------------------------------------------------------------------
// 3. Bulk copies: Hopper's copy engine (cp.async.bulk, the TMA's 1-D form) moves whole chunks
// of BULK_CHUNK_BYTES from global to shared memory, kStages chunks in flight per block, each
// completing on an mbarrier; the threads add from shared memory. One thread issues the copies,
// so the bytes in flight no longer cost registers or load instructions. Chunks are dealt
// grid-stride (block b takes chunks b, b + gridDim.x, ...); the vectors after the last whole
// chunk, and the n % W elements after them, are read with ordinary loads. sm_90 only: on older
// GPUs the kernel compiles to nothing useful and the variant declines to run.
// ---------------------------------------------------------------------------------------
#ifndef BULK_CHUNK_BYTES
#define BULK_CHUNK_BYTES 8192
#endif
#define BULK_ACCUMULATORS 4

__device__ __forceinline__ unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void barrier_init(unsigned long long* bar) {
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// Expect `bytes` on the barrier, then start the copy that will deliver them.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // our reads of dst come before the copy's writes
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(shared_address(dst)), "l"(src), "r"(bytes), "r"(shared_address(bar)) : "memory");
#endif
}

__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned parity) {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n"
        "}\n" ::"r"(shared_address(bar)), "r"(parity) : "memory");
#endif
}

template <typename Load, typename Policy, int kStages>
__global__ void __launch_bounds__(1024) bulk_reduce(const typename Load::raw* x, unsigned n,
                                                     typename Policy::partial* partials, unsigned* counters,
                                                     typename Policy::out* out) {
    constexpr int W = Load::kPerVec;
    constexpr unsigned kChunkVectors = BULK_CHUNK_BYTES / 16;
    extern __shared__ __align__(128) uint4 stages[];  // kStages x kChunkVectors
    __shared__ __align__(8) unsigned long long full[kStages];
    const unsigned vectors = n / W;
    const unsigned chunks = vectors / kChunkVectors;
    const unsigned mine = blockIdx.x < chunks ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    auto chunk_source = [&](unsigned k) { return x + static_cast<size_t>(blockIdx.x + k * gridDim.x) * kChunkVectors * W; };
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) barrier_init(&full[s]);
        for (unsigned k = 0; k < kStages && k < mine; ++k)
            bulk_copy_to_shared(stages + k * kChunkVectors, chunk_source(k), BULK_CHUNK_BYTES, &full[k]);
    }
    __syncthreads();

    typename Policy::acc acc[BULK_ACCUMULATORS];
#pragma unroll
    for (int a = 0; a < BULK_ACCUMULATORS; ++a) acc[a] = Policy::init();
    for (unsigned k = 0; k < mine; ++k) {
        const unsigned s = k % kStages;
        barrier_wait(&full[s], (k / kStages) & 1u);
        const uint4* stage = stages + s * kChunkVectors;
        unsigned a = 0;
        for (unsigned j = threadIdx.x; j < kChunkVectors; j += blockDim.x, a = (a + 1) % BULK_ACCUMULATORS) {
            typename Load::value v[W];
            Load::unpack(stage[j], v);
#pragma unroll
            for (int e = 0; e < W; ++e) Policy::add(acc[a], v[e]);
        }
        __syncthreads();  // every thread is done with stage s before it is refilled
        if (threadIdx.x == 0 && k + kStages < mine)
            bulk_copy_to_shared(stages + s * kChunkVectors, chunk_source(k + kStages), BULK_CHUNK_BYTES, &full[s]);
    }
    // What the whole chunks leave: vectors with ordinary loads, then single elements.
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = chunks * kChunkVectors + thread; i < vectors; i += gridDim.x * blockDim.x) {
        typename Load::value v[W];
        Load::vec(x, i, v);
#pragma unroll
        for (int e = 0; e < W; ++e) Policy::add(acc[0], v[e]);
    }
    if (vectors * W + thread < n) Policy::add(acc[0], Load::one(x, vectors * W + thread));
    finish_grid<Policy>(block_combine<Policy>(combine_accumulators<Policy, BULK_ACCUMULATORS>(acc)), partials, counters, out);
}
