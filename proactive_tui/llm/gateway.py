"""The one gateway every model call goes through.

Why one place: "any model" means any litellm model string, and retries, keys, usage, cost,
structured output and cancellation must behave the same for the agent, the simulated user and the
judge, and for the embedded offline model (registered with litellm as the `local` provider, but
called directly by the gateway, so a session on the embedded model alone never imports litellm).

litellm is imported on first use (or by `preload()` in a background thread after the first
screen paints) with `LITELLM_LOCAL_MODEL_COST_MAP=True`, so nothing tries the network at import.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import time
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Awaitable, Callable, Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from proactive_tui.llm import batch_loop, keys, trace
from proactive_tui.llm.errors import ModelError, classify, non_json_body
from proactive_tui.llm.jsonreply import NoJSON, extract_json
from proactive_tui.llm.limits import GatewayStats, ModelLimiter, ModelLimits, estimate_tokens
from proactive_tui.redact import StreamMasker, mask_secrets
from proactive_tui.llm.settings import LOCAL_DEFAULT_MAX_TOKENS, ModelSettings, StructuredMode
from proactive_tui.llm.structured import ModeMemory, memory_key, modes_to_try, response_format, shared_memory

T = TypeVar("T", bound=BaseModel)
Message = dict[str, Any]
STRUCTURED_REASKS = 2
TIMEOUT_RETRIES = 1
"""How often a call cut by a bound (no first token, silence, the whole call) is asked again,
whatever `max_retries` says: a server that accepted the connection and then said nothing for
`first_token_timeout` twice will not answer a fifth time, and five attempts at the default 120 s
kept a headless run waiting for over ten minutes. Rate limits and 5xx keep the full count."""
__all__ = ["LOCAL_DEFAULT_MAX_TOKENS", "Completion", "Gateway", "ModelStream", "RetryNotice", "Structured", "Usage"]

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
        litellm.response_cost_calculator = _litellm_cost_not_read  # type: ignore[assignment]  # None: "no price"
        _quiet_litellm_logging()
        try:
            from proactive_tui.llm import local as local_model

            local_model.register(litellm)
        except Exception as exc:  # the local extra may not be installed
            log.info("embedded model not registered: %s", exc)
        _litellm = litellm
    _ignore_unstarted_streams()  # each time: a caller's warnings.catch_warnings (pytest's) may have reset it
    return _litellm


def _litellm_cost_not_read(**_: Any) -> None:
    """Stands in for litellm's own per-reply price (`litellm.response_cost_calculator`, which its
    logging calls after every reply). Nothing here reads that figure: the gateway prices a call
    itself (`Gateway._cost`, from the same price table, a model found unpriced once never asked
    again). litellm's figure cost 0.6-0.8 ms of CPU per reply, 12% of a batch call (measured,
    `benchmarks/batch_throughput.py`), for a model it has no price for, which is every model a
    local server or a fake one serves: it walks its name-generalisation rules, about a thousand
    regex searches, and fails again on the next reply. None is what it gives such a model anyway."""
    return None


UNSTARTED_STREAM_WARNING = r"coroutine 'OpenAIChatCompletion\.(async_streaming|acompletion)' was never awaited"
"""Streamed calls drop `async_streaming`, non-streamed ones (structured replies: `synth`, judges
with `stream=False`) drop `acompletion` the same way."""


def _ignore_unstarted_streams() -> None:
    """Silence one harmless warning litellm causes when a call is cancelled early.

    litellm's `acompletion` builds the streaming (or, for a non-streamed call, the completion)
    coroutine in a worker thread and awaits it afterwards; when our deadline (a stalled server, Ctrl-C) cancels the call in between, that
    coroutine is dropped unstarted, and Python says so on stderr at garbage collection, under a
    finished headless run's output. Nothing had opened: no connection, no tokens. Only that
    exact message is ignored, so any other un-awaited coroutine still shows. Called per model call,
    it only looks when the filter is there: adding one, even an identical one, resets every
    module's record of warnings already shown, so a once-only warning would show again.
    """
    import warnings

    if not any(f[0] == "ignore" and f[1] is not None and f[1].pattern == UNSTARTED_STREAM_WARNING
               for f in warnings.filters):
        warnings.filterwarnings("ignore", message=UNSTARTED_STREAM_WARNING, category=RuntimeWarning)


def _quiet_litellm_logging() -> None:
    """litellm attaches stderr handlers; in a TUI they would scribble over the screen."""
    from proactive_tui.redact import RedactingFilter

    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addFilter(RedactingFilter())
        logger.propagate = True
        logger.setLevel(logging.WARNING)


def _local_client() -> Any:
    """What answers `local/...` seats: the embedded model's in-process client, which takes
    litellm's `acompletion` arguments and returns objects read the same way, without importing
    litellm (~200 MB and ~4 s that a session on the embedded model alone never needs; see
    `proactive_tui.llm.local.client`)."""
    from proactive_tui.llm.local import client

    return client


def preload() -> None:
    """Import litellm (and nothing else); meant for a background thread after first paint."""
    litellm_module()


WARM_UP_TEXT = "warm-up"
"""The one message and the mocked reply of `warm_up_for_fork`'s calls (no server sees them)."""
WARM_UP_FLUSH_S = 5.0
"""The most `warm_up_for_fork` waits for litellm's logging of its calls (it takes milliseconds)."""
_warmed_up: set[tuple[str, str | None]] = set()
"""The (provider, API base) pairs this process has warmed up (a second batch's pool skips them)."""


