// Histograms into BINS uint32 counts: seed 004 §4.4's global atomics, its per-block shared-memory
// histogram, its K replicated sub-histograms, then 16-byte loads with one sub-histogram per warp,
// and warp aggregation (__match_any_sync) for inputs where many samples share a bin.
// Samples are bytes (256 bins, a byte is its own bin) or int32 (32, 256 or 1024 bins: sample v
// counts in bin v when 0 <= v < BINS and nowhere otherwise, as CUB's HistogramEven over [0, BINS)
// drops samples out of range). Every kernel is a template on the sample type and BINS.
// Launches: kernels/histogram.py, which zeroes the output first (cudaMemset, as the seed insists:
// the kernels only add). Shared histograms are dynamic shared memory: K x 1024 counts outgrow the
// 48 KB a static array may take.
#include "common.cuh"

// The bin of a sample, and whether it has one.
template <int BINS>
__device__ __forceinline__ bool bin_of(unsigned char v, unsigned int& bin) {
    static_assert(BINS == 256, "a byte is its own bin: 256 bins");
    bin = v;
    return true;
}
template <int BINS>
__device__ __forceinline__ bool bin_of(int v, unsigned int& bin) {
    bin = static_cast<unsigned int>(v);  // negative samples become huge: one compare drops both ends
    return bin < BINS;
}

// Samples per 16-byte load, and sample j of a loaded vector (j a compile-time constant after
// unrolling, so the shifts are fixed).
template <typename T> struct Vector { static constexpr int SAMPLES = 16 / sizeof(T); };
__device__ __forceinline__ unsigned char sample_at(const uint4& q, int j, unsigned char) {
    const unsigned int words[4] = {q.x, q.y, q.z, q.w};
    return static_cast<unsigned char>((words[j >> 2] >> (8 * (j & 3))) & 0xffu);
}
__device__ __forceinline__ int sample_at(const uint4& q, int j, int) {
    const unsigned int words[4] = {q.x, q.y, q.z, q.w};
    return static_cast<int>(words[j]);
}

// One global atomic per sample: every sample of a popular bin queues on one address.
template <typename T, int BINS>
__global__ void histogram_global_atomic(const T* data, int n, unsigned int* hist) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int bin;
        if (bin_of<BINS>(data[i], bin)) atomicAdd(&hist[bin], 1u);
    }
}

// Zero `count` shared counters, then wait for the whole block.
__device__ __forceinline__ void zero_shared(unsigned int* counts, int count) {
    for (int i = threadIdx.x; i < count; i += blockDim.x) counts[i] = 0;
    __syncthreads();
}

// Add `copies` shared sub-histograms of BINS counts into the output: one global atomic per
// non-empty bin.
template <int BINS>
__device__ __forceinline__ void merge_copies(const unsigned int* copies_base, int copies, unsigned int* hist) {
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int total = 0;
        for (int c = 0; c < copies; ++c) total += copies_base[c * BINS + b];
        if (total) atomicAdd(&hist[b], total);
    }
}

// Seed 004's kernel: a shared copy per block, merged with one global atomic per non-empty bin.
// The article writes it for bytes and 256 bins; here BINS and the sample type are parameters.
template <typename T, int BINS>
__global__ void seed004_histogram(const T* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int local[];  // BINS counts
    zero_shared(local, BINS);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int bin;
        if (bin_of<BINS>(data[i], bin)) atomicAdd(&local[bin], 1u);  // contention stays inside the block
    }
    merge_copies<BINS>(local, 1, hist);
}

// Seed 004's remedy for concentrated data: K copies local[K][BINS], thread t adding into copy
// t % K, summed at the end. Space for fewer collisions.
template <typename T, int BINS, int K>
__global__ void histogram_replicated(const T* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int local[];  // K x BINS counts
    zero_shared(local, K * BINS);
    unsigned int* mine = local + (threadIdx.x % K) * BINS;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int bin;
        if (bin_of<BINS>(data[i], bin)) atomicAdd(&mine[bin], 1u);
    }
    merge_copies<BINS>(local, K, hist);
}

// The samples past the last whole 16-byte vector, one by one.
template <typename T, int BINS>
__device__ __forceinline__ void add_tail(const T* data, int n, unsigned int* mine) {
    const int first = (n / Vector<T>::SAMPLES) * Vector<T>::SAMPLES;
    for (int i = first + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned int bin;
        if (bin_of<BINS>(data[i], bin)) atomicAdd(&mine[bin], 1u);
    }
}

// 16-byte loads (16 bytes or 4 int32 each), one sub-histogram per warp (no two warps share a counter).
template <typename T, int BINS>
__global__ void histogram_vector_per_warp(const T* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int sub[];  // warps x BINS counts
    const int warps = blockDim.x >> 5;
    zero_shared(sub, warps * BINS);
    unsigned int* mine = sub + (threadIdx.x >> 5) * BINS;
    const uint4* vectors = reinterpret_cast<const uint4*>(data);
    const int count = n / Vector<T>::SAMPLES;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x) {
        const uint4 q = __ldg(vectors + i);
#pragma unroll
        for (int j = 0; j < Vector<T>::SAMPLES; ++j) {
            unsigned int bin;
            if (bin_of<BINS>(sample_at(q, j, T()), bin)) atomicAdd(&mine[bin], 1u);
        }
    }
    add_tail<T, BINS>(data, n, mine);
    merge_copies<BINS>(sub, warps, hist);
}

// As above, but the lanes of a warp holding the same sample (at the same place in their vectors)
// are counted by one atomic: __match_any_sync finds them, the lowest of them adds their number.
// All-equal input then costs one shared atomic per warp and place instead of 32 on one address.
// The loop is warp-uniform (every lane meets every __match_any_sync): a lane past the end takes
// the key BINS + its lane, which no sample with a bin has and no other lane takes. Samples without
// a bin match each other harmlessly: they add nothing.
template <typename T, int BINS>
__global__ void histogram_warp_aggregated(const T* data, int n, unsigned int* hist) {
    extern __shared__ unsigned int sub[];  // warps x BINS counts
    const int warps = blockDim.x >> 5;
    zero_shared(sub, warps * BINS);
    const int lane = threadIdx.x & 31;
    unsigned int* mine = sub + (threadIdx.x >> 5) * BINS;
    const uint4* vectors = reinterpret_cast<const uint4*>(data);
    const int count = n / Vector<T>::SAMPLES;
    const int warp_global = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int warps_total = (gridDim.x * blockDim.x) >> 5;
    for (int base = warp_global * 32; base < count; base += warps_total * 32) {
        const int i = base + lane;
        const bool real = i < count;
        const uint4 q = real ? __ldg(vectors + i) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int j = 0; j < Vector<T>::SAMPLES; ++j) {
            unsigned int bin;
            const bool counted = bin_of<BINS>(sample_at(q, j, T()), bin) && real;
            const unsigned int key = real ? bin : BINS + lane;
            const unsigned int peers = __match_any_sync(FULL_MASK, key);
            if (counted && lane == __ffs(peers) - 1) atomicAdd(&mine[bin], __popc(peers));
        }
    }
    add_tail<T, BINS>(data, n, mine);
    merge_copies<BINS>(sub, warps, hist);
}
