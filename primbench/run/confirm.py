"""The GPU half of `check --confirm` (compare/confirmation.py holds the rule): one suspect case timed
again on this GPU as `primbench ab --base SHA` times a variant: A as commit SHA declared it, B as
the working tree declares it, both verified, then cold samples of each in turn. `primbench bisect`
times its steps here too, with B as another commit declared it (run/bisect.py).

Each suspect is timed in a child process (`python -m primbench.run.confirm`) with a time limit, so
that whatever the re-timing meets (a kernel that no longer builds, a CUDA error, a kernel that never
returns, a context it breaks) is one reason on that suspect, and `check` itself goes on to print its
table and write its Markdown and JUnit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from primbench.errors import NoGPUError, UserError
from primbench.runfile.case_id import CaseId

# The child's time beyond its samples: Python, CuPy, building A at the baseline's commit and B, and
# verifying both (tens of seconds for a large case's first build).
CHILD_OVERHEAD_S = 180.0


def why_not_here() -> str | None:
    """Why no suspect can be timed on this machine (no usable GPU), or None."""
    from primbench.measuring.device import require_gpu

    try:
        require_gpu()
    except NoGPUError:
        return "no GPU here"
    return None


def retime_in_child(case: CaseId, hashes: tuple, sha: str, rounds: int, threshold: float, seconds: float,
                    new_sha: str | None = None):
    """(B/A, its 95 % interval, the verdict), timed by a child process given `seconds` of samples and
    CHILD_OVERHEAD_S more; whatever stops it is a UserError with its reason in one line. B is the
    working tree's variant, or commit `new_sha`'s where one is given."""
    from primbench import registry
    from primbench.resources import child_environment

    request = {"case": _case_json(case), "base_hash": hashes[0],
               "new_hash": hashes[1], "sha": sha, "new_sha": new_sha, "rounds": rounds, "threshold": threshold,
               "plugins": [str(path) for path in registry.plugins()]}
    limit = seconds + CHILD_OVERHEAD_S
    try:
        done = subprocess.run([sys.executable, "-m", "primbench.run.confirm"], input=json.dumps(request), text=True,
                              capture_output=True, timeout=limit, env=child_environment())
    except subprocess.TimeoutExpired:
        raise UserError(f"the re-timing did not end within {limit:.0f} s (a kernel that never returns?)") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    answer = json.loads(lines[-1]) if lines else {"error": (done.stderr.strip().splitlines() or ["no answer"])[-1]}
    if "error" in answer:
        raise UserError(str(answer["error"]).removeprefix("primbench: ")[:200])
    return answer["ratio"], answer["low"], answer["high"], answer["verdict"]


def _case_json(case: CaseId) -> dict:
    return {"op": case.op, "variant": case.variant, "dtype": case.dtype, "n": case.n, "block": case.block,
            "distribution": case.distribution, "params": dict(case.params.items_sorted()) if case.params else {}}


def retime_against(case: CaseId, base_hash: str | None, new_hash: str | None, sha: str, rounds: int, threshold: float,
                   new_sha: str | None = None):
    """(B/A, its 95 % interval, the verdict) of the case's variant now (B; commit `new_sha`'s where
    one is given) against commit `sha`'s (A), interleaved on this GPU. Refused (UserError, one line)
    where B is not the code the new run measured (`new_hash`), commit `sha`'s is not the code the
    baseline measured (`base_hash`), or the variant is not registered here."""
    from primbench import registry
    from primbench.run.ab import run_ab
    from primbench.run.ab_revision import variant_at

    key = f"{case.op}/{case.variant}"
    if not registry.select(case.op, case.variant):
        raise UserError(f"{key} is not registered here (a plugin's variant: give --plugin FILE)")
    today = registry.get(case.op, case.variant) if new_sha is None else variant_at(new_sha, key, option="commit")
    if new_hash and today.hash() != new_hash:
        raise UserError(f"the working tree's {key} is not the code the new run measured (hash {today.hash()}, the run's "
                        f"{new_hash}): check out the new run's commit")
    then = variant_at(sha, key, option="the baseline's commit" if new_sha is None else "commit")
    if base_hash and then.hash() != base_hash:
        raise UserError(f"{key} at {sha[:12]} is not the code the baseline measured (hash {then.hash()}, the baseline's "
                        f"{base_hash}): the baseline came from another tree")
    (result,) = run_ab(_config_of(case), key, key, rounds=rounds, threshold=threshold, variant_a=then,
                       variant_b=today if new_sha is not None else None)
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


def one_line_reason(exc: Exception) -> str:
    """What stopped a re-timing, in one line: a UserError's own line; NVRTC's first error for a
    kernel that does not build (its log runs to many lines, the first naming only the file); else
    the exception's type and first line."""
    from primbench.build import KernelBuildError

    lines = str(exc).splitlines()
    if isinstance(exc, UserError):
        return lines[0] if lines else ""
    if isinstance(exc, KernelBuildError):
        first_error = next((line.strip() for line in lines[1:] if "error" in line), "")
        first_error = re.sub(r"^\S*/(?=[^/\s]*\(\d+\))", "", first_error)  # the file's name, not its temporary folder
        return f"does not build: {first_error or (lines[0] if lines else '')}"[:200]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def main() -> int:
    """The child: one request on standard input, one JSON answer line on standard output."""
    from primbench import registry
    from primbench.runfile.case_id import CaseId, Params

    request = json.loads(sys.stdin.read())
    try:
        for plugin in request["plugins"]:
            registry.load_plugin(plugin)
        c = request["case"]
        case = CaseId(c["op"], c["variant"], c["dtype"], c["n"], c["block"], c["distribution"], Params(c.get("params") or {}))
        ratio, low, high, verdict = retime_against(case, request["base_hash"], request["new_hash"], request["sha"],
                                                   request["rounds"], request["threshold"], request.get("new_sha"))
        print(json.dumps({"ratio": ratio, "low": low, "high": high, "verdict": verdict}))
    except Exception as exc:  # noqa: BLE001 (anything the re-timing meets is this suspect's reason, in one line)
        print(json.dumps({"error": one_line_reason(exc)}))
    sys.stdout.flush()
    from primbench.run.ab_revision import remove_checkouts

    remove_checkouts()  # os._exit below would leave each commit's temporary folder behind
    # The answer is out; a context the re-timing broke would print a traceback per freed buffer.
    os._exit(0)


if __name__ == "__main__":
    main()
