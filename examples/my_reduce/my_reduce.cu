// A user's own reduce kernel, measured by primbench beside the built-in variants.
// float4 loads in a grid-stride loop, two independent accumulators, warp shuffles, and one
// atomicAdd per block into a float the plan zeroes first. Any n: the tail past the last whole
// float4 is read one element at a time.
#include "common.cuh"  // primbench's warp_reduce_sum (found through primbench's include path)

template <int BLOCK>
__global__ void my_float4_reduce(const float* __restrict__ x, float* out, int n) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    int vectors = n / 4;
    int stride = BLOCK * gridDim.x;
    float a = 0.0f, b = 0.0f;
    int i = blockIdx.x * BLOCK + threadIdx.x;
    for (; i + stride < vectors; i += 2 * stride) {  // two loads in flight per thread
        float4 u = x4[i], v = x4[i + stride];
        a += (u.x + u.y) + (u.z + u.w);
        b += (v.x + v.y) + (v.z + v.w);
    }
    if (i < vectors) {
        float4 u = x4[i];
        a += (u.x + u.y) + (u.z + u.w);
    }
    int tail = 4 * vectors + blockIdx.x * BLOCK + threadIdx.x;
    for (; tail < n; tail += stride) b += x[tail];

    __shared__ float warp_sums[BLOCK / 32];
    float sum = warp_reduce_sum(a + b);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
        sum = warp_reduce_sum(sum);
        if (threadIdx.x == 0) atomicAdd(out, sum);
    }
}
