"""Mask every secret the app knows, and anything key-shaped, before text is written or printed.

One redactor for the whole app (logs, error texts, the store, `--out`, exports, the screen).
It masks two things:

- Every secret this process knows, by exact value, whatever its shape (a keyring entry need
  not look like `sk-...`): the provider keys in the environment (any `*_API_KEY`-like variable),
  each key read from or written to the OS keyring (`keys` registers it as it reads it), and the
  credentials in any api base (user info, `api_key=`-like query parameters) from the flag, the
  config, `PROACTIVE_TUI_*API_BASE`, or a provider's own `*_API_BASE` / `*_BASE_URL` variable
  (`ModelSettings` registers its api base; the environment is read on each call). A provider that
  echoes the key in an error, or a page that quotes it, is masked the same way: the spellings a
  secret takes in JSON, a URL or HTML are masked too.
- Anything key-shaped (`sk-...`, `Bearer ...`, `api_key=...`), for keys the app never saw.

Values shorter than `MIN_SECRET` are not masked in free text (a 4-letter password would blank
every word it is part of); they are still removed where they stand in a URL.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import threading
from typing import Any, Callable, Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

# Provider prefix of a litellm model string -> the environment variable litellm reads.
PROVIDER_ENV_VARS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "xai": "XAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
}
"""Each provider's key variable (`llm.keys` looks keys up by it). Kept here, with the redactor that
must mask every one of them, so this module needs nothing of the model layer above it."""

MASK = "[redacted]"
MIN_SECRET = 6
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
_SECRET_PARAM = re.compile(
    r"(?i)^(?:api[_-]?key|apikey|key|token|access[_-]?token|auth(?:orization)?|secret|client[_-]?secret"
    r"|password|passwd|pass|sig|signature|x-api-key|subscription[_-]?key)$"
)
"""Query parameter names whose value is a credential (`?api_key=...`, `?key=...`, `?sig=...`)."""
_URL_SECRET_PARAM = re.compile(
    r"(?i)(?<=[?&;])((?:api[_-]?key|apikey|key|token|access[_-]?token|auth(?:orization)?|secret|client[_-]?secret"
    r"|password|passwd|pass|sig|signature|x-api-key|subscription[_-]?key)=)[^&#\s\"'<>]+"
)
"""The same parameters inside a URL in free text: the value masked, the name kept."""
_SECRET_ENV = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|PASSWORD)$")
"""Environment variables that hold a credential (`OPENAI_API_KEY`, `HF_TOKEN`, `AWS_SECRET_ACCESS_KEY`)."""
_BASE_ENV = re.compile(r"(?:_API_BASE|_BASE_URL|_ENDPOINT)$")
"""Environment variables that hold an api base a provider reads (`OPENAI_API_BASE`, `OPENAI_BASE_URL`)."""

_remembered: set[str] = set()
_lock = threading.Lock()
_generation = 0
"""Bumped whenever a secret is remembered, so the compiled pattern knows it is stale."""
_env_cache: tuple[Any, frozenset[str]] = (None, frozenset())
_compiled: tuple[Any, list[str], re.Pattern[str] | None] = (None, [], None)


def remember_secret(value: str | None) -> None:
    """Add a secret this process now knows (a key read from the keyring, a password in a URL):
    from here on it is masked wherever text is written or printed."""
    if not value:
        return
    global _generation
    value = value.strip()
    if len(value) >= MIN_SECRET and value not in _remembered:
        with _lock:
            _remembered.add(value)
            _generation += 1


def url_secrets(url: str | None) -> list[str]:
    """The credentials in a URL: the password of its user info (the user name too when it stands
    alone, `https://TOKEN@host`), and the values of `api_key`-like query parameters; each both as
    written and decoded."""
    if not url or not url.strip():
        return []
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    found: list[str] = []
    netloc = parts.netloc
    if "@" in netloc:
        userinfo = netloc.rsplit("@", 1)[0]
        user, sep, password = userinfo.partition(":")
        found += [password] if sep else [user]
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if _SECRET_PARAM.match(name.strip()):
            found.append(value)
    for name, value in (p.partition("=")[::2] for p in parts.query.split("&")):
        if value and _SECRET_PARAM.match(unquote(name).strip()):
            found.append(value)  # as written, %-escapes and all
    out: list[str] = []
    for value in found:
        for form in (value, unquote(value)):
            if form and form not in out:
                out.append(form)
    return out


def remember_api_base(url: str | None) -> None:
    """Remember the credentials an api base carries (`ModelSettings` calls this for each one)."""
    for value in url_secrets(url):
        remember_secret(value)


def _env_snapshot() -> Any:
    """A cheap picture of the environment (its raw items), to tell whether it changed."""
    data = getattr(os.environ, "_data", None)
    return tuple(data.items()) if isinstance(data, dict) else tuple(os.environ.items())


def _env_secrets() -> frozenset[str]:
    """The secrets in this process's environment: read again whenever it changed (a variable
    may be set after start), otherwise the last reading (redact runs on every string written)."""
    global _env_cache
    snapshot = _env_snapshot()
    if _env_cache[0] == snapshot:
        return _env_cache[1]
    found: set[str] = set()
    names = set(PROVIDER_ENV_VARS.values())
    for name, value in os.environ.items():
        if not value:
            continue
        upper = name.upper()
        if upper in names or _SECRET_ENV.search(upper):
            found.add(value.strip())
        elif _BASE_ENV.search(upper) or (upper.startswith("PROACTIVE_TUI_") and upper.endswith("API_BASE")):
            found.update(url_secrets(value))
    secrets = frozenset(v for v in found if len(v) >= MIN_SECRET)
    _env_cache = (snapshot, secrets)
    return secrets


def known_secrets() -> list[str]:
    """Every secret this process knows, longest first (so a key is masked whole, never a part
    that another secret happens to share)."""
    return list(_current()[1])


def _current() -> tuple[Any, list[str], re.Pattern[str] | None]:
    """(state, secrets longest first, one regex for every spelling of each), rebuilt only when
    a secret was remembered or the environment changed."""
    global _compiled
    env = _env_secrets()
    state = (_generation, env)
    if _compiled[0] == state:
        return _compiled
    with _lock:
        values = set(_remembered)
    secrets = sorted(values | env, key=lambda v: (-len(v), v))
    _compiled = (state, secrets, _pattern_for(secrets))
    return _compiled


def _spellings(value: str) -> set[str]:
    """The ways a secret appears in text an app writes or a server sends: as it is, escaped in
    JSON (either way), %-encoded in a URL, escaped in HTML."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             quote(value, safe=""), quote_plus(value, safe=""), html.escape(value, quote=True)}
    forms.add("".join(f"\\u{ord(c):04x}" if not c.isalnum() else c for c in value))
    forms.add("".join(f"\\u{ord(c):04X}" if not c.isalnum() else c for c in value))
    forms.add("".join(f"%{ord(c):02X}" if not c.isalnum() and ord(c) < 128 else c for c in value))
    return {f for f in forms if len(f) >= MIN_SECRET}


