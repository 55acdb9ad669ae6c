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

// Stage 1, the seed's block_max over every row at once: one thread per group. The seed's
// sentinel: the last group of a row scores +inf, so that it is always among the candidates.
template <int kB>
__global__ void block_max(const float* logits, float* scores, int rows, int vocab, int stride, int groups_per_row) {
    const long long b = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (b >= static_cast<long long>(rows) * groups_per_row) return;
    const int row = static_cast<int>(b / groups_per_row), group = static_cast<int>(b % groups_per_row);
    const float* lg = logits + static_cast<long long>(row) * stride;
    const int lo = group * kB, hi = min(lo + kB, vocab);
    float m = -INFINITY;
    if (hi - lo == kB) {
#pragma unroll
        for (int v = 0; v < kB / 4; ++v) {
            const float4 q = __ldg(reinterpret_cast<const float4*>(lg + lo) + v);
            m = fmaxf(m, fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)));
        }
    } else {
        for (int i = lo; i < hi; ++i) m = fmaxf(m, lg[i]);
    }
    scores[b] = (hi == vocab) ? INFINITY : m;  // the last group: the seed's +inf
}

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
    __device__ void offer(float v, int i) {
        if (!ranks_above(v, i, value[kSlots - 1], index[kSlots - 1])) return;
#pragma unroll
        for (int s = kSlots - 1; s >= 0; --s) {  // shift the worse ones down until its place is found
            if (s > 0 && ranks_above(v, i, value[s - 1], index[s - 1])) {
                value[s] = value[s - 1];
                index[s] = index[s - 1];
            } else {
                value[s] = v;
                index[s] = i;
                break;
            }
        }
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

// Stage 2, one warp per row: the kGroups best groups by their scores, then the exact top-8 of their
// kGroups x kB logits. kGroups = 8 + 1 when the sentinel group takes a slot (the seed's +inf group
// is always picked, so 8 other groups are still needed; with exactly 8 slots the 8th-best logit is
// lost whenever the top 8 lie in 8 groups other than the last, which on random logits is almost
// always: tests/test_gpu_topk.py shows it).
template <int kB, int kGroups>
__global__ void topk_refine(const float* logits, const float* scores, int* out_index, float* out_value, int rows, int vocab,
                            int stride, int groups_per_row) {
    const int lane = threadIdx.x & 31;
    const int row = static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5);
    if (row >= rows) return;  // whole warps leave together
    const float* sc = scores + static_cast<long long>(row) * groups_per_row;
    const float* lg = logits + static_cast<long long>(row) * stride;

    BestList<kGroups> groups;
    groups.clear();
    for (int g = lane; g < groups_per_row; g += 32) groups.offer(sc[g], g);
    int my_group = 0;  // lane r keeps the r-th chosen group
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
        float v;
        int g;
        warp_take_best(groups, v, g);
        if (lane == r) my_group = g;
    }

    BestList<TOPK_K> best;
    best.clear();
    for (int first = 0; first < kGroups * kB; first += 32) {  // every lane goes round together (the shuffle)
        const int c = min(first + lane, kGroups * kB - 1);
        const int g = __shfl_sync(0xffffffffu, my_group, c / kB);  // c / kB < kGroups <= 32
        const int i = g * kB + c % kB;
        if (first + lane < kGroups * kB && i < vocab) best.offer(lg[i], i);
    }
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
