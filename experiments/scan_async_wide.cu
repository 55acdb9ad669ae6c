// The async-copy look-back scan (kernels/scan_async.cu) with a wide look-back window. An experiment,
// not registered (measured no faster): experiments/tune_scan_wide.py builds it; docs/perf-notes.md,
// "A look-back window of a whole round".
//
// Why: measured on the H200 (docs/perf-notes.md, "Async copies into shared memory"), the async
// pipeline alone streams at 86-92 % of a copy, but its look-back adds 450-500 us at 2^28. One
// wave of persistent blocks moves in lock step: the ~132 tiles scanned at once are consecutive,
// none has its inclusive prefix yet, and with a window of 32 tiles per read the k-th of them walks
// back k / 32 dependent L2 round trips to reach the previous round. A window of kWindow x 32 tiles
// (kWindow status words per lane of the first warp) covers a whole round in one read.
//
// This file includes scan_async.cu, not the other way round, so that the registered async variant
// keeps its identity hash (a variant's hash covers its source file).
#include "scan_async.cu"

template <typename T, int kVecs, int kStages, int kWindow, int kForm>
__global__ void __launch_bounds__(1024) scan_lookback_async_wide(const T* in, T* out, unsigned long long* status,
                                                                 unsigned* tile_counter, unsigned n, unsigned epoch,
                                                                 unsigned tiles) {
    async_copy_scan<T, kVecs, kStages, kForm>(in, out, tile_counter, n, tiles, LookBackPrefix<T, kWindow, true>{status, epoch});
}