def _pattern_for(secrets: Iterable[str]) -> re.Pattern[str] | None:
    forms = {form for value in secrets for form in _spellings(value)}
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=lambda f: (-len(f), f)))) if forms else None


def _secret_pattern(extra: Iterable[str] = ()) -> re.Pattern[str] | None:
    """One regex matching every spelling of every known secret (and of `extra`)."""
    state, secrets, pattern = _current()
    more = [e.strip() for e in extra if e and len(e.strip()) >= MIN_SECRET and e.strip() not in secrets]
    return _pattern_for([*secrets, *more]) if more else pattern


def mask_secrets(text: str, extra: list[str] | None = None) -> str:
    """`text` with every known secret masked by exact value (no key-shape patterns): for data
    kept as it came, such as a model's reply in the store, where only real secrets are hidden."""
    pattern = _secret_pattern(extra or ())
    return pattern.sub(MASK, text) if pattern is not None and text else text


class StreamMasker:
    """`mask_secrets` for text that arrives in pieces (a streamed reply): a secret split across
    two deltas is masked whole. Each `feed` returns what can be shown now, holding back only an
    ending that could be the start of a known secret; `flush` gives the rest at the end. With no
    secret known, every piece passes straight through."""

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, delta: str) -> str:
        state, secrets, pattern = _current()
        if pattern is None:
            out, self.pending = self.pending + delta, ""
            return out
        text = pattern.sub(MASK, self.pending + delta)
        keep = 0
        for value in secrets:
            for form in _spellings(value):
                for k in range(min(len(form) - 1, len(text)), keep, -1):
                    if text.endswith(form[:k]):
                        keep = k
                        break
        self.pending = text[len(text) - keep:] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        out, self.pending = mask_secrets(self.pending), ""
        return out


def holds_secret(text: str) -> bool:
    """Whether `text` spells any known secret (a cheap test before a costlier masking)."""
    pattern = _secret_pattern()
    return pattern is not None and bool(text) and pattern.search(text) is not None


def redact(text: str, extra: list[str] | None = None) -> str:
    """`text` with every known secret and anything key-shaped masked: for messages, logs, exports."""
    text = mask_secrets(text, extra)
    text = _URL_SECRET_PARAM.sub(lambda m: m.group(1) + MASK, text)
    return _URL_USERINFO.sub(MASK + "@", _PATTERNS.sub(MASK, text))


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """JSON-like data with `fn` applied to every string value (and dict key) in it."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {(fn(k) if isinstance(k, str) else k): map_strings(v, fn) for k, v in value.items()}
    return value


def mask_json(payload: str) -> str:
    """JSON text with every known secret masked inside its strings. Untouched (and no parse)
    when no secret is in it; masked on the decoded data otherwise, so an escaped spelling is
    caught and the result stays valid JSON."""
    if not holds_secret(payload):
        return payload
    try:
        data = json.loads(payload)
    except ValueError:
        return mask_secrets(payload)
    return json.dumps(map_strings(data, mask_secrets), ensure_ascii=False)


def public_api_base(url: str | None) -> str | None:
    """`url` as it may be stored, recorded, exported or named in a message: without user info,
    query or fragment (where credentials hide). Text that is not a URL is kept, minus anything
    key-shaped."""
    if url is None or not url.strip():
        return url
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return redact(url)
    if not parts.scheme or not parts.hostname:
        return redact(url)
    from urllib.parse import urlunsplit

    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return urlunsplit((parts.scheme, host + (f":{port}" if port else ""), parts.path, "", ""))


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
