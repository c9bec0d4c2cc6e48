"""Model output is data: strip terminal escape sequences and control characters before display.

Rich `Text` objects already keep markup literal; this removes what a terminal would act on
(ANSI CSI/OSC/DCS sequences, lone ESC, C0/C1 controls other than newline and tab), and shows the
invisible bidirectional-text controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) as
visible `<U+202E>` tags, since they would reorder what is drawn after them ("Trojan Source").

Lone surrogates (U+D800-U+DFFF on their own) are not text: a JSON reply or file may spell them
(`"\ud800"`), Python then holds them, and writing them as UTF-8 (the store, a terminal, an export)
raises. `scrub()` replaces each with U+FFFD where text enters (model replies, a person's typing,
environment files), so everything after sees only storable text.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"     # DCS / SOS / PM / APC
    r"|\x1b[@-Z\\-_]"                    # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"            # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_JSON_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (valid pairs are already one code point)."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def scrub_deep(value: Any) -> Any:
    """`scrub` applied to every string inside lists, tuples and dicts (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_deep(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_deep(v) for v in value)
    if isinstance(value, dict):
        return {scrub_deep(k): scrub_deep(v) for k, v in value.items()}
    return value


def may_hold_surrogates(json_text: str) -> bool:
    """Whether JSON text spells a surrogate escape (the only way one gets into parsed JSON)."""
    return _JSON_SURROGATE.search(json_text) is not None


def plain(text: str) -> str:
    """The text with every escape sequence and control character (but \\n and \\t) removed,
    bidi controls shown as `<U+XXXX>` tags and lone surrogates as U+FFFD."""
    text = _CONTROLS.sub("", _ESCAPES.sub("", scrub(text)))
    return _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text) if _BIDI.search(text) else text
