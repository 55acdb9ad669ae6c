// Scan (inclusive prefix sum, y_i = x_0 + ... + x_i) from seed 004's Hillis-Steele block scan to
// a single-pass scan with decoupled look-back (Merrill & Garland 2016). Launches: kernels/scan.py.
//
// Three families:
//   1. seed 004's Hillis-Steele scan of one block, as the article writes it;
//   2. block scans (Hillis-Steele, Blelloch, Blelloch with bank-conflict padding, warp shuffles)
//      as the step of a multi-block "scan, then add the tile offsets" scan (recursion in scan.py);
//   3. the fast tile scan: 16-byte loads, kVecs vectors per thread, warp-shuffle scans, fed its
//      tile's prefix either by a look-back over the tiles before it (one pass) or by a scan of the
//      tile sums made by a reduce pass (reduce-then-scan, three passes).
// T is float or int; int sums wrap modulo 2^32, like CUB's (ScanAdd does them in unsigned).
#include "common.cuh"

template <typename T>
struct ScanAdd;
template <>
struct ScanAdd<float> {
    __device__ static float add(float a, float b) { return a + b; }
    __device__ static unsigned long long bits(float v) { return __float_as_uint(v); }
    __device__ static float from_bits(unsigned long long b) { return __uint_as_float(static_cast<unsigned>(b)); }
};
template <>
struct ScanAdd<int> {
    __device__ static int add(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
    __device__ static unsigned long long bits(int v) { return static_cast<unsigned>(v); }
    __device__ static int from_bits(unsigned long long b) { return static_cast<int>(static_cast<unsigned>(b)); }
};

// Inclusive scan across a warp with __shfl_up_sync: lane i ends with v_0 + ... + v_i.
template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T up = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset) v = ScanAdd<T>::add(up, v);
    }
    return v;
}

// Sum across a warp with xor shuffles: every lane ends with the same total (same tree for all).
template <typename T>
__device__ __forceinline__ T warp_all_sum(T v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = ScanAdd<T>::add(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
}

// Dynamic shared memory, typed per instantiation (one extern array name for every template).
template <typename T>
__device__ __forceinline__ T* dynamic_shared() {
    extern __shared__ __align__(16) unsigned char scan_shared_bytes[];
    return reinterpret_cast<T*>(scan_shared_bytes);
}

// ---------------------------------------------------------------------------------------
// 1. Seed 004, section 4.2: Hillis-Steele in one block, O(n log n) additions, depth log n.
// The article scans x in place with blockDim.x == n; here the input and output are separate
// arrays (so that every timed run sees the same input) and blockDim.x >= n; otherwise its code.
// ---------------------------------------------------------------------------------------
template <typename T>
__global__ void scan_hillis_steele_single_block(const T* in, T* out, int n) {
    T* s = dynamic_shared<T>();
    int t = threadIdx.x;
    s[t] = (t < n) ? in[t] : T(0);
    __syncthreads();

    for (int off = 1; off < n; off <<= 1) {
        T add = (t >= off) ? s[t - off] : T(0);
        __syncthreads();  // every thread has read this round's values
        s[t] += add;
        __syncthreads();  // every thread has written, for the next round to read
    }

    if (t < n) out[t] = s[t];
}

// ---------------------------------------------------------------------------------------
// 2. Block scans as the step of a multi-block scan. Each scans one tile of `in` into `out` and
//    writes the tile's total to tile_sums[blockIdx.x]; in == out is allowed (scan.py scans the
//    tile sums in place). add_tile_offsets then adds the scanned sums of the tiles before.
// ---------------------------------------------------------------------------------------

// Hillis-Steele: one element per thread, tile = blockDim.x, log2(tile) rounds of the seed's step.
template <typename T>
__global__ void tile_scan_hillis_steele(const T* in, T* out, T* tile_sums, unsigned n) {
    T* s = dynamic_shared<T>();
    const int t = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? in[i] : T(0);
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        const T add = (t >= off) ? s[t - off] : T(0);
        __syncthreads();
        s[t] = ScanAdd<T>::add(add, s[t]);
        __syncthreads();
    }
    if (i < n) out[i] = s[t];
    if (t == blockDim.x - 1) tile_sums[blockIdx.x] = s[t];
}

// Blelloch's work-efficient scan (up-sweep then down-sweep, GPU Gems 3 ch. 39): two elements per
// thread, tile = 2 x blockDim.x, 2(tile - 1) additions. kPadded inserts one empty word every 32,
// so that the strided tree accesses (stride 2^d) spread over the 32 banks instead of piling up.
template <bool kPadded>
__device__ __forceinline__ int padded(int i) { return kPadded ? i + (i >> 5) : i; }

