"""What `bench.py compare` and `check` print and write: a terminal table, Markdown for a CI job
summary, and JUnit XML so that CI systems show each case as a test. No CuPy, no pandas."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from primbench.compare.verdicts import MISSING, SAME, SPEED_VERDICTS, Pair, geometric_means

# What a reader needs first: regressions, then everything that is not plainly the same.
_ORDER = {"SLOWER": 0, "FAILED": 1, "UNSURE": 2, "MISSING": 4, "FASTER": 5, "OTHER_GPU": 6, "PUBLISHED": 6, "SAME": 7}


def _us(ms: float) -> str:
    return f"{ms * 1e3:,.1f}" if isinstance(ms, float) and math.isfinite(ms) else "-"


def _ratio(value: float) -> str:
    return f"{value:.3f}" if isinstance(value, float) and math.isfinite(value) else "-"


def interval(pair: Pair) -> str:
    """The 95 % interval of the time ratio, '[0.997, 1.004]', or '-' where there is none."""
    if not (math.isfinite(pair.ci_low) and math.isfinite(pair.ci_high)):
        return "-"
    return f"[{pair.ci_low:.3f}, {pair.ci_high:.3f}]"


def headline_ratio(pair: Pair, metric: str) -> float:
    """new / base: of the median time (below 1 is faster), or of % of each GPU's peak (above 1 is better)."""
    if metric == "pct_peak":
        if pair.base_pct_peak > 0 and pair.new_pct_peak > 0:
            return pair.new_pct_peak / pair.base_pct_peak
        return math.nan
    return pair.ratio


def rows(pairs: list[Pair], *, everything: bool = False) -> list[Pair]:
    """The pairs worth a line: all of them, or all but SAME, most serious first; pairs without a
    verdict (other GPU model, published figures) ranked by the new side's % of its own peak."""
    chosen = pairs if everything else [p for p in pairs if p.verdict != SAME or p.code_changed]

    def rank(p: Pair) -> float:
        unranked = p.verdict not in ("OTHER_GPU", "PUBLISHED") or not math.isfinite(p.new_pct_peak)
        return 0.0 if unranked else -p.new_pct_peak

    return sorted(chosen, key=lambda p: (_ORDER.get(p.verdict, 9), rank(p), p.text))


WIDTH = 120  # the terminal output never runs wider
_STYLE = {"SLOWER": "bold red", "FAILED": "bold red", "FASTER": "green", "UNSURE": "yellow", "MISSING": "dim", "SAME": "dim"}


def _clean(text: str) -> str:
    """Run-file text (a failure reason can hold anything) on one line, without the control
    characters XML forbids."""
    return "".join(" " if ch in "\n\r\t" else ch for ch in str(text) if ch >= " " or ch in "\n\r\t")


