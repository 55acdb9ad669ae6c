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
// the key BINS + its lane, which no sample with a bin has, so it never joins a counted group. An
// int32 sample without a bin keeps its own value as key and may match such a lane or another
// binless sample: harmless, since neither adds anything.
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

// No contention while counting: every lane keeps its own histogram of byte-wide counters, four to
// a 32-bit word, in shared memory laid out so that lane l's words all sit in bank l (word w of lane
// l at w * 32 + l): a warp's 32 increments never conflict, whatever the input. A byte counter can
// take 255 counts, so every FLUSH_EVERY vectors the warp adds its lanes' counters into registers
// (lane l sums words l, l + 32, ... across the 32 lanes, each lane starting at another column so
// that the reads do not conflict either) and zeroes them. BINS <= 256 (at most 8 KB per warp).
template <int BINS>
__device__ __forceinline__ void flush_packed(unsigned int* packed, unsigned int (&totals)[(BINS / 4 + 31) / 32][4]) {
    constexpr int WORDS = BINS / 4;
    const int lane = threadIdx.x & 31;
    __syncwarp();
#pragma unroll
    for (int k = 0; k < (WORDS + 31) / 32; ++k) {
        const int w = lane + 32 * k;
        if (w < WORDS) {
            unsigned int even = 0, odd = 0;  // bytes 0 and 2, 1 and 3, as 16-bit sums (32 x 255 fits)
#pragma unroll 8
            for (int c = 0; c < 32; ++c) {
                const unsigned int v = packed[w * 32 + ((c + lane) & 31)];
                even += v & 0x00ff00ffu;
                odd += (v >> 8) & 0x00ff00ffu;
            }
            totals[k][0] += even & 0xffffu;
            totals[k][1] += odd & 0xffffu;
            totals[k][2] += even >> 16;
            totals[k][3] += odd >> 16;
        }
    }
    __syncwarp();
    for (int w = 0; w < WORDS; ++w) packed[w * 32 + lane] = 0;
    __syncwarp();
}

template <typename T, int BINS>
__global__ void histogram_packed_per_lane(const T* data, int n, unsigned int* hist) {
    static_assert(BINS % 4 == 0 && BINS <= 256, "byte counters four to a word, at most 8 KB per warp");
    constexpr int WORDS = BINS / 4;
    constexpr int SAMPLES = Vector<T>::SAMPLES;
    constexpr int FLUSH_EVERY = 255 / SAMPLES;  // vectors a lane counts before a byte counter could overflow
    extern __shared__ unsigned int shared[];  // the block's BINS counts, then each warp's WORDS x 32 words
    unsigned int* block_hist = shared;
    const int lane = threadIdx.x & 31;
    unsigned int* packed = shared + BINS + (threadIdx.x >> 5) * WORDS * 32;
    zero_shared(shared, BINS + (blockDim.x >> 5) * WORDS * 32);
    unsigned int totals[(WORDS + 31) / 32][4] = {};

    const uint4* vectors = reinterpret_cast<const uint4*>(data);
    const int count = n / SAMPLES;
    const int stride = gridDim.x * blockDim.x;
    // The loop is warp-uniform (the flush synchronises the warp); each lane loads its next vector
    // before counting the one in hand, so a load is in flight while the counters are updated.
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // lane l of warp w walks w * 32 + l, then + stride ...
    uint4 next = i < count ? __ldg(vectors + i) : make_uint4(0, 0, 0, 0);
    int since_flush = 0;
    for (int base = i - lane; base < count; base += stride) {
        const bool real = i < count;
        const uint4 q = next;
        i += stride;
        if (i < count) next = __ldg(vectors + i);
        if (real) {
#pragma unroll
            for (int j = 0; j < SAMPLES; ++j) {
                unsigned int bin;
                // An atomic although no other lane touches the word: its result is unused, so it is a
                // fire-and-forget reduction, where `+=` would chain each sample's load to the store
                // before it (they may be the same word). At 2^28 it measured 174.8 us against 179.4:
                // the chain was not what bounds this kernel (docs/perf-notes.md).
                if (bin_of<BINS>(sample_at(q, j, T()), bin)) atomicAdd(&packed[(bin >> 2) * 32 + lane], 1u << (8 * (bin & 3)));
            }
        }
        if (++since_flush == FLUSH_EVERY) {
            flush_packed<BINS>(packed, totals);
            since_flush = 0;
        }
    }
    flush_packed<BINS>(packed, totals);
#pragma unroll
    for (int k = 0; k < (WORDS + 31) / 32; ++k) {
        const int w = lane + 32 * k;
        if (w < WORDS)
            for (int b = 0; b < 4; ++b)
                if (totals[k][b]) atomicAdd(&block_hist[4 * w + b], totals[k][b]);
    }
    add_tail<T, BINS>(data, n, block_hist);
    merge_copies<BINS>(block_hist, 1, hist);
}