template <typename T, bool kPadded>
__global__ void tile_scan_blelloch(const T* in, T* out, T* tile_sums, unsigned n) {
    T* s = dynamic_shared<T>();
    const int t = threadIdx.x;
    const int tile = 2 * blockDim.x;
    const unsigned base = blockIdx.x * static_cast<unsigned>(tile);
    const int ai = t, bi = t + blockDim.x;
    const T a = (base + ai < n) ? in[base + ai] : T(0);
    const T b = (base + bi < n) ? in[base + bi] : T(0);
    s[padded<kPadded>(ai)] = a;
    s[padded<kPadded>(bi)] = b;

    int offset = 1;
    for (int d = tile >> 1; d > 0; d >>= 1) {  // up-sweep: build the sum tree in place
        __syncthreads();
        if (t < d) {
            const int x = offset * (2 * t + 1) - 1, y = offset * (2 * t + 2) - 1;
            s[padded<kPadded>(y)] = ScanAdd<T>::add(s[padded<kPadded>(x)], s[padded<kPadded>(y)]);
        }
        offset <<= 1;
    }
    if (t == 0) {
        tile_sums[blockIdx.x] = s[padded<kPadded>(tile - 1)];
        s[padded<kPadded>(tile - 1)] = T(0);
    }
    for (int d = 1; d < tile; d <<= 1) {  // down-sweep: push prefixes back down the tree
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            const int x = offset * (2 * t + 1) - 1, y = offset * (2 * t + 2) - 1;
            const T left = s[padded<kPadded>(x)];
            s[padded<kPadded>(x)] = s[padded<kPadded>(y)];
            s[padded<kPadded>(y)] = ScanAdd<T>::add(s[padded<kPadded>(y)], left);
        }
    }
    __syncthreads();
    // The tree gives the exclusive scan; adding each element makes it inclusive.
    if (base + ai < n) out[base + ai] = ScanAdd<T>::add(s[padded<kPadded>(ai)], a);
    if (base + bi < n) out[base + bi] = ScanAdd<T>::add(s[padded<kPadded>(bi)], b);
}

// Warp shuffles: each warp scans its 32 elements in registers, the first warp scans the warp
// totals, and each warp adds the totals of the warps before it. One element per thread.
template <typename T>
__global__ void tile_scan_warp_shuffle(const T* in, T* out, T* tile_sums, unsigned n) {
    __shared__ T warp_totals[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = warp_inclusive_scan((i < n) ? in[i] : T(0), lane);
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const T total = (lane < (blockDim.x >> 5)) ? warp_totals[lane] : T(0);
        warp_totals[lane] = warp_inclusive_scan(total, lane);
    }
    __syncthreads();
    if (warp > 0) v = ScanAdd<T>::add(warp_totals[warp - 1], v);
    if (i < n) out[i] = v;
    if (threadIdx.x == blockDim.x - 1) tile_sums[blockIdx.x] = v;
}

// out[i] += scanned_sums[tile - 1] for every element of every tile after the first.
template <typename T>
__global__ void add_tile_offsets(T* out, const T* scanned_sums, unsigned n, unsigned tile) {
    const unsigned i = tile + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = ScanAdd<T>::add(scanned_sums[i / tile - 1], out[i]);
}

// ---------------------------------------------------------------------------------------
// 3. The fast tile scan. A block owns a tile of blockDim.x x kVecs x 4 elements. Warp w owns a
//    contiguous slice of 32 x kVecs vectors of it; at step j its lanes load the 32 consecutive
//    16-byte vectors j x 32 + lane of that slice (each load instruction is one coalesced 512-byte
//    segment). Scan order inside a warp: step, then lane, then the 4 elements of the vector.
// ---------------------------------------------------------------------------------------

template <typename T>
struct Vec4 {
    T v[4];
};

__device__ __forceinline__ uint4 load_nc_16(const void* p) {
    uint4 r;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

template <typename T>
__device__ __forceinline__ void store_16(T* p, const Vec4<T>& r) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
                 "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[0]))), "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[1]))),
                 "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[2]))), "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[3])))
                 : "memory");
}

