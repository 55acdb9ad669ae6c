"""Whole numbers written as text, in a YAML config or an option like --sizes: checked before int().

Only ASCII digits count: str.isdigit() accepts '²' and '①', which int() then refuses with a
traceback, and int() itself accepts '٣' and '１', which nobody means as a size. A number of more
than MAX_DIGITS digits is refused before int() reads it (past 4,300 digits int() raises; long
before that the value is past anything a config can mean). Sizes are bounded by MAX_SIZE here, as
numbers, before each axis applies its own, smaller limit.
"""

from __future__ import annotations

MAX_DIGITS = 30  # 2^40 has 13 digits: 30 leaves room for any sane value, written with leading zeros
MAX_SIZE_EXPONENT = 40
MAX_SIZE = 2**MAX_SIZE_EXPONENT  # no GPU holds 2^40 elements; a kernel's own limit is lower (2^30)


def is_ascii_digits(text: str) -> bool:
    return bool(text) and text.isascii() and text.isdigit()


def digits_problem(text: str) -> str | None:
    """What is wrong with `text` as a whole number (ASCII digits, at most MAX_DIGITS), or None."""
    if not is_ascii_digits(text):
        return f"{text[:40]!r} is not a whole number (digits 0-9)"
    if len(text) > MAX_DIGITS:
        return f"a number of {len(text)} digits is past any value primbench takes (at most {MAX_DIGITS} digits)"
    return None


def whole_number(text: str) -> int:
    """`text` as an int; ValueError with digits_problem's words when it is not one."""
    problem = digits_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return int(text)


def shown(value: int) -> str:
    """An integer as an error line quotes it: its digits, or '2^N+' past MAX_DIGITS of them."""
    text = str(value) if abs(value) < 10**MAX_DIGITS else ""
    return text or f"{'-' if value < 0 else ''}2^{abs(value).bit_length() - 1}+"


def text_number_hint(value) -> str:
    """For text that reads as a number ('1e12': YAML 1.1, as PyYAML reads it, takes an exponent
    only after a dot and with a sign), the words that say how to write it as one; else ''."""
    if not isinstance(value, str) or len(value) > 100:
        return ""
    try:
        float(value)
    except ValueError:
        return ""
    return " (YAML reads it as text: write it unquoted, and an exponent with a dot and a sign, 1.0e+12)"
