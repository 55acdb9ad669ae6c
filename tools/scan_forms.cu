// Experimental forms of the look-back scan, for tools/tune_scan.py only (no run holds them).
// tune_scan.py compiles kernels/scan.cu with this file appended, so everything there is in scope.
//
// What each knob tests (docs/perf-notes.md has the outcome):
//   kEarly: LookBackPrefix's early read, as decoupled_lookback_early has it;
//   kPersistent: one wave of blocks loops over tiles; each block takes its next ticket while it
//     scans the current tile, so the ticket's round trip and the block launch are hidden.
//   kStreamingStore: the output is written with st.global.cs (evict first).

__device__ __forceinline__ unsigned take_ticket(unsigned* counter, unsigned last_ticket) {
    const unsigned ticket = atomicAdd(counter, 1u);
    if (ticket == last_ticket) *counter = 0;  // every ticket of this launch is taken: reset for the next
    return ticket;
}

template <typename T>
__device__ __forceinline__ void store_16_streaming(T* p, const Vec4<T>& r) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
                 "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[0]))), "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[1]))),
                 "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[2]))), "r"(static_cast<unsigned>(ScanAdd<T>::bits(r.v[3])))
                 : "memory");
}

template <typename T, int kVecs, int kWindow, bool kEarly, bool kPersistent, bool kStreamingStore>
__global__ void __launch_bounds__(1024) scan_lookback_form(const T* in, T* out, unsigned long long* status, unsigned* tile_counter,
                                                           unsigned n, unsigned epoch, unsigned tiles) {
    __shared__ unsigned tickets[2];
    __shared__ T warp_offsets[32];
    const int lane_id = threadIdx.x & 31, warp_id = threadIdx.x >> 5;
    const unsigned last_ticket = kPersistent ? tiles + gridDim.x - 1 : gridDim.x - 1;
    if (threadIdx.x == 0) tickets[0] = take_ticket(tile_counter, last_ticket);
    __syncthreads();
    for (int current = 0;; current ^= 1) {
        const unsigned tile = tickets[current];
        if (tile >= tiles) break;
        // Laundered each turn: otherwise the compiler keeps every per-thread address of the loop in
        // registers across turns, and a persistent kernel at 64 registers spills (ptxas: 120 bytes).
        int lane = lane_id, warp = warp_id;
        asm volatile("" : "+r"(lane), "+r"(warp));
        if (kPersistent && threadIdx.x == 0) tickets[current ^ 1] = take_ticket(tile_counter, last_ticket);
        const unsigned long long base = tile_start<kVecs>(tile);
        uint4 raw[kVecs];
        const bool whole = issue_tile_loads<T, kVecs>(in, n, base, warp, lane, raw);
        LookBackPrefix<T, kWindow, kEarly> prefix{status, epoch};
        prefix.loads_in_flight(tile, lane, warp);
        TileInRegisters<T, kVecs> regs;
        unpack_tile<T, kVecs>(in, n, base, warp, lane, whole, raw, regs);
        scan_warp_slice(lane, regs);
        if (lane == 0) warp_offsets[warp] = regs.warp_total;
        __syncthreads();
        tile_offsets(warp_offsets, tile, prefix, lane, warp);
        __syncthreads();
        if (kStreamingStore && element_index<kVecs>(base, warp, kVecs - 1, 31, 3) < n) {
            const T offset = warp_offsets[warp];
#pragma unroll
            for (int j = 0; j < kVecs; ++j) {
#pragma unroll
                for (int e = 0; e < 4; ++e) regs.x[j].v[e] = ScanAdd<T>::add(offset, regs.x[j].v[e]);
                store_16_streaming(out + element_index<kVecs>(base, warp, j, lane, 0), regs.x[j]);
            }
        } else {
            store_tile(out, n, base, warp, lane, warp_offsets[warp], regs);
        }
        if (!kPersistent) break;
    }
}
