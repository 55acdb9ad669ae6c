// A persistent single-pass scan with no look-back chain (launches: kernels/scan_rounds.py,
// the measured figures: docs/perf-notes.md, "Every block adds up every round").
//
// Why: the async-copy scans of scan_async.cu and scan_async_deferred.cu stream at 86-92 % of a copy
// with their prefix handed to them, but take 870-1060 us with a look-back. In a grid that moves in
// lock step, the ~132 tiles scanned at once publish together, so each round's inclusive prefixes
// wait for the previous round's to be published and read back: a chain of dependent L2 round
// trips per round, and each round trip waits behind the copies that every SM keeps in flight.
//
// Here no tile waits for another tile's prefix. The grid is one wave (a cooperative launch: every
// block is resident, or the launch fails). Block b scans tiles b, b + G, b + 2G, ...: round r is
// tiles rG .. rG + G - 1. Each block publishes its tile's sum (its aggregate) as soon as it knows
// it, and reads back the aggregates of the whole round kLag iterations later, by which time they
// have long been published. Every block adds up each round's G aggregates in the same fixed
// order, so every block holds the same sum of all earlier rounds in a register: a tile's prefix is
// that running sum plus the aggregates of the blocks before it in its round. The cost per round
// is one read of G status words per block (for G = 132, 1 KB, from L2), off the tiles' path.
//
// Per iteration i, with its tile of round i (stage A) and its tile of round i - kLag (stage B), and
// one barrier:
//   - the gathering warp (the last) starts reading round i - kLag's G status words, kGather a lane;
//   - stage A: wait for tile i's copies, sum it, warp totals to shared memory;
//   - the gathering warp waits for its words (published kLag iterations ago; a re-read only when a
//     block lags that far), adds up the round's sums (those before this block, and all), and turns
//     tile i - kLag's warp totals (kept since its stage A) into warp offsets from the running sum;
//   - barrier; warp 0 publishes tile i's sum while every warp does stage B: scan tile i - kLag,
//     store it.
// Two kernels differ in where a tile waits the kLag iterations between its stages:
//   - scan_round_sums: in its shared buffer, refilled after stage B, so kLag + 1 buffers are held
//     and kStages - kLag - 1 stream (any block size; block 1024's);
//   - scan_round_sums_held: in registers (at most 512 threads, which may hold 128 registers each),
//     its buffer refilled right after stage A, so every buffer streams (block 512's, and the
//     faster: 550 against 608 us at 2^28, docs/perf-notes.md).
// Floating point: every block sums the same values in the same order, so float results are the
// same from run to run on a given grid (the look-back scans' are not).
//
// This file includes scan_async.cu (its copy helpers and buffer layout) and does not change it:
// both files' text is part of other variants' identity hashes.
#include "scan_async.cu"

// Diagnostic forms (tools/tune_scan_rounds.py; the registered kernel is form 0 and never touches
// *spins). Bits:
//   COUNT_SPINS   count in *spins every re-read of a status word that was not yet published;
//   NO_WAIT       take a round's status words as first read, published or not (wrong output:
//                 times what the waits for other blocks cost);
//   NO_SUM        stage A publishes 0 without reading its tile (wrong output: times the second
//                 read of each tile from shared memory; scan_round_sums only).
#define ROUNDS_FORM_COUNT_SPINS 1
#define ROUNDS_FORM_NO_WAIT 2
#define ROUNDS_FORM_NO_SUM 4
#define SPIN_LIMIT (1u << 23)

__device__ __forceinline__ bool aggregate_published(unsigned long long word, unsigned epoch) {
    return ((word >> 2) & STATUS_EPOCH_MASK) == epoch && (word & 3u) == STATUS_AGGREGATE;
}

// The gathering warp's part. start: read round `round`'s G status words, kWords a lane (lane l's
// k-th is block 32k + l's); they land while the warp does other work.
template <int kWords>
__device__ __forceinline__ void start_gather(unsigned long long (&words)[kWords], const unsigned long long* status, unsigned round,
                                             unsigned tiles, int lane) {
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        const unsigned position = static_cast<unsigned>(32 * k + lane);
        const unsigned long long tile = static_cast<unsigned long long>(round) * gridDim.x + position;
        words[k] = (position < gridDim.x && tile < tiles) ? read_status(status, static_cast<long long>(tile)) : 0ull;
    }
}

