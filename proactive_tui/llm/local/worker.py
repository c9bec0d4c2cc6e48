"""The generation worker: one dedicated thread runs every llama.cpp generation, sync or async.

Why it is shaped like this:

* **One generation at a time.** llama.cpp's context is not thread-safe, so every generation runs
  on one dedicated worker thread and holds `_GEN_LOCK`. The event loop never blocks: async
  callers await the worker, stream chunks cross back through an `asyncio.Queue` fed with
  `loop.call_soon_threadsafe`.
* **Prompt cancellation.** Each request carries a `threading.Event` that the worker checks on
  every token; closing the stream or cancelling the awaiting task sets it, the worker leaves
  llama's iterator within a token and the lock is free for the next call.
* **No litellm here.** Chunks are plain dicts shaped like litellm's `GenericStreamingChunk`;
  litellm is imported only by `_error`, to raise the error class litellm maps to a status.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from proactive_tui.llm.local.grammar import schema_to_gbnf
from proactive_tui.llm.local.loader import _GEN_LOCK, LOCAL_MODEL, get_llama

_WORKER_PREFIX = "proactive-tui-local-model"


@dataclass
class _Request:
    messages: list[dict[str, str]]
    kwargs: dict[str, Any]
    schema: dict[str, Any] | None = None  # constrain to this JSON schema
    json_object: bool = False  # constrain to any JSON object
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def structured(self) -> bool:
        return self.schema is not None or self.json_object


# --------------------------------------------------------------------------------------------
# Generation (always on the worker thread)
# --------------------------------------------------------------------------------------------


def _chunk(text: str, *, finished: bool = False, finish_reason: str = "", usage: dict | None = None) -> dict:
    """A litellm `GenericStreamingChunk` as a plain dict (keeps litellm out of the worker)."""
    return {
        "text": text,
        "is_finished": finished,
        "finish_reason": finish_reason,
        "index": 0,
        "tool_use": None,
        "usage": usage,
    }


def _grammar_for(request: _Request) -> Any:
    if not request.structured:
        return None
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if request.schema is None:
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    try:
        gbnf = schema_to_gbnf(request.schema)
    except Exception as exc:  # noqa: BLE001 - the converter raises bare Exceptions/asserts
        raise _error(400, f"the local model cannot turn this JSON schema into a grammar: {exc}") from exc
    return LlamaGrammar.from_string(gbnf, verbose=False)


def _error(status: int, message: str) -> Exception:
    """litellm's CustomLLMError when litellm is loaded (it maps the status), else a RuntimeError."""
    try:
        from litellm.llms.custom_llm import CustomLLMError

        return CustomLLMError(status_code=status, message=message)
    except Exception:  # noqa: BLE001
        return RuntimeError(message)


def _generate(request: _Request, emit: Callable[[dict], None]) -> None:
    """Run one generation, calling `emit` with each text chunk and then a final usage chunk.

    Holds `_GEN_LOCK` throughout. Checks `request.cancel` before starting and on every token;
    when set it closes llama's iterator (so llama's state stays consistent for prefix reuse) and
    returns without a final chunk.
    """
    if request.cancel.is_set():
        return
    llama = get_llama()
    grammar = _grammar_for(request)
    with _GEN_LOCK:
        if request.cancel.is_set():
            return
        chunks = llama.create_chat_completion(
            messages=request.messages, stream=True, grammar=grammar, **request.kwargs
        )
        parts: list[str] = []
        prompt_tokens: int | None = None
        finish_reason = "stop"
        try:
            for chunk in chunks:
                if request.cancel.is_set():
                    return
                choice = chunk["choices"][0]
                text = (choice.get("delta") or {}).get("content") or ""
                if text:
                    if prompt_tokens is None:
                        # llama has evaluated the prompt plus every token already in this chunk
                        # except the one just sampled (usually none: one token per chunk).
                        held = len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
                        prompt_tokens = max(0, llama.n_tokens - max(0, held - 1))
                    parts.append(text)
                    emit(_chunk(text))
                if choice.get("finish_reason"):
                    finish_reason = choice["finish_reason"]
        except ValueError as exc:
            if "context window" in str(exc):
                raise _error(400, f"{LOCAL_MODEL}: {exc}; shorten the conversation") from exc
            raise
        finally:
            chunks.close()
        if prompt_tokens is None:  # nothing generated: the context holds just the prompt
            prompt_tokens = llama.n_tokens
        reply = "".join(parts)
        completion_tokens = len(llama.tokenize(reply.encode("utf-8"), add_bos=False, special=True)) if reply else 0
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    emit(_chunk("", finished=True, finish_reason=finish_reason, usage=usage))


