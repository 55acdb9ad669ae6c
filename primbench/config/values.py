"""The value checks every config block shares: each names the key's path (file, line, key) in its
error through the YAML source, and says what a valid value looks like."""

from __future__ import annotations

import difflib
import math

from primbench.config.numbers import text_number_hint
from primbench.config.yaml_source import Source
from primbench.text_safety import quoted


EXTENSION_PREFIX = "x-"  # docker compose's convention: a top-level key the tool ignores, a place for YAML anchors


def reject_unknown(mapping: dict, valid, path: tuple, src: Source, *, extensions: bool = False) -> None:
    """One line for the first key not in `valid`; with `extensions`, keys starting with x- are the
    file's own and pass (what they hold is ignored, and changes no hash)."""
    for key in mapping:
        if extensions and isinstance(key, str) and key.startswith(EXTENSION_PREFIX):
            continue
        if key not in valid:
            close = difflib.get_close_matches(key, list(valid), n=1, cutoff=0.6) if isinstance(key, str) else []
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            # A look-alike of a valid key ('nаme', Cyrillic а) is shown escaped, or it reads as the real one.
            named = f" {quoted(key)}" if isinstance(key, str) and not key.isascii() else ""
            also = f"; a key starting with {EXTENSION_PREFIX} is ignored (a place for YAML anchors)" if extensions else ""
            raise src.error(path + (key,), f"unknown key{named}{hint}; valid keys: {', '.join(valid)}{also}")


def string(value, path, src) -> str:
    if not isinstance(value, str) or not value.strip():
        raise src.error(path, f"must be a non-empty string, not {value!r}")
    return value


def integer(value, path, src, *, minimum=None, maximum=None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise src.error(path, f"must be a whole number, not {value!r}{text_number_hint(value)}")
    if minimum is not None and value < minimum:
        raise src.error(path, f"{value} is below the minimum {minimum}")
    if maximum is not None and value > maximum:
        raise src.error(path, f"{value} is above the maximum {maximum}")
    return value


def number(value, path, src) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise src.error(path, f"must be a number, not {value!r}{text_number_hint(value)}")
    if not math.isfinite(value):
        raise src.error(path, f"must be a finite number, not {value!r}")
    return float(value)