// finish: wait until each word is published (a re-read only when a block lags that far), add up the
// round's sums (those of the blocks before this one, and all), and turn this block's tile of that
// round into warp offsets: offsets[w] = running + sums before + warps before w (`totals`: the tile's
// warp totals). `running` (the sum of every earlier round) moves on by the round's total. The same
// values in the same order in every block: the same running sum everywhere.
template <typename T, int kWords, int kForm>
__device__ __forceinline__ void finish_gather(unsigned long long (&words)[kWords], const unsigned long long* status, unsigned round,
                                              unsigned tiles, unsigned epoch, unsigned long long* spins, const T* totals, T* offsets,
                                              T& running, int lane) {
    T before = T(0), all = T(0);
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        const unsigned position = static_cast<unsigned>(32 * k + lane);
        const unsigned long long tile = static_cast<unsigned long long>(round) * gridDim.x + position;
        if (position < gridDim.x && tile < tiles) {
            unsigned rereads = 0;
            while (!(kForm & ROUNDS_FORM_NO_WAIT) && !aggregate_published(words[k], epoch)) {
                if (kForm & ROUNDS_FORM_COUNT_SPINS) atomicAdd(spins, 1ull);
                // Each re-read is an L2 round trip (0.5 us or more), so this is seconds: a block that
                // has not published by then never will (a bug, or a grid not all resident, which the
                // cooperative launch rules out). A launch error, not a hang.
                if (++rereads == SPIN_LIMIT) __trap();
                words[k] = read_status(status, static_cast<long long>(tile));
            }
            const T value = ScanAdd<T>::from_bits(words[k] >> 32);
            all = ScanAdd<T>::add(all, value);
            if (position < blockIdx.x) before = ScanAdd<T>::add(before, value);
        }
    }
    before = warp_all_sum(before);
    all = warp_all_sum(all);
    const T tile_exclusive = ScanAdd<T>::add(running, before);
    running = ScanAdd<T>::add(running, all);
    const int warps = static_cast<int>(blockDim.x >> 5);
    const T inclusive = warp_inclusive_scan((lane < warps) ? totals[lane] : T(0), lane);
    const T warps_before = __shfl_up_sync(FULL_MASK, inclusive, 1);
    offsets[lane] = (lane == 0) ? tile_exclusive : ScanAdd<T>::add(tile_exclusive, warps_before);
}

// Warp 0 publishes the sum of a tile from its warp totals.
template <typename T>
__device__ __forceinline__ void publish_tile_sum(unsigned long long* status, unsigned tile, unsigned tiles, unsigned epoch, const T* totals,
                                                 int lane) {
    const int warps = static_cast<int>(blockDim.x >> 5);
    const T aggregate = warp_all_sum((lane < warps) ? totals[lane] : T(0));
    if (lane == 0 && tile < tiles) publish_status(status, tile, ScanAdd<T>::bits(aggregate), epoch, STATUS_AGGREGATE);
}

template <typename T, int kVecs>
__device__ __forceinline__ T thread_sum(const TileInRegisters<T, kVecs>& regs) {
    T sum = T(0);
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) sum = ScanAdd<T>::add(sum, regs.x[j].v[e]);
    return sum;
}

// Rounds 0 .. kStages - 1 into buffers 0 .. kStages - 1: kStages groups, one per round (empty past
// the end).
template <typename T, int kVecs, int kStages>
__device__ __forceinline__ void issue_first_rounds(const T* in, unsigned n, unsigned tiles, T* buffers, int warp, int lane) {
    const unsigned tile_elements = blockDim.x * kVecs * 4;
    for (int s = 0; s < kStages; ++s)
        issue_tile_copies<T, kVecs>(in, n, static_cast<unsigned>(s) * gridDim.x + blockIdx.x, tiles, buffers + s * tile_elements, warp, lane);
}

