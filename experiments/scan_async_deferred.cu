// The async-copy look-back scan (kernels/scan_async.cu) with its look-back taken off the per-tile
// critical path. An experiment, not registered (measured slower): experiments/tune_scan_deferred.py
// builds it; docs/perf-notes.md, "The look-back off the per-tile path".
//
// Why: measured on the H200 at 2^28, the async pipeline streams at 86-92 % of a copy with each
// tile's prefix handed to it, but takes about 1040 us (48 %) with the look-back, whatever the
// look-back window. Our reading: the persistent grid moves in lock step, and each tile's look-back
// waits for the aggregates of the tiles scanned beside it (the slowest block of the round) while
// its block scans nothing: a grid-wide wait per tile.
//
// Here a tile's local scan, its look-back and its stores happen in different iterations, and all
// warps but the first never wait for the look-back:
//   - iteration k scans tile k locally: each thread reads its vectors from the shared buffer,
//     keeps only each vector's exclusive prefix within its warp slice in registers (kVecs values)
//     and leaves the raw tile in its buffer; the warp totals go to shared memory; ONE barrier;
//   - then the first warp scans the warp totals, publishes tile k's aggregate and looks back for
//     tile k - kLag + 1 (kLag 1: tile k itself, overlapping the other warps' next scan; kLag 2:
//     tile k - 1, whose round published its aggregates a whole iteration ago, so it should find
//     them without waiting), publishes that tile's inclusive prefix and writes its warp offsets;
//   - meanwhile every warp stores tile k - kLag (its offsets were written before this iteration's
//     barrier): it reads its raw vectors again, rescans them in the vector (3 additions) and adds
//     the kept prefix and the offset, in the same order as scan.cu's tile scan; then it refills
//     that buffer with tile k - kLag + kStages and goes on to scan tile k + 1.
// So the first warp's look-back runs while the other 31 warps store and scan, and a block reaches
// its next barrier as soon as its own work and its first warp's look-back are both done.
//
// Lifetimes (kStages buffers, one tile each; tile index j of a block lives in buffer j % kStages):
//   buffer: issued at iteration j - kStages + kLag (step "refill"), waited for and read at
//   iteration j (scan), read again at iteration j + kLag (store) and refilled right after by the
//   same thread. kStages - kLag - 1 tiles are in flight while a tile is scanned (1 for 1024x4x3 at
//   kLag 1; 3 for 1024x2x6 at kLag 2). Each thread copies exactly the vectors it reads back, so the
//   data needs no barrier; the refill is issued after the thread's global stores, which consume
//   the values its shared loads returned (asm volatile keeps them in order).
//   cp.async groups: every thread commits one group per issue, empty ones included: kStages - kLag
//   in the prologue, one per iteration. At iteration k's wait, groups 0 .. kStages - kLag + k - 1
//   are committed and tile k is group k, so wait_group<kStages - kLag - 1> means "tile k landed".
//   tickets: ring[j % kRing], written by thread 0 after barrier X_{j - kStages + kLag - 1}; read up
//   to iteration j + kLag. In one barrier interval the reads span indices k - kLag .. k + kStages -
//   kLag and the write is index k + kStages - kLag + 1: kRing = kStages + 2 slots never collide.
//   warp sums/offsets: offsets[j % kSlots], written by all warps before X_j, turned into warp
//   offsets by the first warp after X_j and after tile j's look-back, read by all at iteration
//   j + kLag: indices k - kLag .. k + 1 in one interval, kSlots = kLag + 2.
// Deadlock-free: tickets are drawn only by running blocks and each block's are increasing. The
// first warp looks back only for its tile k - kLag + 1, whose predecessors are tiles of other blocks
// or this block's earlier tiles (whose prefixes it published in earlier iterations). Take the
// smallest tile t whose prefix is never published: every tile before it publishes, so its block's
// earlier look-backs end, its barriers are reached (nothing else waits on another block), t's
// aggregate is published and its look-back ends. experiments/test_scan_deferred_protocol.py
// simulates the protocol (tickets, buffers, groups, slots; random schedules of several blocks).
//
// This file includes scan_async.cu (which includes scan.cu), not the other way round, so that no
// registered variant's identity hash changes.
#include "scan_async.cu"

// The inclusive scan of one vector's 4 elements, in place (scan.cu's order).
template <typename T>
__device__ __forceinline__ void scan_vector(Vec4<T>& v) {
#pragma unroll
    for (int e = 1; e < 4; ++e) v.v[e] = ScanAdd<T>::add(v.v[e - 1], v.v[e]);
}

