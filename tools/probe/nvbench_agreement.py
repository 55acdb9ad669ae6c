"""primbench's cold samples against NVIDIA's nvbench (`cuda.bench`) on the same plans, in one process,
and the same plans under variants of primbench's cold protocol, to find what a difference comes from.

For each case (a plan made exactly as the runner makes it, verified before it is timed) and each
repetition, in turn:
  - nvbench: `state.exec` on its own stream, its default cold protocol (L2 flushed by a memset of
    the L2 size, a synchronisation, the blocking kernel, events around the launch);
  - primbench: Timer.measure with primbench's own cold sample, as a run times the case;
  - protocol variants, passed to Timer.measure as a ColdProtocol, that walk from primbench's to
    nvbench's a step at a time: flush 1 x or 2 x L2, the host waiting for the flush or not, the
    hold stamped (SM clock) or plain; cold protocol 1 (no wait); and an event pair around nothing.
    Each is sampled as a run samples a case: its own warm-up, then a hold of twice the measured
    enqueue time plus 20 us (before this probe used Timer.measure it held a fixed 60 us).
Prints one line per case: medians and means, each ratio to nvbench's, and writes every sample.

    python -m tools.probe.nvbench_agreement [--case reduce/vector_load_sum@2^20 ...] [--json OUT]

Needs cuda-bench (pip 'cuda-bench[cu13]', or its wheel: pip install --no-deps cuda_bench-*.whl).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

DEFAULT_CASES = ("reduce/vector_load_sum@2^20", "stencil/blur1d_naive_global@2^20",
                 "scan/round_sums_async_copy@2^20:int32", "histogram/warp_aggregated@2^20")
SAMPLES = 400


def parse_case(text: str):
    """'op/variant@2^k[:dtype]' -> (variant key, n, dtype or None)."""
    key, _, rest = text.partition("@")
    size, _, dtype = rest.partition(":")
    base, _, power = size.partition("^")
    return key, (int(base) ** int(power) if power else int(size)), dtype or None


def plan_for(text: str):
    """The case's plan, verified, as the runner makes it."""
    from primbench import ops
    from primbench.verify.sequence import verify_case
    from tools.common import prepared

    key, n, dtype = parse_case(text)
    runner, case, variant, module, _x = prepared(key, n, dtype)
    seed = 11
    verified = verify_case(case, variant, runner._inputs_for(case, seed),
                           lambda x, grid_scale: runner._context(module, x, case, grid_scale),
                           checks=ops.checks(case.op), determinism_runs=0)
    if verified.reason:
        raise SystemExit(f"{text}: {verified.reason}")
    if verified.plan.restore is not None:
        raise SystemExit(f"{text}: an in-place plan; pick a case without a restore step")
    return case, verified.plan, runner


def register_with_nvbench(name: str, run) -> None:
    """Register `run` as the nvbench benchmark `name`: cold samples only, on nvbench's own stream."""
    import cupy
    from cuda import bench

    def benchmark(state):
        state.set_min_samples(SAMPLES)
        state.set_timeout(20.0)

        def launch(launch):
            _, pointer = launch.get_stream().__cuda_stream__()
            with cupy.cuda.ExternalStream(pointer):
                run()

        state.exec(launch, batched=False)

    benchmark.__name__ = benchmark.__qualname__ = name
    bench.register(benchmark)


def nvbench_results(workdir: Path) -> dict[str, tuple[list[float], dict]]:
    """Run every registered benchmark once (nvbench's main is called once per process) and read
    back, per benchmark, its cold samples (ms) and summaries (mean, SM clock)."""
    from cuda import bench
    from cuda.bench.results import BenchmarkResult

    out = workdir / "nvbench.json"
    bench.run_all_benchmarks(["nvbench", "--json", str(out), "--jsonbin", str(workdir / "samples"), "--max-noise", "0.3"])
    results = {}
    for name, subbench in BenchmarkResult.from_json(out).items():
        state = subbench.states[0]
        summaries = {tag: s.value for tag, s in state.summaries.items()
                     if tag in ("nv/cold/time/gpu/mean", "nv/cold/sm_clock_rate/mean", "nv/cold/sample_size")}
        samples = [s * 1e3 for s in state.samples] if state.samples is not None else []
        results[name] = (samples, summaries)
    return results


