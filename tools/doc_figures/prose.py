"""Figures inside hand-written sentences: each one is found by a pattern around it in its file and
computed from the runs by a function (FIGURES). A check says which figure is stale; a rewrite puts
the computed figure in the group `figure` and leaves the sentence as it is.

A pattern holds one group `figure`; every space in it matches any run of white space (a sentence
may wrap anywhere), and it must match exactly once in its file. The figures are the report's own
(report/story.py, headline.py, the op's tables) in the report's words (report/formats.py)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Callable

from primbench.report import formats, story
from primbench.runfile.frame import is_number
from tools.doc_figures.facts import wall_seconds

RATIO = r"(?P<figure>[0-9][0-9.,]*(?: %|×) (?:faster|slower)|neither faster nor slower)"
PCT = r"(?P<figure>[0-9][0-9.,]* %)"
COUNT = r"(?P<figure>[0-9][0-9,]*)"


@dataclass(frozen=True)
class Figure:
    file: str
    pattern: str
    compute: Callable[[object], str]
    what: str
    # For a ratio: the label of the library the report compares with, and a pattern the label must
    # fit for the sentence's words ("than CUB") to stay true when the report changes its baseline.
    library: Callable[[object], str] | None = None
    named: str = ""

    def regex(self) -> re.Pattern:
        return re.compile(self.pattern.replace(" ", r"\s+"))


def _largest_n(facts, op: str) -> int:
    frame = facts.frame
    return int(frame.loc[(frame["op"] == op) & frame["valid"], "n"].max())


def _ranked(facts, op: str, label: str):
    """A variant's row (its fastest block) in the report's ranking of `op` at its largest size, on the op's primary slice."""
    table = story.ranking_table(facts.view(op), _largest_n(facts, op))
    return table[table["variant"] == label].iloc[0]


def _largest(facts, op: str) -> dict:
    """The report's best-per-size row of `op` at its largest size: its fastest kernel against the
    library (the row the op's one-line summary reads where that size is the op's progression size)."""
    return facts.op(op)["best_per_size"][-1]


def _pct(value) -> str:
    return f"{formats.format_pct(value)} %"


def accuracy_rounding(facts) -> str:
    """'correctly rounded' where the compensated sum errs exactly as float32's rounding of the exact sum does."""
    study = facts.context["accuracy"]
    floor = next(row for row in study["rows"] if row["kind"] == "floor")
    compensated = next(row for row in study["rows"] if row["variant"] == study["headline"]["compensated"])
    ratios = [c / f for c, f in zip(compensated["errors"], floor["errors"]) if f]
    if all(abs(r - 1) < 1e-9 for r in ratios):
        return "correctly rounded"
    return f"within {max(ratios):.3g}× of float32's rounding"


def accuracy_serial(facts) -> str:
    """The plain float32 loop's relative error, smallest to largest over the study's sizes."""
    serial = next(row for row in facts.context["accuracy"]["rows"] if row["kind"] == "serial")
    errors = [e * 100 for e in serial["errors"] if is_number(e)]
    return f"{formats.format_pct(min(errors))}-{formats.format_pct(max(errors))} %"


def largest_ratio(op: str):
    def compute(facts) -> str:
        return formats.format_time_ratio(_largest(facts, op)["ratio_to_library"])

    return compute


def largest_library(op: str):
    return lambda facts: str(_largest(facts, op)["library"])


def ranked_library(op: str):
    """The best library the report's ranking of `op` at its largest size compares with."""
    def compute(facts) -> str:
        best = facts.view(op).libraries.get(_largest_n(facts, op))
        return str(best["variant"]) if best is not None else "none"

    return compute


def ranked_ratio(op: str, label: str):
    def compute(facts) -> str:
        return formats.format_time_ratio(_ranked(facts, op, label)["ratio_to_library"])

    return compute


def ranked_light(op: str, label: str):
    def compute(facts) -> str:
        return _pct(_ranked(facts, op, label)["pct_sol"])

    return compute


def topk_rows(facts) -> str:
    return f"{_largest(facts, 'topk')['n']:,}"


def topk_vocab(facts) -> str:
    return f"{int(facts.view('topk').params['vocab']):,}"


def topk_one_read(facts) -> str:
    """The fastest kernel's time over one read of the logits, from top-k's pruning table."""
    section, line = facts.op("topk"), _largest(facts, "topk")
    pruning = next(own for own in section["sections"] if own["name"] == "pruning")["rows"]  # ops/topk.py's section
    row = next(r for r in pruning if r["variant"] == line["variant"] and r["rows"] == line["n"]
               and r["distribution"] == section["distribution"])
    return formats.format_times(row["times_one_read"])


