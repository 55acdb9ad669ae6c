"""What `compare` says of a run's library cases under each op's summary line: its best library (the
fastest library case at each size of the op's most measured slice), named with the library and
version the run records, and the library cases far below their own speed of light where the
memory binds (runfile/libraries.py: the same rule and the same cases as the report's flags).
Plain text; compare/output.py cleans and fits each line to the terminal."""

from __future__ import annotations

from primbench.runfile.case_id import size_text
from primbench.runfile.frame import is_number
from primbench.runfile.libraries import FAR_BELOW_LIGHT_PCT, FAR_MIN_BYTES, FAR_WORDS, best_by_size, far_cases, library_texts


def library_lines(run) -> dict[str, list[tuple[str, bool]]]:
    """{op: its lines, each (text, whether it warns)}, for each op of `run` with a library case; {}
    for a run with none (or quoted figures, which have no header of variants)."""
    if getattr(run.header, "published", False) or not run.cases:
        return {}
    frame = run.frame()
    texts = library_texts(run.header.variants, run.header.software)
    lines: dict[str, list[tuple[str, bool]]] = {}
    for op in sorted(set(frame["op"])):
        best = best_by_size(frame, op)
        if best:
            lines.setdefault(op, []).append((_best_line(best, texts), False))
        flagged = far_cases(frame[frame["op"] == op])
        if len(flagged):
            lines.setdefault(op, []).extend((text, True) for text in far_lines(flagged))
    return lines


def _best_line(best: dict, texts: dict) -> str:
    """'  best library: cub_device_reduce via cupy 14.2.0; at 2^28 float32 uniform 247.2 us, 97.2 % of
    light', and the other libraries that are the fastest at some smaller size, where any is."""
    n = max(best)
    case = best[n]
    text = texts.get(f"{case['op']}/{case['variant_name']}") or ""
    light = f", {case['pct_sol']:.1f} % of light" if is_number(case.get("pct_sol")) else ""
    others = [name for name in dict.fromkeys(c["variant"] for c in best.values()) if name != case["variant"]]
    slice_text = " ".join(str(part) for part in (case["dtype"], case["distribution"]) if isinstance(part, str))
    return (f"  best library: {case['variant']}{' ' + text if text else ''}; at {size_text(n)} {slice_text} "
            f"{case['median_ms'] * 1e3:,.1f} us{light}" + (f"; smaller sizes: {', '.join(others)}" if others else ""))


def far_lines(flagged) -> list[str]:
    """Two lines: the rule's words with how many library cases it flags, then the furthest one."""
    worst, count = flagged.iloc[0], len(flagged)
    cases = f"{count} library case{'s' if count > 1 else ''}"
    return [f"  {FAR_WORDS}: {cases} under {FAR_BELOW_LIGHT_PCT:.0f} % of {'their' if count > 1 else 'its'} light",
            f"    at {FAR_MIN_BYTES / 2**20:.0f} MiB and up; the furthest {worst['variant']} {worst['dtype']} "
            f"{worst['distribution']} {size_text(worst['n'])} at {worst['pct_sol']:.1f} %"]