// The lagged tiles held in shared memory. Dynamic shared memory: kStages tile buffers (blockDim.x x
// kVecs x 16 bytes each), of which kLag + 1 are held and the rest stream in. The last warp gathers
// a round's status words, kGather a lane: needs gridDim.x <= 32 x kGather (the plan clamps).
template <typename T, int kVecs, int kStages, int kLag, int kGather, int kForm>
__global__ void __launch_bounds__(1024) scan_round_sums(const T* in, T* out, unsigned long long* status, unsigned n, unsigned epoch,
                                                        unsigned tiles, unsigned long long* spins) {
    static_assert(kLag >= 1, "a round's aggregates are read back at least one iteration after they are published");
    static_assert(kStages >= kLag + 2, "kLag + 1 buffers held (one summed, kLag waiting for their round), one at least in flight");
    constexpr int kSlots = kLag + 1;  // tiles whose warp totals are kept: round i back to round i - kLag
    __shared__ T warp_totals[kSlots][32];
    __shared__ T warp_offsets[2][32];  // by round parity: the gathering warp writes the next while others read these
    T* const buffers = dynamic_shared<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gathering_warp = static_cast<int>(blockDim.x >> 5) - 1;  // warp 0 publishes; another warp gathers
    const unsigned grid = gridDim.x, block = blockIdx.x;
    const unsigned tile_elements = blockDim.x * kVecs * 4;
    const unsigned rounds = (tiles + grid - 1) / grid;
    T running = T(0);  // the gathering warp's: the sum of every round before the one stage B stores

    // Later, one group per iteration from iteration kLag on, so round r's copies are always group r,
    // and wait_copies<kStages - kLag - 1> before stage A of round i means "round i has landed" (in
    // iterations before kLag it waits for a little more than it needs).
    issue_first_rounds<T, kVecs, kStages>(in, n, tiles, buffers, warp, lane);

    for (unsigned i = 0; i < rounds + kLag; ++i) {
        const bool stage_a = i < rounds;
        const bool stage_b = i >= static_cast<unsigned>(kLag);
        const unsigned round_b = i - kLag;
        const bool gathers = stage_b && warp == gathering_warp;
        unsigned long long words[kGather];
        if (gathers) start_gather<kGather>(words, status, round_b, tiles, lane);

        if (stage_a) {  // tile i: its sum, from its shared buffer
            const unsigned tile = i * grid + block;
            wait_copies<kStages - kLag - 1>();
            T sum = T(0);
            if (tile < tiles && !(kForm & ROUNDS_FORM_NO_SUM)) {
                TileInRegisters<T, kVecs> regs;
                read_tile<T, kVecs>(in, n, tile_start<kVecs>(tile), buffers + static_cast<int>(i % kStages) * tile_elements, warp, lane, regs);
                sum = thread_sum(regs);
            }
            sum = warp_all_sum(sum);
            if (lane == 0) warp_totals[i % kSlots][warp] = sum;
        }
        // Tile i - kLag's warp totals are complete since the barrier of its own iteration.
        if (gathers)
            finish_gather<T, kGather, kForm>(words, status, round_b, tiles, epoch, spins, warp_totals[round_b % kSlots],
                                             warp_offsets[round_b & 1], running, lane);
        __syncthreads();  // tile i's warp totals and tile i - kLag's offsets are in shared memory

        if (stage_a && warp == 0) publish_tile_sum(status, i * grid + block, tiles, epoch, warp_totals[i % kSlots], lane);

        if (stage_b) {  // tile i - kLag: scan it from its buffer, store it, refill the buffer
            const unsigned tile = round_b * grid + block;
            T* const buffer = buffers + static_cast<int>(round_b % kStages) * tile_elements;
            const unsigned refill = (round_b + kStages) * grid + block;
            if (tile < tiles) {
                const unsigned long long base = tile_start<kVecs>(tile);
                TileInRegisters<T, kVecs> regs;
                read_tile<T, kVecs>(in, n, base, buffer, warp, lane, regs);
                scan_warp_slice(lane, regs);
                // This thread's own vectors, read back above and consumed by the scan: refill them
                // before the stores (with the refill after them: 652 against 733 us, perf-notes).
                issue_tile_copies<T, kVecs>(in, n, refill, tiles, buffer, warp, lane);
                store_tile(out, n, base, warp, lane, warp_offsets[round_b & 1][warp], regs);
            } else {
                issue_tile_copies<T, kVecs>(in, n, refill, tiles, buffer, warp, lane);
            }
        }
    }
}

