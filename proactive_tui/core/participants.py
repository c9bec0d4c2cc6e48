"""Participants: whoever sits in a seat. The protocol code never knows which kind it has.

- `LLMParticipant` answers through the gateway (streaming, retries, structured output).
- `HumanParticipant` awaits text from an asyncio queue that the UI, the headless `run` command's
  stdin reader, or a test fills.
- `ScriptedParticipant` answers from a list or a function: deterministic tests and benchmarks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from proactive_tui.core.events import SeatInfo, UsageInfo
from proactive_tui.llm.jsonreply import NoJSON, extract_json
from proactive_tui.textsafe import scrub, scrub_deep

T = TypeVar("T", bound=BaseModel)


class UserStopped(Exception):
    """A person in a seat chose to end the dialogue."""


def failed_seat(exc: BaseException) -> Any:
    """The seat whose model call raised `exc` (an `LLMParticipant` marks it on the way out), or
    None. Why: a protocol catches the errors that end a session far from the call, where it no
    longer knows which seat failed, and the run record should still say."""
    seat = getattr(exc, "seat", None)
    return seat if seat in ("agent", "user", "judge") else None


def _mark_seat(exc: BaseException, seat: str) -> None:
    if getattr(exc, "seat", None) is None:
        exc.seat = seat  # type: ignore[attr-defined]


@dataclass
class ReplyRequest:
    seat: str
    system: str
    messages: list[dict[str, str]]
    """The dialogue as this seat sees it (its own lines as `assistant`), system prompt excluded."""
    turn: int = 0
    hint: str = ""
    on_delta: Callable[[str], Any] | None = None
    on_retry: Callable[[Any], Any] | None = None
    purpose: str = ""
    """What the reply is for, as a person reads it ("agent message", "plan judge"); labels the
    model call's trace (default: "<seat> reply")."""
    message_id: str | None = None
    """The dialogue message the reply becomes, when it becomes one."""

    def label(self) -> Any:
        """The `llm.trace` label of the calls made for this request."""
        from proactive_tui.llm import trace

        return trace.labelled(self.seat, self.purpose or f"{self.seat} reply", turn=self.turn,
                              message_id=self.message_id)

    def full_messages(self) -> list[dict[str, str]]:
        """The system prompt, then the dialogue. An empty system prompt sends no system message:
        "no system prompt" (ProactBench's agent, by default) is not an empty instruction."""
        head = [{"role": "system", "content": self.system}] if self.system else []
        return head + list(self.messages)


@dataclass
class Reply:
    text: str
    model: str
    usage: UsageInfo = field(default_factory=UsageInfo)
    asks: int = 1
    """Replies a structured answer took (1 = valid at once; the gateway re-asks up to twice)."""


async def _emit(callback: Callable[[str], Any] | None, text: str) -> None:
    if callback is None:
        return
    result = callback(text)
    if asyncio.iscoroutine(result):
        await result


class Participant:
    info: SeatInfo
    shared_instance: str | None = None
    """Names the one in-process model instance that answers this seat, if any (the embedded
    model: every `local/` seat is served by the same llama.cpp context, one call at a time).
    Seats with the same name cannot run in parallel, so work done ahead for one of them only
    queues in front of the others."""

    async def start(self, seat: str = "agent") -> None:
        """Start what the seat needs before its first reply, so the message a protocol is about to
        announce can name who answers (an agent program learns its name and version only once
        started, `core.acp_seat`). Most seats have nothing to start."""

    async def reply(self, request: ReplyRequest) -> Reply:  # pragma: no cover - interface
        raise NotImplementedError

    async def reply_structured(
        self, request: ReplyRequest, schema: type[T], parse_text: Callable[[str], T] | None = None
    ) -> tuple[T, Reply]:  # pragma: no cover - interface
        raise NotImplementedError


def scrub_model(value: Any) -> Any:
    """A parsed structured reply without lone surrogates (a JSON reply may spell `"\\ud800"`):
    rebuilt only when it holds one, so the common case costs a dump."""
    if not isinstance(value, BaseModel):
        return scrub_deep(value)
    data = value.model_dump()
    clean = scrub_deep(data)
    return value if clean == data else type(value).model_validate(clean)


