"""What `bench.py compare` and `check` print and write: a terminal table, Markdown for a CI job
summary, and JUnit XML so that CI systems show each case as a test. Where some pair has energy
(compare/energy.py), each output adds it: the pair's energy ratio and interval, its energy verdict
under a gate, and the per-op geometric mean; a comparison without energy reads as it always did.
No CuPy, no pandas."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from primbench.compare import digest, energy
from primbench.compare.verdicts import BELOW_FLOOR, MISSING, SAME, SPEED_VERDICTS, Pair, geometric_means
from primbench.text_safety import printable

# How an op's verdict counts are listed: what changed first.
_ORDER = {"SLOWER": 0, "FAILED": 1, "FASTER": 2, "UNSURE": 3, "BELOW_FLOOR": 4, "MISSING": 5, "OTHER_GPU": 6,
          "PUBLISHED": 6, "SAME": 7}
MAX_LINES = 60  # a comparison where nothing changed fits in one screen (terminal) or one glance (Markdown)
MARKDOWN_LEAD_ROWS = 40  # the changed pairs tabled before the full table; the rest are in it
COMMENT_LIMIT = 65_536  # GitHub refuses a pull-request comment whose body is longer ("maximum is 65536 characters")


def _us(ms: float) -> str:
    return f"{ms * 1e3:,.1f}" if isinstance(ms, float) and math.isfinite(ms) else "-"


def _p(value: float) -> str:
    """A Mann-Whitney p, or "-" for a pair no test was run on (a case failing verification)."""
    return f"{value:.3g}" if isinstance(value, float) and math.isfinite(value) else "-"


def _ratio(value: float) -> str:
    return f"{value:.3f}" if isinstance(value, float) and math.isfinite(value) else "-"


def interval(pair: Pair, metric: str = "time") -> str:
    """The 95 % interval of the ratio shown ('[0.997, 1.004]'): of the time ratio, or of the % of
    peak ratio under metric pct_peak; '-' where there is none."""
    low, high = pair.pct_peak_interval() if metric == "pct_peak" else (pair.ci_low, pair.ci_high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    return f"[{low:.3f}, {high:.3f}]"


def _pct(value: float) -> str:
    return f"{value:,.1f}" if isinstance(value, float) and math.isfinite(value) else "-"


def measure_text(pair: Pair, metric: str) -> str:
    """A row's figures, one measure labelled: 'batch 2.9 -> 3.1 us' (the judged figure's medians),
    or 'batch 12.1 -> 11.2 % of peak' (the same medians in % of each GPU's peak)."""
    if metric == "pct_peak":
        return f"{pair.figure} {_pct(pair.base_pct_peak)} -> {_pct(pair.new_pct_peak)} % of peak"
    return f"{pair.figure} {_us(pair.base_ms)} -> {_us(pair.new_ms)} us"


def headline_ratio(pair: Pair, metric: str) -> float:
    """new / base: of the median time (below 1 is faster), or of % of each GPU's peak (above 1 is better)."""
    if metric == "pct_peak":
        if pair.base_pct_peak > 0 and pair.new_pct_peak > 0:
            return pair.new_pct_peak / pair.base_pct_peak
        return math.nan
    return pair.ratio


def rows(pairs: list[Pair], *, everything: bool = False) -> list[Pair]:
    """The pairs shown one by one: those that changed (most serious first) and those set side by
    side (another GPU model, published figures); with everything, then every folded pair too."""
    shown = digest.lead(pairs) + digest.side_by_side(pairs)
    return shown + digest.folded(pairs) if everything else shown


WIDTH = 120  # the terminal output never runs wider
_STYLE = {"SLOWER": "bold red", "FAILED": "bold red", "FASTER": "green", "UNSURE": "yellow", "BELOW_FLOOR": "magenta",
          "MISSING": "dim", "SAME": "dim", energy.ENERGY_REGRESSION: "bold red", energy.ENERGY_IMPROVEMENT: "green",
          energy.ENERGY_MISSING: "yellow"}


def _clean(text: str) -> str:
    """Run-file text (a failure reason, a variant or host name can hold anything) on one line, with
    nothing a terminal acts on or XML forbids (text_safety.printable)."""
    return printable(text)


def _code_span(text: str, *, in_table: bool = True) -> str:
    """Run-file text as a Markdown code span, which GitHub shows literally: never a tag, a link or
    an image. The fence is one backtick longer than any run of backticks inside; in a table a
    '|' is escaped, which GitHub takes out again inside the span."""
    text = _clean(text)
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ") else text
    return fence + (padded.replace("|", "\\|") if in_table else padded) + fence


def _markdown_text(text: str) -> str:
    """Run-file text in Markdown prose: each mark that could open markup backslash-escaped (CommonMark
    then shows it as itself), so that no '<script>', link, image, entity, emphasis or table cell forms."""
    return re.sub(r"([\\`*_\[\]<>!|~&#])", r"\\\1", _clean(text))


def _fit(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _verdict_counts(summary: dict) -> list[tuple[str, int]]:
    return sorted(summary["verdicts"].items(), key=lambda kv: _ORDER.get(kv[0], 9))


def _energy_tag(p: Pair) -> str:
    """The energy verdict a pair's first line ends with, where the gate gave one worth a look."""
    verdict = p.energy.verdict if p.energy is not None else ""
    return f"  {verdict}" if verdict in (*energy.LEADING, energy.ENERGY_MISSING) else ""


def _pair_lines(p: Pair, ratio_name: str, metric: str) -> list:
    from rich.text import Text

    threshold = f"   threshold {p.threshold * 100:.1f}%" if p.verdict in SPEED_VERDICTS else ""
    # The energy figures come before the note: a long note is what _fit cuts.
    energy_text = f"   {p.energy.text()}" if p.energy is not None else ""
    figures = (f"{'':10}{measure_text(p, metric)}   {ratio_name} {_ratio(headline_ratio(p, metric))} "
               f"{interval(p, metric)}{threshold}{_clean(energy_text)}" + (f"   {_clean(p.note)}" if p.note else ""))
    tag = _energy_tag(p)
    quiet = p.verdict in (SAME, MISSING) and not tag
    # BELOW_FLOOR is 11 characters: it keeps a space before the case (and the line its 120 columns).
    head = f"{p.verdict:<10}" if len(p.verdict) < 10 else f"{p.verdict} "
    return [Text.assemble((head, _STYLE.get(p.verdict, "")), _fit(_clean(p.text), WIDTH - len(head) - len(tag)),
                          (tag, _STYLE.get(tag.strip(), ""))),
            Text(_fit(figures), style="dim" if quiet else "")]


def _means_text(summary: dict, energy_ratio: float | None) -> str:
    """An op's geometric means; the energy ratio's phrasing only where some pair has energy."""
    if energy_ratio is None:
        return f"; time ratio {_ratio(summary['time_ratio'])}, % of peak ratio {_ratio(summary['pct_peak_ratio'])} (geometric means)"
    return (f"; geometric means: time {_ratio(summary['time_ratio'])}, % of peak {_ratio(summary['pct_peak_ratio'])}, "
            f"energy {_ratio(energy_ratio)}")


def terminal_lines(pairs: list[Pair], base_label: str, new_label: str, *, metric: str = "time",
                   everything: bool = False, notes=(), reserve: int = 0, rule: str | None = None,
                   libraries: dict | None = None) -> list:
    """The comparison as rich Text lines of at most WIDTH columns (a warning's command excepted): the
    runs, any warning (`notes`), one summary line per op, each with the new run's library lines
    under it (`libraries`, compare/library_lines.py: its best library, and any library case far
    from its light); then each pair that changed, its verdict and case above its figures; then the
    rest folded, one line per variant (every pair, with everything). Without everything, the lines
    (and `reserve` more that the caller prints) stay within MAX_LINES where nothing changed: the
    folds give way to the library lines."""
    from rich.text import Text

    # Every string below that comes from a run file goes through _clean: a terminal never sees
    # its escape sequences. rich is given Text, never markup, so '[red]' in a name stays text.
    lines = [Text(_fit(f"baseline: {_clean(base_label)}")), Text(_fit(f"new:      {_clean(new_label)}"))]
    # Warnings are not cut to WIDTH: the one that renews a baseline ends in a command.
    lines += [Text(_clean(line), style="yellow") for note in notes for line in note.splitlines()]
    lines.append(Text(""))
    energy_means = energy.geometric_means(pairs) if energy.measured(pairs) else {}
    for op, summary in geometric_means(pairs).items():
        line = Text(f"{_clean(op)}: {summary['pairs']} cases: ")
        for index, (verdict, count) in enumerate(_verdict_counts(summary)):
            line.append(", " if index else "")
            line.append(f"{count} {verdict}", style=_STYLE.get(verdict, ""))
        line.append(_means_text(summary, energy_means.get(op) if energy_means else None))
        line.truncate(WIDTH, overflow="ellipsis")
        lines.append(line)
        lines += [Text(_fit(_clean(text)), style="yellow" if warns else "") for text, warns in (libraries or {}).get(op, ())]
    lines += [Text(_fit(_clean(line)), style=_STYLE[energy.ENERGY_MISSING]) for line in energy.missing_lines(pairs)]
    if rule and any(p.verdict in SPEED_VERDICTS for p in pairs):  # compare/rule.py rule_words: how they were reached
        lines.append(Text(_fit(rule), style="dim"))
    if not pairs:
        return lines + [Text(""), Text("no case in common: nothing compared")]
    ratio_name = "new/base % of peak" if metric == "pct_peak" else "new/base"
    shown = rows(pairs)
    lines.append(Text(""))
    if not shown:
        lines.append(Text("nothing changed: no case moved past its threshold, and none newly failed"))
    for p in shown:
        lines += _pair_lines(p, ratio_name, metric)
    meaning = digest.below_floor_meaning(pairs)
    if everything:
        rest = digest.folded(pairs)
        if rest:
            lines += [Text(""), Text(f"every other pair ({len(rest)}):")]
        for p in rest:
            lines += _pair_lines(p, ratio_name, metric)
        return lines + ([Text(_fit(meaning), style=_STYLE[BELOW_FLOOR])] if meaning else [])
    folds = digest.folds(pairs, max_lines=MAX_LINES - len(lines) - reserve - 2 - bool(meaning))
    if folds:
        cases = sum(len(f.pairs) for f in folds)
        lines += [Text(""), Text(_fit(f"the other {cases} cases, folded into {len(folds)} lines (--all prints every pair):"))]
        lines += [Text(_fit(_clean(fold.line())), style="dim" if set(fold.counts) == {SAME} else "") for fold in folds]
    if meaning:
        lines.append(Text(_fit(meaning), style=_STYLE[BELOW_FLOOR]))
    return lines


def terminal(pairs: list[Pair], base_label: str, new_label: str, **options) -> str:
    """terminal_lines as plain text."""
    return "\n".join(line.plain for line in terminal_lines(pairs, base_label, new_label, **options))


def print_terminal(pairs: list[Pair], base_label: str, new_label: str, **options) -> None:
    """terminal_lines on standard output, coloured by verdict where it is a terminal (NO_COLOR off)."""
    from rich.console import Console

    console = Console(width=WIDTH, highlight=False, soft_wrap=True)  # lines are cut to WIDTH already
    for line in terminal_lines(pairs, base_label, new_label, **options):
        console.print(line)


def _markdown_row(p: Pair, metric: str, with_energy: bool = False) -> str:
    threshold = f"{p.threshold * 100:.1f} %" if p.verdict in SPEED_VERDICTS else ""
    verdict = p.verdict + (f", {p.energy.verdict}" if _energy_tag(p) else "")
    e, note, energy_cells = p.energy, p.note, ""
    if with_energy:
        measured = e is not None and e.verdict != energy.ENERGY_MISSING
        energy_cells = f" {_ratio(e.ratio)} | {e.interval()} |" if measured else " - | - |"
    if e is not None and e.verdict == energy.ENERGY_MISSING:  # why the gate could not check it
        note = "; ".join(filter(None, [note, e.text()]))
    base, new = (_pct(p.base_pct_peak), _pct(p.new_pct_peak)) if metric == "pct_peak" else (_us(p.base_ms), _us(p.new_ms))
    return (f"| {verdict} | {_code_span(p.text)} | {p.figure} | {base} | {new} | {_ratio(headline_ratio(p, metric))} | "
            f"{interval(p, metric)} | {threshold} |{energy_cells} {_markdown_text(note)} |")


def _pair_header(with_energy: bool, metric: str = "time") -> list[str]:
    """The pairs' table head: the judged figure, then its medians in µs (or in % of peak under
    metric pct_peak) and their ratio; two energy columns only where some pair has energy."""
    unit = "% of peak" if metric == "pct_peak" else "µs"
    head = f"| verdict | case | figure | base {unit} | new {unit} | new/base | 95 % interval | threshold |"
    if not with_energy:
        return [head + " note |", "|---|---|---|---|---|---|---|---|---|"]
    return [head + " energy new/base | energy 95 % interval | note |", "|---|---|---|---|---|---|---|---|---|---|---|"]


def _energy_summary(pairs: list[Pair]) -> list[str]:
    """Under an energy gate: how many pairs it called what, then any cases it could not check."""
    counts: dict[str, int] = {}
    for p in pairs:
        if p.energy is not None and p.energy.verdict:
            counts[p.energy.verdict] = counts.get(p.energy.verdict, 0) + 1
    order = (energy.ENERGY_REGRESSION, energy.ENERGY_IMPROVEMENT, energy.ENERGY_SAME)
    gated = ", ".join(f"{counts[name]} {name}" for name in order if name in counts)
    return ([f"energy gate: {gated}"] if gated else []) + energy.missing_lines(pairs)


def _markdown_head(pairs: list[Pair], base_label: str, new_label: str, exit_code: int, *, metric: str, notes,
                   lead_rows: int, rest: str, rule: str | None = None) -> list[str]:
    """The lines of a check's Markdown above its table of every pair: the runs and warnings, verdicts
    per op, the first `lead_rows` pairs that changed (a line says that the rest are `rest`), the
    other pairs folded one row per variant."""
    status = "**regression**" if exit_code else "no regression"
    # Run-file text is a code span or escaped: GitHub renders a job summary as Markdown and HTML.
    out = [f"## primbench check: {status}", "", f"- baseline: {_code_span(base_label, in_table=False)}",
           f"- new: {_code_span(new_label, in_table=False)}"]
    out += [f"- {_markdown_text(' '.join(part.strip() for part in note.splitlines()))}" for note in notes]
    out += [f"- {_markdown_text(rule)}"] if rule else []
    with_energy = energy.measured(pairs)
    energy_means = energy.geometric_means(pairs) if with_energy else {}
    out += [f"- {_markdown_text(line.strip())}" for line in _energy_summary(pairs)]
    out += ["", "| op | cases | verdicts | geometric mean time ratio | % of peak ratio |"
            + (" geometric mean energy ratio |" if with_energy else ""),
            "|---|---|---|---|---|" + ("---|" if with_energy else "")]
    for op, summary in geometric_means(pairs).items():
        counts = ", ".join(f"{count} {verdict}" for verdict, count in _verdict_counts(summary))
        out.append(f"| {_code_span(op)} | {summary['pairs']} | {counts} | {_ratio(summary['time_ratio'])} | {_ratio(summary['pct_peak_ratio'])} |"
                   + (f" {_ratio(energy_means[op])} |" if with_energy else ""))
    shown = rows(pairs)
    if shown:
        out += ["", f"### Changed: {len(shown)} pairs", "", *_pair_header(with_energy, metric)]
        out += [_markdown_row(p, metric, with_energy) for p in shown[:lead_rows]]
        if len(shown) > lead_rows:
            out.append(f"\n... and {len(shown) - lead_rows} more, {rest}")
    else:
        out += ["", "Nothing changed: no case moved past its threshold, and none newly failed."]
    meaning = digest.below_floor_meaning(pairs)
    folds = digest.folds(pairs, max_lines=MAX_LINES - len(out) - 12)
    if folds:
        cases = sum(len(f.pairs) for f in folds)
        out += ["", f"### The other {cases} cases, folded", "", "| variant | cases | verdicts |", "|---|---|---|"]
        out += [f"| {_code_span(fold.label)} | {len(fold.pairs)} | {fold.verdicts()} |" for fold in folds]
        if meaning:
            out += ["", meaning]
    return out


def markdown(pairs: list[Pair], base_label: str, new_label: str, exit_code: int, *, metric: str = "time",
             notes=(), rule: str | None = None) -> str:
    """A GitHub job summary of a check: the runs and warnings, verdicts per op, the pairs that
    changed, the rest folded one row per variant; every pair in a closed <details>. Outside it, a
    check where nothing changed takes at most MAX_LINES lines."""
    out = _markdown_head(pairs, base_label, new_label, exit_code, metric=metric, notes=notes,
                         lead_rows=MARKDOWN_LEAD_ROWS, rest="in the table of every pair below", rule=rule)
    with_energy = energy.measured(pairs)
    out += ["", f"<details><summary>Every pair ({len(pairs)})</summary>", "", *_pair_header(with_energy, metric)]
    out += [_markdown_row(p, metric, with_energy) for p in rows(pairs, everything=True)]
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


def markdown_summary(pairs: list[Pair], base_label: str, new_label: str, exit_code: int, *, metric: str = "time",
                     notes=(), full_table=None, rule: str | None = None) -> str:
    """A check's Markdown for a pull-request comment: markdown() without its table of every pair
    (a 1,447-pair check's is 250 KB), saying where that table is (`full_table`, the --markdown
    file, where one is written), in at most COMMENT_LIMIT bytes of UTF-8 (so as many characters
    or fewer). Where the changed pairs would pass it, fewer of them are tabled, and the count of
    the rest says so; a last resort cuts the text at a line."""
    every = f"the table of every pair ({len(pairs)})"
    where = (f"{every[0].upper()}{every[1:]} is in {_code_span(str(full_table), in_table=False)}." if full_table
             else f"`primbench check --markdown FILE` writes {every}.")
    rest = f"in {every}" + (f" ({_code_span(str(full_table), in_table=False)})" if full_table else " (--markdown)")
    for lead_rows in (MARKDOWN_LEAD_ROWS, 20, 5, 0):
        lines = _markdown_head(pairs, base_label, new_label, exit_code, metric=metric, notes=notes, lead_rows=lead_rows,
                               rest=rest, rule=rule)
        text = "\n".join([*lines, "", where]) + "\n"
        if len(text.encode("utf-8")) <= COMMENT_LIMIT:
            return text
    return _cut_at_a_line(text, COMMENT_LIMIT, f"... cut to fit a comment. {where}")


def _cut_at_a_line(text: str, limit: int, last_line: str) -> str:
    """`text`'s whole lines that fit in `limit` bytes of UTF-8 with `last_line` after them."""
    budget = limit - len(last_line.encode("utf-8")) - 2
    kept, used = [], 0
    for line in text.splitlines():
        used += len(line.encode("utf-8")) + 1
        if used > budget:
            break
        kept.append(line)
    return "\n".join([*kept, "", last_line]) + "\n"


def _seconds(seconds: float | None) -> str:
    """Seconds as Surefire's schema spells a time: at most three decimals ('0.251')."""
    return f"{seconds:.3f}" if isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0 else "0"


def _no_verdict(pair: Pair) -> bool:
    """Pairs with no speed verdict: on one side only, failed on both sides or in the baseline only,
    from another GPU model, or BELOW_FLOOR (a move two runs cannot tell from noise). JUnit lists
    them as skipped, with the reason; one that fails on its energy is a failure, not skipped too."""
    return not pair.regressed and pair.verdict in (MISSING, BELOW_FLOOR, "OTHER_GPU", "PUBLISHED", "FAILED")


def _failure_kind(pair: Pair) -> str:
    """What a regressed pair failed on: its time verdict, ENERGY REGRESSION, or both ('SLOWER, ENERGY REGRESSION')."""
    time_failed = pair.time_regressed
    energy_failed = pair.energy is not None and pair.energy.regressed
    return ", ".join(([pair.verdict] if time_failed else []) + ([energy.ENERGY_REGRESSION] if energy_failed else []))


def junit(pairs: list[Pair], base_label: str, new_label: str, *, elapsed_s: dict[str, float] | None = None,
          rule: str | None = None) -> str:
    """JUnit XML that validates against Surefire's schema (tests/data/xsd): one test case per pair;
    a regression is a failure, a pair with no verdict is skipped with its reason. A test case's time
    is what its case took in the new run, compiling, verifying and timing it (`elapsed_s`, by case
    key: CaseRecord.elapsed_s; 0 for a case the new run lacks); without `elapsed_s`, its median."""
    def seconds(pair: Pair) -> float | None:
        return elapsed_s.get(pair.text) if elapsed_s is not None else pair.new_ms / 1e3

    # errors is 0: a gate's verdicts are failures or passes (unusable input exits 2 instead).
    times = [t for t in map(seconds, pairs) if isinstance(t, (int, float)) and math.isfinite(t) and t >= 0]
    suite = ET.Element("testsuite", name="primbench check", tests=str(len(pairs)),
                       failures=str(sum(1 for p in pairs if p.regressed)), errors="0",
                       skipped=str(sum(1 for p in pairs if _no_verdict(p))), time=_seconds(sum(times)))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="baseline", value=_clean(base_label))
    suite.find("properties").append(ET.Element("property", name="new", value=_clean(new_label)))
    if rule:
        suite.find("properties").append(ET.Element("property", name="verdict rule", value=_clean(rule)))
    for p in rows(pairs, everything=True):  # what changed first, as everywhere
        case = ET.SubElement(suite, "testcase", classname=_clean(f"primbench.{p.op}"), name=_clean(p.text), time=_seconds(seconds(p)))
        detail = (f"{p.verdict}: {p.figure} figure, base {_us(p.base_ms)} us, new {_us(p.new_ms)} us, ratio {_ratio(p.ratio)} (95 % interval {interval(p)}), "
                  f"threshold {p.threshold * 100:.1f} %, p = {_p(p.p_value)}. {_clean(p.note)}")
        if p.energy is not None:
            detail += ("; " if p.note else "") + _clean(p.energy.detail())
        if p.regressed:
            kind = _failure_kind(p)
            failure = ET.SubElement(case, "failure", message=_clean(f"{kind} {p.text}"), type=kind.split(", ")[0].replace(" ", "_"))
            failure.text = detail
        elif _no_verdict(p):
            ET.SubElement(case, "skipped", message=f"{p.verdict}: {_clean(p.note)}"[:500])
        else:
            ET.SubElement(case, "system-out").text = detail
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