// Vector j of this thread's slice of the tile at `base`: from its shared buffer, or, for a warp
// slice that runs past n (the last tile), element by element from global memory, zeros past n.
template <typename T, int kVecs>
__device__ __forceinline__ Vec4<T> read_vector(const T* in, unsigned n, unsigned long long base, bool whole, const T* buffer, int warp,
                                               int j, int lane) {
    if (whole) return as_vec4<T>(load_shared_16(buffer + vector_in_tile<kVecs>(warp, j, lane) * 4));
    Vec4<T> v;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const unsigned long long i = element_index<kVecs>(base, warp, j, lane, e);
        v.v[e] = (i < n) ? in[i] : T(0);
    }
    return v;
}

// The local scan of this thread's slice: prefix[j] = the sum of the warp slice before vector j
// (exactly the `exclusive` of scan.cu's scan_warp_slice); returns the warp slice's total.
template <typename T, int kVecs>
__device__ __forceinline__ T local_scan(const T* in, unsigned n, unsigned long long base, const T* buffer, int warp, int lane,
                                        T (&prefix)[kVecs]) {
    const bool whole = element_index<kVecs>(base, warp, kVecs - 1, 31, 3) < n;
    T lane_prefix[kVecs];
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        Vec4<T> v = read_vector<T, kVecs>(in, n, base, whole, buffer, warp, j, lane);
        scan_vector(v);
        lane_prefix[j] = warp_inclusive_scan(v.v[3], lane);
    }
    T carry = T(0);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const T step_total = __shfl_sync(FULL_MASK, lane_prefix[j], 31);
        const T lanes_before = __shfl_up_sync(FULL_MASK, lane_prefix[j], 1);
        prefix[j] = (lane == 0) ? carry : ScanAdd<T>::add(carry, lanes_before);
        carry = ScanAdd<T>::add(carry, step_total);
    }
    return carry;
}

// The stores of a locally scanned tile once its warp offset is known: out = offset + (prefix[j] +
// the vector's inclusive scan), scan.cu's order (scan_warp_slice, then store_tile).
template <typename T, int kVecs>
__device__ __forceinline__ void store_scanned(const T* in, T* out, unsigned n, unsigned long long base, const T* buffer, int warp,
                                              int lane, T offset, const T (&prefix)[kVecs]) {
    const bool whole = element_index<kVecs>(base, warp, kVecs - 1, 31, 3) < n;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        Vec4<T> v = read_vector<T, kVecs>(in, n, base, whole, buffer, warp, j, lane);
        scan_vector(v);
#pragma unroll
        for (int e = 0; e < 4; ++e) v.v[e] = ScanAdd<T>::add(offset, ScanAdd<T>::add(prefix[j], v.v[e]));
        if (whole) {
            store_16(out + element_index<kVecs>(base, warp, j, lane, 0), v);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const unsigned long long i = element_index<kVecs>(base, warp, j, lane, e);
                if (i < n) out[i] = v.v[e];
            }
        }
    }
}

