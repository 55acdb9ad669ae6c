// Kernels the harness itself launches (not benchmarked).

// Holds the GPU for `ns` nanoseconds of its global timer. The timer enqueues this before the
// start event of a sample so that the host can enqueue the whole operation (several launches,
// a library call) before the GPU reaches it: without it, host launch overhead would be timed
// as GPU idle time. nvbench's "blocking kernel" does the same job.
extern "C" __global__ void primbench_hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// The hold of a cold sample, and a witness of the SM clock just before the sample: the SM's cycle
// counter and the GPU's nanosecond timer at the start and end of the spin, as stamps[0..3] =
// (ns, cycles, ns, cycles). Their ratio is the mean SM clock over the hold (cycles per ns, x 1000
// for MHz); one thread on one SM, so both cycle readings come from the same counter. nvbench reads
// its clock the same way, around each sample, and discards the throttled ones.
extern "C" __global__ void primbench_hold_stamped(unsigned long long ns, unsigned long long* stamps) {
    unsigned long long start, now, cycles_start, cycles_end;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    cycles_start = clock64();
    do {
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
    cycles_end = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    stamps[0] = start;
    stamps[1] = cycles_start;
    stamps[2] = now;
    stamps[3] = cycles_end;
}

// Reads `vectors` 16-byte vectors once, 8 loads in flight per thread, and does nothing else: the
// run's pure-read ceiling, measured at run start beside the copy (primbench/measuring/ceilings.py). A read
// kernel's speed of light is its minimal bytes at this rate, a read-and-write kernel's at the
// copy's. The XOR of all it read is stored only if it equals `never`, so that the compiler keeps
// every load; a store by chance is harmless.
// kNoAllocate: the loads bypass L1 allocation (ld.global.nc.L1::no_allocate), as vector_reduce's
// do below 512 MiB, where the H200 reads up to 9 % faster that way (kernels/reduce_vector.cu); the
// sized probes try both (primbench/measuring/ceilings.py), so that no kernel's load beats the ceiling.
template <bool kNoAllocate>
__device__ __forceinline__ uint4 probe_load(const uint4* p) {
#if __CUDA_ARCH__ >= 700  // the eviction-priority qualifier exists from Volta on; this module holds
                          // the timing kernels too, so it must build for every GPU
    if (kNoAllocate) {
        uint4 r;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
        return r;
    }
#endif
    return __ldg(p);
}

template <bool kNoAllocate>
__device__ __forceinline__ void read_probe(const uint4* __restrict__ in, unsigned long long vectors,
                                           unsigned int never, unsigned int* sink) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int acc = 0;
    for (; i + 7 * stride < vectors; i += 8 * stride) {
        uint4 v[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) v[k] = probe_load<kNoAllocate>(in + i + k * stride);
#pragma unroll
        for (int k = 0; k < 8; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
    // The last, partial turn (fewer than 8 left for this thread), still all loaded at once: one
    // load per turn here cost 10 % at 64 MiB, where vector_reduce's partial turn does the same.
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (i + k * stride < vectors) v[k] = probe_load<kNoAllocate>(in + i + k * stride);
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (i + k * stride < vectors) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    if (acc == never) *sink = acc;
}

extern "C" __global__ void primbench_read_probe(const uint4* __restrict__ in, unsigned long long vectors,
                                                unsigned int never, unsigned int* sink) {
    read_probe<false>(in, vectors, never, sink);
}

extern "C" __global__ void primbench_read_probe_no_allocate(const uint4* __restrict__ in, unsigned long long vectors,
                                                            unsigned int never, unsigned int* sink) {
    read_probe<true>(in, vectors, never, sink);
}
