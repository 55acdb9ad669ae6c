"""kernels/histogram_lanes.cu (issue 20's histogram, variant histogram/lane_columns) without a GPU:
every instantiation the variant and tools/tune_histogram.py launch compiles for sm_90 and sm_80 with
no spill (ptxas -v), the variant declares what its plan launches, and histogram.cu's variants do not
depend on the new file (their hashes stay as they were)."""

import sys
from pathlib import Path

import pytest

from primbench import registry
from primbench.build import ptxas_usage

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool_kernel_names() -> tuple[str, ...]:
    sys.path.insert(0, str(TOOLS))
    try:
        import tune_histogram
    finally:
        sys.path.remove(str(TOOLS))
    return tune_histogram.kernel_names()


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_every_instantiation_compiles_without_spills(arch):
    names = _tool_kernel_names()
    report, log = ptxas_usage("histogram_lanes.cu", names, arch)
    assert "warning" not in log.lower(), log
    assert len(report) == len(names), report
    spilled = {name: kernel.spilled for name, kernel in report.items() if kernel.spilled}
    assert not spilled, spilled
    print(arch, {name: kernel.registers for name, kernel in sorted(report.items())})


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
