"""Model-call errors in plain words, classified for retry decisions and the UI."""

from __future__ import annotations

import re
from typing import Literal

ErrorKind = Literal[
    "missing_key", "unknown_model", "unknown_provider", "no_api", "unreachable", "auth", "bad_request",
    "rate_limit", "timeout", "server", "structured", "format_rejected", "stream_broken", "bad_encoding",
    "local_model", "other",
]
RETRYABLE: set[str] = {"rate_limit", "timeout", "server"}


class ModelError(Exception):
    """A model call failed; `message` is fit to show a person as it is (keys already masked)."""

    def __init__(self, message: str, kind: ErrorKind = "other", model: str = "", partial_text: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.model = model
        self.partial_text = partial_text

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


_WRAPPERS = re.compile(r"^(?:(?:[A-Za-z]+(?:Error|Exception))(?::| -) ?)+")
"""The class names litellm stacks in front of a server's own words ("InternalServerError:
InternalServerError: OpenAIException - internal error"): the person needs only the words."""
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)
_MODEL_WORDS = re.compile(r"model", re.IGNORECASE)


def body_of(exc: BaseException) -> str:
    """The HTTP error body the server sent, when litellm kept the response (it often reports a
    404 as just "Error code: 404", so the body is the only place the cause is named)."""
    response = getattr(exc, "response", None)
    try:
        return str(getattr(response, "text", "") or "")
    except Exception:  # a streamed response whose body was never read
        return ""


def names_response_format(exc: BaseException) -> bool:
    """A 4xx/5xx whose text names response_format / json_schema / json_object: the server
    rejected the way structured output was asked for (llama-cpp-python answers json_schema with a
    500, LM Studio json_object with a 400). Retrying the same request can only fail again."""
    status = getattr(exc, "status_code", None)
    if not (isinstance(status, int) and 400 <= status < 600):
        return False
    text = f"{getattr(exc, 'message', None) or exc} {body_of(exc)}"
    return bool(_FORMAT_WORDS.search(text))


_NON_JSON = re.compile(r"Empty or invalid response from LLM endpoint\. Received: '(.*?)'(?:\. |$)", re.DOTALL)
"""What litellm's OpenAI client says when a 200 answer's body does not parse as JSON (it reports it
as a 500, which it is not: the server said 200)."""
_CUT_ANSWER = ("ConnectionResetError", "ReadError", "RemoteProtocolError", "ServerDisconnectedError",
               "ClientPayloadError", "ContentLengthError", "IncompleteRead")
"""Exceptions (anywhere in the cause chain) of a connection that was open and then closed or reset
before the answer was whole: the server was reached, so "cannot reach" would send a person
looking at the wrong thing."""


