// Reduce beyond the seeds: the kernels that take a reduction to the memory limit, keep it
// bitwise reproducible, and make it more accurate. The launches are in kernels/reduce_vector.py.
//
// Every kernel here is one template over three choices:
//   Load   - the input type and how 16 bytes of it are loaded and widened (float, half, bf16, int),
//            with the load instruction as its parameter (see load_stream_16);
//   Policy - what a thread accumulates and how partials combine (sum, compensated, float64, max, int sum);
//   kUnroll - how many 16-byte loads each thread keeps in flight (independent accumulators).
// Half and bfloat16 arrive as raw 16-bit words and are widened by hand (cvt / shift), so no
// CUDA header beyond what NVRTC always has is needed.
#include "common.cuh"

// ---------------------------------------------------------------------------------------
// Loads: 16 bytes -> kPerVec values of the accumulation type.
// ---------------------------------------------------------------------------------------

// kL1 picks the load: 0 ld.global.nc (the read-only path), 1 ld.global.nc.L1::no_allocate.
// Measured on the H200 (docs/perf-notes.md), no_allocate is up to 9 % faster for inputs up to
// 256 MiB and 4.5 % slower from 512 MiB up; the launch code picks by size. Why it flips is not
// understood yet.
template <int kL1>
__device__ __forceinline__ uint4 load_stream_16(const void* p) {
    uint4 r;
    if (kL1 == 1)
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    else
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
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

// load: the raw 16 bytes of vector i; unpack: those bytes -> kPerVec values of the accumulation
// type. The main loop keeps the raw words in flight and widens one vector at a time: widening all
// kUnroll vectors first kept 64 floats live for 16-bit inputs, and the kernels spilled.
__device__ __forceinline__ void from_bits(unsigned w, float& v) { v = __uint_as_float(w); }
__device__ __forceinline__ void from_bits(unsigned w, int& v) { v = static_cast<int>(w); }

template <typename T, int kL1>  // float or int: four to a vector, summed as they are
struct Load32Bit {
    using raw = T;
    using value = T;
    static constexpr int kPerVec = 4;
    __device__ static void unpack(const uint4& q, value (&v)[kPerVec]) {
        from_bits(q.x, v[0]); from_bits(q.y, v[1]); from_bits(q.z, v[2]); from_bits(q.w, v[3]);
    }
    __device__ static uint4 load(const raw* p, unsigned i) { return load_stream_16<kL1>(p + 4ull * i); }
    __device__ static value one(const raw* p, unsigned i) { return p[i]; }
};
template <int kL1>
using LoadF32 = Load32Bit<float, kL1>;
template <int kL1>
using LoadI32 = Load32Bit<int, kL1>;

template <float (*Widen)(unsigned short), int kL1>
struct Load16Bit {
    using raw = unsigned short;
    using value = float;
    static constexpr int kPerVec = 8;
    __device__ static uint4 load(const raw* p, unsigned i) { return load_stream_16<kL1>(p + 8ull * i); }
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
template <int kL1>
using LoadF16 = Load16Bit<half_bits_to_float, kL1>;
template <int kL1>
using LoadBF16 = Load16Bit<bf16_bits_to_float, kL1>;

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

// Compensated (Kahan-Babuska-Neumaier): each accumulator keeps, beside its running sum, the sum
// of the exact rounding errors of its additions (TwoSum: 6 flops, no condition on magnitudes;
// Kahan's original Fast2Sum assumes |sum| >= |x|, which a wide-range input breaks all the time).
// The threads' partials (sum + errors) then meet in float64, so the tree adds nothing
// measurable; the one float32 rounding left is that of the result.
struct SumCompensated {
    struct acc {
        float sum, err;
    };
    using partial = double;
    using out = float;
    __device__ static acc init() { return {0.0f, 0.0f}; }
    __device__ static void add(acc& a, float v) {
        const float t = a.sum + v;
        const float z = t - a.sum;
        a.err += (a.sum - (t - z)) + (v - z);  // exactly what t lost; NVRTC keeps it (no fast-math)
        a.sum = t;
    }
    __device__ static partial to_partial(const acc& a) { return static_cast<double>(a.sum) + static_cast<double>(a.err); }
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
// sequence going to accumulator k % kUnroll. The last turn is predicated, not a loop of single
// loads: each of those waited a full memory latency (measured: the fixed tree ran 16 % slow at
// 2^25 when its chains were 31 vectors long, 3 turns of 8 and 7 lone loads).
// ---------------------------------------------------------------------------------------
template <typename Load, typename Policy, int kUnroll>
__device__ __forceinline__ void add_vector(typename Policy::acc& acc, const uint4& q) {
    typename Load::value v[Load::kPerVec];
    Load::unpack(q, v);
#pragma unroll
    for (int k = 0; k < Load::kPerVec; ++k) Policy::add(acc, v[k]);
}

template <typename Load, typename Policy, int kUnroll>
__device__ __forceinline__ void accumulate_strided(const typename Load::raw* x, unsigned i, unsigned end, unsigned step,
                                                   typename Policy::acc (&acc)[kUnroll]) {
    for (; i + (kUnroll - 1) * step < end; i += kUnroll * step) {
        uint4 q[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) q[u] = Load::load(x, i + u * step);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) add_vector<Load, Policy, kUnroll>(acc[u], q[u]);
    }
    if (i < end) {  // the last, partial turn: what is left (fewer than kUnroll), still all loaded at once
        uint4 q[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (i + u * step < end) q[u] = Load::load(x, i + u * step);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (i + u * step < end) add_vector<Load, Policy, kUnroll>(acc[u], q[u]);
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

template <typename Load, typename Policy, int kUnroll>
__global__ void __launch_bounds__(1024) vector_reduce(const typename Load::raw* x, unsigned n,
                                                       typename Policy::partial* partials, unsigned* counters,
                                                       typename Policy::out* out) {
    constexpr int W = Load::kPerVec;
    typename Policy::acc acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = Policy::init();
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    accumulate_strided<Load, Policy, kUnroll>(x, thread, n / W, gridDim.x * blockDim.x, acc);
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
// l + LANES, ... in order) and fixed shuffle trees over the lanes. A physical warp takes virtual warps
// w, w + (warps in the grid), ...: the grid and block size decide only who computes a partial,
// never its value, so the result is bitwise the same for any of them (seed 004, points 1-4).
// Reading order in memory is the grid-stride kernel's, so the speed should be too.
// ---------------------------------------------------------------------------------------
#define FIXED_FINAL_LANES 1024  // the fold ends in one warp over FIXED_FINAL_LANES / 32 = 32 groups

template <typename Load, typename Policy, int kUnroll>
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
        accumulate_strided<Load, Policy, kUnroll>(x, v, n / W, virtual_threads, acc);
        if (n / W * W + v < n) Policy::add(acc[0], Load::one(x, n / W * W + v));  // the tail, by virtual thread
        const typename Policy::partial p = warp_combine<Policy>(combine_accumulators<Policy, kUnroll>(acc));
        if (lane == 0) warp_partials[vw] = p;
    }
    if (!is_last_block(counters)) return;

    // The fold: lane l takes partials l, l + LANES, ... in order; lanes 32g..32g+31 meet in the
    // shuffle tree of group g; the 32 group sums meet in one more. Any block size runs it.
    __shared__ typename Policy::partial group_sums[FIXED_FINAL_LANES / 32];
    for (unsigned g = threadIdx.x >> 5; g < FIXED_FINAL_LANES / 32; g += blockDim.x >> 5) {
        typename Policy::partial q = Policy::identity();
        for (unsigned t = 32 * g + lane; t < virtual_warps; t += FIXED_FINAL_LANES) q = Policy::combine(q, load_coherent(warp_partials + t));
        q = warp_combine<Policy>(q);
        if (lane == 0) group_sums[g] = q;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        const typename Policy::partial total = warp_combine<Policy>(group_sums[threadIdx.x]);
        if (threadIdx.x == 0) {
            out[0] = Policy::finish(total);
            counters[0] = 0u;
        }
    }
}
