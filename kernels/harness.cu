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
