"""A plugin that adds an op of its own, `toy_scale` (y = 2x), with its checks, one variant and a
report section of its own: it shows that a new op needs no file inside primbench
(tests/e2e/test_cli_tool.py, tests/gpu/test_plugins.py, tests/e2e/test_browser.py)."""

from pathlib import Path

from primbench.api import (Bar, Column, LaunchContext, OpChecks, Plan, Section, Variant, ceil_div, register_op,
                           register_variant)


def _exact_input(case, seed):
    import cupy

    x = (cupy.arange(case.n, dtype=cupy.int32) % 1024).astype(cupy.float32)  # doubling is exact
    return x, None


def _random_input(case, seed):
    import cupy

    return cupy.random.default_rng(seed).random(case.n, dtype=cupy.float32)


def _check(result, wanted) -> dict:
    import cupy

    written = not bool(cupy.isnan(result).any())
    ok = written and bool((result.astype(cupy.float64) == wanted).all())
    return {"ok": ok, "got": float(result[-1]) if written else None}


def _report_sections(view) -> list:
    """The op's own section of its report page: each timed case's time per element, a mark each."""
    cases = view.cases[view.cases["valid"]].sort_values(["n", "block"])
    rows = [{"variant": case["variant"], "n": int(case["n"]), "block": case["block"], "time_us": case["median_ms"] * 1e3,
             "ns_per_element": case["median_ms"] * 1e6 / case["n"], "anchor": case.get("anchor")}
            for case in cases.to_dict("records")]
    return [Section(
        name="per-element", title="time per element",
        caption="Each timed case's median time over its n: what one doubled element costs, launch included.",
        columns=(Column("variant", "variant", "code"), Column("n", "n", "size"), Column("block", "block", "block"),
                 Column("time_us", "time µs", "us"), Column("ns_per_element", "ns per element", "number")),
        rows=rows, bars=[Bar(f"{r['variant']} n={r['n']} block {r['block']}", r["time_us"], "plugin", r["anchor"]) for r in rows],
        bars_title="toy_scale: median time of each case",
        bars_caption="Each row of the table below as a mark.")]


register_op(OpChecks(
    op="toy_scale",
    dtypes=("float32",),
    distributions=("uniform",),
    exact_input=_exact_input,
    random_input=_random_input,
    reference=lambda x, case, seed: 2.0 * x.astype("float64"),
    check_exact=lambda result, expected, x, case: _check(result, 2.0 * x.astype("float64")),
    check_random=lambda result, reference, plan, case: _check(result, reference),
    failure_reason=lambda exact, random: None if exact["ok"] and random["ok"] else "y is not 2x",
    working_bytes=lambda case, itemsize: 4 * case.n * itemsize + (64 << 20),
    report_sections=_report_sections,
))


def prepare(ctx: LaunchContext) -> Plan:
    import cupy
    import numpy

    kernel = ctx.kernel("toy_scale_twice")
    y = cupy.empty_like(ctx.x)
    grid = ceil_div(ctx.n, ctx.block)
    n = numpy.int32(ctx.n)
    return Plan(run=lambda: kernel((grid,), (ctx.block,), (ctx.x, y, n)), result=lambda: y,
                launches=[{"kernel": "toy_scale_twice", "grid": grid, "block": ctx.block}], depth=1, scratch=[y])


register_variant(Variant(
    op="toy_scale", name="one_per_thread", origin="tests/plugins: a toy op", series="plugin", order=1,
    prepare=prepare, block_sizes=(128, 256), bytes_model="2 * n * itemsize", tolerance_model="exact",
    deterministic_expected=True, grid_independent=True,
    source=str(Path(__file__).with_name("toy_scale.cu")), kernels=("toy_scale_twice",),
))