template <typename T>
__device__ __forceinline__ Vec4<T> as_vec4(uint4 q) {
    Vec4<T> r;
    r.v[0] = ScanAdd<T>::from_bits(q.x); r.v[1] = ScanAdd<T>::from_bits(q.y);
    r.v[2] = ScanAdd<T>::from_bits(q.z); r.v[3] = ScanAdd<T>::from_bits(q.w);
    return r;
}

// The tile's elements in registers, each thread's vectors already scanned within the warp slice.
template <typename T, int kVecs>
struct TileInRegisters {
    Vec4<T> x[kVecs];  // inclusive scans within each vector, then offset within the warp slice
    T warp_total;      // sum of the warp's slice (lane-uniform)
};

// Element index of element e of vector j of this thread (see the layout above).
template <int kVecs>
__device__ __forceinline__ unsigned long long element_index(unsigned long long tile_base, int warp, int j, int lane, int e) {
    return tile_base + (static_cast<unsigned long long>(warp) * kVecs * 32 + j * 32 + lane) * 4 + e;
}

// f(j, e, i) for element e of each vector j of this thread, i its index: the element-by-element
// path of a warp slice that runs past n (the last tile), for loads and stores alike.
template <int kVecs, typename F>
__device__ __forceinline__ void for_each_element(unsigned long long tile_base, int warp, int lane, F f) {
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) f(j, e, element_index<kVecs>(tile_base, warp, j, lane, e));
}

// Start the 16-byte loads of this thread's vectors of a tile, if its warp's whole slice is in
// range (inputs are 256-byte aligned); the registers fill while the thread does other work.
template <typename T, int kVecs>
__device__ __forceinline__ bool issue_tile_loads(const T* in, unsigned n, unsigned long long tile_base, int warp, int lane,
                                                 uint4 (&raw)[kVecs]) {
    const bool whole = element_index<kVecs>(tile_base, warp, kVecs - 1, 31, 3) < n;
    if (whole) {
#pragma unroll
        for (int j = 0; j < kVecs; ++j) raw[j] = load_nc_16(in + element_index<kVecs>(tile_base, warp, j, lane, 0));
    }
    return whole;
}

// The loaded vectors as values; a slice that runs past n (the last tile) is read element by
// element here instead, with zeros past the end.
template <typename T, int kVecs>
__device__ __forceinline__ void unpack_tile(const T* in, unsigned n, unsigned long long tile_base, int warp, int lane, bool whole,
                                            const uint4 (&raw)[kVecs], TileInRegisters<T, kVecs>& tile) {
    if (whole) {
#pragma unroll
        for (int j = 0; j < kVecs; ++j) tile.x[j] = as_vec4<T>(raw[j]);
    } else {
        for_each_element<kVecs>(tile_base, warp, lane, [&](int j, int e, unsigned long long i) { tile.x[j].v[e] = (i < n) ? in[i] : T(0); });
    }
}

template <typename T, int kVecs>
__device__ __forceinline__ void load_tile(const T* in, unsigned n, unsigned long long tile_base, int warp, int lane,
                                          TileInRegisters<T, kVecs>& tile) {
    uint4 raw[kVecs];
    const bool whole = issue_tile_loads<T, kVecs>(in, n, tile_base, warp, lane, raw);
    unpack_tile<T, kVecs>(in, n, tile_base, warp, lane, whole, raw, tile);
}

// Scan each vector in place, then each step across the warp (the kVecs warp scans are
// independent: their shuffles overlap), then chain the steps: all within registers.
template <typename T, int kVecs>
__device__ __forceinline__ void scan_warp_slice(int lane, TileInRegisters<T, kVecs>& tile) {
    T lane_prefix[kVecs];
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
#pragma unroll
        for (int e = 1; e < 4; ++e) tile.x[j].v[e] = ScanAdd<T>::add(tile.x[j].v[e - 1], tile.x[j].v[e]);
        lane_prefix[j] = warp_inclusive_scan(tile.x[j].v[3], lane);
    }
    T carry = T(0);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const T step_total = __shfl_sync(FULL_MASK, lane_prefix[j], 31);
        const T lanes_before = __shfl_up_sync(FULL_MASK, lane_prefix[j], 1);
        // This vector's exclusive prefix within the slice: the earlier steps, then the earlier lanes.
        const T exclusive = (lane == 0) ? carry : ScanAdd<T>::add(carry, lanes_before);
#pragma unroll
        for (int e = 0; e < 4; ++e) tile.x[j].v[e] = ScanAdd<T>::add(exclusive, tile.x[j].v[e]);
        carry = ScanAdd<T>::add(carry, step_total);
    }
    tile.warp_total = carry;
}

