"""The GPU half of `check --confirm` (compare/confirmation.py holds the rule): one suspect case timed
again on this GPU as `primbench ab --base SHA` times a variant: A as commit SHA declared it, B as
the working tree declares it, both verified, then cold samples of each in turn in one process."""

from __future__ import annotations

from primbench.errors import NoGPUError, UserError
from primbench.runfile.case_id import CaseId


def why_not_here() -> str | None:
    """Why no suspect can be timed on this machine (no usable GPU), or None."""
    from primbench.measuring.device import require_gpu

    try:
        require_gpu()
    except NoGPUError:
        return "no GPU here"
    return None


def retime_against(case: CaseId, variant_hash: str | None, sha: str, rounds: int, threshold: float):
    """(B/A, its 95 % interval, the verdict) of the case's variant now (B) against commit `sha`'s (A),
    interleaved on this GPU. Refused (UserError, one line) where the working tree's variant is not
    the code the new run measured (`variant_hash`), or is not registered here."""
    from primbench import registry
    from primbench.run.ab import run_ab
    from primbench.run.ab_revision import variant_at

    key = f"{case.op}/{case.variant}"
    if not registry.select(case.op, case.variant):
        raise UserError(f"{key} is not registered here (a plugin's variant: give --plugin FILE)")
    today = registry.get(case.op, case.variant)
    if variant_hash and today.hash() != variant_hash:
        raise UserError(f"the working tree's {key} is not the code the new run measured (hash {today.hash()}, the run's "
                        f"{variant_hash}): check out the new run's commit")
    (result,) = run_ab(_config_of(case), key, key, rounds=rounds, threshold=threshold, variant_a=variant_at(sha, key))
    return result.ratio, result.ci_low, result.ci_high, result.verdict


def _config_of(case: CaseId):
    """A config of the one case: its size, block, dtype, distribution and parameters."""
    from primbench.config.sweep import Config, Sweep
    from primbench.measuring.policy import TimingPolicy
    from primbench.runfile.locations import RESULTS_DIR

    sweep = Sweep(name="check --confirm", op=case.op, variants=(case.variant,), sizes=(case.n,),
                  block_sizes=(case.block,) if case.block is not None else (), dtypes=(case.dtype,),
                  distributions=(case.distribution,), explicit=frozenset({case.variant}),
                  params=tuple((name, (value,)) for name, value in (case.params.items_sorted() if case.params else ())))
    return Config(path="check --confirm", name="confirm", output=str(RESULTS_DIR), timing=TimingPolicy(),
                  determinism_runs=3, sweeps=(sweep,))
