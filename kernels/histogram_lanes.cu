// Histograms at the read ceiling: uint8 samples into 256 bins counted in "lane
// columns", int32 samples into per-warp sub-histograms, both with several 16-byte loads in flight
// per thread; and the probe that measures the shared-memory counting ceiling any such design has.
// A file of its own so that kernels/histogram.cu, and with it the hashes of the variants it
// holds, stays as it was. Launches: kernels/histogram.py (`lane_columns`, which zeroes the output
// first, as every histogram plan does) and tools/tune_histogram.py. docs/perf-notes.md, section
// "uint8 at the read ceiling", says why this design and what it should do.
//
// Lane columns. Bank conflicts exist only among the 32 addresses of ONE warp instruction. Lane l
// of every warp of the block counts into column l: bin b of column l is word b * 32 + l, in bank
// l. A warp instruction's 32 addresses are then in 32 different banks whatever the samples are
// (uniform, skewed, all equal: one pass each), and two lanes of one instruction never share a
// word. Lanes l of different warps do share the column, through shared atomics (red.shared, the
// result unused), which are applied one instruction after another. 256 bins x 32 lanes x 4 bytes
// = 32 KB per block whatever its size, so occupancy stays high (6 blocks of 256 per SM) and the
// counters are 32 bits wide: no overflow, no flush (packed_per_lane's byte counters had to be
// flushed every 15 vectors). COPIES > 1 gives warp w the copy w % COPIES: fewer instructions in a
// row on the same words (all-equal input), for COPIES x 32 KB.
// Per sample: a shift, an AND-OR (the bin's byte offset with the lane's) and the atomic.
#include "common.cuh"

// The bin of an int32 sample and whether it has one (sample v counts in bin v when 0 <= v < BINS),
// as kernels/histogram.cu's bin_of.
template <int BINS>
__device__ __forceinline__ bool lanes_bin_of(int v, unsigned int& bin) {
    bin = static_cast<unsigned int>(v);  // negative samples become huge: one compare drops both ends
    return bin < BINS;
}

// Visits the thread's whole 16-byte vectors in batches of UNROLL: vectors i, i + stride, ...,
// i + (UNROLL - 1) x stride (stride = the grid's threads, so that a warp's loads are coalesced)
// are all loaded before any is counted, so UNROLL loads per thread are in flight while the DRAM
// latency passes. In the last, partial batch a vector past the end is replaced by vector i (which
// is real, just loaded, and not counted again): the loads stay unconditional and in flight together.
template <int UNROLL, typename Count>
__device__ __forceinline__ void for_each_vector(const uint4* __restrict__ vectors, int count, Count count_vector) {
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) {
            const int j = i + k * stride;
            v[k] = __ldg(vectors + (j < count ? j : i));
        }
#pragma unroll
        for (int k = 0; k < UNROLL; ++k)
            if (k == 0 || i + k * stride < count) count_vector(v[k]);
    }
}

// Adds 1 to the shared counter `byte_offset` bytes into `base` (a fire-and-forget atomic).
__device__ __forceinline__ void add_one(unsigned int* base, unsigned int byte_offset) {
    atomicAdd(reinterpret_cast<unsigned int*>(reinterpret_cast<unsigned char*>(base) + byte_offset), 1u);
}

// The four bytes of `w` into lane columns: byte j's bin b at byte offset b * 128 (+ `lane_offset`,
// the lane's 4 x l plus its copy's offset, in bits the bin's offset leaves clear).
__device__ __forceinline__ void count_bytes(unsigned int* columns, unsigned int w, unsigned int lane_offset) {
    add_one(columns, ((w << 7) & 0x7f80u) | lane_offset);
    add_one(columns, ((w >> 1) & 0x7f80u) | lane_offset);
    add_one(columns, ((w >> 9) & 0x7f80u) | lane_offset);
    add_one(columns, ((w >> 17) & 0x7f80u) | lane_offset);
}

constexpr int LANE_COLUMN_WORDS = 256 * 32;  // one copy: 256 bins x 32 lanes, 32 KB

