// Histogram of bytes into 256 bins of uint32 counts: seed 004 §4.4's global atomics, its per-block
// shared-memory histogram, its K replicated sub-histograms, then 16-byte loads with one
// sub-histogram per warp, and warp aggregation (__match_any_sync) for inputs where many samples
// share a bin. Launches: kernels/histogram.py, which zeroes the output first (cudaMemset, as the
// seed insists: the kernels only add).
#include "common.cuh"

#define BINS 256

// One global atomic per sample: every sample of a popular bin queues on one address.
extern "C" __global__ void histogram_global_atomic(const unsigned char* data, int n, unsigned int* hist) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&hist[data[i]], 1u);
}

// Seed 004's kernel as the article writes it: a shared copy per block, merged with one global
// atomic per non-empty bin.
extern "C" __global__ void seed004_histogram(const unsigned char* data, int n, unsigned int* hist) {
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);  // contention stays inside the block
    __syncthreads();

    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (local[i]) atomicAdd(&hist[i], local[i]);
}

// Seed 004's remedy for concentrated data: K copies local[K][256], thread t adding into copy t % K,
// summed at the end. Space for fewer collisions.
template <int K>
__global__ void histogram_replicated(const unsigned char* data, int n, unsigned int* hist) {
    __shared__ unsigned int local[K][BINS];
    for (int i = threadIdx.x; i < K * BINS; i += blockDim.x) (&local[0][0])[i] = 0;
    __syncthreads();
    unsigned int* mine = local[threadIdx.x % K];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&mine[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int total = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) total += local[k][b];
        if (total) atomicAdd(&hist[b], total);
    }
}

// Zero the block's per-warp sub-histograms (dynamic shared memory: warps x 256 counts).
__device__ __forceinline__ void zero_sub_histograms(unsigned int* sub) {
    for (int i = threadIdx.x; i < (blockDim.x >> 5) * BINS; i += blockDim.x) sub[i] = 0;
    __syncthreads();
}

// Add the block's per-warp sub-histograms into the output: one global atomic per non-empty bin.
__device__ __forceinline__ void merge_sub_histograms(const unsigned int* sub, unsigned int* hist) {
    __syncthreads();
    const int warps = blockDim.x >> 5;
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int total = 0;
        for (int w = 0; w < warps; ++w) total += sub[w * BINS + b];
        if (total) atomicAdd(&hist[b], total);
    }
}

// The samples past the last whole 16-byte vector, one by one.
__device__ __forceinline__ void add_tail(const unsigned char* data, int n, unsigned int* mine) {
    const int first = (n / 16) * 16;
    for (int i = first + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&mine[data[i]], 1u);
}

// 16 samples per 16-byte load, one sub-histogram per warp (no two warps share a counter).
extern "C" __global__ void histogram_vector_per_warp(const unsigned char* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int sub[];
    zero_sub_histograms(sub);
    unsigned int* mine = sub + (threadIdx.x >> 5) * BINS;
    const uint4* vectors = reinterpret_cast<const uint4*>(data);
    const int count = n / 16;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        const uint4 q = __ldg(vectors + i);
        const unsigned int words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int w = 0; w < 4; ++w)
#pragma unroll
            for (int b = 0; b < 4; ++b) atomicAdd(&mine[(words[w] >> (8 * b)) & 0xffu], 1u);
    }
    add_tail(data, n, mine);
    merge_sub_histograms(sub, hist);
}

// As above, but the lanes of a warp holding the same byte (at the same place in their vectors)
// are counted by one atomic: __match_any_sync finds them, the lowest of them adds their number.
// All-equal input then costs one shared atomic per warp per byte instead of 32 on one address.
// The loop is warp-uniform (every lane meets every __match_any_sync): a lane past the end takes
// a value no byte has (256 + its lane), so it matches no one.
extern "C" __global__ void histogram_warp_aggregated(const unsigned char* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int sub[];
    zero_sub_histograms(sub);
    const int lane = threadIdx.x & 31;
    unsigned int* mine = sub + (threadIdx.x >> 5) * BINS;
    const uint4* vectors = reinterpret_cast<const uint4*>(data);
    const int count = n / 16;
    const int warp_global = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int warps_total = (gridDim.x * blockDim.x) >> 5;
    for (int base = warp_global * 32; base < count; base += warps_total * 32) {
        const int i = base + lane;
        const bool real = i < count;
        const uint4 q = real ? __ldg(vectors + i) : make_uint4(0, 0, 0, 0);
        const unsigned int words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int w = 0; w < 4; ++w)
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const unsigned int value = real ? (words[w] >> (8 * b)) & 0xffu : 256u + lane;
                const unsigned int peers = __match_any_sync(FULL_MASK, value);
                if (real && lane == __ffs(peers) - 1) atomicAdd(&mine[value], __popc(peers));
            }
    }
    add_tail(data, n, mine);
    merge_sub_histograms(sub, hist);
}
