// The look-back scan of kernels/scan.cu made persistent, its next tiles copied global -> shared by
// asynchronous copies while the current tile is scanned and looks back (launches and
// the measured figures: kernels/scan.py, docs/perf-notes.md "Async copies into shared memory").
//
// Why: scan_decoupled_lookback holds its tile in registers, one 1024-thread block per SM, so while
// its first warp spins on the look-back (about 2.7 us per tile on the H200) the SM has no loads in
// flight, and the scan stops at 77 % of a copy; the same tile scan with its prefix handed to it
// runs at 98 %. Here one wave of blocks loops over tiles taken by atomic ticket, and each block
// keeps kStages - 1 tiles ahead of the one it scans in flight as cp.async copies into a ring of
// kStages tile buffers in dynamic shared memory. The copies hold no registers (a register-staged
// persistent prefetch spilled at the 64-register cap: perf-notes), so DRAM stays busy during the
// look-back and the next tile is already in shared memory when it ends.
//
// This file includes scan.cu, not the other way round: scan.cu's text is part of the identity
// hash of every scan variant, and adding this kernel there would have changed all of them.
#include "scan.cu"

// 16 bytes global -> shared, cached in L2 only (.cg: each byte is read once), asynchronous: the
// thread goes on at once and cp.async.wait_group says when its own copies have landed. sm_80+.
__device__ __forceinline__ void copy_async_16(void* shared_dst, const void* global_src) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(global_src) : "memory");
}

__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Wait until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

__device__ __forceinline__ uint4 load_shared_16(const void* p) {
    uint4 r;
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "r"(a) : "memory");
    return r;
}

// Vector v of a tile (v = (warp x kVecs + j) x 32 + lane, the layout of scan.cu's fast tile scan)
// sits at vector v of its shared buffer too: each thread copies exactly the vectors it will read
// back, so its own cp.async.wait_group is all the synchronisation the data needs (no barrier), and
// 32 lanes reading 32 consecutive 16-byte vectors is conflict-free.
template <int kVecs>
__device__ __forceinline__ int vector_in_tile(int warp, int j, int lane) {
    return (warp * kVecs + j) * 32 + lane;
}

// Start the copies of this thread's vectors of `tile` into `buffer`, if its warp's whole slice is
// in range; a slice that runs past n (the last tile) is read from global memory when scanned.
// Always commits a group (an empty one for a tile past the end), so that wait_copies<kStages - 1>
// keeps meaning "the current tile's group has landed".
template <typename T, int kVecs>
__device__ __forceinline__ void issue_tile_copies(const T* in, unsigned n, unsigned tile, unsigned tiles, T* buffer, int warp, int lane) {
    if (tile < tiles) {
        const unsigned long long base = tile_start<kVecs>(tile);
        if (element_index<kVecs>(base, warp, kVecs - 1, 31, 3) < n) {
#pragma unroll
            for (int j = 0; j < kVecs; ++j)
                copy_async_16(buffer + vector_in_tile<kVecs>(warp, j, lane) * 4, in + element_index<kVecs>(base, warp, j, lane, 0));
        }
    }
    commit_copies();
}

// This thread's vectors of the tile from its shared buffer (or, for a slice past n, element by
// element from global memory with zeros past the end, as scan.cu's unpack_tile does).
template <typename T, int kVecs>
__device__ __forceinline__ void read_tile(const T* in, unsigned n, unsigned long long base, const T* buffer, int warp, int lane,
                                          TileInRegisters<T, kVecs>& regs) {
    if (element_index<kVecs>(base, warp, kVecs - 1, 31, 3) < n) {
#pragma unroll
        for (int j = 0; j < kVecs; ++j) regs.x[j] = as_vec4<T>(load_shared_16(buffer + vector_in_tile<kVecs>(warp, j, lane) * 4));
    } else {
        for_each_element<kVecs>(base, warp, lane, [&](int j, int e, unsigned long long i) { regs.x[j].v[e] = (i < n) ? in[i] : T(0); });
    }
}