// The lagged tiles held in registers: every shared buffer streams, refilled as soon as its tile is
// read into registers for its sum; that tile then waits kLag iterations in registers for its round.
// At 512 threads a thread may hold 128 registers: 8 vectors (64 KB tiles) and kLag = 2 such tiles.
// Dynamic shared memory: kStages tile buffers, all in flight. kForm: only COUNT_SPINS and NO_WAIT.
template <typename T, int kVecs, int kStages, int kLag, int kGather, int kForm>
__global__ void __launch_bounds__(512) scan_round_sums_held(const T* in, T* out, unsigned long long* status, unsigned n, unsigned epoch,
                                                            unsigned tiles, unsigned long long* spins) {
    static_assert(kLag >= 1, "a round's aggregates are read back at least one iteration after they are published");
    constexpr int kSlots = kLag + 1;
    __shared__ T warp_totals[kSlots][32];
    __shared__ T warp_offsets[2][32];
    T* const buffers = dynamic_shared<T>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gathering_warp = static_cast<int>(blockDim.x >> 5) - 1;
    const unsigned grid = gridDim.x, block = blockIdx.x;
    const unsigned tile_elements = blockDim.x * kVecs * 4;
    const unsigned rounds = (tiles + grid - 1) / grid;
    T running = T(0);
    TileInRegisters<T, kVecs> held[kLag];  // held[l]: the tile of round i - 1 - l, read at its stage A

    // One group per stage A from here on (the refill of round i + kStages), so round r's copies are
    // group r, and wait_copies<kStages - 1> before stage A of round i means "round i has landed".
    issue_first_rounds<T, kVecs, kStages>(in, n, tiles, buffers, warp, lane);

    for (unsigned i = 0; i < rounds + kLag; ++i) {
        const bool stage_a = i < rounds;
        const bool stage_b = i >= static_cast<unsigned>(kLag);
        const unsigned round_b = i - kLag;
        const bool gathers = stage_b && warp == gathering_warp;
        unsigned long long words[kGather];
        if (gathers) start_gather<kGather>(words, status, round_b, tiles, lane);

        TileInRegisters<T, kVecs> fresh;
        if (stage_a) {  // tile i into registers and its sum; its buffer streams the tile kStages rounds on
            const unsigned tile = i * grid + block;
            T* const buffer = buffers + static_cast<int>(i % kStages) * tile_elements;
            wait_copies<kStages - 1>();
            T sum = T(0);
            if (tile < tiles) {
                read_tile<T, kVecs>(in, n, tile_start<kVecs>(tile), buffer, warp, lane, fresh);
                sum = thread_sum(fresh);  // consumes every value read: the buffer may be refilled
            }
            issue_tile_copies<T, kVecs>(in, n, (i + kStages) * grid + block, tiles, buffer, warp, lane);
            sum = warp_all_sum(sum);
            if (lane == 0) warp_totals[i % kSlots][warp] = sum;
        }
        if (gathers)
            finish_gather<T, kGather, kForm>(words, status, round_b, tiles, epoch, spins, warp_totals[round_b % kSlots],
                                             warp_offsets[round_b & 1], running, lane);
        __syncthreads();

        if (stage_a && warp == 0) publish_tile_sum(status, i * grid + block, tiles, epoch, warp_totals[i % kSlots], lane);

        if (stage_b) {  // tile i - kLag from registers: scan, store
            const unsigned tile = round_b * grid + block;
            if (tile < tiles) {
                scan_warp_slice(lane, held[kLag - 1]);
                store_tile(out, n, tile_start<kVecs>(tile), warp, lane, warp_offsets[round_b & 1][warp], held[kLag - 1]);
            }
        }
#pragma unroll
        for (int l = kLag - 1; l > 0; --l) held[l] = held[l - 1];
        held[0] = fresh;
    }
}
