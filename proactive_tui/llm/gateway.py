"""The one gateway every model call goes through.

Why one place: "any model" means any litellm model string, and retries, keys, usage, cost,
structured output and cancellation must behave the same for the agent, the simulated user and the
judge, and for the embedded offline model (registered with litellm as the `local` provider).

litellm is imported on first use (or by `preload()` in a background thread after the first
screen paints) with `LITELLM_LOCAL_MODEL_COST_MAP=True`, so nothing tries the network at import.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from proactive_tui.llm import keys
from proactive_tui.llm.errors import ModelError, classify
from proactive_tui.llm.jsonreply import NoJSON, extract_json
from proactive_tui.llm.settings import ModelSettings

T = TypeVar("T", bound=BaseModel)
Message = dict[str, Any]
LOCAL_DEFAULT_MAX_TOKENS = 80
STRUCTURED_REASKS = 2

log = logging.getLogger("proactive_tui.llm")
_litellm: Any = None


def litellm_module() -> Any:
    """Import and configure litellm once: offline cost map, quiet logs, the local provider."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.telemetry = False
        _quiet_litellm_logging()
        try:
            from proactive_tui.llm import local as local_model

            local_model.register(litellm)
        except Exception as exc:  # the local extra may not be installed
            log.info("embedded model not registered: %s", exc)
        _litellm = litellm
    return _litellm


def _quiet_litellm_logging() -> None:
    """litellm attaches stderr handlers; in a TUI they would scribble over the screen."""
    from proactive_tui.llm.redact import RedactingFilter

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addFilter(RedactingFilter())
        logger.propagate = True
        logger.setLevel(logging.WARNING)


def preload() -> None:
    """Import litellm (and nothing else); meant for a background thread after first paint."""
    litellm_module()


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    """US dollars when litellm knows the price; None (unknown), never a made-up 0."""

    def __add__(self, other: "Usage") -> "Usage":
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost=cost,
        )


