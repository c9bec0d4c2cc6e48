"""The embedded model called directly, in-process, without litellm: what the gateway uses for
`local/...` seats.

Why: litellm is only a router here. A call to `local/smollm2` through it reaches our own
`LocalLLM` handler, which hands the request to the worker; the answer is the same either way.
But importing litellm costs ~4 s and, measured on these machines, ~200 MB of resident memory,
which was the largest single share of the difference between an embedded session (every seat
`local/smollm2`) and bare llama-cpp-python on the same calls (issue 35, point 5). So a session
whose seats are all local never imports litellm; one that mixes in a hosted seat imports it for
that seat only, as before.

The gateway reads litellm's response objects by attribute (`choices[0].message.content`,
`choices[0].delta.content`, `finish_reason`, `usage`); the small classes below answer the same
attributes, built from the worker's chunk dicts. The request is the gateway's litellm keyword
arguments, mapped by the same `build_request` the litellm handler uses (litellm hands a custom
provider these parameters unchanged, checked with litellm 1.110), so both paths send llama.cpp
the same generation.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from proactive_tui.llm.local.provider import build_request
from proactive_tui.llm.local.worker import acomplete, astream

_ROUTING = {"model", "messages", "timeout", "num_retries", "max_retries", "api_key", "api_base", "stream",
            "stream_options"}
"""Request keys that steer the call rather than the generation: not handed to `build_request`."""


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class Message:
    content: str = ""
    role: str = "assistant"


@dataclass
class Choice:
    """One choice of a whole reply (`message`) or of a stream chunk (`delta`)."""

    message: Message | None = None
    delta: Message | None = None
    finish_reason: str | None = None
    index: int = 0


@dataclass
class Response:
    """A whole reply, or one chunk of a stream, read the way litellm's objects are read."""

    choices: list[Choice] = field(default_factory=list)
    usage: Usage | None = None
    model: str = ""


def _usage(raw: dict[str, Any] | None) -> Usage | None:
    if not raw:
        return None
    return Usage(prompt_tokens=int(raw.get("prompt_tokens") or 0),
                 completion_tokens=int(raw.get("completion_tokens") or 0),
                 total_tokens=int(raw.get("total_tokens") or 0))


class LocalStream:
    """The worker's stream as litellm-shaped chunks; `aclose()` stops the generation within a
    token (closing the worker's stream sets the request's cancel event)."""

    def __init__(self, request: Any, model: str) -> None:
        self._chunks = astream(request)
        self._model = model
        self._reading: AsyncGenerator[Response, None] | None = None

    def __aiter__(self) -> AsyncIterator[Response]:
        if self._reading is None:
            self._reading = self._iterate()
        return self._reading

    async def _iterate(self) -> AsyncGenerator[Response, None]:
        async for chunk in self._chunks:
            if chunk.get("is_finished"):
                yield Response(choices=[Choice(delta=Message(content=chunk.get("text") or ""),
                                               finish_reason=chunk.get("finish_reason") or "stop")],
                               usage=_usage(chunk.get("usage")), model=self._model)
            elif chunk.get("text"):
                yield Response(choices=[Choice(delta=Message(content=chunk["text"]))], model=self._model)

    async def aclose(self) -> None:
        if self._reading is not None:
            await self._reading.aclose()
        await self._chunks.aclose()


async def acompletion(**kwargs: Any) -> Response | LocalStream:
    """`litellm.acompletion`'s calling convention for `local/...` models, answered in-process:
    a stream of chunks when `stream=True`, else the whole reply."""
    model = str(kwargs.get("model") or "")
    params = {k: v for k, v in kwargs.items() if k not in _ROUTING}
    request = build_request(list(kwargs.get("messages") or []), params)
    if kwargs.get("stream"):
        return LocalStream(request, model)
    text, finish_reason, usage = await acomplete(request)
    return Response(choices=[Choice(message=Message(content=text), finish_reason=finish_reason)],
                    usage=_usage(usage), model=model)
