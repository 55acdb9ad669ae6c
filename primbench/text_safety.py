"""Text from a run file or a config, made safe to print or write: a failure reason, a variant name
or a hostname can hold anything JSON can spell.

- `printable`: one line for a terminal, a log, XML or a CSV cell. Control characters (C0, DEL, C1:
  escape sequences that recolour a terminal or retitle its window), lone surrogates (which no UTF-8
  writer can encode), bidirectional overrides (which make text read other than it is stored) and
  the noncharacters XML forbids are shown as Python escapes (\\x1b, \\udcff, \\u202e); tab, newline
  and carriage return become spaces. Everything else is kept.
- `encodable`: a whole document (an HTML page) with only its lone surrogates replaced by U+FFFD, so
  that it encodes as UTF-8; escaping for the format is the document's own business.
- `without_surrogates`: every string in a JSON-like value, before json.dumps, with each lone
  surrogate written as its escape (the text \\udcff), as `printable` shows it: two names that differ
  only there stay two names (U+FFFD would make them one, and a reader would pair them up).
"""

from __future__ import annotations

import json
import re
import unicodedata

_LINE_BREAKS = re.compile("[\t\n\r]")
# C0 and DEL, C1, surrogates, the bidirectional marks, embeddings, overrides and isolates, the
# byte-order mark, and U+FFFE/U+FFFF.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text) -> str:
    """`text` (anything: it is made a string) on one line, every character that could act on a
    terminal or break an encoder shown as an escape."""
    return _UNPRINTABLE.sub(_escape, _LINE_BREAKS.sub(" ", str(text)))


def encodable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: it then encodes as UTF-8."""
    return _SURROGATES.sub("\ufffd", text)


def without_surrogates(value):
    """A JSON-like value (dicts, lists, strings, numbers) with each lone surrogate of every string
    (and key) written as its escape's text, as `printable` shows it, so that it encodes as UTF-8; the
    value itself where no string holds a surrogate (the usual case, found at the C encoder's speed:
    an export's document holds a million strings and numbers)."""
    try:
        if not _SURROGATES.search(json.dumps(value, ensure_ascii=False)):
            return value
    except (TypeError, ValueError, RecursionError):  # not plain JSON (a tuple key, a cycle): look at each part
        pass
    return _each_without_surrogates(value)


def _each_without_surrogates(value):
    if isinstance(value, str):
        return _SURROGATES.sub(_escape, value)
    if isinstance(value, dict):
        return {_each_without_surrogates(key): _each_without_surrogates(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_each_without_surrogates(item) for item in value]
    return value


def quoted(value, limit: int = 120) -> str:
    """A name from the input quoted for an error line that lists the valid names beside it: every
    character past ASCII escaped (\\u0430), and the first one named. A Cyrillic 'а' in 'reduсe'
    reads as the real name printed next to it; escaped, the difference shows."""
    if not isinstance(value, str):
        return ascii(value)[:limit]
    text = value[:limit]
    shown = ascii(text) + ("..." if len(value) > limit else "")
    first = next((i for i, ch in enumerate(text) if not ch.isascii()), None)
    if first is None:
        return shown
    character = text[first]
    name = unicodedata.name(character, "")
    return f"{shown} (character {first + 1} is U+{ord(character):04X}{' ' + name if name else ''}, not ASCII)"
