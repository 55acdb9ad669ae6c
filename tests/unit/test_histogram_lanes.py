"""kernels/histogram_lanes.cu (issue 20's histogram, variant histogram/lane_columns) without a GPU:
every instantiation the variant and tools/tune_histogram.py launch compiles for sm_90 and sm_80 with
no spill (ptxas -v), the variant declares what its plan launches, and histogram.cu's variants do not
depend on the new file (their hashes stay as they were)."""

import re
import sys
from pathlib import Path

import pytest

from primbench import registry
from primbench.build import _options, source_path

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool_kernel_names() -> tuple[str, ...]:
    sys.path.insert(0, str(TOOLS))
    try:
        import tune_histogram
    finally:
        sys.path.remove(str(TOOLS))
    return tune_histogram.kernel_names()


def _ptxas_report(names, arch: str) -> dict[str, tuple[int, int]]:
    """{mangled name: (registers, spill bytes stored + loaded)} from NVRTC's ptxas -v log."""
    from cupy.cuda import nvrtc

    path = source_path("histogram_lanes.cu")
    program = nvrtc.createProgram(path.read_text(), path.name, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(program, name)
        nvrtc.compileProgram(program, [*_options(path), f"-arch={arch}", "--ptxas-options=-v"])
        log = nvrtc.getProgramLog(program)
        log = log.decode() if isinstance(log, bytes) else log
    finally:
        nvrtc.destroyProgram(program)
    assert "warning" not in log.lower(), log
    report, current = {}, None
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current = m.group(1)
        elif current and (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)):
            report[current] = (report.get(current, (0, 0))[0], int(m.group(1)) + int(m.group(2)))
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            report[current] = (int(m.group(1)), report.get(current, (0, 0))[1])
    return report


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_every_instantiation_compiles_without_spills(arch):
    names = _tool_kernel_names()
    report = _ptxas_report(names, arch)
    assert len(report) == len(names), report
    spilled = {name: spill for name, (_regs, spill) in report.items() if spill}
    assert not spilled, spilled
    print(arch, {name: regs for name, (regs, _spill) in sorted(report.items())})


def test_the_variant_declares_every_kernel_its_plan_launches():
    from primbench.kernels.histogram import LANE_COPIES, LANE_UNROLL, TYPE_BINS, lane_column_kernel

    variant = registry.get("histogram", "lane_columns")
    assert variant.source == "histogram_lanes.cu" and variant.traffic == "read" and variant.series == "beyond"
    assert set(variant.kernels) == {lane_column_kernel(d, b, LANE_COPIES, LANE_UNROLL) for d, b in TYPE_BINS}
    assert set(variant.kernels) <= set(_tool_kernel_names())
    assert set(variant.dtypes) == {"uint8", "int32"} and set(dict(variant.params)["bins"]) == {32, 256, 1024}


def test_the_older_histogram_variants_do_not_read_the_new_source():
    for variant in registry.variants("histogram"):
        if variant.name != "lane_columns" and variant.source:
            assert variant.source == "histogram.cu" and "lane columns" not in variant.source_text(), variant.key
