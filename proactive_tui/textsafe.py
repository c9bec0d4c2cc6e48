"""Model output is data: strip terminal escape sequences and control characters before display.

Rich `Text` objects already keep markup literal; this removes what a terminal would act on
(ANSI CSI/OSC/DCS sequences, lone ESC, C0/C1 controls other than newline and tab).
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"     # DCS / SOS / PM / APC
    r"|\x1b[@-Z\\-_]"                    # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"            # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """The text with every escape sequence and control character (but \\n and \\t) removed."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
