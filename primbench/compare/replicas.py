"""The same cases on several GPUs of one model (`run --mode replicate`, or one run per host of a
fleet): the spread of each case's median across the GPUs, and the GPU that is slow.

One noisy case must not condemn a GPU. Each GPU's evidence is the log-ratio, case by case, of its
median to the median of its siblings' medians; a GPU is flagged only when the median of those
ratios is past the threshold AND a Wilcoxon signed-rank test across the cases says the ratios are
not centred on 0 (p < ALPHA). With two GPUs each is the other's sibling, so only the slower is
flagged. No CuPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from primbench.errors import UserError
from primbench.runfile import stats
from primbench.text_safety import printable

DEFAULT_THRESHOLD = 0.05  # as compare's default: a GPU 5 % off its siblings is worth a look
ALPHA = 0.01
# The fewest cases with which a two-sided exact Wilcoxon test can reach p < ALPHA: its smallest
# p is 2 / 2^n (0.0078 at 8 cases, 0.016 at 7). Below this, say that the test cannot flag.
MIN_CASES = math.ceil(math.log2(2 / ALPHA))


@dataclass
class GpuVerdict:
    label: str  # 'GPU 1 GPU-3f2a...' or 'host GPU-3f2a...'
    run: str
    cases: int
    ratio: float  # exp(median log-ratio): 1.08 is 8 % slower than its siblings
    p_value: float | None
    flagged: bool


@dataclass
class Comparison:
    gpu_name: str
    threshold: float
    common: int
    gpus: list[GpuVerdict] = field(default_factory=list)
    spread: list[tuple[str, float, list[float]]] = field(default_factory=list)  # (case, (max-min)/min, medians), widest first
    note: str = ""


def _label(run) -> str:
    block = run.header.gpus or {}
    uuid = (run.device.get("uuid") or "?")[:16]
    devices = block.get("devices") or []
    if block.get("mode") == "replicate" and devices and isinstance(devices[0], dict) and "index" in devices[0]:
        return f"GPU {devices[0]['index']} {uuid}"
    return f"{run.header.host.get('hostname') or '?'} {uuid}"


def _medians(run) -> dict:
    found = {}
    for record in run.cases:
        summary = stats.summarize(record.cold_ms) if record.ok else None
        if summary is not None and summary.median > 0:
            found[record.case] = summary.median
    return found


def compare_replicas(paths, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
    """The runs of `paths` (one GPU each, one GPU model) set side by side."""
    from primbench.runfile.io import load_run

    runs = [load_run(path) for path in paths]
    if len(runs) < 2:
        raise UserError("replicas needs at least two runs of one GPU model (e.g. the files of one `run --mode replicate`)")
    models = sorted({run.device.get("name") or "unknown GPU" for run in runs})
    if len(models) > 1:
        raise UserError(f"replicas compares GPUs of one model, and these runs are of {printable(', '.join(models))[:200]}; "
                        "give one model's runs")
    medians = [_medians(run) for run in runs]
    common = sorted(set.intersection(*(set(m) for m in medians)), key=lambda case: case.key)
    result = Comparison(models[0], threshold, len(common))
    if not common:
        raise UserError("these runs share no valid case; replicas compares the same cases on each GPU")
    for i, run in enumerate(runs):
        ratios = [math.log(medians[i][case] / _median([m[case] for j, m in enumerate(medians) if j != i])) for case in common]
        result.gpus.append(_verdict(_label(run), str(run.path), ratios, threshold))
    if len(runs) == 2:  # each is the other's sibling: only the slower can be the slow one
        slower = max(result.gpus, key=lambda g: g.ratio)
        for verdict in result.gpus:
            verdict.flagged = verdict.flagged and verdict is slower
    if len(common) < MIN_CASES:
        result.note = f"only {len(common)} case(s) in common: too few for the test to flag any GPU (it needs {MIN_CASES})"
    for case in common:
        values = [m[case] for m in medians]
        result.spread.append((case.label, max(values) / min(values) - 1, values))
    result.spread.sort(key=lambda row: -row[1])
    return result


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _verdict(label: str, run: str, ratios: list[float], threshold: float) -> GpuVerdict:
    from scipy.stats import wilcoxon

    center = math.exp(_median(ratios))
    p_value = None
    if len(ratios) >= MIN_CASES and any(r != 0 for r in ratios):
        p_value = float(wilcoxon(ratios).pvalue)
    # Only a slow GPU is flagged: with three GPUs, one slow sibling pulls the others' medians of
    # their siblings up, so the healthy two look "fast" by up to half its excess (review finding).
    flagged = p_value is not None and p_value < ALPHA and center - 1 > threshold
    return GpuVerdict(label, run, len(ratios), center, p_value, flagged)


def print_summary(result: Comparison, widest: int = 10) -> None:
    """The verdict per GPU, then the cases whose medians differ most across the GPUs. Names from
    the run files (GPU model, hostname, file, case) are printable: no escape sequence reaches the terminal."""
    print(f"replicas: {len(result.gpus)} runs of {printable(result.gpu_name)}, {result.common} valid cases in common; "
          f"a GPU is flagged past {result.threshold * 100:g} % from its siblings with p < {ALPHA} (Wilcoxon)")
    for gpu in result.gpus:
        p_text = "n/a" if gpu.p_value is None else f"{gpu.p_value:.2g}"
        verdict = "SLOW" if gpu.flagged else "ok"
        print(f"  {printable(gpu.label):<34} {(gpu.ratio - 1) * 100:+6.1f} % vs siblings  p {p_text:<8} {verdict:<4}  "
              f"{printable(Path(gpu.run).name)[:60]}")
    if result.note:
        print(f"  note: {result.note}")
    print("widest spread of a case's median across the GPUs:")
    for label, spread, values in result.spread[:widest]:
        print(f"  {spread * 100:5.1f} %  {printable(label)[:80]}  ({', '.join(f'{v * 1e3:.1f}' for v in values)} us)")


def flagged(result: Comparison) -> list[GpuVerdict]:
    return [gpu for gpu in result.gpus if gpu.flagged]
