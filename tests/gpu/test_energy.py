"""Energy per operation on the GPU (measuring/energy.py, marker `gpu`): a run with `timing: energy:`
records the idle draw and, for the cases it selects, windows whose figures agree with each other,
with the case's own time and with the GPU's power limit; the cases it does not select have none."""

import pytest

from primbench.config import loading
from primbench.run import runner
from primbench.runfile import stats
from primbench.runfile.io import load_run

pytestmark = [pytest.mark.gpu, pytest.mark.timed]  # timed: run alone (make gpu-test)

CONFIG = ("name: energy-tiny\ntiming: {min_samples: 10, max_time_s: 0.2, energy: {cases: ['reduce/vector_load_sum'], "
          "window_s: 0.3}}\nsweeps:\n  - op: reduce\n    variants: [vector_load_sum, reduce2_sequential]\n"
          "    sizes: ['2^25+3', 1000]\n    block_sizes: [256]\n")


def test_an_energy_run_records_idle_draw_and_consistent_windows_for_the_cases_it_selects(tmp_path):
    path = tmp_path / "energy.yaml"
    path.write_text(CONFIG)
    run = load_run(runner.run(loading.load_config(path), output=str(tmp_path)).path)
    header = run.header.energy
    assert header["available"] is True, header
    limit = run.header.device.get("power_limit_w") or 2000.0
    assert 10.0 < header["idle_w"] < limit and 0.005 <= header["counter_step_s"] <= 1.0
    chosen = {c.case.n: c for c in run.cases if c.case.variant == "vector_load_sum"}
    for case in run.cases:
        if case.case.variant != "vector_load_sum":
            assert case.energy == {}
    tiny = chosen.pop(1000).energy  # launch-bound near the idle draw: windows differ by up to 5 %, only sane
    assert len(tiny["windows"]) == 3 and tiny["avg_w"] > 0.9 * header["idle_w"] and tiny["op_ms"] > 0
    for n, case in chosen.items():
        e = case.energy
        print(n, {k: e.get(k) for k in ("mj_per_op", "avg_w", "peak_w", "op_ms", "ramp_s", "settled", "counter_step_s",
                                         "ops_per_launch", "method")})
        assert len(e["windows"]) == 3 and e["discarded_windows"] == 0
        assert header["idle_w"] < e["avg_w"] <= 1.05 * limit
        per_window = [w["mj"] / w["ops"] for w in e["windows"]]
        assert max(per_window) / min(per_window) < 1.05, per_window  # 647 W at 2^25: within 1 % on the H200
        # back to back and hot, the time per operation is at most the cold median and near the batch figure
        cold = stats.summarize(case.cold_ms).median
        assert e["op_ms"] <= 1.02 * cold
        if case.samples.batch_ms:
            assert e["op_ms"] == pytest.approx(stats.summarize(case.samples.batch_ms).median, rel=0.15)
        # the record's figure is its windows pooled (what every reader recomputes from them)
        assert e["mj_per_op"] == pytest.approx(sum(w["mj"] for w in e["windows"]) / sum(w["ops"] for w in e["windows"]), rel=1e-6)
        assert all(w["seconds"] >= 0.3 for w in e["windows"])  # each window at least window_s, step to step
