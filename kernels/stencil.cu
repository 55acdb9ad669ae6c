// 1-D stencil: seed 004 §4.3's blur1d, y_i = (x_{i-R} + ... + x_{i+R}) / (2R + 1), with zeros
// outside [0, n). Launches: kernels/stencil.py. The radius R is a template parameter, as the seed's
// `constexpr int R`; every form adds the window from left to right and divides by 2R + 1 (so the
// exact input, small integers, gives every form the same bits).

// Seed 004's code, with R a template parameter instead of `constexpr int R = 4`: the block
// stages its blockDim.x outputs' inputs plus a halo of R on each side in shared memory (size
// blockDim.x + 2R, passed at launch), then each thread reads its 2R + 1 neighbours from there.
template <int R>
__global__ void seed004_blur1d(const float* in, float* out, int n) {
    extern __shared__ float s[];  // blockDim.x + 2R
    int base = blockIdx.x * blockDim.x;

    for (int j = threadIdx.x; j < blockDim.x + 2 * R; j += blockDim.x) {
        int g = base - R + j;  // global index, halo included
        s[j] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    __syncthreads();

    int g = base + threadIdx.x;
    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -R; k <= R; ++k) acc += s[threadIdx.x + R + k];
        out[g] = acc / (2 * R + 1);
    }
}

// The naive form: every thread reads its 2R + 1 inputs from global memory (the caches catch the
// reuse, or do not).
template <int R>
__global__ void blur1d_naive(const float* in, float* out, int n) {
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -R; k <= R; ++k) {
            const int i = g + k;
            acc += (i >= 0 && i < n) ? in[i] : 0.0f;
        }
        out[g] = acc / (2 * R + 1);
    }
}

// 16-byte loads and stores: a block's tile is kVecs x blockDim.x float4 vectors (vector j x
// blockDim.x + t belongs to thread t, so each load instruction is one coalesced segment), staged
// with its halo in shared memory. The halo is padded to whole vectors (kPad = R rounded up to 4)
// so that each thread reads the window of its 4 outputs as aligned float4s: 2 kPad / 4 + 1 of them,
// conflict-free, instead of 4 + 2R scalar reads that four lanes would share a bank for.
template <int R, int kVecs>
__global__ void blur1d_vector(const float* in, float* out, int n) {
    constexpr int kPad = (R + 3) / 4 * 4;
    constexpr int kWindowVecs = 2 * kPad / 4 + 1;
    extern __shared__ float4 staged[];  // kPad + tile + kPad floats, as float4
    float* s = reinterpret_cast<float*>(staged);
    const int tile = kVecs * blockDim.x * 4;
    const long long base = static_cast<long long>(blockIdx.x) * tile;

#pragma unroll
    for (int j = 0; j < kVecs; ++j) {  // the tile: whole vectors at once, the array's ragged end element by element
        const int v = j * blockDim.x + threadIdx.x;
        const long long g = base + 4ll * v;
        float4 q;
        if (g + 3 < n) {
            q = __ldg(reinterpret_cast<const float4*>(in + g));
        } else {
            q.x = (g < n) ? in[g] : 0.0f;
            q.y = (g + 1 < n) ? in[g + 1] : 0.0f;
            q.z = (g + 2 < n) ? in[g + 2] : 0.0f;
            q.w = (g + 3 < n) ? in[g + 3] : 0.0f;
        }
        staged[kPad / 4 + v] = q;
    }
    for (int j = threadIdx.x; j < 2 * kPad; j += blockDim.x) {  // the halo: kPad on each side
        const int slot = (j < kPad) ? j : tile + j;  // left of the tile, or right of it
        const long long g = base - kPad + slot;
        s[slot] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int v = j * blockDim.x + threadIdx.x;
        const long long g = base + 4ll * v;
        if (g >= n) break;
        float w[4 * kWindowVecs];  // s[4v .. 4v + 4 + 2 kPad): the tile's 4v - kPad .. 4v + 3 + kPad
#pragma unroll
        for (int q = 0; q < kWindowVecs; ++q) {
            const float4 f = staged[v + q];
            w[4 * q] = f.x; w[4 * q + 1] = f.y; w[4 * q + 2] = f.z; w[4 * q + 3] = f.w;
        }
        float4 y;
        float* yy = reinterpret_cast<float*>(&y);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float acc = 0.0f;
#pragma unroll
            for (int k = -R; k <= R; ++k) acc += w[kPad + e + k];
            yy[e] = acc / (2 * R + 1);
        }
        if (g + 3 < n) {
            *reinterpret_cast<float4*>(out + g) = y;
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (g + e < n) out[g + e] = yy[e];
        }
    }
}
