"""Model-call errors in plain words, classified for retry decisions and the UI."""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal[
    "missing_key", "unknown_model", "unreachable", "auth", "bad_request", "rate_limit",
    "timeout", "server", "structured", "stream_broken", "local_model", "other",
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


def classify(exc: BaseException, model: str, api_base: str | None) -> ModelError:
    """Map a litellm/openai/httpx exception to a ModelError with a message a person can act on."""
    from proactive_tui.llm.redact import redact

    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    raw = redact(str(getattr(exc, "message", None) or exc))
    raw = raw.replace("litellm.", "").strip()
    where = f" at {api_base}" if api_base else ""
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
        return ModelError(f"{model}: the stream broke off before the reply finished", "stream_broken", model)
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
