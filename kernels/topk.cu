// Top-k by two-stage pruning (seed 004 §4.6): block maxima over groups of kB logits, the best
// groups, then an exact top-k over their kB-logit candidates. Launches: kernels/topk.py.
//
// Order: a logit ranks above another if it is larger, or equal and at a lower index (what a stable
// descending sort gives). The best element of a group is its first maximum, so groups rank by
// (maximum, group index): the k best elements lie in the k best groups, since each group ahead of
// an element's group holds an element ahead of it.
//
// Rows are `stride` floats apart: the vocabulary padded to 1024 bytes (the seed's row alignment),
// so every row starts 16-byte aligned and each full group is read as kB / 4 float4 loads.
#define TOPK_K 8
// NVRTC has no <math.h>: +inf as the seed's INFINITY.
#define INFINITY __int_as_float(0x7f800000)

__device__ __forceinline__ bool ranks_above(float a, int ai, float b, int bi) { return a > b || (a == b && ai < bi); }

// A thread's best kSlots (value, index) pairs, best first, kept sorted by insertion.
template <int kSlots>
struct BestList {
    float value[kSlots];
    int index[kSlots];

    __device__ void clear() {
#pragma unroll
        for (int s = 0; s < kSlots; ++s) { value[s] = -INFINITY; index[s] = 0x7fffffff; }
    }
    // Branch-free insertion, so that the list stays in registers: with a loop that breaks at the
    // insertion point the compiler kept it in local memory, and one row's refine took 30 us.
    __device__ void offer(float v, int i) {
        if (!ranks_above(v, i, value[kSlots - 1], index[kSlots - 1])) return;
        bool above[kSlots];  // the newcomer ranks above slot s (true from its place on)
#pragma unroll
        for (int s = 0; s < kSlots; ++s) above[s] = ranks_above(v, i, value[s], index[s]);
#pragma unroll
        for (int s = kSlots - 1; s > 0; --s) {  // from the bottom, so slot s - 1 is still the old one
            value[s] = above[s - 1] ? value[s - 1] : (above[s] ? v : value[s]);
            index[s] = above[s - 1] ? index[s - 1] : (above[s] ? i : index[s]);
        }
        if (above[0]) { value[0] = v; index[0] = i; }
    }
    __device__ void pop() {  // drop the head
#pragma unroll
        for (int s = 0; s < kSlots - 1; ++s) { value[s] = value[s + 1]; index[s] = index[s + 1]; }
        value[kSlots - 1] = -INFINITY;
        index[kSlots - 1] = 0x7fffffff;
    }
};

// The warp's best remaining pair (every lane gets it); the lane holding it pops it.
template <int kSlots>
__device__ __forceinline__ void warp_take_best(BestList<kSlots>& mine, float& value, int& index) {
    float v = mine.value[0];
    int i = mine.index[0];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, offset);
        const int oi = __shfl_xor_sync(0xffffffffu, i, offset);
        if (ranks_above(ov, oi, v, i)) { v = ov; i = oi; }
    }
    if (mine.index[0] == i) mine.pop();  // indices are unique: exactly one lane holds the winner
    value = v;
    index = i;
}