def warm_up_for_fork(models: list[ModelSettings]) -> None:
    """Do here, once, the set-up litellm does on a process's first call, before worker processes
    are forked from this one (`evalrun.workers.WorkerPool.start`).

    Why: litellm finishes importing itself and builds its pydantic models' validators on a
    process's first call, not at import. A worker forked from a parent that never called did all
    of that again, each on its own: 0.3-0.4 s of CPU and about 90 MB of private memory a worker
    (`benchmarks/worker_warmup.py`), 64 times over on a 64-core machine. Done here, the workers
    share it with the parent, page for page, until they write to it.

    How: one mocked call (litellm's `mock_response`: no request leaves this process, no key is
    read) whole and one streamed, for each provider (and API base) among `models` (the embedded
    model has no litellm call), in a thread with its own event loop, since the caller may be inside one (`synth`).
    The thread has ended before this returns, and litellm's logging of those calls is flushed
    in that loop, so a fork copies no thread and no work left for a loop that is gone. A call
    that fails costs the workers only their own warm-up, never the batch: it is logged and
    passed over.

    A mocked call stops short of the provider's client. For `openai/` seats (OpenAI and every
    OpenAI-compatible server) the same two calls are made again through the OpenAI SDK over
    httpx's `MockTransport` (`_sdk_warm_up`): still no socket, but the SDK builds its response
    models' validators (deferred until first use), which a forked worker otherwise did on its
    first reply. And the keyring's modules are imported (`keys.preload_for_fork`) without
    choosing a backend: a backend may hold a connection a fork must not share, so no key is
    read. Together these took a worker's first call from about 70 ms of CPU to about 30
    (steady: 8)."""
    import threading

    firsts: dict[tuple[str, str | None], ModelSettings] = {}
    for settings in models:
        pair = (keys.provider_of(settings.model), settings.api_base)
        if not settings.is_local and pair not in _warmed_up:
            firsts.setdefault(pair, settings)
    if not firsts:
        return
    _warmed_up.update(firsts)
    litellm = litellm_module()

    async def calls() -> None:
        for settings in firsts.values():
            request = {"model": settings.model, "messages": [{"role": "user", "content": WARM_UP_TEXT}],
                       "mock_response": WARM_UP_TEXT, "api_key": "warm-up", "max_tokens": 1,
                       **({"api_base": settings.api_base} if settings.api_base else {})}
            try:
                await litellm.acompletion(**request)
                async for _chunk in await litellm.acompletion(**request, stream=True):
                    pass
                if _provider_of(litellm, settings) == "openai":
                    await _sdk_warm_up(litellm, settings)
            except Exception as exc:  # the workers will do it themselves
                log.info("warm-up call for %s failed: %s", settings.model, mask_secrets(str(exc)))
        with contextlib.suppress(Exception):  # litellm's logging of those calls, done in this loop
            from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

            await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), WARM_UP_FLUSH_S)

    thread = threading.Thread(target=lambda: asyncio.run(calls()), name="proactive-tui warm-up", daemon=True)
    thread.start()
    thread.join()
    keys.preload_for_fork()


