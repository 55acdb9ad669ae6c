"""Which steps of a history the site marks as slowdowns: those `compare` calls SLOWER. Step detection
(step_detect.py) finds where a variant's series of judged medians moves to a lasting new level; each
step up is then judged by the one verdict engine (compare/verdicts.py) on the raw samples of the two
runs on either side of it: the same figure, threshold, floor, U test and baseline spread as `compare`
and `check`. A step that engine calls SAME, BELOW_FLOOR or UNSURE is not marked, nor one whose
protocol changed between the two runs (compare marks it and gates nothing).

The digests say which runs to read (their `source`); a run is read only where a step needs it, and
at most CACHED_RUNS are held at once."""

from __future__ import annotations

from collections import OrderedDict

from primbench.report.site import step_detect

# Step detection proposes, the verdict engine decides: any lasting rise past 1 % is a candidate, so
# that a config's threshold below the default 5 % is honoured too.
CANDIDATE_RISE = 0.01
CACHED_RUNS = 4


class StepJudge:
    """Judges a step between two runs' digests for one case, reading each run file once at most
    while it stays among the CACHED_RUNS most recently used."""

    def __init__(self):
        self._runs: OrderedDict = OrderedDict()

    def _run(self, digest: dict):
        from primbench.runfile.io import RunFileError, load_run

        source = digest.get("source")
        if not source:
            return None
        if source not in self._runs:
            try:
                self._runs[source] = load_run(source)
            except RunFileError:  # gone or damaged since its digest was made: no verdict, no mark
                self._runs[source] = None
            while len(self._runs) > CACHED_RUNS:
                self._runs.popitem(last=False)
        self._runs.move_to_end(source)
        return self._runs[source]

    def slower(self, before: dict, after: dict, key: str):
        """The engine's pair for case `key` from the run of digest `before` to that of `after`, if it
        calls it SLOWER on an unchanged protocol; else None."""
        from primbench.compare import verdicts

        base, new = self._run(before), self._run(after)
        if base is None or new is None:
            return None
        wanted = {record.case for record in new.cases if record.key == key}
        pairs = verdicts.compare_runs(base, new, identities=wanted) if wanted else []
        pair = next((p for p in pairs if p.verdict == verdicts.SLOWER and not p.protocol_changed), None)
        return pair


def slowdowns(variant: str, points: list[tuple[int, float, float, str]], runs: list[dict], judge: StepJudge) -> list:
    """(variant, run index, the point's drawn us, % slower) for each step up of a variant's series
    that the engine calls SLOWER. `points` are (run index, drawn us, judged us, case key), oldest first."""
    judged = [(index, drawn, value, key) for index, drawn, value, key in points if value]
    marks = []
    for at, _rise in step_detect.regressions([value for _, _, value, _ in judged], threshold=CANDIDATE_RISE):
        if at == 0:
            continue
        (before, _, _, _), (index, drawn, _, key) = judged[at - 1], judged[at]
        pair = judge.slower(runs[before], runs[index], key)
        if pair is not None:
            marks.append((variant, index, drawn, (pair.ratio - 1) * 100))
    return marks