// Stage 1: the seed's block_max (the maximum of each group of kB logits, the last group of a row
// scored +inf: the seed's sentinel), and the first half of "pick the best groups": each thread
// reduces kPerThread groups (kPerThread x blockDim.x consecutive groups per CUDA block, each warp
// reading 32 neighbouring groups at a time, kLoadsInFlight float4 loads at once) and keeps its
// kGroups best; each warp, then the block, keeps the kGroups best of those. Measured on the H200
// (docs/perf-notes.md, tools/tune_topk.py): picking in a second kernel that reads all 8,080 scores
// of a row took 35 us at 512 rows, and picking among 32 groups per warp here made this kernel
// compute-bound (145 us); 16 groups per thread and 8 loads in flight gave 79.5 us.
// grid = (blocks per row, rows).
template <int kB, int kGroups, int kPerThread = 16, int kLoadsInFlight = 8>
__global__ void __launch_bounds__(256) block_max_select(const float* logits, float* picked_score, int* picked_group, int vocab,
                                                         int stride, int groups_per_row) {
    constexpr int kLoadsPerGroup = kB / 4;
    constexpr int kGroupsInFlight = kLoadsInFlight / kLoadsPerGroup;  // float4 loads in flight per thread
    static_assert(kB % 4 == 0 && kLoadsInFlight % kLoadsPerGroup == 0 && kGroupsInFlight >= 1 && kPerThread % kGroupsInFlight == 0,
                  "groups are whole float4s, and the loads in flight are whole groups that divide a thread's groups");
    __shared__ float warp_best_value[8][kGroups];  // blockDim.x <= 256
    __shared__ int warp_best_group[8][kGroups];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int row = blockIdx.y;
    const int first_group = blockIdx.x * blockDim.x * kPerThread + threadIdx.x;
    const float* lg = logits + static_cast<long long>(row) * stride;
    BestList<kGroups> mine;
    mine.clear();
#pragma unroll
    for (int j0 = 0; j0 < kPerThread; j0 += kGroupsInFlight) {
        float4 q[kGroupsInFlight][kLoadsPerGroup];
#pragma unroll
        for (int j = 0; j < kGroupsInFlight; ++j) {  // issue the whole groups' loads first
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
    for (int r = 0; r < kGroups; ++r) {  // this warp's best kGroups, in order
        float v;
        int g;
        warp_take_best(mine, v, g);
        if (lane == 0) { warp_best_value[warp][r] = v; warp_best_group[warp][r] = g; }
    }
    __syncthreads();
    if (warp != 0) return;
    BestList<kGroups> best;
    best.clear();
    for (int e = lane; e < warps * kGroups; e += 32) best.offer(warp_best_value[e / kGroups][e % kGroups], warp_best_group[e / kGroups][e % kGroups]);
    const long long out = (static_cast<long long>(row) * gridDim.x + blockIdx.x) * kGroups;
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
        float v;
        int g;
        warp_take_best(best, v, g);
        if (lane == 0) { picked_score[out + r] = v; picked_group[out + r] = g; }
    }
}

// Stage 2, one warp per row: the kGroups best of the groups stage 1 picked (kGroups per CUDA block
// of stage 1), then the exact top 8 of their kGroups x kB logits. kGroups = 8 + 1 when the sentinel
// takes a slot: the seed's +inf group is always picked, so 8 other groups are still needed; with 8
// slots the 8th-best logit is lost whenever the best 8 lie in 8 groups other than the last, which
// on random logits is almost always (tests/test_gpu_patterns.py shows it).
template <int kB, int kGroups>
__global__ void topk_refine(const float* logits, const float* picked_score, const int* picked_group, int* out_index,
                            float* out_value, int rows, int vocab, int stride, int picked_per_row) {
    const int lane = threadIdx.x & 31;
    const int row = static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5);
    if (row >= rows) return;  // whole warps leave together
    const float* ps = picked_score + static_cast<long long>(row) * picked_per_row;
    const int* pg = picked_group + static_cast<long long>(row) * picked_per_row;
    const float* lg = logits + static_cast<long long>(row) * stride;

    // Loads first, kBatch at a time, then the insertions: a load feeding each insertion directly
    // puts an L2 round trip per pair on the critical path.
    constexpr int kBatch = 8;
    BestList<kGroups> groups;
    groups.clear();
    for (int first = lane; first < picked_per_row; first += kBatch * 32) {
        float batch_score[kBatch];
        int batch_group[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int e = first + b * 32;
            batch_score[b] = (e < picked_per_row) ? ps[e] : -INFINITY;
            batch_group[b] = (e < picked_per_row) ? pg[e] : 0x7fffffff;
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

    constexpr int kPerLane = (kGroups * kB + 31) / 32;  // candidates per lane, all loaded before any is ranked
    float candidate[kPerLane];
    int candidate_index[kPerLane];
#pragma unroll
    for (int q = 0; q < kPerLane; ++q) {
        const int c = min(q * 32 + lane, kGroups * kB - 1);
        const int g = __shfl_sync(0xffffffffu, my_group, c / kB);  // c / kB < kGroups <= 32
        const int i = g * kB + c % kB;
        const bool real = q * 32 + lane < kGroups * kB && i < vocab;
        candidate_index[q] = real ? i : -1;
        candidate[q] = real ? lg[i] : -INFINITY;
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
            out_index[row * TOPK_K + r] = i;
            out_value[row * TOPK_K + r] = v;
        }
    }
}