def histogram_every_input(facts) -> str:
    """The fastest kernel's % light on its worst input distribution (each at its fastest block)."""
    frame, line = facts.frame, _largest(facts, "histogram")
    cases = frame[(frame["op"] == "histogram") & frame["valid"] & (frame["variant"] == line["variant"])
                  & (frame["n"] == line["n"]) & (frame["dtype"] == facts.op("histogram")["dtype"])]
    fastest = cases.sort_values("median_ms").drop_duplicates("distribution")
    return _pct(fastest["pct_sol"].min())


def bench_minutes(facts) -> str:
    """The reference run's wall time, to the minute: what `make bench` of the default config takes."""
    return f"{round(wall_seconds(facts.reference) / 60)} min"


def case_count(which: str):
    def compute(facts) -> str:
        run = facts.reference if which == "reference" else facts.baseline
        return f"{len(run.cases):,}"

    return compute


def common_cases(facts) -> str:
    """The cases the baseline and the reference share (paired by case, as every comparison pairs them)."""
    return f"{len({c.key for c in facts.reference.cases} & {c.key for c in facts.baseline.cases}):,}"


def peak_gbps(facts) -> str:
    return f"{facts.reference.header.peak_gbps:.0f}"


def thinning_factor(facts) -> str:
    """How much wider than a plain bootstrap the thinned one can be on the reference's cases: sqrt(n / 200)."""
    most = max(len(case.samples.cold_ms) for case in facts.reference.cases)
    return f"{math.sqrt(max(most, 200) / 200):.1f}x"


def _alerts(previous: list[dict], current: list[dict], threshold_percent: float) -> dict[str, float]:
    """github-action-benchmark's customSmallerIsBetter rule (tests/readers/test_github_action_alerts.py
    says where it is from): the entries whose value over the previous run's passes the threshold."""
    before = {}
    for entry in previous:
        before.setdefault(entry["name"], entry["value"])
    found = {}
    for entry in current:
        if entry["name"] in before:
            ratio = 1.0 if before[entry["name"]] == entry["value"] == 0 else entry["value"] / before[entry["name"]]
            if ratio > threshold_percent / 100:
                found[entry["name"]] = ratio
    return found


def _feeds(facts, fmt: str) -> tuple[list[dict], list[dict]]:
    """(baseline, reference) as the action reads them: the github-action feed, or gbench-json's cold medians."""
    from primbench.export.formats import export

    def entries(run):
        if fmt == "github-action":
            return json.loads(export(run, fmt))
        return [{"name": b["name"], "value": b["real_time"]} for b in json.loads(export(run, fmt))["benchmarks"]
                if not b.get("error_occurred")]

    # Exported once for every figure that reads them: an export of the reference takes about a second.
    return facts.memo(("feeds", fmt), lambda: (entries(facts.baseline), entries(facts.reference)))


def feed_alerts(threshold: float, words: bool = False):
    def compute(facts) -> str:
        count = len(_alerts(*_feeds(facts, "github-action"), threshold))
        return ("no alert" if count == 0 else f"{count} alert" + "s" * (count > 1)) if words else str(count)

    return compute


def cold_alerts(facts) -> str:
    return str(len(_alerts(*_feeds(facts, "gbench-json"), 110)))


def cold_alerts_below_us(facts) -> str:
    """Every case the cold medians alert on is under this many µs (its cold median in the reference)."""
    names = _alerts(*_feeds(facts, "gbench-json"), 110)
    frame = facts.frame
    return str(math.ceil(frame.loc[frame["key"].isin(list(names)), "median_ms"].max() * 1e3))


def feed_moves(facts) -> str:
    """The moves of the feed entries that alert at 105 %: '+5.5 % and +6.0 %'."""
    moves = [f"+{(ratio - 1) * 100:.1f} %" for ratio in sorted(_alerts(*_feeds(facts, "github-action"), 105).values())]
    return ", ".join(moves[:-1]) + " and " + moves[-1] if len(moves) > 1 else "".join(moves)


