// Reduce (float32 sum): every kernel the three seed articles give, kept as close to the
// article's code as correctness allows. Where primbench had to change a seed kernel, a
// "primbench:" comment says what and why. The launches (grids, passes, memsets) are in
// kernels/reduce.py, next to the variant declarations.
#include "common.cuh"

// ---------------------------------------------------------------------------------------
// Seed 000 ("CUDA编程入门③ Reduce"): four versions.
// ---------------------------------------------------------------------------------------

// v1: each thread sums a grid-strided slice, then one global atomicAdd per thread.
extern "C" __global__ void seed000_v1_atomic(const float* in, float* out, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    float local_sum = 0.0f;
    for (int i = idx; i < N; i += stride) local_sum += in[i];
    atomicAdd(out, local_sum);
}

// v2: shared-memory tree inside the block, one atomicAdd per block.
// primbench: the seed declares `__shared__ float sdata[256]`; the array is sized by the launch
// (dynamic shared memory) so that block sizes 64..1024 can be swept. blockDim.x must be a power
// of two (the tree halves it).
extern "C" __global__ void seed000_v2_shared_tree(const float* in, float* out, int N) {
    extern __shared__ float sdata[];
    int tid = threadIdx.x;
    int idx = blockIdx.x * blockDim.x + tid;
    float local = 0.0f;
    for (int i = idx; i < N; i += gridDim.x * blockDim.x) local += in[i];
    sdata[tid] = local;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, sdata[0]);
}

// v3: shared-memory tree down to 64 values, then warp shuffles, one atomicAdd per warp.
// primbench: the seed lets *every* warp shuffle-reduce sdata[tid] and atomicAdd it. After the
// tree only sdata[0..63] hold partial sums; sdata[64..] still hold values already folded into
// them, so the seed's kernel counts most of the input twice. Only the first 64 threads (two
// warps) finish here. With blockDim.x == 64 the tree loop does not run and the same holds.
// v3 and v4 share the seed's first two steps: a grid-stride sum per thread into shared memory,
// then the tree down to 64 partial sums in sdata[0..63].
__device__ __forceinline__ void seed000_sum_then_tree_to_64(const float* in, int N, float* sdata) {
    int tid = threadIdx.x;
    int idx = blockIdx.x * blockDim.x + tid;
    float local = 0.0f;
    for (int i = idx; i < N; i += gridDim.x * blockDim.x) local += in[i];
    sdata[tid] = local;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
}

extern "C" __global__ void seed000_v3_warp_shuffle(const float* in, float* out, int N) {
    extern __shared__ float sdata[];
    int tid = threadIdx.x;
    seed000_sum_then_tree_to_64(in, N, sdata);
    if (tid < 64) {
        float val = warp_reduce_sum(sdata[tid]);
        if (tid % 32 == 0) atomicAdd(out, val);
    }
}

// v4 (multi-level, no atomics): one pass writes one partial sum per block; the same kernel,
// launched again with a single block, reduces the partials. The body is v3's block reduction.
extern "C" __global__ void seed000_v4_block_partials(const float* in, float* partials, int N) {
    extern __shared__ float sdata[];
    int tid = threadIdx.x;
    seed000_sum_then_tree_to_64(in, N, sdata);
    if (tid < 32) {
        float val = warp_reduce_sum(sdata[tid] + sdata[tid + 32]);
        if (tid == 0) partials[blockIdx.x] = val;
    }
}

// ---------------------------------------------------------------------------------------
// Seed 002 (Harris-style reduce0..reduce6). Each writes one partial sum per block; the
// launcher applies the same kernel to the partials until one value is left, as Harris did.
// primbench: every load is bounds-checked against n (the seed assumes n is a multiple of the
// block's span), and `s_data[BLOCK_SIZE]` is dynamic shared memory sized by the launch for
// reduce0..reduce4 so that one compiled kernel serves every block size.
// ---------------------------------------------------------------------------------------

