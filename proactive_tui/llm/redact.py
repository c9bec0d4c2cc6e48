"""Mask anything key-shaped before it reaches a log, an error text, an export or the screen."""

from __future__ import annotations

import logging
import os
import re

from proactive_tui.llm.keys import PROVIDER_ENV_VARS

MASK = "[redacted]"
_PATTERNS = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|gsk_[A-Za-z0-9]{16,}"
    r"|xai-[A-Za-z0-9]{16,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._\-]{12,}"
    r"|(?i:api[_-]?key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{8,})"
)


def _known_keys() -> list[str]:
    """Exact key values this process could send: each provider's env var, if set."""
    values = [os.environ.get(var, "") for var in PROVIDER_ENV_VARS.values()]
    return sorted({v for v in values if len(v) >= 6}, key=len, reverse=True)


def redact(text: str, extra: list[str] | None = None) -> str:
    for value in _known_keys() + [e for e in (extra or []) if e and len(e) >= 6]:
        text = text.replace(value, MASK)
    return _PATTERNS.sub(MASK, text)


class RedactingFilter(logging.Filter):
    """A logging filter that rewrites each record's message with keys masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        record.msg = redact(message)
        record.args = ()
        return True