README = "README.md"
FIGURES = (
    Figure(README, r"a compensated sum is (?P<figure>correctly rounded|within \S+ of float32's rounding) at every size",
           accuracy_rounding, "the compensated sum against float32's rounding of the exact sum"),
    Figure(README, r"a plain float32 loop is (?P<figure>[0-9.]+-[0-9.]+ %) off", accuracy_serial,
           "the plain float32 loop's relative error over the accuracy study's sizes"),
    Figure(README, r"single-pass decoupled look-back " + RATIO + r" than CUB",
           ranked_ratio("scan", "decoupled_lookback_status_prefetch"), "the look-back scan with the prefetch against the library",
           ranked_library("scan"), r"^cub_"),
    Figure(README, r"no look-back chain at " + PCT + r" of a copy", ranked_light("scan", "round_sums_async_copy"),
           "the persistent scan's % light"),
    Figure(README, r"no look-back chain at [0-9.]+ % of a copy, " + RATIO + r" than CUB",
           ranked_ratio("scan", "round_sums_async_copy"), "the persistent scan against the library", ranked_library("scan"),
           r"^cub_"),
    Figure(README, r"a 16-byte-load form at " + PCT + r" of a copy at radius 1",
           ranked_light("stencil", "blur1d_vector_shared_halo[radius=1]"), "the stencil's 16-byte-load form's % light"),
    Figure(README, r"neighbouring outputs, at " + PCT + r" of a copy", ranked_light("stencil", "blur1d_core_edge_window[radius=16]"),
           "the stencil's shared partial sums at radius 16, % light"),
    Figure(README, r"top-k pruning in one launch, " + RATIO + r" than a full sort", largest_ratio("topk"),
           "top-k's fastest kernel against the library", largest_library("topk"), r"^full_sort\b"),
    Figure(README, r"than a full sort of " + COUNT + r" rows", topk_rows, "the rows of top-k's line"),
    Figure(README, r"rows of " + COUNT + r" logits", topk_vocab, "the vocabulary of top-k's line"),
    Figure(README, r"at (?P<figure>[0-9.]+×) the time of one read of them", topk_one_read,
           "top-k's fastest kernel over one read of its logits (the report's pruning table)"),
    Figure(README, r"\(no bank conflicts on any input\), " + RATIO + r" than CUB", largest_ratio("histogram"),
           "histogram's fastest kernel against the library", largest_library("histogram"), r"^cub_"),
    Figure(README, r"at " + PCT + r" or more of its speed of light on every input distribution", histogram_every_input,
           "histogram's fastest kernel on its worst input distribution, % light"),
    Figure(README, r"runs configs/default.yaml \(about (?P<figure>[0-9]+ min) on an H200\)", bench_minutes,
           "the reference run's wall time"),
    Figure(README, r"\(the " + COUNT + r"-case nightly baseline", case_count("baseline"), "the baseline's cases"),
    Figure(README, r"against the " + COUNT + r"-case reference run\)", case_count("reference"), "the reference's cases"),
    Figure(README, r"exported `--common-with` the other \(" + COUNT + r" cases\)", common_cases,
           "the cases the baseline and the reference share"),
    Figure(README, r"\(the nightly baseline and the reference run, " + COUNT + r" cases in common\)", common_cases,
           "the cases the baseline and the reference share"),
    Figure(README, r"cases in common\): (?P<figure>no alert|[0-9]+ alerts?) at 110 % on this feed", feed_alerts(110, words=True),
           "the github-action feed's alerts at 110 %, the baseline then the reference"),
    Figure(README, r"track\) raise " + COUNT + r", all CUB cases", cold_alerts, "the cold medians' alerts at 110 %"),
    Figure(README, r"all CUB cases under " + COUNT + r" us", cold_alerts_below_us, "the largest cold median that alerts"),
    Figure(README, r"at 105 %, " + COUNT + r": CUB's reduce", feed_alerts(105), "the feed's alerts at 105 %"),
    Figure(README, r"on its batch figure, (?P<figure>\+[0-9.]+ %(?:(?:,| and) \+[0-9.]+ %)*) from one board", feed_moves,
           "the moves that alert at 105 %"),
    Figure(README, r"up to (?P<figure>[0-9.]+x) on the reference run's cases", thinning_factor,
           "sqrt(n / 200) of the reference case with the most samples"),
    Figure(README, r"bus width / 8: (?P<figure>[0-9]+) GB/s on the H200", peak_gbps, "the reference's NVML peak"),
)


def _words(figure: str) -> str:
    return " ".join(figure.split())  # a figure may wrap across lines


def problems(path: str, text: str, computed: dict[Figure, str], libraries: dict[Figure, str]) -> list[str]:
    """Each figure of the file at `path` that is not found exactly once, differs from the run, or is
    a ratio against another library than the one the sentence names."""
    found = []
    for figure, value in computed.items():
        if figure.file != path:
            continue
        if figure in libraries and not re.search(figure.named, libraries[figure]):
            found.append(f"{path}: {figure.what}: the report now compares with {libraries[figure]}, which the sentence "
                         f"does not name (it fits {figure.named!r}): reword it and its pattern in tools/doc_figures/prose.py")
        matches = list(figure.regex().finditer(text))
        if len(matches) != 1:
            found.append(f"{path}: {figure.what}: its sentence is found {len(matches)} times, not once "
                         f"(reword it to fit tools/doc_figures/prose.py, or change the pattern there)")
        elif _words(matches[0]["figure"]) != value:
            found.append(f"{path}: {figure.what}: says {matches[0]['figure']!r}, the reference run gives {value!r}")
    return found


def rewritten(path: str, text: str, computed: dict[Figure, str]) -> str:
    """`text` with each of its figures that is found exactly once and differs set to the computed value
    (one that only wraps differently is left as it is)."""
    for figure, value in computed.items():
        matches = list(figure.regex().finditer(text)) if figure.file == path else []
        if len(matches) == 1 and _words(matches[0]["figure"]) != value:
            start, end = matches[0].span("figure")
            text = text[:start] + value + text[end:]
    return text