def excerpt(text: str, limit: int = 80) -> str:
    """A short, single-line, key-masked piece of what a server sent, fit to quote in an error
    message (it is data: shown as text, never interpreted as markup)."""
    from proactive_tui.redact import redact
    from proactive_tui.textsafe import scrub

    flat = " ".join(scrub(text).split())
    flat = "".join(ch for ch in flat if ch.isprintable())
    flat = redact(flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def non_json_body(model: str, where: str, status: int, body: str, content_type: str = "") -> str:
    """One wording for a success status whose body is not the JSON the API promises."""
    looks = body.lstrip()[:1] == "<" or "html" in content_type.lower()
    guess = " (an HTML page? a proxy or web server may answer in place of the API)" if looks else ""
    shown = f": {excerpt(body)!r}" if body.strip() else (f" ({content_type})" if content_type else "")
    return f"{model}: the server{where} answered HTTP {status} with a non-JSON body{guess}{shown}"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(seen) < 8 and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def undecodable(exc: BaseException, model: str, where: str) -> ModelError | None:
    """A reply whose bytes are not UTF-8 (a server or proxy writing Latin-1, a mangled stream),
    wherever it surfaced (litellm wraps it as a cut stream, or a 500, though the server said 200):
    said as what arrived, the bytes around the first bad one, not as "no content" or a server
    failure. Not retried: the same server encodes the same way the next time."""
    bad = next((e for e in _chain(exc) if isinstance(e, UnicodeDecodeError)), None)
    if bad is None:
        return None
    raw = bad.object if isinstance(bad.object, (bytes, bytearray)) else b""
    start, end = max(0, bad.start - 40), min(len(raw), bad.end + 40)
    around = bytes(raw[start:end]).decode("utf-8", errors="backslashreplace")
    shown = f", amid: {excerpt(around, 120)}" if around.strip() else ""
    byte = f"byte 0x{raw[bad.start]:02x}" if bad.start < len(raw) else "a byte"
    return ModelError(f"{model}: the server{where} sent bytes that are not UTF-8 text, so the reply cannot be read "
                      f"(does the server, or a proxy before it, write another encoding?): {byte} at position "
                      f"{bad.start} of what arrived{shown}", "bad_encoding", model)


def suggest_v1(api_base: str) -> str:
    """`http://host:8080` -> `http://host:8080/v1`: where OpenAI-compatible servers put the API
    (named without credentials)."""
    from proactive_tui.redact import public_api_base

    return (public_api_base(api_base) or api_base).rstrip("/") + "/v1"


def classify(exc: BaseException, model: str, api_base: str | None, response_format: str | None = None) -> ModelError:
    """Map a litellm/openai/httpx exception to a ModelError with a message a person can act on.

    `response_format` is the type the request asked for (None for a plain call), so a server's
    rejection of it is told apart from any other refusal and never retried. The endpoint is
    named as `redact.public_api_base` shows it (no user info, no query): a message is printed,
    stored and exported, and `?api_key=...` must reach none of them.
    """
    from proactive_tui.redact import public_api_base, redact

    api_base = public_api_base(api_base)

    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    raw = redact(str(getattr(exc, "message", None) or exc))
    raw = _WRAPPERS.sub("", raw.replace("litellm.", "").strip())
    where = f" at {api_base}" if api_base else ""
    if response_format and names_response_format(exc):
        detail = redact(body_of(exc)) or raw
        return ModelError(
            f"{model}: the server{where} rejects response_format {response_format!r} ({status}): {detail[:240]}",
            "format_rejected", model,
        )
    body_match = _NON_JSON.search(str(getattr(exc, "message", None) or exc))
    if body_match:
        return ModelError(non_json_body(model, where, 200, body_match.group(1)), "server", model)
    bad_bytes = undecodable(exc, model, where)
    if bad_bytes is not None:
        return bad_bytes
    cut = next((type(e).__name__ for e in _chain(exc) if type(e).__name__ in _CUT_ANSWER), None)
    if cut is not None:
        return ModelError(f"{model}: the server{where} closed the connection before its answer was complete "
                          f"({cut}: the answer was cut)", "server", model)
    if name == "AuthenticationError" or status == 401:
        return ModelError(f"{model}: the provider rejected the API key (401){where}", "auth", model)
    if name == "PermissionDeniedError" or status == 403:
        return ModelError(f"{model}: permission denied (403): {raw}", "auth", model)
    if name == "RateLimitError" or status == 429:
        return ModelError(f"{model}: rate limited (429)", "rate_limit", model)
    if name in ("Timeout", "APITimeoutError", "TimeoutError") or isinstance(exc, TimeoutError):
        return ModelError(f"{model}: no answer before the timeout{where}", "timeout", model)
    if name == "APIConnectionError" or "Connection error" in raw or "ConnectError" in raw:
        # litellm reports a refused connection as a 500; it is not the server failing.
        target = api_base or "the provider"
        return ModelError(f"{model}: cannot reach {target} (the connection failed; is the server running?)", "unreachable", model)
    if name == "MidStreamFallbackError":
        return ModelError(f"{model}: the stream was cut before the reply finished (the server{where} closed or reset "
                          "the connection mid-reply)", "stream_broken", model)
    if (name == "NotFoundError" or status == 404) and api_base and not _MODEL_WORDS.search(body_of(exc)):
        # A route miss (`{"detail": "Not Found"}` from llama-cpp-python, an HTML page from a web
        # server) names no model: nothing answers /chat/completions under this base at all.
        hint = "" if api_base.rstrip("/").endswith("/v1") else f"; did you mean {suggest_v1(api_base)}?"
        return ModelError(f"no OpenAI-compatible API at {api_base}{hint}", "no_api", model)
    if name == "NotFoundError" or status == 404:
        return ModelError(
            f"unknown model {model!r}{where}: the provider does not serve it (check the name, e.g. openai/gpt-4.1)",
            "unknown_model", model,
        )
    if name == "BadRequestError" and ("LLM Provider NOT provided" in raw or "provider" in raw.lower() and "not" in raw.lower()):
        return ModelError(
            f"unknown model {model!r}: use a litellm model string with a provider, e.g. openai/gpt-4.1, "
            "anthropic/claude-sonnet-4-5, ollama/qwen2.5 or local/smollm2",
            "unknown_model", model,
        )
    if name in ("BadRequestError", "ContextWindowExceededError", "UnprocessableEntityError") or status in (400, 422):
        return ModelError(f"{model}: the provider refused the request: {raw[:300]}", "bad_request", model)
    if name in ("InternalServerError", "ServiceUnavailableError", "BadGatewayError", "APIError") or (
        isinstance(status, int) and status >= 500
    ):
        return ModelError(f"{model}: the provider failed ({status or 'server error'}): {raw[:200]}", "server", model)
    if name == "LocalModelUnavailable":
        return ModelError(raw, "local_model", model)
    return ModelError(f"{model}: {name}: {raw[:300]}", "other", model)
