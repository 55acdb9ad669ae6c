// Device helpers shared by the ops. Kernels include this; nothing here is a kernel itself.
#pragma once

#define FULL_MASK 0xffffffffu

// Warp-wide sum with shuffles (seed 000, seed 002's warpReduce, seed 004's warpReduce).
// The offsets are fixed by the warp width, never by blockDim or n, so the tree shape
// inside a warp is always the same (seed 004, point 3). Lane 0 ends with the warp's sum.
__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

// Block-wide sum for blockDim.x a multiple of 32 (at most 1024): shuffle within each warp,
// one partial per warp in shared memory, then the first warp adds the partials.
// Thread 0 ends with the block's sum. Every thread of the block must call it.
__device__ __forceinline__ float block_reduce_sum(float v) {
    __shared__ float warp_partials[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) warp_partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        v = (lane < warps) ? warp_partials[lane] : 0.0f;
        v = warp_reduce_sum(v);
    }
    return v;
}

// The last-warp unrolling of Harris's reduce4/reduce5, in the two forms primbench measures.
//
// kSyncwarp == false is the seed's code: a `volatile` pointer and no synchronisation, which
// relied on the 32 threads of a warp running in lockstep. Since Volta (independent thread
// scheduling) that is not guaranteed: a lane may read s[tid + 16] before the lane that owns it
// has written it. It still passes on the GPUs primbench has run on, which is why it is a hazard
// and not a failure.
//
// kSyncwarp == true is the safe form: each step reads into a register, then __syncwarp() orders
// the reads before the writes and the writes before the next step's reads.
// Requires blockDim.x >= 64 and s[0..63] valid; thread 0 ends with s[0] = the sum.
template <bool kSyncwarp>
__device__ __forceinline__ void last_warp_reduce(float* s, int tid) {
    if (kSyncwarp) {
        float v = s[tid];
#pragma unroll
        for (int offset = 32; offset > 0; offset >>= 1) {
            v += s[tid + offset];
            __syncwarp();
            s[tid] = v;
            __syncwarp();
        }
    } else {
        volatile float* vs = s;
        vs[tid] += vs[tid + 32];
        vs[tid] += vs[tid + 16];
        vs[tid] += vs[tid + 8];
        vs[tid] += vs[tid + 4];
        vs[tid] += vs[tid + 2];
        vs[tid] += vs[tid + 1];
    }
}
