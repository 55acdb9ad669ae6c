// A probe of decoupled_lookback_early, for tools/probe_scan_early.py only (appended to kernels/scan.cu).
// Modes, after the tile's loads are issued:
//   0 nothing (decoupled_lookback); 1 an empty asm with a memory clobber (no read);
//   2 the first warp reads one status word and waits for it (no look-back);
//   3 the early read (decoupled_lookback_early); 4 the same, counting the tiles it found their
//   prefix for; 5 counting, and the first warp reads again while the block's other warps are
//   still waiting for their loads (they arrive at the barrier one by one), not once;
//   6, 7, 8 the first warp sleeps 500, 1000, 2000 ns (__nanosleep) instead of reading;
//   9 the first warp reads tile 0's status word, not its predecessor's;
//   10 every warp reads its predecessor's status word and waits for it;
//   11 lane 0 of the first warp prefetches its predecessor's status word into L2 (no wait);
//   12 every lane of the first warp prefetches one word of the look-back window into L2.
__device__ unsigned long long early_hits;
__device__ unsigned long long dummy_sink;

template <typename T, int kMode>
__global__ void __launch_bounds__(1024) scan_early_probe(const T* in, T* out, unsigned long long* status, unsigned* tile_counter,
                                                         unsigned n, unsigned epoch) {
    constexpr int kVecs = 8;
    __shared__ unsigned tile_shared;
    __shared__ int arrived;
    __shared__ T warp_offsets[32];
    if (threadIdx.x == 0) {
        const unsigned ticket = atomicAdd(tile_counter, 1u);
        if (ticket == gridDim.x - 1) *tile_counter = 0;
        tile_shared = ticket;
        arrived = 0;
    }
    __syncthreads();
    const unsigned tile = tile_shared;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned long long base = tile_start<kVecs>(tile);
    uint4 raw[kVecs];
    const bool whole = issue_tile_loads<T, kVecs>(in, n, base, warp, lane, raw);
    LookBackPrefix<T, 1, true> prefix{status, epoch};
    if (kMode == 1) asm volatile("" ::: "memory");
    if (kMode >= 6 && kMode <= 8 && warp == 0) __nanosleep(kMode == 6 ? 500 : kMode == 7 ? 1000 : 2000);
    if ((kMode == 2 || kMode == 9) && warp == 0 || kMode == 10) {
        const unsigned long long word = read_status(status, (tile > 0 && kMode != 9) ? tile - 1 : 0);
        if (word == 0x123456789ull) dummy_sink = word;  // consumed, so the warp waits for the read
    }
    if ((kMode == 11 && threadIdx.x == 0 && tile > 0) || (kMode == 12 && warp == 0 && tile > lane))
        asm volatile("prefetch.global.L2 [%0];" ::"l"(status + tile - 1 - lane) : "memory");
    if (kMode >= 3 && kMode <= 5) prefix.loads_in_flight(tile, lane, warp);
    TileInRegisters<T, kVecs> regs;
    unpack_tile<T, kVecs>(in, n, base, warp, lane, whole, raw, regs);
    scan_warp_slice(lane, regs);
    if (lane == 0) {
        warp_offsets[warp] = regs.warp_total;
        if (kMode == 5) atomicAdd(&arrived, 1);
    }
    if (kMode == 5 && warp == 0) {
        const int warps = blockDim.x >> 5;
        while (!prefix.known && __shfl_sync(FULL_MASK, *reinterpret_cast<volatile int*>(&arrived), 0) < warps)
            prefix.known = look_back<T, 1>(status, epoch, tile, lane, 1, prefix.early);
    }
    if ((kMode == 4 || kMode == 5) && threadIdx.x == 0 && prefix.known) atomicAdd(&early_hits, 1ull);
    __syncthreads();
    tile_offsets(warp_offsets, tile, prefix, lane, warp);
    __syncthreads();
    store_tile(out, n, base, warp, lane, warp_offsets[warp], regs);
}