class LLMParticipant(Participant):
    def __init__(self, gateway: Any, settings: Any) -> None:
        self.gateway = gateway
        self.settings = settings
        self.info = SeatInfo(kind="llm", label=settings.model)

    @property
    def shared_instance(self) -> str | None:  # type: ignore[override]
        return "local" if getattr(self.settings, "is_local", False) else None

    async def reply(self, request: ReplyRequest) -> Reply:
        on_delta = request.on_delta
        try:
            with request.label():
                completion = await self.gateway.complete(
                    self.settings, request.full_messages(), on_retry=request.on_retry,
                    on_delta=(lambda text: on_delta(scrub(text))) if on_delta is not None else None,
                )
        except Exception as exc:
            _mark_seat(exc, request.seat)
            raise
        return Reply(text=scrub(completion.text), model=completion.model, usage=UsageInfo(**completion.usage.model_dump()))

    async def reply_structured(
        self, request: ReplyRequest, schema: type[T], parse_text: Callable[[str], T] | None = None
    ) -> tuple[T, Reply]:
        try:
            with request.label():
                result = await self.gateway.complete_structured(
                    self.settings, request.full_messages(), schema, on_retry=request.on_retry
                )
        except Exception as exc:
            _mark_seat(exc, request.seat)
            raise
        c = result.completion
        return scrub_model(result.value), Reply(text=scrub(c.text), model=c.model, usage=UsageInfo(**c.usage.model_dump()),
                                                asks=result.asks)


class HumanParticipant(Participant):
    """A person: `submit(text)` answers the pending request; `stop()` ends the dialogue."""

    def __init__(self, label: str = "person") -> None:
        self.info = SeatInfo(kind="human", label=label)
        self.inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.pending: ReplyRequest | None = None

    def submit(self, text: str) -> None:
        self.inbox.put_nowait(text)

    def stop(self) -> None:
        self.inbox.put_nowait(None)

    async def _next_line(self, request: ReplyRequest) -> str:
        self.pending = request
        try:
            text = await self.inbox.get()
        finally:
            self.pending = None
        if text is None:
            raise UserStopped()
        return scrub(text)

    async def reply(self, request: ReplyRequest) -> Reply:
        text = await self._next_line(request)
        await _emit(request.on_delta, text)
        return Reply(text=text, model="person")

    async def reply_structured(
        self, request: ReplyRequest, schema: type[T], parse_text: Callable[[str], T] | None = None
    ) -> tuple[T, Reply]:
        while True:
            text = await self._next_line(request)
            try:
                value = parse_text(text) if parse_text else schema.model_validate(extract_json(text))
                return value, Reply(text=text, model="person")
            except (ValueError, ValidationError, NoJSON) as exc:
                request.hint = f"That could not be used ({exc}); try again."


Script = list[str] | Callable[[ReplyRequest], str | Awaitable[str]]


class ScriptedParticipant(Participant):
    """Deterministic answers; text is streamed word by word like a model would."""

    def __init__(self, script: Script, structured: list[Any] | Callable[[ReplyRequest, type], Any] | None = None,
                 label: str = "scripted", delay: float = 0.0) -> None:
        self.script = script
        self.structured = structured
        self.info = SeatInfo(kind="scripted", label=label)
        self.calls: list[ReplyRequest] = []
        self.delay = delay
        self._i = 0
        self._j = 0

    async def _text(self, request: ReplyRequest) -> str:
        if callable(self.script):
            out = self.script(request)
            return await out if asyncio.iscoroutine(out) else out  # type: ignore[return-value]
        text = self.script[min(self._i, len(self.script) - 1)]
        self._i += 1
        return text

    async def reply(self, request: ReplyRequest) -> Reply:
        self.calls.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        text = await self._text(request)
        for k, word in enumerate(text.split(" ")):
            await _emit(request.on_delta, word if k == 0 else " " + word)
            await asyncio.sleep(0)
        return Reply(text=text, model=self.info.label, usage=UsageInfo(completion_tokens=len(text.split())))

    async def reply_structured(
        self, request: ReplyRequest, schema: type[T], parse_text: Callable[[str], T] | None = None
    ) -> tuple[T, Reply]:
        self.calls.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        if callable(self.structured):
            raw = self.structured(request, schema)
            raw = await raw if asyncio.iscoroutine(raw) else raw
        else:
            items = self.structured or []
            raw = items[min(self._j, len(items) - 1)]
            self._j += 1
        value = raw if isinstance(raw, schema) else schema.model_validate(raw)
        return value, Reply(text=value.model_dump_json(), model=self.info.label)
