"""Per-model call limits (`max_parallel_requests`, `rpm`, `tpm`) and per-model call counters.

Why our own limiter and not litellm's Router: the Router owns retries, fallbacks and cooldowns,
and its `rpm`/`tpm` per deployment are routing checks that *refuse* a call over the limit with
its own 429 ("No deployments available") instead of waiting for room. Routed through it, every
call would bypass the gateway's retry and back-off policy, its first-token / idle / whole-call
bounds (ModelStream) and its structured-output negotiation, or fight them with a second retry
layer. So the gateway keeps calling `litellm.acompletion` and waits here first: an asyncio
semaphore per model for `max_parallel_requests`, a token bucket for `rpm` and one for `tpm`, and a
per-model pause that a 429 sets, so a rate limit slows that model's calls and no other's.

The embedded model (`local/...`) always runs one call at a time, whatever the config says: its
worker thread generates one reply at a time anyway (llm/local/worker.py), and the gate here keeps a
concurrent batch's calls queued in order in the event loop instead of piling into the worker.

Nothing here imports UI code: `GatewayStats` is plain numbers a display reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict, Field

LOCAL_PARALLEL = 1
"""Calls at once on the embedded model: one llama.cpp context, one generation at a time."""
BURST_SECONDS = 10.0
"""A bucket holds this many seconds' worth of its rate: a full minute's burst at once is what gets
a 429 from providers that measure over shorter windows."""


class ModelLimits(BaseModel):
    """One model's limits, from a `[models."provider/model"]` table of the config file. Unset means
    no limit of that kind."""

    model_config = ConfigDict(extra="forbid")

    max_parallel_requests: int | None = Field(default=None, ge=1)
    """Calls of this model in flight at once (streams count until they end)."""
    rpm: float | None = Field(default=None, gt=0)
    """Requests per minute (every attempt counts, retries too)."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute: a call takes its prompt's estimate (4 characters a token) before it is
    sent and settles the difference with the reported usage after."""


class ModelCounters(BaseModel):
    """What the gateway did for one model so far (every seat and session that used it)."""

    requests: int = 0
    """HTTP attempts sent (retries included)."""
    calls: int = 0
    """Calls finished with a reply."""
    failures: int = 0
    """Calls given up (after their retries)."""
    retries: int = 0
    rate_limited: int = 0
    """429 answers among the attempts."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    """US dollars when litellm knows the price, else None (never a made-up 0)."""
    in_flight: int = 0
    max_in_flight: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class GatewayStats(BaseModel):
    """Counters per model string, updated by the gateway as calls go; read by progress displays."""

    models: dict[str, ModelCounters] = Field(default_factory=dict)

    def of(self, model: str) -> ModelCounters:
        counters = self.models.get(model)
        if counters is None:
            counters = self.models[model] = ModelCounters()
        return counters


class TokenBucket:
    """`rate` units a second, holding at most `capacity`; `take` waits for room, in arrival order.
    A take larger than the capacity waits for a full bucket and leaves it in debt (the level goes
    negative), so a big request is not refused, it only delays those behind it."""

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_SECONDS)
        self.level = self.capacity
        self._stamp: float | None = None
        self._lock = asyncio.Lock()

    def _refill(self, now: float) -> None:
        if self._stamp is not None:
            self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self, amount: float) -> None:
        loop = asyncio.get_running_loop()
        async with self._lock:
            need = min(amount, self.capacity)
            while True:
                self._refill(loop.time())
                if self.level >= need:
                    self.level -= amount
                    return
                await asyncio.sleep((need - self.level) / self.rate)

    def settle(self, extra: float) -> None:
        """Charge (or give back, when negative) what a call used beyond its estimate."""
        self.level = min(self.capacity, self.level - extra)


class ModelLimiter:
    """The gate every call of one model passes: a parallel slot, the 429 pause, rpm, tpm."""

    def __init__(self, limits: ModelLimits, local: bool = False) -> None:
        parallel = LOCAL_PARALLEL if local else limits.max_parallel_requests
        self.limits = limits
        self._slots = asyncio.Semaphore(parallel) if parallel else None
        self._rpm = TokenBucket(limits.rpm) if limits.rpm else None
        self._tpm = TokenBucket(limits.tpm) if limits.tpm else None
        self._paused_until = 0.0

    def pause(self, seconds: float) -> None:
        """A 429: no call of this model starts for `seconds` (the back-off the gateway chose)."""
        loop = asyncio.get_running_loop()
        self._paused_until = max(self._paused_until, loop.time() + seconds)

    @contextlib.asynccontextmanager
    async def slot(self, estimate: int) -> AsyncIterator["Charge"]:
        """Hold a slot for one attempt; the yielded Charge settles the tokens it really used."""
        if self._slots is not None:
            await self._slots.acquire()
        try:
            loop = asyncio.get_running_loop()
            while (wait := self._paused_until - loop.time()) > 0:
                await asyncio.sleep(wait)
            if self._rpm is not None:
                await self._rpm.take(1)
            if self._tpm is not None:
                await self._tpm.take(estimate)
            charge = Charge(self._tpm, estimate)
            yield charge
        finally:
            if self._slots is not None:
                self._slots.release()


class Charge:
    """One attempt's token estimate, settled against its usage once the reply says it."""

    def __init__(self, bucket: TokenBucket | None, estimate: int) -> None:
        self._bucket = bucket
        self._estimate = estimate

    def settle(self, used: int) -> None:
        if self._bucket is not None and used:
            self._bucket.settle(used - self._estimate)
            self._estimate = used  # settled once


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A prompt's tokens before any tokenizer is loaded: about four characters a token."""
    chars = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(str(part.get("text", ""))) for part in content if isinstance(part, dict))
    return max(1, chars // 4)