// reduce0: interleaved addressing; `tid % (2*s)` makes most lanes of a warp idle (divergence).
extern "C" __global__ void reduce0_interleaved_divergent(const float* g_in, float* g_out, int n) {
    extern __shared__ float s_data[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s_data[tid] = (i < n) ? g_in[i] : 0.0f;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) s_data[tid] += s_data[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// reduce1: interleaved addressing with a strided index: no divergence, but the stride 2*s
// between lanes makes shared-memory bank conflicts.
extern "C" __global__ void reduce1_interleaved_strided(const float* g_in, float* g_out, int n) {
    extern __shared__ float s_data[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s_data[tid] = (i < n) ? g_in[i] : 0.0f;
    __syncthreads();
    for (int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) s_data[index] += s_data[index + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// reduce2: sequential addressing: active lanes are contiguous and conflict-free.
extern "C" __global__ void reduce2_sequential(const float* g_in, float* g_out, int n) {
    extern __shared__ float s_data[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s_data[tid] = (i < n) ? g_in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) s_data[tid] += s_data[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// Seed 002's load for reduce3..reduce5: each thread adds two elements one block apart.
__device__ __forceinline__ float first_add_during_load(const float* g_in, int i, int n) {
    float v = (i < n) ? g_in[i] : 0.0f;
    if (i + (int)blockDim.x < n) v += g_in[i + blockDim.x];
    return v;
}

// reduce3: the first add happens during the global load; half the blocks of reduce2.
extern "C" __global__ void reduce3_first_add_during_load(const float* g_in, float* g_out, int n) {
    extern __shared__ float s_data[];
    int tid = threadIdx.x;
    int i = blockIdx.x * (2 * blockDim.x) + tid;
    s_data[tid] = first_add_during_load(g_in, i, n);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) s_data[tid] += s_data[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// reduce4: reduce3 with the last warp unrolled. kSyncwarp == false is the seed's volatile
// warp-synchronous code (unsafe since Volta); true is the __syncwarp form (see common.cuh).
template <bool kSyncwarp>
__global__ void reduce4_unroll_last_warp(const float* g_in, float* g_out, int n) {
    // A template's extern shared array has C++ linkage: its own name avoids clashing with the
    // extern "C" kernels' `s_data` (NVRTC warning 1556); the body keeps the seed's name.
    extern __shared__ float reduce4_shared[];
    float* s_data = reduce4_shared;
    int tid = threadIdx.x;
    int i = blockIdx.x * (2 * blockDim.x) + tid;
    s_data[tid] = first_add_during_load(g_in, i, n);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) s_data[tid] += s_data[tid + s];
        __syncthreads();
    }
    if (tid < 32) last_warp_reduce<kSyncwarp>(s_data, tid);
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// reduce5: completely unrolled, the block size a template parameter (as in the seed).
template <int blockSize, bool kSyncwarp>
__global__ void reduce5_complete_unroll(const float* g_in, float* g_out, int n) {
    __shared__ float s_data[blockSize];
    int tid = threadIdx.x;
    int i = blockIdx.x * (2 * blockDim.x) + tid;
    s_data[tid] = first_add_during_load(g_in, i, n);
    __syncthreads();
    if (blockSize >= 1024) { if (tid < 512) s_data[tid] += s_data[tid + 512]; __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) s_data[tid] += s_data[tid + 256]; __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) s_data[tid] += s_data[tid + 128]; __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) s_data[tid] += s_data[tid + 64]; __syncthreads(); }
    if (tid < 32) last_warp_reduce<kSyncwarp>(s_data, tid);
    if (tid == 0) g_out[blockIdx.x] = s_data[0];
}

// reduce6: grid-stride loop (many elements per thread) + warp shuffles.
// primbench: the article's text lost its operators here; this is the evident intent. The
// __syncthreads() is reached by every thread (the seed's condition would have excluded some).
template <int blockSize>
__global__ void reduce6_grid_stride_shuffle(const float* g_in, float* g_out, int n) {
    __shared__ float warpSum[32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += g_in[i];
    sum = warp_reduce_sum(sum);
    if (blockSize > 32) {
        int lane = threadIdx.x % 32;
        int wid = threadIdx.x / 32;
        if (lane == 0) warpSum[wid] = sum;
        __syncthreads();
        sum = (threadIdx.x < blockDim.x / 32) ? warpSum[lane] : 0.0f;
        if (wid == 0) sum = warp_reduce_sum(sum);
    }
    if (threadIdx.x == 0) g_out[blockIdx.x] = sum;
}

// ---------------------------------------------------------------------------------------
// Seed 004 ("并行模式: 归约"): a block sum with one atomic per block, and the fixed-tree
// two-stage reduction whose result depends only on the data.
// ---------------------------------------------------------------------------------------

// blockSum, as the article writes it (blockDim.x a multiple of 32).
extern "C" __global__ void seed004_block_sum_atomic(const float* x, float* out, int n) {
    __shared__ float partial[32];
    int tid = threadIdx.x;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) v += x[i];
    v = warp_reduce_sum(v);
    if ((tid & 31) == 0) partial[tid >> 5] = v;
    __syncthreads();
    if (tid < 32) {
        int nwarps = blockDim.x >> 5;
        v = (tid < nwarps) ? partial[tid] : 0.0f;
        v = warp_reduce_sum(v);
        if (tid == 0) atomicAdd(out, v);
    }
}

// The fixed tree. The input is cut into tiles of FIXED_TREE_TILE elements, a number that
// depends on nothing but this constant. One warp reduces one tile in a fixed order: lane l adds
// elements l, l+32, l+64, ... serially (coalesced loads), then the shuffle tree adds the 32 lane
// sums. Elements past n are padded with 0 so the last tile has the same tree (seed 004, point 4).
// Which warp or block handles a tile does not change its sum, so the partials, and the result,
// are the same for every block size and grid (seed 004, points 1-3).
#define FIXED_TREE_TILE 4096
#define FIXED_TREE_ITEMS (FIXED_TREE_TILE / 32)
#define FIXED_TREE_FINAL_THREADS 1024

extern "C" __global__ void seed004_fixed_tree_tiles(const float* x, float* partials, int n) {
    const int lane = threadIdx.x & 31;
    const int warps_per_block = blockDim.x >> 5;
    const int warp = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const int total_warps = gridDim.x * warps_per_block;
    const int tiles = (n + FIXED_TREE_TILE - 1) / FIXED_TREE_TILE;
    for (int tile = warp; tile < tiles; tile += total_warps) {
        const int base = tile * FIXED_TREE_TILE + lane;
        float acc = 0.0f;
#pragma unroll 8
        for (int k = 0; k < FIXED_TREE_ITEMS; ++k) {
            const int i = base + 32 * k;
            acc += (i < n) ? x[i] : 0.0f;
        }
        acc = warp_reduce_sum(acc);
        if (lane == 0) partials[tile] = acc;
    }
}

// Second stage: always one block of FIXED_TREE_FINAL_THREADS threads (never the swept block
// size), thread t adding partials t, t+1024, ... in order, then the fixed block tree.
extern "C" __global__ void seed004_fixed_tree_final(const float* partials, float* out, int count) {
    float acc = 0.0f;
    for (int i = threadIdx.x; i < count; i += FIXED_TREE_FINAL_THREADS) acc += partials[i];
    acc = block_reduce_sum(acc);
    if (threadIdx.x == 0) out[0] = acc;
}