// The persistent scan described at the top. kLag: iterations from a tile's local scan to its
// stores (1 or 2); kWindow: status words per lane in the look-back window (scan.cu's look_back).
template <typename T, int kVecs, int kStages, int kLag, int kWindow>
__device__ __forceinline__ void deferred_scan(const T* in, T* out, unsigned long long* status, unsigned* tile_counter, unsigned n,
                                              unsigned epoch, unsigned tiles) {
    static_assert(kLag == 1 || kLag == 2, "the look-back of tile k or of tile k - 1");
    static_assert(kStages >= kLag + 2, "at least one tile in flight while one is scanned");
    constexpr int kIssuedFirst = kStages - kLag;      // tiles issued before tile 0 is waited for
    constexpr int kInFlight = kStages - kLag - 1;     // groups younger than the scanned tile's
    constexpr int kRing = kStages + 2;                // tickets (see the top)
    constexpr int kSlots = kLag + 2;                  // warp sums / offsets (see the top)
    __shared__ unsigned ring[kRing];
    __shared__ T offsets[kSlots][32];
    __shared__ T aggregates[kSlots];
    T* buffers = dynamic_shared<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned tile_elements = blockDim.x * kVecs * 4;
    TileSource<0> source{tile_counter, tiles};  // thread 0's only

    if (threadIdx.x == 0)
        for (int s = 0; s <= kIssuedFirst; ++s) ring[s] = source.settle(source.draw());
    __syncthreads();
    for (int s = 0; s < kIssuedFirst; ++s) issue_tile_copies<T, kVecs>(in, n, ring[s], tiles, buffers + s * tile_elements, warp, lane);

    T kept[kLag][kVecs];  // kept[d]: the vector prefixes of tile index k - 1 - d (not yet stored)
    for (unsigned k = 0;; ++k) {
        if (k >= kLag && ring[(k - kLag) % kRing] >= tiles) break;  // stored every tile it had
        const int slot = static_cast<int>(k % kSlots);
        const unsigned tile = ring[k % kRing];
        unsigned drawn = 0;
        if (threadIdx.x == 0) {
            drawn = source.draw();  // settled after the barrier
            if (k + 1 >= kLag) {    // the line the look-back of this iteration reads first, one scan early
                const unsigned looked = ring[(k + 1 - kLag) % kRing];
                if (looked < tiles && looked > 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(status + looked - 1) : "memory");
            }
        }

        // Scan tile index k locally.
        wait_copies<kInFlight>();
        T fresh[kVecs];
        if (tile < tiles) {
            const T* buffer = buffers + static_cast<int>(k % kStages) * tile_elements;
            const T total = local_scan<T, kVecs>(in, n, tile_start<kVecs>(tile), buffer, warp, lane, fresh);
            if (lane == 0) offsets[slot][warp] = total;
        } else {
#pragma unroll
            for (int j = 0; j < kVecs; ++j) fresh[j] = T(0);
        }
        __syncthreads();  // X_k: tile k's warp totals; tile k - kLag's offsets (written before X_k)

        if (threadIdx.x == 0) ring[(k + kIssuedFirst + 1) % kRing] = source.settle(drawn);
        if (warp == 0) {
            if (tile < tiles) {  // tile k: warp offsets within the tile, and its aggregate published
                const T total = (lane < static_cast<int>(blockDim.x >> 5)) ? offsets[slot][lane] : T(0);
                const T inclusive = warp_inclusive_scan(total, lane);
                const T warps_before = __shfl_up_sync(FULL_MASK, inclusive, 1);
                const T aggregate = __shfl_sync(FULL_MASK, inclusive, 31);
                offsets[slot][lane] = (lane == 0) ? T(0) : warps_before;
                if (lane == 0) {
                    aggregates[slot] = aggregate;
                    // Tile 0's prefix is its aggregate: published at once, its look-back reads nothing.
                    publish_status(status, tile, ScanAdd<T>::bits(aggregate), epoch, tile == 0 ? STATUS_PREFIX : STATUS_AGGREGATE);
                }
            }
            if (k + 1 >= kLag) {  // the look-back of tile index k - kLag + 1
                const unsigned index = k + 1 - kLag;
                const int looked_slot = static_cast<int>(index % kSlots);
                const unsigned looked = ring[index % kRing];
                if (looked < tiles) {
                    const T exclusive = look_back<T, kWindow>(status, epoch, looked, lane);
                    if (lane == 0 && looked > 0)
                        publish_status(status, looked, ScanAdd<T>::bits(ScanAdd<T>::add(exclusive, aggregates[looked_slot])), epoch,
                                       STATUS_PREFIX);
                    const T warps_before = offsets[looked_slot][lane];
                    offsets[looked_slot][lane] = (lane == 0) ? exclusive : ScanAdd<T>::add(exclusive, warps_before);
                }
            }
        }

        // Store tile index k - kLag (its offsets were final before X_k), then refill its buffer
        // with tile index k - kLag + kStages.
        const int refill = static_cast<int>((k + kIssuedFirst) % kStages);  // = (k - kLag) mod kStages
        T* const buffer = buffers + refill * tile_elements;
        if (k >= kLag) {
            const unsigned stored = ring[(k - kLag) % kRing];
            if (stored < tiles)
                store_scanned<T, kVecs>(in, out, n, tile_start<kVecs>(stored), buffer, warp, lane,
                                        offsets[(k - kLag) % kSlots][warp], kept[kLag - 1]);
        }
        issue_tile_copies<T, kVecs>(in, n, ring[(k + kIssuedFirst) % kRing], tiles, buffer, warp, lane);
#pragma unroll
        for (int d = kLag - 1; d > 0; --d)
#pragma unroll
            for (int j = 0; j < kVecs; ++j) kept[d][j] = kept[d - 1][j];
#pragma unroll
        for (int j = 0; j < kVecs; ++j) kept[0][j] = fresh[j];
    }
}

template <typename T, int kVecs, int kStages, int kLag, int kWindow>
__global__ void __launch_bounds__(1024) scan_lookback_async_deferred(const T* in, T* out, unsigned long long* status,
                                                                     unsigned* tile_counter, unsigned n, unsigned epoch,
                                                                     unsigned tiles) {
    deferred_scan<T, kVecs, kStages, kLag, kWindow>(in, out, status, tile_counter, n, epoch, tiles);
}
