"""One model call with its messages exactly as the protocol builds them.

The gateway's structured path (`complete_structured`) appends a JSON instruction to the last user
message and re-asks with the validation error. ProactiveBench's inputs are protocol facts: the
judge must see upstream's reward-model input byte for byte (the fine-tuned reward model was
trained on it), and the agent upstream's message layout. So a model seat is called here through
the plain completion with the messages untouched, and its text is read by the family's own
tolerant reader. An unusable reply is asked for again with the same messages, as upstream's
tenacity loops do (never with an added re-ask message).

The reply schema goes along as `response_format` where the server takes one (the gateway's
`complete_constrained` negotiates json_schema, then json_object with the schema, then none, and
remembers per server what worked): that constrains the decoding (llama.cpp's grammar, a vLLM
server's guided decoding), never the input.

Scripted and human seats are asked through their own `reply_structured`; the request they get
holds the same messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from proactive_tui.core.events import UsageInfo
from proactive_tui.core.participants import Participant, Reply, ReplyRequest
from proactive_tui.llm.errors import ModelError

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T")

ATTEMPTS = 3
"""Replies asked for before a seat's answer counts as unusable (upstream: 5 for the agent, 10 for
the judge; ours is fewer paid calls)."""


async def ask(participant: Participant, request: ReplyRequest, read: Callable[[str], T], schema: type[BaseModel],
              asking_schema: dict[str, Any] | None = None, parse_text: Callable[[str], Any] | None = None,
              attempts: int = ATTEMPTS) -> tuple[Any, Reply, T | None]:
    """(value, reply, reading): for a model seat, `read(text)` of the first usable reply (and the
    value is that reading); for other seats, their `reply_structured(request, schema, parse_text)`
    with reading None. A model that gives nothing usable in `attempts` replies raises
    ModelError(kind="structured")."""
    from proactive_tui.core.replay import ReplaySeat

    if isinstance(participant, ReplaySeat):  # a resumed session catching up: the recorded reply
        if participant.replaying:
            return participant.replay_read(request, read, schema)
        participant = participant.live
    gateway = getattr(participant, "gateway", None)
    settings = getattr(participant, "settings", None)
    if gateway is None or settings is None:
        value, reply = await participant.reply_structured(request, schema, parse_text)
        return value, reply, None
    messages = request.full_messages()
    json_schema = asking_schema or schema.model_json_schema()
    usage = None
    error = ""
    for asked in range(1, attempts + 1):
        with request.label():
            completion = await gateway.complete_constrained(settings, messages, schema.__name__, json_schema,
                                                            on_retry=request.on_retry)
        usage = completion.usage if usage is None else usage + completion.usage
        try:
            reading = read(completion.text)
        except ValueError as exc:
            error = _short(exc)
            continue
        reply = Reply(text=completion.text, model=completion.model, usage=UsageInfo(**usage.model_dump()), asks=asked)
        return reading, reply, reading
    raise ModelError(f"{settings.model}: no usable {schema.__name__} in {attempts} replies: {error}", "structured",
                     settings.model)


def _short(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or '(object)'}: {e.get('msg')}"
                             for e in errors(include_url=False)[:5])
        except TypeError:
            pass
    return str(exc)