class Completion(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1
    elapsed_s: float = 0.0
    finish_reason: str | None = None


class RetryNotice(BaseModel):
    """Emitted before each retry so a UI can say "Retrying (2/5) in 4s"."""

    model: str
    attempt: int
    max_attempts: int
    wait_s: float
    reason: str

    def describe(self) -> str:
        return f"Retrying ({self.attempt}/{self.max_attempts}) in {self.wait_s:.0f}s: {self.reason}"


class Structured(BaseModel, Generic[T]):
    value: T
    completion: Completion
    asks: int = 1


RetryCallback = Callable[[RetryNotice], Any]


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header wherever litellm kept it."""
    sources = [getattr(exc, "headers", None), getattr(exc, "litellm_response_headers", None)]
    response = getattr(exc, "response", None)
    if response is not None:
        sources.append(getattr(response, "headers", None))
    for headers in sources:
        if not headers:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except Exception:
            continue
        if value is not None:
            try:
                return max(0.0, float(value))
            except (TypeError, ValueError):
                continue
    return None


class Gateway:
    """Streaming, one-shot and structured completions with retries, keys and usage.

    `sleep` and `jitter` are injectable so tests can run backoff without waiting.
    """

    def __init__(
        self,
        on_retry: RetryCallback | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
    ) -> None:
        self.on_retry = on_retry
        self._sleep = sleep
        self._jitter = jitter
        self.base_delay = base_delay
        self.max_delay = max_delay

    # -- request building ---------------------------------------------------------------------

    def _request(self, settings: ModelSettings, messages: list[Message], **extra: Any) -> dict[str, Any]:
        provider = keys.provider_of(settings.model)
        kwargs: dict[str, Any] = {
            "model": settings.model,
            "messages": messages,
            "temperature": settings.temperature,
            "timeout": settings.timeout,
            "num_retries": 0,
            "max_retries": 0,
        }
        # The embedded model rambles: short replies unless asked otherwise. Structured calls keep
        # the handler's own, larger default so the JSON can close.
        structured = "response_format" in extra
        max_tokens = settings.max_tokens or (LOCAL_DEFAULT_MAX_TOKENS if settings.is_local and not structured else None)
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if settings.api_base:
            kwargs["api_base"] = settings.api_base
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        if provider not in keys.KEYLESS_PROVIDERS:
            key = keys.get_key(provider)
            if key:
                kwargs["api_key"] = key
            elif settings.api_base:
                kwargs["api_key"] = "no-key"  # self-hosted OpenAI-compatible servers need none
            else:
                raise ModelError(keys.missing_key_message(provider), "missing_key", settings.model)
        kwargs.update(extra)
        return kwargs

    def _cost(self, settings: ModelSettings, usage: Usage) -> float | None:
        if settings.is_local or settings.api_base or not usage.total_tokens:
            return None
        try:
            prompt_cost, completion_cost = litellm_module().cost_per_token(
                model=settings.model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
        except Exception:
            return None
        total = float(prompt_cost) + float(completion_cost)
        return total if total > 0 else None

    def _wait_for(self, attempt: int, exc: BaseException) -> float:
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, self.max_delay * 4)
        backoff = self.base_delay * (2 ** (attempt - 1))
        return min(self.max_delay, backoff * (0.5 + self._jitter()))

    async def _notify(self, callback: RetryCallback | None, notice: RetryNotice) -> None:
        for cb in (callback, self.on_retry):
            if cb is None:
                continue
            result = cb(notice)
            if asyncio.iscoroutine(result):
                await result

    # -- public API ---------------------------------------------------------------------------

    def stream(
        self, settings: ModelSettings, messages: list[Message], *, on_retry: RetryCallback | None = None,
        streaming: bool = True, **extra: Any,
    ) -> "ModelStream":
        """An async iterator of text deltas; `.text` keeps what arrived even after a cancel.

        With `streaming=False` the provider is asked for the whole reply at once (cheaper per call:
        judges do not need token-by-token text) and the iterator yields it as one piece.
        """
        return ModelStream(self, settings, messages, on_retry, extra, streaming=streaming)

    async def complete(
        self,
        settings: ModelSettings,
        messages: list[Message],
        *,
        on_retry: RetryCallback | None = None,
        on_delta: Callable[[str], Any] | None = None,
        **extra: Any,
    ) -> Completion:
        """One reply; streamed when `on_delta` is given, a single non-streaming call otherwise."""
        stream = self.stream(settings, messages, on_retry=on_retry, streaming=on_delta is not None, **extra)
        async for delta in stream:
            if on_delta is not None:
                result = on_delta(delta)
                if asyncio.iscoroutine(result):
                    await result
        return stream.completion()

    async def complete_structured(
        self,
        settings: ModelSettings,
        messages: list[Message],
        schema: type[T],
        *,
        on_retry: RetryCallback | None = None,
        on_delta: Callable[[str], Any] | None = None,
    ) -> Structured[T]:
        """A reply parsed into `schema`, re-asking up to twice with the validation error."""
        use_schema = self._supports_json_schema(settings)
        convo = _with_json_instruction(messages, schema, include_schema=not use_schema)
        extra: dict[str, Any] = {}
        if use_schema:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
            }
        usage = Usage()
        started = time.monotonic()
        attempts = 0
        error = ""
        for ask in range(1, STRUCTURED_REASKS + 2):
            completion = await self.complete(settings, convo, on_retry=on_retry, on_delta=on_delta, **extra)
            usage = usage + completion.usage
            attempts += completion.attempts
            try:
                value = schema.model_validate(extract_json(completion.text))
            except (NoJSON, ValidationError) as exc:
                error = _short_validation_error(exc)
                convo = convo + [
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": f"That reply could not be used: {error}. Reply again with only the corrected JSON object."},
                ]
                continue
            completion = completion.model_copy(
                update={"usage": usage, "attempts": attempts, "elapsed_s": time.monotonic() - started}
            )
            return Structured[schema](value=value, completion=completion, asks=ask)  # type: ignore[valid-type]
        raise ModelError(
            f"{settings.model}: no valid {schema.__name__} after {STRUCTURED_REASKS + 1} replies: {error}",
            "structured",
            settings.model,
        )

    def _supports_json_schema(self, settings: ModelSettings) -> bool:
        if settings.structured != "auto":
            return settings.structured == "json_schema"
        if settings.is_local or settings.api_base:
            # llama.cpp (embedded or server), vLLM and LM Studio all take json_schema.
            return True
        try:
            return bool(litellm_module().supports_response_schema(model=settings.model))
        except Exception:
            return False


class ModelStream:
    """Async iterator over one streamed reply, with retries before the first token.

    A failure after text has arrived is not retried (the partial reply would be lost or
    duplicated); it raises ModelError carrying `partial_text`. Cancelling the consuming task
    closes the HTTP stream; `.text` still holds every delta received.
    """

    def __init__(self, gateway: Gateway, settings: ModelSettings, messages: list[Message], on_retry, extra,
                 streaming: bool = True) -> None:
        self.gateway = gateway
        self.streaming = streaming
        self.settings = settings
        self.messages = messages
        self.on_retry = on_retry
        self.extra = extra
        self.text = ""
        self.usage = Usage()
        self.attempts = 0
        self.finish_reason: str | None = None
        self.started = 0.0
        self.elapsed_s = 0.0
        self.done = False

    def __aiter__(self) -> AsyncIterator[str]:
        return self._run()

    def completion(self) -> Completion:
        return Completion(
            text=self.text, model=self.settings.model, usage=self.usage, attempts=self.attempts,
            elapsed_s=self.elapsed_s, finish_reason=self.finish_reason,
        )

    async def _run(self) -> AsyncIterator[str]:
        settings = self.settings
        gateway = self.gateway
        max_attempts = settings.max_retries + 1
        self.started = time.monotonic()
        try:
            stream_args = {"stream": True, "stream_options": {"include_usage": True}} if self.streaming else {}
            request = gateway._request(settings, self.messages, **stream_args, **self.extra)
            litellm = litellm_module()
            while True:
                self.attempts += 1
                try:
                    response = await litellm.acompletion(**request)
                    if not self.streaming:
                        text = self._absorb_whole(response)
                        if text:
                            self.text = text
                            yield text
                        break
                    try:
                        async for chunk in response:
                            delta = self._absorb(chunk)
                            if delta:
                                self.text += delta
                                yield delta
                    finally:
                        await _close(response)
                    break
                except (asyncio.CancelledError, GeneratorExit):
                    raise
                except Exception as exc:
                    error = classify(exc, settings.model, settings.api_base)
                    if self.text or not error.retryable or self.attempts >= max_attempts:
                        error.partial_text = self.text
                        raise error from None
                    wait = gateway._wait_for(self.attempts, exc)
                    await gateway._notify(
                        self.on_retry,
                        RetryNotice(
                            model=settings.model, attempt=self.attempts + 1, max_attempts=max_attempts,
                            wait_s=wait, reason=error.message,
                        ),
                    )
                    await gateway._sleep(wait)
            self.usage.cost = gateway._cost(settings, self.usage)
            self.done = True
        finally:
            self.elapsed_s = time.monotonic() - self.started

    def _absorb_whole(self, response: Any) -> str:
        self._absorb(response)  # usage and finish reason live in the same places
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        return (getattr(message, "content", None) or "") if message is not None else ""

    def _absorb(self, chunk: Any) -> str:
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                total_tokens=getattr(usage, "total_tokens", 0) or 0,
            )
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        choice = choices[0]
        if getattr(choice, "finish_reason", None):
            self.finish_reason = choice.finish_reason
        delta = getattr(choice, "delta", None)
        return (getattr(delta, "content", None) or "") if delta is not None else ""


async def _close(response: Any) -> None:
    """Close a litellm stream so the HTTP connection (or local generation) stops."""
    for target in (response, getattr(response, "completion_stream", None)):
        closer = getattr(target, "aclose", None)
        if closer is None:
            continue
        try:
            await closer()
        except Exception:
            pass
        return


def _with_json_instruction(messages: list[Message], schema: type[BaseModel], include_schema: bool) -> list[Message]:
    import json

    note = "Reply with only a JSON object, no other text."
    if include_schema:
        note += " It must match this JSON schema:\n" + json.dumps(schema.model_json_schema(), ensure_ascii=False)
    out = [dict(m) for m in messages]
    if out and out[-1].get("role") == "user" and isinstance(out[-1].get("content"), str):
        out[-1]["content"] = out[-1]["content"].rstrip() + "\n\n" + note
    else:
        out.append({"role": "user", "content": note})
    return out


def _short_validation_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors(include_url=False)[:5]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(object)"
            parts.append(f"{loc}: {err.get('msg')}")
        return "; ".join(parts)
    return str(exc)