// Zeroes `words` shared words (a multiple of 4) with 16-byte stores, then waits for the block.
__device__ __forceinline__ void zero_shared_vectors(unsigned int* shared, int words) {
    uint4* vectors = reinterpret_cast<uint4*>(shared);
    for (int i = threadIdx.x; i < words / 4; i += blockDim.x) vectors[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
}

// Sums each bin over the block's COPIES x 32 lane columns and adds it to the output (one global
// atomic per non-empty bin). Thread t reads bin t's words starting at column t % 32, so that the
// 32 reads of a warp instruction fall in 32 banks.
template <int COPIES>
__device__ __forceinline__ void merge_lane_columns(const unsigned int* columns, unsigned int* hist) {
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned int total = 0;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
#pragma unroll 8
            for (int l = 0; l < 32; ++l) total += columns[c * LANE_COLUMN_WORDS + b * 32 + ((l + b) & 31)];
        }
        if (total) atomicAdd(&hist[b], total);
    }
}

// uint8 samples, 256 bins (a byte is its own bin). Dynamic shared memory: COPIES x 32 KB.
template <int COPIES, int UNROLL>
__global__ void histogram_lane_columns(const unsigned char* __restrict__ data, int n, unsigned int* __restrict__ hist) {
    extern __shared__ __align__(16) unsigned int columns[];  // COPIES x 256 bins x 32 lanes
    zero_shared_vectors(columns, COPIES * LANE_COLUMN_WORDS);
    const unsigned int lane = threadIdx.x & 31;
    const unsigned int copy = (threadIdx.x >> 5) % COPIES;
    const unsigned int lane_offset = copy * (LANE_COLUMN_WORDS * 4) + lane * 4;  // bits 2-6 and 15 up
    const int count = n / 16;
    for_each_vector<UNROLL>(reinterpret_cast<const uint4*>(data), count, [&](const uint4& q) {
        count_bytes(columns, q.x, lane_offset);
        count_bytes(columns, q.y, lane_offset);
        count_bytes(columns, q.z, lane_offset);
        count_bytes(columns, q.w, lane_offset);
    });
    // The samples past the last whole vector, into the thread's own column.
    for (int i = count * 16 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        add_one(columns, (static_cast<unsigned int>(data[i]) << 7) | lane_offset);
    merge_lane_columns<COPIES>(columns, hist);
}

// int32 samples (any BINS), or bytes with BINS = 256: one sub-histogram of BINS counts per warp,
// as kernels/histogram.cu's histogram_vector_per_warp, but UNROLL loads in flight per thread
// instead of one. With 4 int32 samples per 16 bytes, the shared atomics take a quarter of the time
// they take for bytes, and the loads in flight are what was missing (docs/perf-notes.md).
template <typename T, int BINS>
__device__ __forceinline__ void count_in_warp_copy(const uint4& q, unsigned int* mine);
template <>
__device__ __forceinline__ void count_in_warp_copy<unsigned char, 256>(const uint4& q, unsigned int* mine) {
    const unsigned int words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 16; ++j) atomicAdd(&mine[(words[j >> 2] >> (8 * (j & 3))) & 0xffu], 1u);
}
template <typename T, int BINS>
__device__ __forceinline__ void count_in_warp_copy(const uint4& q, unsigned int* mine) {
    static_assert(sizeof(T) == 4, "int32 samples, or bytes into 256 bins (the specialisation above)");
    const unsigned int words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned int bin;
        if (lanes_bin_of<BINS>(static_cast<int>(words[j]), bin)) atomicAdd(&mine[bin], 1u);
    }
}

