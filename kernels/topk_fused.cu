// Top-k in one launch: kernels/topk.cu's two stages fused. Launches: kernels/topk.py
// (`two_stage_b16_fused`); the design and the figures: docs/perf-notes.md, "One launch".
//
// Each CUDA block does block_max_select's work for one chunk of a row (kPerThread x blockDim.x
// consecutive groups) and writes its kGroups best groups; then it takes a ticket for the row, and
// the block that comes last for the row (every other block's picks are written by then) does that
// row's refine with its first warp: topk_refine's logic for one row. So the refine of all rows but
// the last few overlaps the reads of later rows, instead of a second launch that read the picks
// and candidates again after the whole first stage (8.5 us at 512 rows on the H200).
//
// The ticket is a per-row counter taken with atomicInc(ticket, blocks_per_row - 1), which wraps to
// 0 on the last block's increment: the counters are zero again for the next launch, with no reset
// launch (the plan makes them zero once).
//
// The grid is 1-D over chunks (row-major: chunk = row x blocks_per_row + part). A block loops over
// chunk, chunk + gridDim.x, ...: with one block per chunk (the registered form) it runs once; with
// a smaller grid (one wave by occupancy, tools/tune_topk_fused.py) it is persistent, and its shared
// lists are double-buffered so that the other warps read the next chunk while the first warp
// merges, writes and perhaps refines (the barrier of chunk i + 1 orders warp 0's reads of chunk i's
// buffer before chunk i + 2 overwrites it).
//
// This file includes topk.cu, not the other way round: topk.cu's text is part of the identity hash
// of every top-k variant, and adding these kernels there would have changed them.
#include "topk.cu"

// The last block for a row: lane 0 wrote the block's picks, fences them, and takes the row's ticket.
// Every lane gets the answer; in the last block every lane fences again before reading the others'
// picks (which it reads from L2, __ldcg: they were written by other SMs).
__device__ __forceinline__ bool last_for_row(unsigned* ticket, unsigned blocks_per_row, int lane) {
    unsigned last = 0;
    if (lane == 0) {
        __threadfence();  // this block's picks are visible device-wide before its ticket
        last = atomicInc(ticket, blocks_per_row - 1u) == blocks_per_row - 1u;  // ... and the last wraps it to 0
    }
    last = __shfl_sync(0xffffffffu, last, 0);
    if (last) __threadfence();  // the others' picks are read after the ticket
    return last != 0;
}

// topk_refine's work for one row, by one warp: the kGroups best of the row's picked groups (read
// from L2: other blocks of this launch wrote them), then the exact top TOPK_K of their candidates.
template <int kB, int kGroups, int kBatch>
__device__ __forceinline__ void refine_row(const float* lg, const float* ps, const int* pg, int picked_per_row, int vocab,
                                           int* out_index, float* out_value, int lane) {
    // kBatch x 32 picks loaded before any is inserted (topk_refine's reason; it loads 8 x 32): fewer
    // here, for the registers (see topk_fused).
    BestList<kGroups> groups;
    groups.clear();
    for (int first = lane; first < picked_per_row; first += kBatch * 32) {
        float batch_score[kBatch];
        int batch_group[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int e = first + b * 32;
            batch_score[b] = (e < picked_per_row) ? __ldcg(ps + e) : -INFINITY;
            batch_group[b] = (e < picked_per_row) ? __ldcg(pg + e) : 0x7fffffff;
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) groups.offer(batch_score[b], batch_group[b]);
    }
    int my_group = 0;  // lane r keeps the r-th chosen group
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
        float v;
        int g;
        warp_take_best(groups, v, g);
        if (lane == r) my_group = g;
    }
    constexpr int kPerLane = (kGroups * kB + 31) / 32;
    float candidate[kPerLane];
    int candidate_index[kPerLane];
#pragma unroll
    for (int q = 0; q < kPerLane; ++q) {
        const int c = min(q * 32 + lane, kGroups * kB - 1);
        const int g = __shfl_sync(0xffffffffu, my_group, c / kB);
        const int i = g * kB + c % kB;
        const bool real = q * 32 + lane < kGroups * kB && i < vocab;
        candidate_index[q] = real ? i : -1;
        candidate[q] = real ? __ldg(lg + i) : -INFINITY;
    }
    BestList<TOPK_K> best;
    best.clear();
#pragma unroll
    for (int q = 0; q < kPerLane; ++q)
        if (candidate_index[q] >= 0) best.offer(candidate[q], candidate_index[q]);
#pragma unroll
    for (int r = 0; r < TOPK_K; ++r) {
        float v;
        int i;
        warp_take_best(best, v, i);
        if (lane == 0) {
            out_index[r] = i;
            out_value[r] = v;
        }
    }
}

