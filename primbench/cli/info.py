"""The commands about this machine and primbench itself: `info` (the GPU), `list` (the ops and
variants) and `compile` (every kernel through NVRTC, no GPU needed)."""

from __future__ import annotations

import sys

from primbench.errors import EXIT_FAILED, EXIT_OK, UserError


def cmd_info(args) -> int:
    from primbench.measuring.device import Device

    info = Device().info
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:<{width}}  {value}")
    return EXIT_OK


def cmd_list(args) -> int:
    from primbench import registry

    ops = [args.op] if args.op else registry.ops()
    for op in ops:
        if op not in registry.ops():
            raise UserError(f"unknown op {op!r}; valid ops: {', '.join(registry.ops())}")
        for v in registry.variants(op):
            blocks = ",".join(map(str, v.block_sizes)) if v.block_sizes else "library"
            flag = ("  [hazard]" if v.hazard else "") + (f"  [plugin {registry.plugin_of(v)}]" if registry.plugin_of(v) else "")
            params = "".join(f"  [{name}: {', '.join(map(str, values))}]" for name, values in v.params)
            print(f"{v.key:<48} blocks {blocks:<26} {v.origin}{params}{flag}")
    return EXIT_OK


def cmd_compile(args) -> int:
    from primbench import registry
    from primbench.build import KernelBuildError, compile_all, require_nvrtc

    require_nvrtc()
    plugin_sources = {v.source for v in registry.variants() if registry.plugin_of(v)}
    chosen = {source: names for source, names in registry.sources().items()
              if args.all or not plugin_sources or source in plugin_sources}
    failures = 0
    for source, arch, compiled in compile_all(chosen, args.arch, (registry.HARNESS_SOURCE, registry.HARNESS_KERNELS)):
        if isinstance(compiled, KernelBuildError):
            failures += 1
            print(str(compiled), file=sys.stderr)
        else:
            warning = " (with warnings)" if compiled.log.strip() else ""
            print(f"{source} {arch}: {len(chosen[source])} kernels, {compiled.cubin_bytes} bytes of cubin{warning}")
    return EXIT_FAILED if failures else EXIT_OK
