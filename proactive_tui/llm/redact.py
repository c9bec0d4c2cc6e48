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
_URL_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")
"""`user:password@` in a URL (`--api-base https://user:pass@host/v1`)."""


def public_api_base(url: str | None) -> str | None:
    """`url` as it may be stored, recorded or exported: without user info, query or fragment
    (where credentials hide). Text that is not a URL is kept, minus anything key-shaped."""
    if url is None or not url.strip():
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return redact(url)
    if not parts.scheme or not parts.hostname:
        return redact(url)
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return urlunsplit((parts.scheme, host + (f":{port}" if port else ""), parts.path, "", ""))


def _known_keys() -> list[str]:
    """Exact key values this process could send: each provider's env var, if set."""
    values = [os.environ.get(var, "") for var in PROVIDER_ENV_VARS.values()]
    return sorted({v for v in values if len(v) >= 6}, key=len, reverse=True)


def redact(text: str, extra: list[str] | None = None) -> str:
    for value in _known_keys() + [e for e in (extra or []) if e and len(e) >= 6]:
        text = text.replace(value, MASK)
    return _URL_USERINFO.sub(MASK + "@", _PATTERNS.sub(MASK, text))


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