template <typename T, int kVecs>
__device__ __forceinline__ void store_tile(T* out, unsigned n, unsigned long long tile_base, int warp, int lane, T offset,
                                           TileInRegisters<T, kVecs>& tile) {
    const unsigned long long warp_end = element_index<kVecs>(tile_base, warp, kVecs - 1, 31, 3) + 1;
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) tile.x[j].v[e] = ScanAdd<T>::add(offset, tile.x[j].v[e]);
    if (warp_end <= n) {
#pragma unroll
        for (int j = 0; j < kVecs; ++j) {
            T* p = out + element_index<kVecs>(tile_base, warp, j, lane, 0);
            store_16(p, tile.x[j]);
        }
    } else {
        for_each_element<kVecs>(tile_base, warp, lane, [&](int j, int e, unsigned long long i) {
            if (i < n) out[i] = tile.x[j].v[e];
        });
    }
}

// The block's part once its warps have scanned their slices: the first warp scans the warp
// totals and asks `prefix` for the sum of every tile before this one (Prefix::exclusive(tile,
// aggregate, lane) is called by the whole first warp); then warp_offsets[w] is what warp w adds.
template <typename T, typename Prefix>
__device__ __forceinline__ void tile_offsets(T* warp_offsets, unsigned tile, const Prefix& prefix, int lane, int warp) {
    if (warp == 0) {
        const T total = (lane < static_cast<int>(blockDim.x >> 5)) ? warp_offsets[lane] : T(0);
        const T inclusive = warp_inclusive_scan(total, lane);
        const T warps_before = __shfl_up_sync(FULL_MASK, inclusive, 1);
        const T aggregate = __shfl_sync(FULL_MASK, inclusive, 31);
        const T tile_exclusive = prefix.exclusive(tile, aggregate, lane);
        warp_offsets[lane] = (lane == 0) ? tile_exclusive : ScanAdd<T>::add(tile_exclusive, warps_before);
    }
}

template <int kVecs>
__device__ __forceinline__ unsigned long long tile_start(unsigned tile) {
    return static_cast<unsigned long long>(tile) * blockDim.x * kVecs * 4;
}

// One tile: load, scan the warp slices, the block's offsets, store. `prefix` hears when the
// tile's loads are in flight (Prefix::loads_in_flight(tile, lane, warp), every thread), so that it
// can start work that does not need the tile's own values.
template <typename T, int kVecs, typename Prefix>
__device__ __forceinline__ void fast_tile_scan(const T* in, T* out, unsigned n, unsigned tile, Prefix prefix) {
    __shared__ T warp_offsets[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned long long base = tile_start<kVecs>(tile);
    uint4 raw[kVecs];
    const bool whole = issue_tile_loads<T, kVecs>(in, n, base, warp, lane, raw);
    prefix.loads_in_flight(tile, lane, warp);
    TileInRegisters<T, kVecs> regs;
    unpack_tile<T, kVecs>(in, n, base, warp, lane, whole, raw, regs);
    scan_warp_slice(lane, regs);
    if (lane == 0) warp_offsets[warp] = regs.warp_total;
    __syncthreads();
    tile_offsets(warp_offsets, tile, prefix, lane, warp);
    __syncthreads();
    store_tile(out, n, base, warp, lane, warp_offsets[warp], regs);
}

// Tile status for the look-back: one 64-bit word per tile, so that a flag and its value are
// written and read as one (no fence between them): bits 63-32 the value, 31-2 the call's epoch,
// 1-0 the flag. scan.py passes a new epoch on every call, so words an earlier call left behind
// read as "nothing published" and the array never needs clearing.
#define STATUS_NONE 0u
#define STATUS_AGGREGATE 1u  // the tile's own sum
#define STATUS_PREFIX 2u     // the sum of every element up to the end of this tile
#define STATUS_EPOCH_MASK 0x3fffffffu

__device__ __forceinline__ void publish_status(unsigned long long* status, unsigned tile, unsigned long long value_bits,
                                               unsigned epoch, unsigned flag) {
    const unsigned long long word = (value_bits << 32) | (static_cast<unsigned long long>(epoch) << 2) | flag;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(status + tile), "l"(word) : "memory");
}

__device__ __forceinline__ unsigned long long read_status(const unsigned long long* status, long long tile) {
    unsigned long long word;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(status + tile) : "memory");
    return word;
}

