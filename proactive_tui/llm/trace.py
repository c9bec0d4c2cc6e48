"""What each model call was sent and what came back, for whoever listens in the current context.

A session records every call as a `model_called` event (`core.events.ModelCalled`), so a person
can later open exactly what a model saw behind any message, verdict or proposal: the messages as
sent (system prompt included), the settings and response format, the raw reply, tokens, latency,
the retries and the error. The gateway reports each finished call (one `ModelStream`: all its
attempts) to `SINK`, labelled with `LABEL`: what the call was for, set by whoever makes it (a
participant from its ReplyRequest, a protocol around a direct gateway call).

Context variables rather than parameters: the calls happen layers below the session (structured
negotiation, re-asks, constrained decoding), and every asyncio task carries its own copy, so the
overlapping calls of one session (a judge's turn check beside the agent's next message) keep
their own labels, and two sessions in one batch never see each other's calls.

Never recorded: credentials. The request is a whitelist of the fields that shape the reply
(`REQUEST_FIELDS`); keys, headers and client objects never reach a trace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

REQUEST_FIELDS = ("messages", "temperature", "max_tokens", "seed", "top_p", "stop", "response_format", "stream")
"""What of a litellm request a trace keeps: what the model saw and how it was asked."""


class CallLabel(BaseModel):
    """What a call was for: the seat, a purpose a person reads ("agent message", "plan judge"),
    and where it belongs (the dialogue turn, the message it produced)."""

    seat: str
    purpose: str
    turn: int | None = None
    message_id: str | None = None


class CallTrace(BaseModel):
    """One model call as it happened (all its attempts: a retried call is one trace)."""

    model: str
    api_base: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)
    """The fields of `REQUEST_FIELDS` as litellm was given them (the last attempt's)."""
    reply: str = ""
    """The raw text that came back (for a structured call, before any parsing), partial when cut."""
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    started_at: str = ""
    latency_s: float = 0.0
    attempts: int = 0
    retries: list[str] = Field(default_factory=list)
    """Why each failed attempt before the last was retried, in order."""
    error: str | None = None
    """Why the call failed in the end (None when it returned a reply)."""
    agent: dict[str, Any] | None = None
    """For an agent program in the seat (`llm.acp`): who answered (agent, version, protocol
    version), its session, and what the turn sent beside the message (thoughts, tool calls,
    plans, usage, permission requests and how they were answered). None for a model call."""


Sink = Callable[[CallTrace, "CallLabel | None"], None]

SINK: ContextVar[Sink | None] = ContextVar("proactive_tui_call_sink", default=None)
LABEL: ContextVar[CallLabel | None] = ContextVar("proactive_tui_call_label", default=None)
Steer = Callable[["CallLabel | None", list[dict[str, Any]]], list[dict[str, Any]]]
STEER: ContextVar[Steer | None] = ContextVar("proactive_tui_call_steer", default=None)
"""Rewrites the messages of the calls made in this context before they are sent: a forked
session's added instruction for the one reply it regenerates (`core.fork`). Applied where every
call starts (`Gateway.stream`), so the trace records what was really sent, re-asks included."""


def steered(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` as this context's STEER (if any) rewrites them for the current LABEL."""
    steer = STEER.get()
    if steer is None:
        return messages
    try:
        return steer(LABEL.get(), messages)
    except Exception:  # noqa: BLE001 - a steering bug must not break the call it steers
        return messages


def request_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The traced part of a litellm request: copies, so a later change to the live request (a
    re-ask appends to its messages) cannot rewrite what an earlier call was sent."""
    out: dict[str, Any] = {}
    for name in REQUEST_FIELDS:
        if name in kwargs and kwargs[name] is not None:
            value = kwargs[name]
            out[name] = [dict(m) for m in value] if name == "messages" else value
    return out


def report(trace: CallTrace) -> None:
    """Hand a finished call to the listener of this context, if any. A listener that fails is
    its own problem: the call it watches has finished and its result stands."""
    sink = SINK.get()
    if sink is None:
        return
    try:
        sink(trace, LABEL.get())
    except Exception:  # noqa: BLE001 - recording must never break a model call
        pass


@contextlib.contextmanager
def labelled(seat: str, purpose: str, turn: int | None = None, message_id: str | None = None) -> Iterator[CallLabel]:
    """Label the calls made inside this block (in this task and the tasks it starts)."""
    label = CallLabel(seat=seat, purpose=purpose, turn=turn, message_id=message_id)
    token = LABEL.set(label)
    try:
        yield label
    finally:
        LABEL.reset(token)


@contextlib.contextmanager
def listening(sink: Sink) -> Iterator[None]:
    """Send the traces of the calls made inside this block to `sink`."""
    token = SINK.set(sink)
    try:
        yield
    finally:
        SINK.reset(token)