template <typename T, int BINS, int UNROLL>
__global__ void histogram_batched_per_warp(const T* __restrict__ data, int n, unsigned int* __restrict__ hist) {
    extern __shared__ __align__(16) unsigned int sub[];  // warps x BINS counts
    const int warps = blockDim.x >> 5;
    for (int i = threadIdx.x; i < warps * BINS; i += blockDim.x) sub[i] = 0;
    __syncthreads();
    unsigned int* mine = sub + (threadIdx.x >> 5) * BINS;
    constexpr int SAMPLES = 16 / sizeof(T);
    const int count = n / SAMPLES;
    for_each_vector<UNROLL>(reinterpret_cast<const uint4*>(data), count, [&](const uint4& q) { count_in_warp_copy<T, BINS>(q, mine); });
    for (int i = count * SAMPLES + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int bin;
        if (sizeof(T) == 1) {
            atomicAdd(&mine[static_cast<unsigned int>(data[i]) & 0xffu], 1u);
        } else if (lanes_bin_of<BINS>(static_cast<int>(data[i]), bin)) {
            atomicAdd(&mine[bin], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int total = 0;
        for (int w = 0; w < warps; ++w) total += sub[w * BINS + b];
        if (total) atomicAdd(&hist[b], total);
    }
}

// The counting ceiling: what the shared-memory updates of a 2^28-sample histogram cost with no
// global load at all. Each thread makes its "vectors" in registers (an LCG step and a shift-xor per
// 4 samples: (s ^ s >> 13) & mask | fill, the mask and fill run-time arguments so that nothing is
// constant-folded: mask ~0 and fill 0 give uniform bytes, mask 0 and fill 0x07070707 all sevens)
// and counts their 16 bytes exactly as the kernel named by MODE does:
//   MODE 0: lane columns, COPIES x 32 KB per block, red.shared (histogram_lane_columns).
//   MODE 1: a private histogram per lane, conflict-free by construction, updated with a plain
//           shared load, add and store (no atomic): 16 KB per warp, lane l's words in bank l, bins
//           b and b + 128 in one word (the low 14 bits count both, the bits from 14 up count
//           b + 128), the design the notes called "16-bit counters". Each update's load waits for
//           the store before it (the same word may come again), so its latency is in the figure.
//   MODE 2: one sub-histogram of 256 counters per warp with shared atomics (vector_per_warp's
//           counting, bank conflicts and all).
// The grid-stride loop visits `vectors` vectors as the kernels do. At the end each thread XORs
// words of the block's shared memory and stores the XOR only if it equals `never` (as
// kernels/harness.cu's primbench_read_probe), so no update can be dropped as unused.
template <int MODE, int COPIES>
__global__ void histogram_counting_probe(int vectors, unsigned int mask, unsigned int fill, unsigned int never,
                                         unsigned int* sink) {
    extern __shared__ __align__(16) unsigned int shared[];
    const int warps = blockDim.x >> 5;
    const int words = MODE == 0 ? COPIES * LANE_COLUMN_WORDS : MODE == 1 ? warps * 128 * 32 : warps * 256;
    zero_shared_vectors(shared, words);
    const unsigned int lane = threadIdx.x & 31;
    const unsigned int warp = threadIdx.x >> 5;
    const unsigned int lane_offset = MODE == 0 ? ((warp % COPIES) * (LANE_COLUMN_WORDS * 4) + lane * 4)
                                               : MODE == 1 ? (warp * (128 * 32 * 4) + lane * 4) : warp * (256 * 4);
    const int stride = gridDim.x * blockDim.x;
    unsigned int s = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u + 12345u;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += stride) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            s = s * 1664525u + 1013904223u;
            const unsigned int w = ((s ^ (s >> 13)) & mask) | fill;
            if (MODE == 0) {
                count_bytes(shared, w, lane_offset);
            } else if (MODE == 1) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    // Byte j's bits 0-6 at bits 7-13 (the word's byte offset, 128 bytes a bin pair),
                    // its bit 7 at bit 14: the increment is 1, plus 1 << 14 for the upper bin.
                    const unsigned int x = j == 0 ? (w << 7) : (w >> (8 * j - 7));
                    unsigned int* word = reinterpret_cast<unsigned int*>(reinterpret_cast<unsigned char*>(shared) +
                                                                         ((x & 0x3f80u) | lane_offset));
                    *word += (x & 0x4000u) | 1u;
                }
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) add_one(shared, (((w >> (8 * j)) & 0xffu) << 2) + lane_offset);
            }
        }
    }
    __syncthreads();
    unsigned int acc = 0;
    for (int i = threadIdx.x; i < words; i += blockDim.x) acc ^= shared[i];
    if (acc == never) *sink = acc;
}
