"""What the site's shared pages (index, history, GPU models) need of one run, kept in
<site>/.primbench-digests.json under the run's page key: a publish reads a run file in full only
when its digest or its page is missing or stale, so adding one run to a year of nightly runs
costs that run's reading and rendering, not 365 (reading one takes ~1.5 s).

A missing, damaged or foreign digest file only means every run is read again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from primbench.report import selection
from primbench.report.site.page_cache import read_cache_file, save_cache_file
from primbench.runfile.frame import block_or_none, is_number
from primbench.runfile.io import run_stem

DIGEST_NAME = ".primbench-digests.json"
# 2: the history keeps each op's smallest, middle and largest size, not only HEADLINE_SIZES.
# 3: each history point names its case and the median of the figure the verdict engine judges it on.
# 4: the index line's ratio is against the best library at its size, and names it.
# 5: each history point names its variant's series (the history's colours).
DIGEST_SCHEMA = 5
# The index line's headline sizes (the seed's size and the largest of the study), also kept in
# the history wherever an op measured them.
HEADLINE_SIZES = (2**25, 2**28)


def digest(run, views, page: str) -> dict:
    """One run as the index line (when, commit, headline numbers) and its history cases: for each
    op at its history_sizes, each variant's median at its headline block (the history) and its
    fastest case's time and % of peak (the GPU models page). `views`: the run's op views
    (report/op_view.py), which its report reads too."""
    device, frame = run.device, views.frame
    statuses = {str(k): int(v) for k, v in frame["status"].value_counts().items()} if not frame.empty else {}
    git = run.git
    return {"id": run.header.run_id or run_stem(run.path), "page": page, "gpu": device.get("name") or "unknown GPU",
            "started": run.header.started, "git": git.get("sha"), "dirty": git.get("dirty"),
            "config": run.header.config.get("name"), "cases": len(run.cases), "statuses": statuses,
            "finished": bool(run.finished), "headline": _headline(views.story), "points": _points(views, run),
            "source": str(run.path)}


def _headline(view) -> list[dict]:
    """The story op's fastest kernel at each of HEADLINE_SIZES, against the best library there."""
    if view is None:
        return []
    lines = []
    for n in HEADLINE_SIZES:
        best = selection.best_case(view.primary, n)
        if best is None:
            continue
        library = view.libraries.get(n)
        # The block is named beside the time: the fastest block, which the story's block 256 may not be.
        lines.append({"n": n, "variant": best["variant"], "block": block_or_none(best["block"]),
                      "time_us": float(best["median_ms"]) * 1e3,
                      "pct_peak": _number(best["pct_peak"]),
                      "library": str(library["variant"]) if library is not None else None,
                      "ratio_to_library": float(best["median_ms"] / library["median_ms"]) if library is not None else None})
    return lines


