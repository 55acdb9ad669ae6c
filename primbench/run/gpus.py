"""Which GPUs a run uses (`--gpus all|0,2`, `--mode shard|replicate`) and how a sweep's cases are
split across them. Needs no GPU to parse or split; counting the GPUs asks NVML (never CuPy).

Indices are CUDA's: the i-th GPU this process may use. Where CUDA_VISIBLE_DEVICES is already set (a
Slurm allocation, a CI runner's slot), `--gpus all` means those GPUs and `--gpus 1` the second of
them; each worker is given its one entry of that list as its own CUDA_VISIBLE_DEVICES.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from primbench.errors import UserError
from primbench.runfile.case_id import CaseId

MODES = ("shard", "replicate")
MAX_INDEX = 1023  # far past any host; a larger number is a typo, refused before any GPU is asked


@dataclass(frozen=True)
class Gpu:
    """One selected GPU: its CUDA index here, and the CUDA_VISIBLE_DEVICES entry its worker gets."""

    index: int
    visible: str


def parse_selection(text: str) -> tuple[int, ...] | None:
    """`--gpus`: None for 'all', else the indices in the order given; one line on what is wrong."""
    given = text.strip()
    if given == "all":
        return None
    shown = given[:40]
    parts = [part.strip() for part in given.split(",")]
    if not given or not all(re.fullmatch(r"[0-9]{1,4}", part) for part in parts):  # \d takes any script's digits
        raise UserError(f"--gpus {shown!r}: give 'all' or GPU indices from 0, comma-separated, e.g. --gpus 0,2")
    indices = tuple(int(part) for part in parts)
    repeated = sorted({i for i in indices if indices.count(i) > 1})
    if repeated:
        raise UserError(f"--gpus {shown!r}: GPU {repeated[0]} is named twice; name each GPU once")
    if max(indices) > MAX_INDEX:
        raise UserError(f"--gpus {shown!r}: GPU {max(indices)} is past any host's GPUs; `primbench info` or nvidia-smi lists them")
    return indices


def visible_devices() -> list[str]:
    """The CUDA_VISIBLE_DEVICES entries this process may use, or '0'..'N-1' from NVML's count."""
    from primbench.measuring.device import _nvml

    # No driver or no GPU is one line here, before any worker starts (not one line per worker, plus
    # the scheduler's, when CUDA_VISIBLE_DEVICES lists GPUs as Slurm and CI runners set it).
    nvml = _nvml()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        valid = []
        for entry in (part.strip() for part in listed.split(",")):
            if not entry or entry.startswith("-"):  # CUDA stops at the first invalid entry (-1 hides every GPU)
                break
            valid.append(entry)
        return valid
    return [str(i) for i in range(nvml.nvmlDeviceGetCount())]


def select(text: str, visible: list[str]) -> list[Gpu]:
    """The GPUs `--gpus text` names among the visible ones."""
    indices = parse_selection(text)
    if not visible:
        raise UserError("no GPU is visible to this process (CUDA_VISIBLE_DEVICES hides them all); unset it or list GPUs in it")
    if indices is None:
        return [Gpu(i, entry) for i, entry in enumerate(visible)]
    missing = [i for i in indices if i >= len(visible)]
    if missing:
        raise UserError(f"--gpus {text.strip()[:40]!r}: GPU {missing[0]} does not exist here; this host shows "
                        f"{len(visible)} GPU(s), 0 to {len(visible) - 1}")
    return [Gpu(i, visible[i]) for i in indices]


def check_mode(gpus_text: str | None, mode: str | None) -> None:
    """--mode means something only with --gpus."""
    if mode is not None and gpus_text is None:
        raise UserError(f"--mode {mode} chooses how several GPUs share a sweep; give --gpus too, e.g. --gpus all --mode {mode}")


def is_today(gpus_text: str | None) -> bool:
    """Whether the run is the one-GPU run of before --gpus existed: no --gpus, or --gpus 0."""
    return gpus_text is None or parse_selection(gpus_text) == (0,)


def case_cost(case: CaseId) -> float:
    """A case's expected share of a sweep's time: a fixed part (verification, the sampler's minimum
    time) and a part that grows with its size (inputs, references, each sample)."""
    from primbench.verify import inputs

    try:
        itemsize = inputs.itemsize(case.dtype)
    except (KeyError, ValueError):
        itemsize = 4
    return 1.0 + case.n * itemsize / 2**28


def split(cases: list[CaseId], count: int) -> list[list[CaseId]]:
    """The cases in `count` shards of about equal cost, each in run order. Cases that share an
    input stay together (the input and its reference are made once per GPU); the groups go,
    largest first, to the least loaded shard."""
    from primbench.run.runner import input_key, order_cases

    groups: dict[str, list[CaseId]] = {}
    for case in order_cases(cases):
        groups.setdefault(input_key(case), []).append(case)
    shards: list[list[CaseId]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for key in sorted(groups, key=lambda k: -sum(map(case_cost, groups[k]))):
        target = loads.index(min(loads))
        shards[target].extend(groups[key])
        loads[target] += sum(map(case_cost, groups[key]))
    order = {case.key: i for i, case in enumerate(order_cases(cases))}
    return [sorted(shard, key=lambda c: order[c.key]) for shard in shards]