// Diagnostic forms (tools/tune_scan_async.py; the registered kernel is form 0). Bits:
//   PREFIX_GIVEN  the tile's exclusive prefix read from tile_exclusive[tile] (no look-back, no
//                 status words): what the async pipeline costs alone;
//   BLOCK_ORDER   tiles blockIdx.x + d x gridDim.x instead of atomic tickets (no atomic; needs the
//                 whole grid resident, which one wave by occupancy is);
//   EARLY_REFILL  a freed buffer is refilled right after the tile's first barrier, before its look-
//                 back (kStages tiles in flight during the look-back, not kStages - 1);
//   AS_3666C3D    the ticket tested at its draw (thread 0 waits for the atomic before it scans)
//                 and the status line prefetched kStages - 1 tiles early, as in commit 3666c3d.
#define ASYNC_FORM_PREFIX_GIVEN 1
#define ASYNC_FORM_BLOCK_ORDER 2
#define ASYNC_FORM_EARLY_REFILL 4
#define ASYNC_FORM_AS_3666C3D 8
#define ASYNC_NO_TICKET 0xffffffffu

// Thread 0's source of tiles. draw() starts a draw (an atomicAdd whose result nothing waits for
// yet); settle() turns it into a tile, or `tiles` once past the end, after the tile's first
// barrier, so that the atomic's round trip overlaps the scan. Every block settles exactly one
// ticket past the end (after that it draws no more): tiles + gridDim.x tickets in all, and the
// block that settles the very last one resets the counter for the next call (every other draw has
// happened by then).
template <int kForm>
struct TileSource {
    unsigned* counter;
    unsigned tiles;
    unsigned draws = 0;
    bool past_end = false;

    __device__ unsigned draw() {
        if (kForm & ASYNC_FORM_BLOCK_ORDER) return blockIdx.x + (draws++) * gridDim.x;
        return past_end ? ASYNC_NO_TICKET : atomicAdd(counter, 1u);
    }
    __device__ unsigned settle(unsigned ticket) {
        if (ticket == ASYNC_NO_TICKET) return tiles;
        if (ticket >= tiles) {
            if (!(kForm & ASYNC_FORM_BLOCK_ORDER)) {
                past_end = true;
                if (ticket == tiles + gridDim.x - 1) *counter = 0;
            }
            return tiles;
        }
        return ticket;
    }
};