// Decoupled look-back (Merrill & Garland 2016), read by the whole first warp: read the kWindow x 32
// tiles before `tile` in one go (lane l's k-th load is tile - 1 - (32k + l), all loads in flight
// together), wait until each tile up to the nearest one that published its inclusive prefix has
// published something, add those values, and slide the window back if no tile in it had a prefix.
// Returns the sum of every tile before `tile`. A wide window matters: with one tile per SM in
// flight the nearest prefix is typically a hundred tiles back, and each window read is a round
// trip. (Measured on the H200, docs/perf-notes.md: 2 or 4 loads per lane were 1-15 % slower than
// 1, and a __nanosleep backoff in the spin changed nothing.)
template <typename T, int kWindow>
__device__ T look_back(const unsigned long long* status, unsigned epoch, unsigned tile, int lane) {
    T exclusive = T(0);
    long long window = static_cast<long long>(tile) - 1;  // the nearest predecessor not yet added
    while (window >= 0) {
        unsigned long long word[kWindow];
        unsigned flag[kWindow];
        int nearest_prefix;  // window position (32k + lane) of the nearest prefix; kWindow x 32 if none
        while (true) {
#pragma unroll
            for (int k = 0; k < kWindow; ++k) {
                const long long predecessor = window - (32 * k + lane);
                word[k] = (predecessor >= 0) ? read_status(status, predecessor) : 0ull;
            }
            nearest_prefix = kWindow * 32;
#pragma unroll
            for (int k = kWindow - 1; k >= 0; --k) {
                const long long predecessor = window - (32 * k + lane);
                if (predecessor < 0) {
                    flag[k] = STATUS_PREFIX;  // before the first tile: a prefix of 0 (its word reads as 0)
                } else {
                    flag[k] = (((word[k] >> 2) & STATUS_EPOCH_MASK) == epoch) ? static_cast<unsigned>(word[k] & 3u) : STATUS_NONE;
                }
                const unsigned prefixes = __ballot_sync(FULL_MASK, flag[k] == STATUS_PREFIX);
                if (prefixes) nearest_prefix = 32 * k + __ffs(prefixes) - 1;
            }
            // Only the tiles nearer than the nearest prefix (and it) must have published.
            bool waiting = false;
#pragma unroll
            for (int k = 0; k < kWindow; ++k) waiting |= (32 * k + lane <= nearest_prefix) && flag[k] == STATUS_NONE;
            if (!__any_sync(FULL_MASK, waiting)) break;
        }
        T mine = T(0);
#pragma unroll
        for (int k = kWindow - 1; k >= 0; --k)
            if (32 * k + lane <= nearest_prefix) mine = ScanAdd<T>::add(mine, ScanAdd<T>::from_bits(word[k] >> 32));
        exclusive = ScanAdd<T>::add(warp_all_sum(mine), exclusive);
        if (nearest_prefix < kWindow * 32) break;
        window -= kWindow * 32;
    }
    return exclusive;
}

// The look-back as the fast tile scan's prefix: the tile publishes its aggregate as soon as its
// sum is known, looks back, then publishes its inclusive prefix.
// kPrefetchStatus: while the tile's loads are in flight, thread 0 asks L2 for the line holding its
// predecessor's status word (prefetch.global.L2: nothing waits for it). On the H200 that made
// 2^28 int32 3 % faster (662 against 685 us, tools/probe_scan_early.py in commit dacc023, and
// docs/perf-notes.md). Our reading, not verified with counters: the look-back's first read of its
// predecessors' line missed L2 and went to DRAM while the whole tile waited (the gigabytes
// streaming through L2 leave no line untouched for long, and a line other SMs have only partly
// written may still need its fill); the prefetch makes that trip while the loads are in flight.
// What supports it: reading another tile's word instead, sleeping as long, and zeroing the status
// array before each call (evicted again before the later tiles need it) each changed nothing.
template <typename T, int kWindow, bool kPrefetchStatus>
struct LookBackPrefix {
    unsigned long long* status;
    unsigned epoch;

    __device__ void loads_in_flight(unsigned tile, int lane, int warp) const {
        if (kPrefetchStatus && warp == 0 && lane == 0 && tile > 0)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(status + tile - 1) : "memory");
    }

    __device__ T exclusive(unsigned tile, T aggregate, int lane) const {
        if (tile > 0 && lane == 0) publish_status(status, tile, ScanAdd<T>::bits(aggregate), epoch, STATUS_AGGREGATE);
        const T exclusive = look_back<T, kWindow>(status, epoch, tile, lane);
        if (lane == 0) publish_status(status, tile, ScanAdd<T>::bits(ScanAdd<T>::add(exclusive, aggregate)), epoch, STATUS_PREFIX);
        return exclusive;
    }
};