def history_sizes(sizes) -> list[int]:
    """The sizes of an op whose history is kept: the smallest it measured (`check` gates every case
    of a run, so the smallest measured is the smallest gated: where an extra launch shows), the
    middle one (the lower median of the sizes), the largest, and any of HEADLINE_SIZES."""
    present = sorted({int(n) for n in sizes})
    if not present:
        return []
    middle = present[(len(present) - 1) // 2]
    return sorted({present[0], middle, present[-1], *(n for n in HEADLINE_SIZES if n in present)})


def _points(views, run) -> list[dict]:
    """Each history case: op, n, variant, order, median at the headline block, fastest time and % of
    peak, for every op in its primary slice at its history_sizes; and the case at the headline block
    with the median of the figure compare judges it on (compare/rule.py), which step detection reads."""
    from primbench.compare.rule import Thresholds, figure_samples

    records, thresholds = {record.key: record for record in run.cases}, Thresholds.from_header(run.header)
    points = []
    for view in views.ops:
        op, cases = view.op, view.primary[view.primary["valid"]]
        for n in history_sizes(cases["n"]):
            for variant, mine in cases[cases["n"] == n].groupby("variant"):
                point = _point(op, int(n), variant, mine)
                record = records.get(point["key"])
                figure = thresholds.lone_figure(record) if record is not None else None
                samples = figure_samples(record, figure) if record is not None else ()
                point["figure"], point["judged_us"] = figure, (float(np.median(samples)) * 1e3 if samples else None)
                points.append(point)
    return points


def _point(op: str, n: int, variant: str, mine) -> dict:
    block = selection.choose_block(mine, n)
    chosen = mine if block is None else mine[mine["block"] == block]
    fastest = mine.sort_values("median_ms").iloc[0]
    return {"op": op, "n": n, "variant": variant, "order": int(fastest["order"]), "series": _text(fastest.get("series")),
            "median_us": float(chosen["median_ms"].iloc[0]) * 1e3 if not chosen.empty else None,
            "best_us": float(fastest["median_ms"]) * 1e3, "pct_peak": _number(fastest["pct_peak"]),
            "key": str(chosen["key"].iloc[0]) if not chosen.empty else None}


def _number(value):
    return float(value) if is_number(value) else None


def _text(value):
    return value if isinstance(value, str) else None


class DigestCache:
    """The digests of one site folder, by page key. Whatever the file holds is checked field by
    field: a digest of another shape is dropped (its run is read again), never trusted."""

    def __init__(self, site: Path):
        self.path = Path(site) / DIGEST_NAME
        loaded = read_cache_file(self.path)
        valid = isinstance(loaded, dict) and loaded.get("schema") == DIGEST_SCHEMA and isinstance(loaded.get("digests"), dict)
        self.digests = {key: d for key, d in loaded["digests"].items() if well_formed(d)} if valid else {}

    def get(self, key: str) -> dict | None:
        return self.digests.get(key)

    def save(self, kept: dict) -> None:
        """Keep `kept` ({key: digest}) only: a run no longer published drops out."""
        self.digests = kept
        save_cache_file(self.path, json.dumps({"schema": DIGEST_SCHEMA, "digests": kept}, sort_keys=True) + "\n")


# The fields of a digest as digest() makes them, and the types each may hold.
_NONE, _NUMBER = type(None), (int, float)
_FIELDS = {"id": (str,), "page": (str,), "gpu": (str,), "started": (str, _NONE), "git": (str, _NONE),
           "dirty": (bool, _NONE), "config": (str, _NONE), "cases": (int,), "statuses": (dict,), "finished": (bool,),
           "headline": (list,), "points": (list,)}
_HEADLINE = {"n": (int,), "variant": (str,), "block": (int, _NONE), "time_us": _NUMBER, "pct_peak": (*_NUMBER, _NONE),
             "library": (str, _NONE), "ratio_to_library": (*_NUMBER, _NONE)}
_POINT = {"op": (str,), "n": (int,), "variant": (str,), "order": (int,), "series": (str, _NONE), "median_us": (*_NUMBER, _NONE),
          "best_us": _NUMBER, "pct_peak": (*_NUMBER, _NONE), "key": (str, _NONE), "figure": (str, _NONE),
          "judged_us": (*_NUMBER, _NONE)}


def _is(value, types) -> bool:
    # JSON's true is not a number here: bool is a subclass of int in Python.
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def _fields_are(obj, fields: dict) -> bool:
    return isinstance(obj, dict) and obj.keys() == fields.keys() and all(_is(obj[k], t) for k, t in fields.items())


def well_formed(d) -> bool:
    """Whether `d` has exactly the shape and types of a saved digest (digest() without its source)."""
    return (_fields_are(d, _FIELDS) and all(isinstance(k, str) and _is(v, (int,)) for k, v in d["statuses"].items())
            and all(_fields_are(line, _HEADLINE) for line in d["headline"])
            and all(_fields_are(point, _POINT) for point in d["points"]))
