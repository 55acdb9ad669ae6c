"""The process `primbench profile` runs under Nsight Compute: each case's plan once, each inside
its own profiler range, after a marker launch that names the case.

ncu profiles only what runs between cudaProfilerStart and cudaProfilerStop (it is started with
--profile-from-start off), so inputs, compilation and warm-up stay out of its report. A plan may
launch any number of kernels (a library's own, too), so the launches are tied to their case by a
marker: an empty kernel launched first in each range, with the case's index + 1 as its grid's x
size. ncu lists the marker like any kernel, and every launch after it, up to the next marker,
belongs to that case (counters.py reads it back).

    python -m primbench.profile.child REQUEST_JSON MANIFEST_JSON

REQUEST_JSON names the config (or a run file, whose header holds one), its filters (only, sizes, blocks) and the plugin files, as `run`
takes them; MANIFEST_JSON is written here: per case, its index, key and declared minimal bytes, or
why it was not profiled.
"""

from __future__ import annotations

import json
import sys

from primbench.errors import EXIT_OK
from primbench.profile.counters import MARKER_NAME  # the reader splits ncu's launches by it

MARKER_SOURCE = f'extern "C" __global__ void {MARKER_NAME}() {{}}\n'


def _marker():
    import cupy

    kernel = cupy.RawKernel(MARKER_SOURCE, MARKER_NAME)
    kernel((1,), (1,), ())  # compiled and loaded outside any profiled range
    return kernel


def _requested_config(request: dict):
    """The config the parent asked for (a config file, or a run file's header), its plugins loaded
    and its filters applied."""
    from primbench import registry
    from primbench.config import subset
    from primbench.config.loading import config_from_header, load_config
    from primbench.runfile.io import load_run

    for plugin in request.get("plugins", []):
        registry.load_plugin(plugin)
    if request.get("run"):  # a run file's cases, by the config its header holds
        config = config_from_header(load_run(request["run"]).header, request["run"])
    else:
        config = load_config(request["config"])
    return subset.narrow(config, only=request.get("only"), sizes=request.get("sizes"), blocks=request.get("blocks"))


def main(argv: list[str]) -> int:
    import cupy
    from cupy.cuda import runtime

    from primbench import registry
    from primbench.build import load_module
    from primbench.run.runner import Runner, input_key, rng_seed_for
    from primbench.variant import CaseUnsupported
    from primbench.verify import inputs

    with open(argv[0], encoding="utf-8") as source:
        request = json.load(source)
    config = _requested_config(request)
    cases = config.cases()
    runner = Runner(config)
    marker = _marker()
    manifest = []
    for index, case in enumerate(cases):
        entry = {"index": index, "key": case.key, "label": case.label}
        try:
            variant = registry.get(case.op, case.variant)
            module = load_module(variant.source, variant.kernels) if variant.source else None
            x = runner._inputs_for(case, rng_seed_for("profile", input_key(case)))[2]
            plan = variant.prepare(runner._context(module, x, case))
            if plan.restore is not None:
                plan.restore()
            plan.run()  # once outside the range: lazy loading and library set-up are not the kernel
            if plan.restore is not None:
                plan.restore()
            cupy.cuda.get_current_stream().synchronize()
            entry["variant_hash"] = variant.hash()
            entry["counter_claim"] = list(variant.counter_claim) if variant.counter_claim else None
            entry["minimal_bytes"] = variant.minimal_bytes(case.n, inputs.itemsize(case.dtype), dict(case.params))
            runtime.profilerStart()
            try:
                marker((index + 1,), (1,), ())
                plan.run()
                cupy.cuda.get_current_stream().synchronize()
            finally:
                runtime.profilerStop()
            entry["profiled"] = True
        except CaseUnsupported as exc:
            entry.update(profiled=False, reason=f"unsupported: {exc}"[:300])
        except Exception as exc:  # noqa: BLE001 (one case's fault is that case's line; the rest go on)
            entry.update(profiled=False, reason=f"{type(exc).__name__}: {exc}"[:300])
        manifest.append(entry)
        print(f"profiled {index + 1}/{len(cases)} {case.label}" if entry["profiled"] else
              f"not profiled {case.label}: {entry['reason']}", flush=True)
    with open(argv[1], "w", encoding="utf-8") as out:
        json.dump({"marker": MARKER_NAME, "device": runner.device.info, "cases": manifest}, out)
    return EXIT_OK


if __name__ == "__main__":
    from primbench.errors import UserError

    try:
        sys.exit(main(sys.argv[1:]))
    except UserError as exc:  # the parent shows this line
        print(f"primbench: {exc}", flush=True)
        sys.exit(exc.exit_code)