def protocol_samples_ms(timer, run, protocol) -> list[float]:
    """SAMPLES cold samples of `run` as `protocol` takes them: Timer.measure's own sampling, handed
    the protocol (no copy of the sequence here)."""
    from primbench.measuring.policy import TimingPolicy

    policy = TimingPolicy(min_samples=SAMPLES, max_samples=SAMPLES, min_time_s=0.0, max_time_s=30.0, batch_below_us=0.0)
    return timer.measure(run, policy, protocol=protocol).cold_ms


def protocols():
    """{label: ColdProtocol}: primbench's own, the steps towards nvbench's (1 x L2, the host waiting,
    a plain hold), and primbench's cold protocol 1 (no wait for the flush), which the table in
    docs/perf-notes.md, "Small kernels against nvbench", has a column of."""
    from primbench.measuring.timing import PRIMBENCH_COLD, ColdProtocol

    return {
        "primbench": PRIMBENCH_COLD,  # 2 x L2, the host waits, the hold stamped: as a run times a case
        "2xL2 wait plain": ColdProtocol(stamped=False),
        "1xL2 wait plain": ColdProtocol(flush_l2s=1.0, stamped=False),  # nvbench's protocol
        "2xL2 nowait plain": ColdProtocol(wait_for_flush=False, stamped=False),
        "1xL2 nowait plain": ColdProtocol(flush_l2s=1.0, wait_for_flush=False, stamped=False),
        "2xL2 nowait stamped": ColdProtocol(wait_for_flush=False),  # cold protocol 1, primbench's before the wait
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="op/variant@2^k[:dtype] (repeatable)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write every figure and sample here")
    args = parser.parse_args()

    from primbench.measuring.timing import PRIMBENCH_COLD, Timer

    workdir = Path(tempfile.mkdtemp(prefix="nvbench-agreement-"))
    cases, timer = [], None
    for text in args.case or DEFAULT_CASES:
        case, plan, runner = plan_for(text)
        timer = timer or Timer(runner.device.l2_bytes)
        names = [f"{case.op}_{case.variant}_{case.n}_{repeat}" for repeat in range(args.repeats)]
        for name in names:
            register_with_nvbench(name, plan.run)
        cases.append((text, case, plan, names, {}))

    def primbench_round():
        for _text, _case, plan, _names, series in cases:
            for label, protocol in protocols().items():
                series.setdefault(label, []).extend(protocol_samples_ms(timer, plan.run, protocol))
            series.setdefault("empty event pair", []).extend(protocol_samples_ms(timer, lambda: None, PRIMBENCH_COLD))

    # nvbench between primbench's rounds, so that a drift of the clock over the call shows.
    primbench_round()
    nvbench = nvbench_results(workdir)
    for _ in range(args.repeats - 1):
        primbench_round()

    figures = []
    for text, case, _plan, names, series in cases:
        series["nvbench"] = [t for name in names for t in nvbench[name][0]]
        nvbench_meta = [nvbench[name][1] for name in names]
        nv_mean_us = statistics.mean(m["nv/cold/time/gpu/mean"] for m in nvbench_meta) * 1e6
        nv_median_us = statistics.median(series["nvbench"]) * 1e3 if series["nvbench"] else None
        row = {"case": text, "n": case.n, "block": case.block, "dtype": case.dtype, "nvbench_summaries": nvbench_meta,
               "medians_us": {k: statistics.median(v) * 1e3 for k, v in series.items() if v},
               "means_us": {k: statistics.mean(v) * 1e3 for k, v in series.items() if v}, "samples_ms": series}
        clock = statistics.mean(m.get("nv/cold/sm_clock_rate/mean") or 0 for m in nvbench_meta) / 1e6
        print(f"{text} (block {case.block}, {case.dtype}): nvbench mean {nv_mean_us:.3f} us, SM clock {clock:.0f} MHz")
        for label, mean_us in row["means_us"].items():
            median_us = row["medians_us"][label]
            against_median = f"  median/nvbench's {median_us / nv_median_us:.4f}" if nv_median_us else ""
            print(f"  {label:22} median {median_us:8.3f} us  mean {mean_us:8.3f} us  mean/nvbench's {mean_us / nv_mean_us:.4f}"
                  f"{against_median}", flush=True)
        figures.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