// The single-pass scan: 2n bytes of traffic. Tiles are numbered by an atomic ticket, not by
// blockIdx.x: a block only ever waits for tiles whose blocks took their tickets earlier, so are
// already running, whatever order the hardware starts blocks in (no deadlock). The block that
// takes the last ticket resets the counter for the next call.
template <typename T, int kVecs, int kWindow, bool kPrefetchStatus>
__global__ void __launch_bounds__(1024) scan_decoupled_lookback(const T* in, T* out, unsigned long long* status, unsigned* tile_counter,
                                                                unsigned n, unsigned epoch) {
    __shared__ unsigned tile;
    if (threadIdx.x == 0) {
        const unsigned ticket = atomicAdd(tile_counter, 1u);
        if (ticket == gridDim.x - 1) *tile_counter = 0;
        tile = ticket;
    }
    __syncthreads();
    fast_tile_scan<T, kVecs>(in, out, n, tile, LookBackPrefix<T, kWindow, kPrefetchStatus>{status, epoch});
}

// Reduce-then-scan, pass 1: the sum of each tile (3n bytes in all: read, read again, write).
template <typename T, int kVecs>
__global__ void __launch_bounds__(1024) tile_reduce(const T* in, T* tile_sums, unsigned n) {
    __shared__ T warp_sums[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned long long tile_base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x * kVecs * 4;
    TileInRegisters<T, kVecs> regs;
    load_tile(in, n, tile_base, warp, lane, regs);
    T v = T(0);
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) v = ScanAdd<T>::add(v, regs.x[j].v[e]);
    v = warp_all_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const T w = warp_all_sum((lane < static_cast<int>(blockDim.x >> 5)) ? warp_sums[lane] : T(0));
        if (lane == 0) tile_sums[blockIdx.x] = w;
    }
}

// Pass 2: the exclusive scan of the tile sums, in place, by one block walking chunks of
// blockDim.x x 4 values with a carry between chunks.
template <typename T>
__global__ void __launch_bounds__(1024) scan_tile_sums_exclusive(T* sums, unsigned count) {
    __shared__ T warp_offsets[32];
    __shared__ T chunk_total;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T carry = T(0);
    for (unsigned base = 0; base < count; base += blockDim.x * 4) {
        const unsigned first = base + threadIdx.x * 4;
        T v[4];
        T thread_total = T(0);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            v[e] = (first + e < count) ? sums[first + e] : T(0);
            thread_total = ScanAdd<T>::add(thread_total, v[e]);
        }
        const T inclusive = warp_inclusive_scan(thread_total, lane);
        const T lanes_before = __shfl_up_sync(FULL_MASK, inclusive, 1);
        if (lane == 31) warp_offsets[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            const T total = (lane < static_cast<int>(blockDim.x >> 5)) ? warp_offsets[lane] : T(0);
            const T warps_inclusive = warp_inclusive_scan(total, lane);
            const T warps_before = __shfl_up_sync(FULL_MASK, warps_inclusive, 1);
            warp_offsets[lane] = (lane == 0) ? T(0) : warps_before;
            if (lane == 31) chunk_total = warps_inclusive;
        }
        __syncthreads();
        T running = ScanAdd<T>::add(carry, warp_offsets[warp]);
        if (lane > 0) running = ScanAdd<T>::add(running, lanes_before);
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (first + e < count) {
                sums[first + e] = running;
                running = ScanAdd<T>::add(running, v[e]);
            }
        carry = ScanAdd<T>::add(carry, chunk_total);
        __syncthreads();  // warp_offsets and chunk_total are rewritten by the next chunk
    }
}

template <typename T>
struct GivenPrefix {
    const T* tile_exclusive;
    __device__ void loads_in_flight(unsigned, int, int) const {}
    __device__ T exclusive(unsigned tile, T, int) const { return tile_exclusive[tile]; }
};

// Pass 3: scan each tile again, starting from its scanned sum.
template <typename T, int kVecs>
__global__ void __launch_bounds__(1024) tile_scan_with_prefix(const T* in, T* out, const T* tile_exclusive, unsigned n) {
    fast_tile_scan<T, kVecs>(in, out, n, blockIdx.x, GivenPrefix<T>{tile_exclusive});
}
