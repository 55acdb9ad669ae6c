"""The commands about this machine and primbench itself: `info` (the GPU), `list` (the ops and
variants) and `compile` (every kernel through NVRTC, no GPU needed)."""

from __future__ import annotations

import re
import sys

from primbench.errors import EXIT_FAILED, EXIT_OK, UserError
from primbench.text_safety import printable, quoted


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
            raise UserError(f"unknown op {quoted(op)}; valid ops: {', '.join(registry.ops())}")
    listed = [v for op in ops for v in registry.variants(op)]
    for v in listed:
        blocks = ",".join(map(str, v.block_sizes)) if v.block_sizes else "library"
        flag = ("  [hazard]" if v.hazard else "") + (f"  [plugin {registry.plugin_of(v)}]" if registry.plugin_of(v) else "")
        params = "".join(f"  [{name}: {', '.join(map(str, values))}]" for name, values in v.params)
        # A plugin's names and paths are its author's text: no escape sequence reaches the terminal.
        print(printable(f"{v.key:<48} {v.series:<9} blocks {blocks:<26} {v.origin}{params}{flag}"))
    print()
    print("\n".join(map(printable, list_key(listed, plugged=any(registry.plugin_of(v) for v in listed)))))
    return EXIT_OK


# A source cited in an origin or a note as "seed 004", or implied by a series such as "seed004".
_CITED_SEED = re.compile(r"\bseed ?(\d{3})\b")
_KEY_TERM_WIDTH = 16


def list_key(variants, plugged: bool = False) -> list[str]:
    """The key printed under `list`: one line for each series, cited seed article and mark that the
    listed variants show, so that a newcomer can read the listing without the source code. Only
    what appears is explained, so `list --op topk` stays short. The words come from
    report/sources.py, which the HTML report's key to sources reads too."""
    from primbench.report.sources import SERIES, SOURCES

    def line(term: str, words: str) -> str:
        return f"  {term:<{_KEY_TERM_WIDTH}} {words}"

    lines = ["Key (the second column is the variant's series, the story it belongs to in the report):"]
    shown = {v.series for v in variants}
    # SERIES's order (the seeds' steps, then past them, then the library), then any a plugin adds.
    for series in [s for s in SERIES if s in shown] + sorted(shown - set(SERIES)):
        lines.append(line(series, SERIES.get(series, "a series its plugin declares")))
    cited = {f"seed{number}" for v in variants for text in (v.series, v.origin, v.notes)
             for number in _CITED_SEED.findall(text or "")}
    for source in SOURCES:
        if source["id"] in cited:
            lines.append(line(source["label"], f"source article: \"{source['title']}\" (Chinese original)"))
    if any(not v.block_sizes for v in variants):
        lines.append(line("blocks library", "the library chooses its own launch shape"))
    if any(v.params for v in variants):
        lines.append(line("[name: a, b]", "the variant's own sweep axis and its values; a sweep that names none gets the first"))
    if any(v.hazard for v in variants):
        lines.append(line("[hazard]", "a known correctness trap of that kernel, kept on purpose as its source wrote it; "
                                      "the report's note on the variant says what the trap is"))
    if plugged:
        lines.append(line("[plugin FILE]", "declared by that plugin file, not built into primbench"))
    return lines


def cmd_compile(args) -> int:
    from primbench import registry
    from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE, KernelBuildError, compile_all, require_nvrtc

    require_nvrtc()
    plugin_sources = {v.source for v in registry.variants() if registry.plugin_of(v)}
    chosen = {source: names for source, names in registry.sources().items()
              if args.all or not plugin_sources or source in plugin_sources}
    failures = 0
    for source, arch, compiled in compile_all(chosen, args.arch, (HARNESS_SOURCE, HARNESS_KERNELS)):
        if isinstance(compiled, KernelBuildError):
            failures += 1
            print(str(compiled), file=sys.stderr)
        else:
            warning = " (with warnings)" if compiled.log.strip() else ""
            print(f"{source} {arch}: {len(chosen[source])} kernels, {compiled.cubin_bytes} bytes of cubin{warning}")
    return EXIT_FAILED if failures else EXIT_OK