def _fit(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def terminal_lines(pairs: list[Pair], base_label: str, new_label: str, *, metric: str = "time",
                   everything: bool = False) -> list:
    """The report as rich Text lines of at most WIDTH columns: one summary line per op, then for
    each pair that is not SAME (or every pair) its verdict and case, and below them its figures."""
    from rich.text import Text

    lines = [Text(_fit(f"baseline: {base_label}")), Text(_fit(f"new:      {new_label}")), Text("")]
    for op, summary in geometric_means(pairs).items():
        line = Text(f"{op}: {summary['pairs']} cases: ")
        for index, (verdict, count) in enumerate(sorted(summary["verdicts"].items(), key=lambda kv: _ORDER.get(kv[0], 9))):
            line.append(", " if index else "")
            line.append(f"{count} {verdict}", style=_STYLE.get(verdict, ""))
        line.append(f"; time ratio {_ratio(summary['time_ratio'])}, % of peak ratio {_ratio(summary['pct_peak_ratio'])} (geometric means)")
        line.truncate(WIDTH, overflow="ellipsis")
        lines.append(line)
    shown = rows(pairs, everything=everything)
    if not pairs:
        return lines + [Text(""), Text("no case in common: nothing compared")]
    if not shown:
        return lines + [Text(""), Text("every case: SAME")]
    ratio_name = "new/base % of peak" if metric == "pct_peak" else "new/base"
    lines.append(Text(""))
    for p in shown:
        lines.append(Text.assemble((f"{p.verdict:<10}", _STYLE.get(p.verdict, "")), _fit(p.text, WIDTH - 10)))
        threshold = f"   threshold {p.threshold * 100:.1f}%" if p.verdict in SPEED_VERDICTS else ""
        figures = (f"{'':10}{_us(p.base_ms)} -> {_us(p.new_ms)} us   {ratio_name} {_ratio(headline_ratio(p, metric))} "
                   f"{interval(p)}{threshold}" + (f"   {_clean(p.note)}" if p.note else ""))
        lines.append(Text(_fit(figures), style="dim" if p.verdict == SAME else ""))
    return lines


def terminal(pairs: list[Pair], base_label: str, new_label: str, *, metric: str = "time", everything: bool = False) -> str:
    """terminal_lines as plain text."""
    return "\n".join(line.plain for line in terminal_lines(pairs, base_label, new_label, metric=metric, everything=everything))


def print_terminal(pairs: list[Pair], base_label: str, new_label: str, *, metric: str = "time", everything: bool = False) -> None:
    """terminal_lines on standard output, coloured by verdict where it is a terminal (NO_COLOR off)."""
    from rich.console import Console

    console = Console(width=WIDTH, highlight=False, soft_wrap=False)
    for line in terminal_lines(pairs, base_label, new_label, metric=metric, everything=everything):
        console.print(line)


def markdown(pairs: list[Pair], base_label: str, new_label: str, exit_code: int, *, metric: str = "time") -> str:
    """A GitHub job-summary style Markdown report of a check."""
    status = "**regression**" if exit_code else "no regression"
    out = [f"## primbench check: {status}", "", f"- baseline: `{base_label}`", f"- new: `{new_label}`", ""]
    out += ["| op | cases | verdicts | geometric mean time ratio | % of peak ratio |", "|---|---|---|---|---|"]
    for op, summary in geometric_means(pairs).items():
        counts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(summary["verdicts"].items(), key=lambda kv: _ORDER.get(kv[0], 9)))
        out.append(f"| {op} | {summary['pairs']} | {counts} | {_ratio(summary['time_ratio'])} | {_ratio(summary['pct_peak_ratio'])} |")
    shown = rows(pairs)
    if shown:
        out += ["", "| verdict | case | base µs | new µs | new/base | 95 % interval | threshold | note |",
                "|---|---|---|---|---|---|---|---|"]
        for p in shown:
            threshold = f"{p.threshold * 100:.1f} %" if p.verdict in SPEED_VERDICTS else ""
            note = _clean(p.note).replace("|", "\\|")
            out.append(f"| {p.verdict} | `{p.text}` | {_us(p.base_ms)} | {_us(p.new_ms)} | {_ratio(headline_ratio(p, metric))} | "
                       f"{interval(p)} | {threshold} | {note} |")
    return "\n".join(out) + "\n"


def _seconds(ms: float) -> str:
    """Seconds as Surefire's schema spells a time: at most three decimals ('0.251')."""
    return f"{ms / 1e3:.3f}" if math.isfinite(ms) else "0"


def _no_verdict(pair: Pair) -> bool:
    """Pairs that are not timed against each other: on one side only, failed on both sides or in
    the baseline only, or from another GPU model. JUnit lists them as skipped, with the reason."""
    return pair.verdict in (MISSING, "OTHER_GPU", "PUBLISHED") or (pair.verdict == "FAILED" and not pair.regressed)


def junit(pairs: list[Pair], base_label: str, new_label: str) -> str:
    """JUnit XML that validates against Surefire's schema (tests/data/xsd): one test case per pair;
    a regression is a failure, a pair with no verdict is skipped with its reason."""
    # errors is 0: a gate's verdicts are failures or passes (unusable input exits 2 instead).
    times = [p.new_ms for p in pairs if math.isfinite(p.new_ms)]
    suite = ET.Element("testsuite", name="primbench check", tests=str(len(pairs)),
                       failures=str(sum(1 for p in pairs if p.regressed)), errors="0",
                       skipped=str(sum(1 for p in pairs if _no_verdict(p))), time=_seconds(sum(times)))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="baseline", value=_clean(base_label))
    suite.find("properties").append(ET.Element("property", name="new", value=_clean(new_label)))
    for p in pairs:
        case = ET.SubElement(suite, "testcase", classname=_clean(f"primbench.{p.op}"), name=_clean(p.text), time=_seconds(p.new_ms))
        detail = (f"{p.verdict}: base {_us(p.base_ms)} us, new {_us(p.new_ms)} us, ratio {_ratio(p.ratio)} (95 % interval {interval(p)}), "
                  f"threshold {p.threshold * 100:.1f} %, p = {p.p_value:.3g}. {_clean(p.note)}")
        if p.regressed:
            ET.SubElement(case, "failure", message=_clean(f"{p.verdict} {p.text}"), type=p.verdict).text = detail
        elif _no_verdict(p):
            ET.SubElement(case, "skipped", message=f"{p.verdict}: {_clean(p.note)}"[:500])
        else:
            ET.SubElement(case, "system-out").text = detail
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