def _collect(request: _Request) -> tuple[str, str, dict]:
    """Non-streaming generation: (text, finish_reason, usage). Same path, same cancel checks."""
    parts: list[str] = []
    final: dict = {}

    def emit(chunk: dict) -> None:
        if chunk["is_finished"]:
            final.update(chunk)
        else:
            parts.append(chunk["text"])

    _generate(request, emit)
    return "".join(parts), final.get("finish_reason") or "stop", final.get("usage") or {}


_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """One worker thread: requests queue in order, and a cancelled queued request never starts."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_WORKER_PREFIX)
        return _EXECUTOR


def _on_worker() -> bool:
    return threading.current_thread().name.startswith(_WORKER_PREFIX)


# --------------------------------------------------------------------------------------------
# Sync and async front ends (used by the litellm handler, usable directly)
# --------------------------------------------------------------------------------------------


def complete(request: _Request) -> tuple[str, str, dict]:
    """Blocking generation on the worker thread."""
    if _on_worker():
        return _collect(request)
    future = _executor().submit(_collect, request)
    try:
        return future.result()
    except BaseException:
        request.cancel.set()
        future.cancel()
        raise


async def acomplete(request: _Request) -> tuple[str, str, dict]:
    """Generation awaited without blocking the loop; cancelling the caller stops the worker."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(_executor(), _collect, request)
    try:
        return await future
    except BaseException:
        request.cancel.set()
        raise


def _produce(request: _Request, put: Callable[[tuple[str, Any]], None]) -> None:
    """Worker side of both streams: ("chunk", dict)... then ("error", exc) if any, then ("done", None)."""
    try:
        _generate(request, lambda chunk: put(("chunk", chunk)))
    except BaseException as exc:  # noqa: BLE001 - handed to the consumer
        put(("error", exc))
    finally:
        put(("done", None))


def stream(request: _Request) -> Iterator[dict]:
    """Blocking stream of chunk dicts; closing the iterator stops the worker."""
    if _on_worker():
        collected: list[dict] = []
        _generate(request, collected.append)
        yield from collected
        return
    items: queue.Queue = queue.Queue()

    _executor().submit(_produce, request, items.put)
    try:
        while True:
            kind, item = items.get()
            if kind == "chunk":
                yield item
            elif kind == "error":
                raise item
            else:
                return
    finally:
        request.cancel.set()


async def astream(request: _Request) -> AsyncIterator[dict]:
    """Async stream of chunk dicts as tokens arrive.

    The worker hands each chunk to the loop with `call_soon_threadsafe`; if the consumer is
    cancelled or closes this generator, `finally` sets the cancel event and the worker stops
    within a token, releasing the lock.
    """
    loop = asyncio.get_running_loop()
    items: asyncio.Queue = asyncio.Queue()

    def put(item: tuple[str, Any]) -> None:
        try:
            loop.call_soon_threadsafe(items.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            request.cancel.set()

    loop.run_in_executor(_executor(), _produce, request, put)
    try:
        while True:
            kind, item = await items.get()
            if kind == "chunk":
                yield item
            elif kind == "error":
                raise item
            else:
                return
    finally:
        request.cancel.set()
