"""The library cases of a run: which one is the fastest at each size (an op's "best library": every
ratio the report and `compare` give is against it), how the run names each library and its
version, and which library cases run far below their own speed of light where memory should bind
(a library called in a way that wastes the hardware, as CuPy's histogram with 64-bit counters is).

Works on a run's case frame (runfile/frame.py) or the report's annotated one, so the report and
`compare` read the same answers. No CuPy.
"""

from __future__ import annotations

import re

from primbench.runfile.frame import is_number
from primbench.series import LIBRARY_SERIES_NAMES

# The sanity rule: a library case is far from the hardware when it runs under FAR_BELOW_LIGHT_PCT
# of its own speed of light (runfile/frame.py pct_sol: its minimal bytes at the ceiling the run
# measured at that very byte count) with at least FAR_MIN_BYTES of minimal traffic.
# Half: a library's own launch shape, a second pass or a workspace query legitimately cost it
# tens of % (CuPy's CUB reduce runs at 77-98 % of its light from 64 MiB up in the reference run,
# its scan at 70-74 %); taking more than twice the time the memory needs is not tuning but how the
# library is called (64-bit counters, a full sort where a selection would do).
FAR_BELOW_LIGHT_PCT = 50.0
# 2^24 elements of 4 bytes (64 MiB, more than the H200's 60 MiB L2): the light is measured at the
# case's own byte count, but below tens of MiB it is a few µs, and a library's fixed host and launch
# costs weigh as much as the memory (CuPy's CUB max of 2^24 float16, 32 MiB, runs at 44 % of a
# 13 µs light; at 128 MiB at 56 %). From 64 MiB the light is 21 µs or more: the memory binds.
FAR_MIN_BYTES = 2**24 * 4
FAR_WORDS = "this baseline is far from the hardware: check how it is called"
# The longest library text shown from a run file (its header is data, written by anyone).
_TEXT_LIMIT = 80


def library_mask(frame):
    """True for each case of a library variant (the series under its current or former name)."""
    return frame["series"].isin(list(LIBRARY_SERIES_NAMES))


def far_mask(frame):
    """True for each library case that ran, with a known light, under FAR_BELOW_LIGHT_PCT of it
    at FAR_MIN_BYTES or more (a case whose light is unknown is never flagged)."""
    if frame.empty or "pct_sol" not in frame or "bytes" not in frame:  # no light to judge by
        return library_mask(frame) & False
    light = frame["pct_sol"].astype(float)
    return (library_mask(frame) & (frame["status"] == "ok") & (frame["bytes"].astype(float) >= FAR_MIN_BYTES)
            & (light < FAR_BELOW_LIGHT_PCT))


def far_cases(frame):
    """The flagged library cases (far_mask), furthest from their light first."""
    return frame[far_mask(frame)].sort_values(["pct_sol", "key"])


def library_text(info: dict, software: dict) -> str:
    """How the run names a library variant's library: the package and version its header records
    (`library`: {"package", "version"} or text), else the installed package its origin names with
    the version the run's software list gives ('via cupy 14.2.0': the package called, not the
    library it bundles), else ''. Never a version the run did not record."""
    recorded = info.get("library")
    if isinstance(recorded, dict):
        package = recorded.get("package") or recorded.get("name")
        version = recorded.get("version")
        text = " ".join(str(part) for part in (package, version) if part)
        if package and not version:
            text += " (version not recorded)"
        return _short(text)
    if isinstance(recorded, str) and recorded.strip():
        return _short(recorded.strip())
    origin = str(info.get("origin") or "")
    for package, version in sorted((software or {}).items()):
        if isinstance(package, str) and version and re.search(rf"\b{re.escape(package)}\b", origin, re.IGNORECASE):
            return _short(f"via {package} {version}")
    return ""


def library_texts(variants: dict, software: dict) -> dict[str, str]:
    """'op/name' -> library_text, for each library variant of a run header's `variants`."""
    return {key: library_text(info, software) for key, info in variants.items()
            if isinstance(info, dict) and info.get("series") in LIBRARY_SERIES_NAMES}


def _short(text: str) -> str:
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def best_by_size(frame, op: str):
    """For `op`, in the (dtype, distribution, parameters) with the most valid library cases: {n:
    the fastest library case there}, sizes ascending; {} for an op with no valid library case."""
    cases = frame[(frame["op"] == op) & library_mask(frame) & (frame["status"] == "ok")]
    cases = cases[cases["median_ms"].map(lambda t: is_number(t) and t > 0)]
    if cases.empty:
        return {}
    slices = list(zip(cases["dtype"], cases["distribution"].fillna(""), cases["params"]))
    chosen = max(sorted(set(slices), key=str), key=slices.count)  # the most cases; ties to the first by name
    same = cases[[s == chosen for s in slices]]
    return {int(n): at_n.iloc[at_n["median_ms"].to_numpy().argmin()] for n, at_n in same.groupby("n", sort=True)}
