"""kernels/histogram_lanes.cu (variant histogram/lane_columns) without a GPU: every instantiation the
registered variant launches compiles for sm_90 and sm_80 with no spill (ptxas -v), the variant
declares what its plan launches, and histogram.cu's variants do not depend on the new file (their
hashes stay as they were). The tuner's own settings and probes from the same file are its to
check: `python -m tools.tune.histogram --ptxas`."""

import pytest

from primbench import registry
from primbench.build import ptxas_usage


def _variant():
    return registry.get("histogram", "lane_columns")


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_every_instantiation_compiles_without_spills(arch):
    variant = _variant()
    report, log = ptxas_usage(variant.source, variant.kernels, arch)
    assert "warning" not in log.lower(), log
    assert len(report) == len(variant.kernels), report
    spilled = {name: kernel.spilled for name, kernel in report.items() if kernel.spilled}
    assert not spilled, spilled
    print(arch, {name: kernel.registers for name, kernel in sorted(report.items())})


def test_the_variant_declares_every_kernel_its_plan_launches():
    from primbench.kernels.histogram import LANE_COPIES, LANE_UNROLL, LANES_SOURCE, TYPE_BINS, lane_column_kernel

    variant = _variant()
    assert variant.source == LANES_SOURCE == "histogram_lanes.cu" and variant.traffic == "read" and variant.series == "beyond"
    assert set(variant.kernels) == {lane_column_kernel(d, b, LANE_COPIES, LANE_UNROLL) for d, b in TYPE_BINS}
    assert set(variant.dtypes) == {"uint8", "int32"} and set(dict(variant.params)["bins"]) == {32, 256, 1024}


def test_the_older_histogram_variants_do_not_read_the_new_source():
    for variant in registry.variants("histogram"):
        if variant.name != "lane_columns" and variant.source:
            assert variant.source == "histogram.cu" and "lane columns" not in variant.source_text(), variant.key