// Stage 1 as block_max_select (same loads, same order of offers, same picks) for one chunk of a
// row, then the row's ticket and, in the row's last block, its refine. warp_best_*: this chunk's
// shared lists (the persistent form alternates two).
template <int kB, int kGroups, int kPerThread, int kLoadsInFlight, bool kPersistent>
__device__ __forceinline__ void fused_chunk(const float* logits, float* picked_score, int* picked_group, unsigned* tickets,
                                            int* out_index, float* out_value, int vocab, int stride, int groups_per_row,
                                            int blocks_per_row, int chunk, float (&warp_best_value)[8][kGroups],
                                            int (&warp_best_group)[8][kGroups]) {
    constexpr int kLoadsPerGroup = kB / 4;
    constexpr int kGroupsInFlight = kLoadsInFlight / kLoadsPerGroup;
    static_assert(kB % 4 == 0 && kLoadsInFlight % kLoadsPerGroup == 0 && kGroupsInFlight >= 1 && kPerThread % kGroupsInFlight == 0,
                  "groups are whole float4s, and the loads in flight are whole groups that divide a thread's groups");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int row = chunk / blocks_per_row, part = chunk - row * blocks_per_row;
    const int first_group = part * blockDim.x * kPerThread + threadIdx.x;
    const float* lg = logits + static_cast<long long>(row) * stride;
    BestList<kGroups> mine;
    mine.clear();
#pragma unroll
    for (int j0 = 0; j0 < kPerThread; j0 += kGroupsInFlight) {
        float4 q[kGroupsInFlight][kLoadsPerGroup];
#pragma unroll
        for (int j = 0; j < kGroupsInFlight; ++j) {
            const int group = first_group + (j0 + j) * blockDim.x;
            if ((group + 1) * kB <= vocab) {
#pragma unroll
                for (int v = 0; v < kLoadsPerGroup; ++v) q[j][v] = __ldg(reinterpret_cast<const float4*>(lg + group * kB) + v);
            }
        }
#pragma unroll
        for (int j = 0; j < kGroupsInFlight; ++j) {
            const int group = first_group + (j0 + j) * blockDim.x;
            if (group >= groups_per_row) continue;
            const int lo = group * kB, hi = min(lo + kB, vocab);
            float m = -INFINITY;
            if (hi - lo == kB) {
#pragma unroll
                for (int v = 0; v < kLoadsPerGroup; ++v) m = fmaxf(m, fmaxf(fmaxf(q[j][v].x, q[j][v].y), fmaxf(q[j][v].z, q[j][v].w)));
            } else {
                for (int i = lo; i < hi; ++i) m = fmaxf(m, lg[i]);
            }
            mine.offer((hi == vocab) ? INFINITY : m, group);  // the last group: the seed's +inf
        }
    }
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
        float v;
        int g;
        warp_take_best(mine, v, g);
        if (lane == 0) { warp_best_value[warp][r] = v; warp_best_group[warp][r] = g; }
    }
    __syncthreads();
    if (warp != 0) return;  // (persistent) the next chunk's loads go on while warp 0 finishes this one
    BestList<kGroups> best;
    best.clear();
    for (int e = lane; e < warps * kGroups; e += 32)
        best.offer(warp_best_value[e / kGroups][e % kGroups], warp_best_group[e / kGroups][e % kGroups]);
    const long long row_picks = static_cast<long long>(row) * blocks_per_row * kGroups;
    const long long out = row_picks + static_cast<long long>(part) * kGroups;
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
        float v;
        int g;
        warp_take_best(best, v, g);
        if (lane == 0) { picked_score[out + r] = v; picked_group[out + r] = g; }
    }
    // Picks loaded at once by the refine: 2 x 32 keeps the one-chunk form within 64 registers with
    // no spill for sm_90 (ptxas -v; 8 x 32 spilled 56 bytes); the persistent form, within 80, needs 4.
    constexpr int kBatch = kPersistent ? 4 : 2;
    if (last_for_row(tickets + row, static_cast<unsigned>(blocks_per_row), lane))
        refine_row<kB, kGroups, kBatch>(lg, picked_score + row_picks, picked_group + row_picks, blocks_per_row * kGroups, vocab,
                                        out_index + row * TOPK_K, out_value + row * TOPK_K, lane);
}

// grid = chunks (rows x blocks_per_row, one chunk per block), or fewer with kPersistent: each block
// then takes chunks blockIdx.x, blockIdx.x + gridDim.x, ... `tickets`: one per row, zero before
// the launch and after it; picked_*: rows x blocks_per_row x kGroups. kMinBlocks: blocks of 256
// threads per SM that the register budget must allow (4: 64 registers; 3: 80).
template <int kB, int kGroups, int kPerThread = 8, int kLoadsInFlight = 8, bool kPersistent = false, int kMinBlocks = 4>
__global__ void __launch_bounds__(256, kMinBlocks) topk_fused(const float* logits, float* picked_score, int* picked_group,
                                                              unsigned* tickets, int* out_index, float* out_value, int rows,
                                                              int vocab, int stride, int groups_per_row, int blocks_per_row) {
    constexpr int kBuffers = kPersistent ? 2 : 1;  // see the top
    __shared__ float warp_best_value[kBuffers][8][kGroups];  // blockDim.x <= 256
    __shared__ int warp_best_group[kBuffers][8][kGroups];
    if constexpr (kPersistent) {
        int buffer = 0;
        for (int chunk = blockIdx.x; chunk < rows * blocks_per_row; chunk += gridDim.x, buffer ^= 1)
            fused_chunk<kB, kGroups, kPerThread, kLoadsInFlight, kPersistent>(
                logits, picked_score, picked_group, tickets, out_index, out_value, vocab, stride, groups_per_row, blocks_per_row,
                chunk, warp_best_value[buffer], warp_best_group[buffer]);
    } else {
        fused_chunk<kB, kGroups, kPerThread, kLoadsInFlight, kPersistent>(
            logits, picked_score, picked_group, tickets, out_index, out_value, vocab, stride, groups_per_row, blocks_per_row,
            blockIdx.x, warp_best_value[0], warp_best_group[0]);
    }
}
