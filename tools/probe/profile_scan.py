"""Run one scan form twice at 2^28 int32, for Nsight Compute to profile the second launch: where
the registered scans' time goes, counter by counter, beside a copy of the same bytes. Not part of a run.
  ncu -k regex:<kernel> -s 1 -c 1 --section ... python -m tools.probe.profile_scan FORM
FORM: copy | lookback (decoupled_lookback_status_prefetch) | prefix (tile_scan_with_prefix) |
      rounds:<held|shared>:<vecs>x<stages>x<lag>x<gather>[:form] (kernels/scan_rounds.cu; block 512
      for held, 1024 for shared), e.g. rounds:held:6x3x2x5 (the registered kernel at block 512)
"""

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("form", help="copy | lookback | prefix | rounds:<held|shared>:<vecs>x<stages>x<lag>x<gather>[:form]")
    form = parser.parse_args().form

    import cupy

    import primbench.kernels.scan as scan
    import primbench.kernels.scan_rounds as rounds
    from primbench.api import LaunchContext
    from primbench.build import load_module
    from primbench.measuring.device import Device

    device = Device()
    n = 2**28
    x = cupy.random.default_rng(1).integers(-100, 100, n, dtype=cupy.int32)
    block = 1024
    if form == "copy":
        dst = cupy.empty_like(x)
        run = lambda: cupy.copyto(dst, x)  # noqa: E731
    else:
        if form.startswith("rounds:"):
            parts = form.split(":")
            setting = (parts[1], *(int(v) for v in parts[2].split("x")))
            kind = int(parts[3]) if len(parts) > 3 else 0
            block = rounds.KERNELS[setting[0]][1]
            module = load_module(rounds.SOURCE, (rounds._name("int", *setting, kind),))
            prepare = rounds.round_sums_plan((setting,), kind)
        else:
            module = load_module(scan.SOURCE, scan._fast_names())
            prepare = {"lookback": scan.lookback_plan(prefetch_status=True), "prefix": scan.reduce_then_scan_plan()}[form]
        run = prepare(LaunchContext(module, x, n, block, device.sm_count, dtype="int32", **device.sm_limits)).run
    for _ in range(2):
        run()
    cupy.cuda.Device().synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