def defer_litellm_logging(turn: Callable[[], Awaitable[None]]) -> bool:
    """Make litellm's logging of each successful call (its `GLOBAL_LOGGING_WORKER`: a standard
    logging payload built for callbacks, which this program registers none of) start only once
    `turn()` says so: a batch worker's idle loop (`evalrun.idle`), where it holds up no session.
    In this process from now on; False when this litellm has no such worker (then it logs as
    ever)."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    except Exception:
        return False
    enqueue = getattr(GLOBAL_LOGGING_WORKER, "ensure_initialized_and_enqueue", None)
    if enqueue is None:
        return False

    async def when_idle(coroutine: Any) -> Any:
        await turn()
        return await coroutine

    GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = (  # type: ignore[method-assign]
        lambda async_coroutine: enqueue(async_coroutine=when_idle(async_coroutine)))
    return True


def _provider_of(litellm: Any, settings: ModelSettings) -> str | None:
    """litellm's provider for a seat (`gpt-4o` is `openai` too), or None when it cannot place it.
    litellm's own routing, not `keys.provider_of` (which picks the key to read): the SDK warm-up
    runs only where litellm takes the OpenAI client, so a bare `mistral-large` (OpenAI's key to
    `keys`, Mistral's client to litellm) is never sent anywhere."""
    try:
        return str(litellm.get_llm_provider(model=settings.model, api_base=settings.api_base)[1])
    except Exception:
        return None


def _warm_up_reply(request: Any) -> Any:
    """`_sdk_warm_up`'s server, in process: a chat completion (or its stream) saying WARM_UP_TEXT."""
    import httpx

    def body(kind: str, choice: dict[str, Any]) -> dict[str, Any]:
        return {"id": "warm-up", "object": kind, "created": 0, "model": "warm-up", "choices": [choice],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    if json.loads(request.content).get("stream"):
        chunks = [body("chat.completion.chunk", {"index": 0, "delta": {"role": "assistant", "content": WARM_UP_TEXT},
                                                 "finish_reason": None}),
                  body("chat.completion.chunk", {"index": 0, "delta": {}, "finish_reason": "stop"})]
        text = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        return httpx.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})
    return httpx.Response(200, json=body("chat.completion", {
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": WARM_UP_TEXT}}))


async def _sdk_warm_up(litellm: Any, settings: ModelSettings) -> None:
    """One whole and one streamed call of an `openai/` seat's model through litellm's OpenAI
    provider and the SDK, whose HTTP client answers in process (httpx `MockTransport`): no
    socket is opened and no key read. The client is ours (litellm's `client=`), so litellm
    caches none bound to this thread's loop."""
    import httpx
    import openai

    async with httpx.AsyncClient(transport=httpx.MockTransport(_warm_up_reply)) as http:
        # an httpx client, as litellm hands the SDK (its aiohttp transport inside): the SDK takes
        # one though it is typed for its own httpx2, so this is the path a worker's calls take
        client = openai.AsyncOpenAI(api_key="warm-up", base_url="http://warm-up.invalid/v1",
                                    http_client=http, max_retries=0)  # type: ignore[arg-type]
        request = {"model": settings.model, "messages": [{"role": "user", "content": WARM_UP_TEXT}],
                   "client": client, "max_tokens": 1}
        await litellm.acompletion(**request)
        async for _chunk in await litellm.acompletion(**request, stream=True):
            pass


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
    structured_mode: StructuredMode | None = None
    """For a structured call: how it was asked for (after any negotiation)."""


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


class CallTimeout(Exception):
    """One of a call's bounds ran out; `message` says which (connect, first token, silence, whole)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NoReply(Exception):
    """A call the server answered with success and no reply in it: a non-JSON (HTML) body, a 200
    with `choices: []`, a stream that ended before any text. Never an empty reply to score: it is
    a transient server fault (`kind="server"`, retried with the usual back-off), unless
    `retryable` is False (the token cap ran out before any text: asking again cannot help)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


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

    `sleep` and `jitter` are injectable so tests can run backoff without waiting; `memory` (what
    structured-output mode each server takes) defaults to the process-wide one for the config dir.
    """

    def __init__(
        self,
        on_retry: RetryCallback | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        memory: ModeMemory | None = None,
        limits: dict[str, ModelLimits] | None = None,
        stats: GatewayStats | None = None,
        stream_replies: bool = True,
        limiter_factory: Callable[[str, ModelLimits, bool], Any] | None = None,
    ) -> None:
        self.on_retry = on_retry
        self.limiter_factory = limiter_factory
        """(model, its limits, is local) -> the gate its calls pass; `ModelLimiter` unless given. A
        batch's worker process gives one that asks the parent for slots (`evalrun.workers`), so
        the limits hold across every worker together."""
        self.stream_replies = stream_replies
        """Whether a caller that takes deltas gets a streamed call. A headless batch turns it off:
        nobody watches its tokens, and litellm spends about 2.5 times the CPU on a streamed call
        (30 ms against 12 ms here), which is what bounds a batch on a small machine. The caller
        still gets its deltas: the whole reply, as one."""
        self.limits = dict(limits or {})
        """Per model string (the config file's `[models."..."]` tables); see `llm.limits`."""
        self.stats = stats or GatewayStats()
        """Per model: attempts, retries, tokens, cost; what a batch's progress display reads."""
        self._limiters: dict[str, ModelLimiter] = {}
        # Per model string, what litellm's tables say never changes within a process, so each is
        # looked up once: these lookups (a provider set built per call, the cost map, model info)
        # were most of the gateway's own CPU per call, and ran even for models with no price.
        self._model_problems: dict[str, str | None] = {}
        self._base_problems: dict[str, str | None] = {}
        """Per api base, `keys.api_base_problem` (a URL parse), likewise once, not per call."""
        self._priced: dict[str, bool] = {}
        """Whether litellm knows a price for the model: an unpriced one skips the cost calculator."""
        self._schema_support: dict[str, bool] = {}
        self._set_up_inline: dict[tuple[str, str | None], bool] = {}
        """Per model and api base: whether litellm's set-up of its calls may run on a batch loop's
        thread (`llm.batch_loop`), its provider looked up once."""
        self._sleep = sleep
        self._jitter = jitter
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._memory = memory
        self._negotiating: dict[str, asyncio.Lock] = {}
        """Per server whose mode is not known yet: concurrent structured calls (a session overlaps
        the judge's turn check with the agent's next message) wait for the first negotiation
        instead of each sending a request the server refuses."""

    def limiter(self, settings: ModelSettings) -> ModelLimiter:
        """The one gate for this model's calls (made on first use; every model has one, so a 429
        pauses that model even when the config sets no limits for it)."""
        limiter = self._limiters.get(settings.model)
        if limiter is None:
            limits = self.limits.get(settings.model) or ModelLimits()
            make = self.limiter_factory or (lambda model, limits, local: ModelLimiter(limits, local=local))
            limiter = self._limiters[settings.model] = make(settings.model, limits, settings.is_local)
        return limiter

    def set_up_inline(self, settings: ModelSettings) -> bool:
        """Whether litellm's set-up of this seat's calls may run on a batch loop's own thread
        (`llm.batch_loop`): its provider, as litellm routes it, is one whose set-up never waits
        on the network."""
        key = (settings.model, settings.api_base)
        known = self._set_up_inline.get(key)
        if known is None:
            known = self._set_up_inline[key] = _provider_of(litellm_module(), settings) in batch_loop.INLINE_PROVIDERS
        return known

    @property
    def memory(self) -> ModeMemory:
        if self._memory is None:
            self._memory = shared_memory()
        return self._memory

    # -- request building ---------------------------------------------------------------------

    def _request(self, settings: ModelSettings, messages: list[Message], structured: bool = False,
                 **extra: Any) -> dict[str, Any]:
        provider = keys.provider_of(settings.model)
        if not settings.is_local:
            # Before any key lookup: `foo/bar` is an unknown provider, a URL is not a model string.
            if settings.model not in self._model_problems:
                self._model_problems[settings.model] = keys.model_problem(settings.model)
            problem = self._model_problems[settings.model]
            if problem:
                unknown_provider = "/" in settings.model and not keys.looks_like_url(settings.model)
                raise ModelError(problem, "unknown_provider" if unknown_provider else "unknown_model", settings.model)
        kwargs: dict[str, Any] = {
            "model": settings.model,
            "messages": messages,
            "temperature": settings.temperature,
            "timeout": self._timeout(settings),
            "num_retries": 0,
            "max_retries": 0,
            # Every seat has a cap (ModelSettings.token_cap): a looping reply ends at the cap.
            "max_tokens": settings.token_cap(structured),
        }
        if settings.api_base or not settings.is_local:
            # The seat's base, else the one litellm would read from OPENAI_API_BASE & co.
            env_base = None if settings.api_base else keys.env_api_base(provider)
            checked = settings.api_base or (f"{env_base[0]}={env_base[1]}" if env_base else "")
            if checked and checked not in self._base_problems:
                self._base_problems[checked] = keys.seat_base_problem(settings.model, settings.api_base)
            problem = self._base_problems.get(checked) if checked else None
            if problem:
                raise ModelError(problem, "bad_request", settings.model)
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

    @staticmethod
    def _timeout(settings: ModelSettings) -> Any:
        """The HTTP client's bounds: `connect_timeout` for the connection (an httpx.Timeout, which
        litellm hands to the OpenAI client as it is), the whole call as a backstop for reads. The
        first-token, silence and whole-call bounds are enforced by ModelStream itself, since an
        HTTP read timeout cannot tell a slow prefill from a stalled stream."""
        if settings.is_local:
            return settings.timeout
        import httpx

        return httpx.Timeout(settings.timeout, connect=settings.connect_timeout, pool=settings.connect_timeout)

    def _cost(self, settings: ModelSettings, usage: Usage) -> float | None:
        """US dollars by litellm's price table, None when it has no price. A model found unpriced
        once is not looked up again (the calculator walks the model-info tables every time); a
        priced one still goes through `cost_per_token`, which knows tiered and cached-token prices."""
        if settings.is_local or settings.api_base or not usage.total_tokens:
            return None
        if self._priced.get(settings.model) is False:
            return None
        try:
            prompt_cost, completion_cost = litellm_module().cost_per_token(
                model=settings.model, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
        except Exception:
            self._priced[settings.model] = False
            return None
        total = float(prompt_cost) + float(completion_cost)
        self._priced[settings.model] = total > 0
        return total if total > 0 else None

    def _wait_for(self, attempt: int, exc: BaseException) -> float:
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, self.max_delay * 4)
        backoff: float = self.base_delay * (2 ** (attempt - 1))  # int ** int is typed Any (a negative power is a float)
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
        streaming: bool = True, structured: bool = False, **extra: Any,
    ) -> "ModelStream":
        """An async iterator of text deltas; `.text` keeps what arrived even after a cancel.

        With `streaming=False` the provider is asked for the whole reply at once (cheaper per call:
        judges do not need token-by-token text) and the iterator yields it as one piece.
        `structured` marks a reply that must hold JSON (the embedded model's cap is larger then).
        """
        messages = trace.steered(messages)
        return ModelStream(self, settings, messages, on_retry, extra, streaming=streaming, structured=structured)

    async def complete(
        self,
        settings: ModelSettings,
        messages: list[Message],
        *,
        on_retry: RetryCallback | None = None,
        on_delta: Callable[[str], Any] | None = None,
        structured: bool = False,
        **extra: Any,
    ) -> Completion:
        """One reply; streamed when `on_delta` is given (and `stream_replies` is on), a single
        non-streaming call otherwise."""
        streaming = on_delta is not None and self.stream_replies
        stream = self.stream(settings, messages, on_retry=on_retry, streaming=streaming,
                             structured=structured, **extra)
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
        """A reply parsed into `schema`, re-asking up to twice with the validation error.

        The first ask negotiates how the schema is sent (`structured.modes_to_try`); the re-asks
        use the mode that worked. Except under json_schema, the schema also goes in the prompt,
        since servers differ on whether json_object's `schema` constrains anything.
        """
        json_schema = json.loads(_schema_text(schema))  # a fresh copy: what litellm does with it stays in the call
        tail: list[Message] = []
        usage = Usage()
        started = time.monotonic()
        attempts = 0
        error = ""
        mode: StructuredMode | None = None

        def ask_with(chosen: StructuredMode) -> Awaitable[Completion]:
            convo = _with_json_instruction(messages, schema, include_schema=chosen != "json_schema") + tail
            return self._complete_in_mode(settings, convo, chosen, schema.__name__, json_schema,
                                          on_retry=on_retry, on_delta=on_delta)

        for ask in range(1, STRUCTURED_REASKS + 2):
            if mode is None:
                completion = await self._negotiate(settings, ask_with)
                mode = completion.structured_mode
            else:
                completion = await ask_with(mode)
            usage = usage + completion.usage
            attempts += completion.attempts
            try:
                value = schema.model_validate(extract_json(completion.text))
            except (NoJSON, ValidationError) as exc:
                error = _short_validation_error(exc)
                tail = tail + [
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

    async def complete_constrained(
        self,
        settings: ModelSettings,
        messages: list[Message],
        name: str,
        json_schema: dict[str, Any],
        *,
        on_retry: RetryCallback | None = None,
    ) -> Completion:
        """One reply with its decoding constrained to `json_schema` where the server can, the
        messages untouched (ProactiveBench's protocol inputs are byte-for-byte upstream's): the
        same negotiation as `complete_structured`, where `prompt` means no response_format."""

        def ask_with(chosen: StructuredMode) -> Awaitable[Completion]:
            return self._complete_in_mode(settings, messages, chosen, name, json_schema, on_retry=on_retry)

        return await self._negotiate(settings, ask_with)

    def structured_modes(self, settings: ModelSettings) -> list[StructuredMode]:
        """The modes a structured call of this seat would try, in order (remembered mode first)."""
        return modes_to_try(settings, self.memory, self._schema_supported(settings))

    async def _complete_in_mode(
        self, settings: ModelSettings, messages: list[Message], mode: StructuredMode, name: str,
        json_schema: dict[str, Any], *, on_retry: RetryCallback | None = None,
        on_delta: Callable[[str], Any] | None = None,
    ) -> Completion:
        fmt = response_format(mode, name, json_schema)
        extra = {"response_format": fmt} if fmt else {}
        completion = await self.complete(settings, messages, on_retry=on_retry, on_delta=on_delta, structured=True,
                                         **extra)
        return completion.model_copy(update={"structured_mode": mode})

    async def _negotiate(
        self, settings: ModelSettings, ask_with: Callable[[StructuredMode], Awaitable[Completion]]
    ) -> Completion:
        """Ask in each mode of `structured_modes` until the server takes one; a rejection of the
        response_format moves on at once (no retry, no back-off). What worked is remembered; while
        a server's mode is unknown, one call at a time finds it, and the calls that waited for it
        then go at once: holding the lock through each of their calls made a batch's sessions,
        all starting with a structured call, take their first calls one after another (a worker
        process of `eval --workers` sat near idle for its first second)."""
        key = memory_key(settings)
        if settings.structured != "auto" or settings.is_local or self.memory.get(key) is not None:
            return await self._negotiate_now(settings, ask_with)
        lock = self._negotiating.setdefault(key, asyncio.Lock())
        async with lock:
            if self.memory.get(key) is None:  # still unknown: this call finds it
                return await self._negotiate_now(settings, ask_with)
        return await self._negotiate_now(settings, ask_with)

    async def _negotiate_now(
        self, settings: ModelSettings, ask_with: Callable[[StructuredMode], Awaitable[Completion]]
    ) -> Completion:
        modes = self.structured_modes(settings)  # after the wait: what another call learned counts
        rejected: list[StructuredMode] = []
        for i, mode in enumerate(modes):
            try:
                completion = await ask_with(mode)
            except ModelError as exc:
                if exc.kind != "format_rejected":
                    raise
                if i + 1 >= len(modes):
                    forced = settings.structured != "auto"
                    hint = (" (forced by the structured mode setting; --structured-mode auto negotiates)"
                            if forced else "")
                    raise ModelError(exc.message + hint, exc.kind, exc.model) from None
                rejected.append(mode)
                log.info("%s: %s; trying %s", memory_key(settings), exc.message, modes[i + 1])
                continue
            if settings.structured == "auto" and not settings.is_local:
                self.memory.learn(memory_key(settings), mode, rejected)
            return completion
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _schema_supported(self, settings: ModelSettings) -> bool:
        """Whether litellm says a hosted model takes json_schema (a server with an api base is
        asked, not guessed)."""
        if settings.is_local or settings.api_base:
            return True
        known = self._schema_support.get(settings.model)
        if known is None:
            try:
                known = bool(litellm_module().supports_response_schema(model=settings.model))
            except Exception:
                known = False
            self._schema_support[settings.model] = known
        return known


class ModelStream:
    """Async iterator over one streamed reply, with retries before the first token.

    A failure after text has arrived is not retried (the partial reply would be lost or
    duplicated); it raises ModelError carrying `partial_text`. Cancelling the consuming task
    closes the HTTP stream; `.text` still holds every delta received.

    Bounds (ModelSettings): `connect_timeout` (by the HTTP client), `first_token_timeout` from the
    request to the first text, `idle_timeout` between two pieces of text, `timeout` for the whole
    call. A stream cut by a bound raises ModelError(kind="timeout") naming the bound, with the text
    so far as `partial_text` (a partial reply, never a full one). A non-streamed call has only the
    connect and whole-call bounds: its first byte is its last token. The embedded model has none of
    the timers (its calls queue behind each other on one model instance, so a wait is not a dead
    server); its token cap bounds it. A call cut by a bound is asked again at most
    `TIMEOUT_RETRIES` times.

    A call that succeeds with no reply in it (an HTML page or other non-JSON body, `choices: []`,
    a stream with no text, or only whitespace) is never returned as an empty reply: it raises
    ModelError(kind="server") naming what came back, retried like any server fault.
    """

    def __init__(self, gateway: Gateway, settings: ModelSettings, messages: list[Message], on_retry: RetryCallback | None,
                 extra: dict[str, Any], streaming: bool = True, structured: bool = False) -> None:
        self.gateway = gateway
        self.streaming = streaming
        self.structured = structured
        self.settings = settings
        self.messages = messages
        self.on_retry = on_retry
        self.extra = extra
        self.text = ""
        self.usage = Usage()
        self.attempts = 0
        self.finish_reason: str | None = None
        self.retry_reasons: list[str] = []
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

    async def _acompletion(self, litellm: Any, request: dict[str, Any], deadline: float, what: str) -> Any:
        """litellm's call within its bound, its set-up on the loop's thread where a batch loop and
        the provider allow (`llm.batch_loop`). A coroutine, not the generator `_run`: the
        context variable is set and reset with no `yield` between."""
        inline = not self.settings.is_local and self.gateway.set_up_inline(self.settings)  # local: no litellm
        with batch_loop.set_up_inline(inline):
            return await self._bounded(litellm.acompletion(**request), deadline, what)

    async def _bounded(self, awaitable: Awaitable[Any], deadline: float, what: str) -> Any:
        """Await within the nearer of `deadline` (this bound) and the whole call's deadline.

        `asyncio.timeout_at` rather than `wait_for`: wait_for wraps every awaited stream chunk in a
        task of its own, which was most of the gateway's CPU per streamed call; the timeout context
        cancels the current task instead, with the same TimeoutError at the bound."""
        if self.settings.is_local:
            return await awaitable
        whole = self._call_deadline <= deadline
        bound = asyncio.timeout_at(min(deadline, self._call_deadline))
        try:
            async with bound:
                return await awaitable
        except TimeoutError:
            if not bound.expired():
                raise  # a TimeoutError from inside the call, not our bound
            raise CallTimeout(self._timeout_message("whole" if whole else what)) from None

    def _timeout_message(self, what: str) -> str:
        s = self.settings
        where = _at(s.api_base)
        got = f"; the reply was cut after {len(self.text)} characters" if self.text else ""
        if what == "first_token":
            return (f"{s.model}: no first token within {s.first_token_timeout:g}s{where} (first-token timeout: "
                    f"a slow prefill needs a larger first_token_timeout)")
        if what == "idle":
            return f"{s.model}: the stream went silent for {s.idle_timeout:g}s{where} (idle timeout between tokens){got}"
        return f"{s.model}: the call took longer than {s.timeout:g}s{where} (whole-call timeout){got}"

    def _connect_timeout(self, exc: BaseException) -> ModelError | None:
        """httpx's connect timeout, however litellm wrapped it."""
        seen: BaseException | None = exc
        for _ in range(6):
            if seen is None:
                break
            if type(seen).__name__ in ("ConnectTimeout", "ConnectTimeoutError") or "ConnectTimeout" in repr(seen):
                s = self.settings
                return ModelError(f"{s.model}: could not connect to {_shown(s.api_base) or 'the provider'} within "
                                  f"{s.connect_timeout:g}s (connect timeout)", "timeout", s.model)
            seen = seen.__cause__ or seen.__context__
        return None

    async def _run(self) -> AsyncIterator[str]:
        settings = self.settings
        gateway = self.gateway
        max_attempts = settings.max_retries + 1
        timeouts = 0
        self.started = time.monotonic()
        started_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        fmt = (self.extra.get("response_format") or {}).get("type")
        request: dict[str, Any] = {}
        failure: BaseException | None = None
        try:
            stream_args = {"stream": True, "stream_options": {"include_usage": True}} if self.streaming else {}
            request = gateway._request(settings, self.messages, structured=self.structured, **stream_args, **self.extra)
            litellm = _local_client() if settings.is_local else litellm_module()
            loop = asyncio.get_running_loop()
            limiter = gateway.limiter(settings)
            counters = gateway.stats.of(settings.model)
            estimate = estimate_tokens(self.messages) if limiter.limits.tpm else 0
            while True:
                self.attempts += 1
                try:
                    async with limiter.slot(estimate) as charge:
                        counters.requests += 1
                        counters.in_flight += 1
                        counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
                        try:
                            asked = loop.time()
                            self._call_deadline = asked + settings.timeout  # per attempt: back-off is not the call
                            if not self.streaming:
                                response = await self._acompletion(litellm, request, self._call_deadline, "whole")
                                text = self._absorb_whole(response)
                                if not text.strip():  # whitespace is no reply either
                                    raise self._no_reply(bool(getattr(response, "choices", None)))
                                self.text = mask_secrets(text)
                                yield self.text
                                break
                            masker = StreamMasker()  # per attempt: what a failed one held back is dropped
                            first_deadline = asked + settings.first_token_timeout
                            response = await self._acompletion(litellm, request, first_deadline, "first_token")
                            try:
                                self._check_stream_type(response)
                                chunks = response.__aiter__()
                                while True:
                                    if self.text or masker.pending:
                                        bound, what = loop.time() + settings.idle_timeout, "idle"
                                    else:
                                        bound, what = first_deadline, "first_token"
                                    try:
                                        chunk = await self._bounded(chunks.__anext__(), bound, what)
                                    except StopAsyncIteration:
                                        break
                                    # a known secret is masked as it streams, whole even when
                                    # split across chunks (a proxy answering 200 with the key)
                                    delta = masker.feed(self._absorb(chunk))
                                    if delta:
                                        self.text += delta
                                        yield delta
                            finally:
                                await _close(response)
                            rest = masker.flush()  # only on a whole stream: a cut one drops what it held
                            if rest:
                                self.text += rest
                                yield rest
                            if not self.text.strip():  # whitespace alone is no reply either (not retried once shown)
                                raise self._no_reply(True, streamed=True)
                            break
                        finally:
                            counters.in_flight -= 1
                            charge.settle(self.usage.total_tokens)
                except (asyncio.CancelledError, GeneratorExit):
                    raise
                except Exception as exc:
                    error = self._error_of(exc, fmt)
                    timeouts += error.kind == "timeout"
                    if (self.text or not error.retryable or self.attempts >= max_attempts
                            or timeouts > TIMEOUT_RETRIES):
                        if timeouts > TIMEOUT_RETRIES and not self.text:
                            error = ModelError(f"{error.message}; given up after {self.attempts} attempts",
                                               error.kind, error.model)
                        error.partial_text = self.text
                        counters.failures += 1
                        raise error from None
                    wait = gateway._wait_for(self.attempts, exc)
                    self.retry_reasons.append(error.message)
                    counters.retries += 1
                    if error.kind == "rate_limit":
                        counters.rate_limited += 1
                        limiter.pause(wait)  # this model's other calls wait too; other models do not
                    await gateway._notify(
                        self.on_retry,
                        RetryNotice(
                            model=settings.model, attempt=self.attempts + 1, max_attempts=max_attempts,
                            wait_s=wait, reason=error.message,
                        ),
                    )
                    await gateway._sleep(wait)
            self.usage.cost = gateway._cost(settings, self.usage)
            counters.calls += 1
            counters.prompt_tokens += self.usage.prompt_tokens
            counters.completion_tokens += self.usage.completion_tokens
            if self.usage.cost is not None:
                counters.cost = (counters.cost or 0.0) + self.usage.cost
            self.done = True
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self.elapsed_s = time.monotonic() - self.started
            if trace.SINK.get() is not None:
                trace.report(self._trace(request, started_at, failure))

    def _trace(self, request: dict[str, Any], started_at: str, failure: BaseException | None) -> trace.CallTrace:
        """This call as `llm.trace` keeps it: what was sent (no credentials), what came back."""
        if failure is None:
            error = None
        elif isinstance(failure, ModelError):
            error = failure.message
        elif isinstance(failure, (asyncio.CancelledError, GeneratorExit)):
            error = "cancelled before the reply finished"
        else:
            from proactive_tui.redact import redact

            error = redact(f"{type(failure).__name__}: {failure}")
        return trace.CallTrace(
            model=self.settings.model, api_base=_shown(self.settings.api_base), request=trace.request_of(request),
            reply=self.text, finish_reason=self.finish_reason, prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens, cost=self.usage.cost, started_at=started_at,
            latency_s=round(self.elapsed_s, 3), attempts=self.attempts, retries=list(self.retry_reasons), error=error,
        )

    def _error_of(self, exc: Exception, fmt: str | None) -> ModelError:
        """The ModelError for one failed attempt, worded for what had arrived by then: a stream
        that breaks before any text is a server fault worth retrying, one that breaks after some
        is a cut reply (whatever the transport called it, never "cannot reach")."""
        s = self.settings
        if isinstance(exc, CallTimeout):
            return ModelError(exc.message, "timeout", s.model)
        if isinstance(exc, NoReply):
            return ModelError(exc.message, "server" if exc.retryable else "other", s.model)
        error = self._connect_timeout(exc) or classify(exc, s.model, s.api_base, fmt)
        where = _at(s.api_base)
        if error.kind == "bad_encoding":  # said as what arrived, with how much text came before it
            got = f"; {len(self.text)} characters of the reply had arrived before it" if self.text else ""
            return ModelError(error.message + got, error.kind, s.model)
        if self.text and error.kind in ("stream_broken", "unreachable", "server"):
            return ModelError(f"{s.model}: the stream was cut after {len(self.text)} characters, before the reply "
                              f"finished (the server{where} closed or reset the connection mid-reply)",
                              "stream_broken", s.model)
        if error.kind == "stream_broken":  # nothing arrived: the same empty stream, however it ended
            return ModelError(self._no_reply(True, streamed=True).message, "server", s.model)
        return error

    def _no_reply(self, had_choices: bool, streamed: bool = False) -> NoReply:
        """Why a finished call holds no text, as the NoReply to raise."""
        s = self.settings
        where = _at(s.api_base)
        if self.finish_reason == "length":
            return NoReply(f"{s.model}: the reply was empty: the token cap (max_tokens={s.token_cap(self.structured)}) "
                           "ran out before any text (a reasoning model may need a larger cap)", retryable=False)
        if s.is_local:
            return NoReply(f"{s.model}: the embedded model gave an empty reply", retryable=False)
        if streamed:
            return NoReply(f"{s.model}: the server{where} ended the stream with no reply text (no content at all)")
        if not had_choices:
            return NoReply(f"{s.model}: the server{where} answered HTTP 200 with no choices (`choices: []`, no reply in it)")
        return NoReply(f"{s.model}: the server{where} answered HTTP 200 with an empty reply (no content)")

    def _check_stream_type(self, response: Any) -> None:
        """A 200 whose body is not an event stream (an HTML error page from a proxy) parses as a
        stream of nothing; its content type says so before any chunk is read."""
        hidden = getattr(response, "_hidden_params", None)
        headers = (hidden.get("additional_headers") if isinstance(hidden, dict) else None) or {}
        ctype = str(headers.get("llm_provider-content-type") or "")
        if ctype and "event-stream" not in ctype.lower() and "json" not in ctype.lower():
            s = self.settings
            where = _at(s.api_base)
            raise NoReply(non_json_body(s.model, where, 200, "", ctype))

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


def _shown(api_base: str | None) -> str | None:
    """The api base as a message may name it: no user info, no query (`redact.public_api_base`)."""
    from proactive_tui.redact import public_api_base

    return public_api_base(api_base)


def _at(api_base: str | None) -> str:
    """` at <api base>` for a message, the base shown without credentials; empty without one."""
    return f" at {_shown(api_base)}" if api_base else ""


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


_SCHEMA_TEXTS: dict[type[BaseModel], str] = {}


def _schema_text(schema: type[BaseModel]) -> str:
    """A structured reply's JSON schema as text, made once per class: pydantic builds it anew on
    every `model_json_schema()`, which was a twentieth of a batch worker's CPU (every judge and
    planning call asks for one)."""
    text = _SCHEMA_TEXTS.get(schema)
    if text is None:
        text = _SCHEMA_TEXTS[schema] = json.dumps(schema.model_json_schema(), ensure_ascii=False)
    return text


def _with_json_instruction(messages: list[Message], schema: type[BaseModel], include_schema: bool) -> list[Message]:
    note = "Reply with only a JSON object, no other text."
    if include_schema:
        note += " It must match this JSON schema:\n" + _schema_text(schema)
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