// The persistent single-pass scan. Dynamic shared memory: kStages buffers of one tile each
// (blockDim.x x kVecs x 16 bytes). The grid is one wave by occupancy (kernels/scan.py).
//
// A block's k-th tile lives in buffer k % kStages; its ticket in tickets[k % kRing]. Iteration k:
//   - issue the copies of tile k + kStages - 1 into the buffer tile k - 1 used (with EARLY_REFILL:
//     tile k + kStages into tile k's own buffer, after the first barrier);
//   - thread 0 prefetches the current tile's predecessor's status line into L2 and starts the
//     draw of tile k + kRing's ticket (settled after the first barrier);
//   - wait for tile k's own copies, scan it in registers (scan.cu's warp-slice scan), look back
//     (scan.cu's LookBackPrefix, first warp), store.
// Deadlock-free whatever order blocks start and however many are resident: tickets are drawn
// only by running blocks, and each block scans its tickets in increasing order, so the smallest
// unpublished tile's block is never waiting for anything but tiles before it, all published.
// Barriers per tile: two, as in scan.cu (the warp totals, then the offsets). The tickets ring is
// written by thread 0 after the first and read by all after the second; a buffer is refilled
// only after a barrier that follows every thread's reads of it.
template <typename T, int kVecs, int kStages, int kForm, typename Prefix>
__device__ __forceinline__ void async_copy_scan(const T* in, T* out, unsigned* tile_counter, unsigned n, unsigned tiles,
                                                const Prefix& prefix) {
    static_assert(kStages >= 2, "one buffer scanned, at least one in flight");
    constexpr bool kEarly = (kForm & ASYNC_FORM_EARLY_REFILL) != 0;
    constexpr bool kOld = (kForm & ASYNC_FORM_AS_3666C3D) != 0;
    constexpr int kAhead = kEarly ? kStages : kStages - 1;  // tiles issued before tile 0 is waited for
    constexpr int kRing = kAhead + 1;                        // tickets known at once
    __shared__ unsigned tickets[kRing];
    __shared__ T warp_offsets[32];
    T* buffers = dynamic_shared<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned tile_elements = blockDim.x * kVecs * 4;
    TileSource<kForm> source{tile_counter, tiles};  // thread 0's only

    if (threadIdx.x == 0)
        for (int s = 0; s < kRing; ++s) tickets[s] = source.settle(source.draw());
    __syncthreads();
    for (int s = 0; s < kAhead; ++s) {
        issue_tile_copies<T, kVecs>(in, n, tickets[s], tiles, buffers + s * tile_elements, warp, lane);
        if (kOld && tickets[s] < tiles) prefix.loads_in_flight(tickets[s], lane, warp);
    }

    for (unsigned k = 0;; ++k) {
        const int slot = static_cast<int>(k % kRing);
        const unsigned tile = tickets[slot];
        if (tile >= tiles) break;  // every later ticket of this block is past the end too
        T* const buffer = buffers + static_cast<int>(k % kStages) * tile_elements;
        if (!kEarly) {
            const unsigned ahead = tickets[(k + kAhead) % kRing];
            issue_tile_copies<T, kVecs>(in, n, ahead, tiles, buffers + static_cast<int>((k + kAhead) % kStages) * tile_elements, warp, lane);
            if (kOld && ahead < tiles) prefix.loads_in_flight(ahead, lane, warp);
        }
        if (!kOld) prefix.loads_in_flight(tile, lane, warp);  // about a scan before the look-back reads it
        unsigned drawn = 0;
        if (threadIdx.x == 0) {
            drawn = source.draw();
            if (kOld) drawn = source.settle(drawn);  // 3666c3d: thread 0 waited for the atomic here
        }

        wait_copies<kStages - 1>();  // all but the kStages - 1 groups committed last: tile k has landed
        const unsigned long long base = tile_start<kVecs>(tile);
        TileInRegisters<T, kVecs> regs;
        read_tile<T, kVecs>(in, n, base, buffer, warp, lane, regs);
        scan_warp_slice(lane, regs);
        __syncwarp();  // this warp's lanes have read warp_offsets[warp] of the tile before
        if (lane == 0) warp_offsets[warp] = regs.warp_total;
        __syncthreads();
        if (threadIdx.x == 0) tickets[slot] = kOld ? drawn : source.settle(drawn);  // every thread has read tile k's ticket
        if (kEarly) {  // every thread has read tile k from this buffer (the barrier above)
            const unsigned ahead = tickets[(k + kAhead) % kRing];
            issue_tile_copies<T, kVecs>(in, n, ahead, tiles, buffer, warp, lane);
        }
        tile_offsets(warp_offsets, tile, prefix, lane, warp);
        __syncthreads();
        store_tile(out, n, base, warp, lane, warp_offsets[warp], regs);
    }
}

template <typename T, int kVecs, int kStages>
__global__ void __launch_bounds__(1024) scan_lookback_async_copy(const T* in, T* out, unsigned long long* status, unsigned* tile_counter,
                                                                  unsigned n, unsigned epoch, unsigned tiles) {
    async_copy_scan<T, kVecs, kStages, 0>(in, out, tile_counter, n, tiles, LookBackPrefix<T, 1, true>{status, epoch});
}

// The diagnostic forms (bits above). tile_exclusive: each tile's exclusive prefix, read by the
// PREFIX_GIVEN forms only (tools/tune_scan_async.py computes it with scan.cu's tile_reduce and
// scan_tile_sums_exclusive).
template <typename T, int kVecs, int kStages, int kForm>
__global__ void __launch_bounds__(1024) scan_async_copy_form(const T* in, T* out, unsigned long long* status, unsigned* tile_counter,
                                                             unsigned n, unsigned epoch, unsigned tiles, const T* tile_exclusive) {
    if (kForm & ASYNC_FORM_PREFIX_GIVEN)
        async_copy_scan<T, kVecs, kStages, kForm>(in, out, tile_counter, n, tiles, GivenPrefix<T>{tile_exclusive});
    else
        async_copy_scan<T, kVecs, kStages, kForm>(in, out, tile_counter, n, tiles, LookBackPrefix<T, 1, true>{status, epoch});
}
