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
  `_error` uses litellm's error class only when litellm is already loaded.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from proactive_tui.llm.local.grammar import grammar_schema, schema_to_gbnf
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


def _chunk(text: str, *, finished: bool = False, finish_reason: str = "", usage: dict[str, Any] | None = None) -> dict[str, Any]:
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


class LocalCallError(RuntimeError):
    """A call the embedded model refuses, with the HTTP status a server would have answered
    (`llm.errors.classify` reads `status_code`, as it does on litellm's errors)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


def _error(status: int, message: str) -> Exception:
    """litellm's CustomLLMError when litellm is already loaded (a call that came through it, which
    maps the status), else our own error with the same status: importing litellm here would undo
    the direct client's saving (~200 MB) on the first refused call."""
    if "litellm" in sys.modules:
        try:
            from litellm.llms.custom_llm import CustomLLMError

            return CustomLLMError(status_code=status, message=message)
        except Exception:  # noqa: BLE001
            pass
    return LocalCallError(status, message)


# Prose copied from the prompt is blocked from this many tokens on (see _NoCopy).
NO_COPY_NGRAM = 4
NO_COPY_PENALTY = 1e4  # logits; exp(-1e4) is 0 beside any token the grammar allows
_JSON_MARKS = set('"{}[]:')
_PROSE: Any = None  # numpy bool array over the vocabulary: the token holds no JSON punctuation


def _prose_tokens(llama: Any) -> Any:
    """Which vocabulary tokens can only be prose inside a JSON string, computed once (~0.4 s)."""
    global _PROSE
    if _PROSE is None:
        import numpy as np

        _PROSE = np.array(
            [not (_JSON_MARKS & set(llama.detokenize([i]).decode("utf-8", "ignore"))) for i in range(llama.n_vocab())],
            dtype=bool,
        )
    return _PROSE


class _NoCopy:
    """llama.cpp logits processor: a structured reply may not copy a run of words from its prompt.

    The 135M judge, shown graded examples, writes the last example's reasoning word for word
    (and its score) whatever it is grading; so once the reply's last NO_COPY_NGRAM - 1 tokens are
    all prose tokens and appear in the prompt, the prose token that followed them there is banned
    (n-gram blocking against the prompt, like `no_repeat_ngram_size`). JSON keys and punctuation
    are never blocked: a run holding a quote, brace, bracket or colon is not counted, so the
    grammar's skeleton copies freely, and short quotes (a name, a number) stay possible.
    """

    def __init__(self, llama: Any) -> None:
        self.prose = _prose_tokens(llama)
        self.n = NO_COPY_NGRAM - 1
        self.start = 0  # the prompt's length: what llama has evaluated when it first asks
        self.follow: dict[tuple[int, ...], set[int]] | None = None

    def _index(self, prompt: list[int]) -> dict[tuple[int, ...], set[int]]:
        follow: dict[tuple[int, ...], set[int]] = {}
        for i in range(len(prompt) - self.n):
            gram = tuple(prompt[i:i + self.n + 1])
            if all(self.prose[t] for t in gram):
                follow.setdefault(gram[:-1], set()).add(gram[-1])
        return follow

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        if self.follow is None:
            self.start = len(input_ids)
            self.follow = self._index([int(t) for t in input_ids])
        if len(input_ids) - self.start < self.n:
            return logits
        banned = self.follow.get(tuple(int(t) for t in input_ids[-self.n:]))
        if banned:
            # Far below every other token, but finite: the grammar is applied after this processor,
            # and where it allows only a banned token (the rest of an enum word the prompt also
            # holds) an all -inf row let llama.cpp sample outside the grammar, which aborts the
            # whole process ("Unexpected empty grammar stack").
            logits[list(banned)] -= NO_COPY_PENALTY
        return logits


def _score_fields(schema: dict[str, Any] | None) -> dict[str, list[int]]:
    """Top-level integer fields of `schema` with a small set of allowed values (1-10 scores).

    Read from the grammar's view of the schema, where a bounded integer has become an enum."""
    if not schema:
        return {}
    properties = grammar_schema(schema).get("properties") or {}
    fields: dict[str, list[int]] = {}
    for name, node in properties.items():
        values = node.get("enum") if isinstance(node, dict) and node.get("type") == "integer" else None
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            fields[name] = list(values)
    return fields


def _decide_scores(llama: Any, request: _Request, prompt_ids: list[int], text: str) -> str:
    """Decide each score field of a structured reply on its own; returns the reply's new JSON.

    Under one grammar the 135M model writes its scores as a sequence, each number predicted from
    the ones before it: 10, 9, 8, 7, 6, 5 (or 2, 3, 4, 5, 6) whatever it judged, which reads as a
    fake on screen. And chosen greedily, a score is the model's favourite number: it gave 10/10 to
    a nonsense plan, an unrelated plan and a good one alike. So every score is decided again from
    the prompt plus the reply's non-score fields (the reasoning written first) and that field's
    name only, so no score can see another; and it is the probability-weighted mean of the allowed
    values under the model's own next-token distribution, rounded (G-Eval's scoring, Liu et al.
    2023, arXiv 2303.16634), so a plan the model finds less likely to deserve a 10 gets less than
    one it does not doubt. A reply that is not a JSON object, or a schema without bounded integer
    fields, is returned unchanged.
    """
    fields = _score_fields(request.schema)
    if not fields:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or not any(name in data for name in fields):
        return text
    head = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k not in fields)
    sep = ", " if len(head) > 1 else ""
    for name, values in fields.items():
        if name not in data or request.cancel.is_set():
            continue
        tokens = prompt_ids + llama.tokenize(f"{head}{sep}{json.dumps(name)}: ".encode("utf-8"), add_bos=False)
        weights = score_distribution(llama, tokens, values)
        if weights:
            mean = sum(value * weight for value, weight in weights.items())
            data[name] = min(values, key=lambda v: (abs(v - mean), v))
    return json.dumps(data, ensure_ascii=False)


def score_distribution(llama: Any, tokens: list[int], values: list[int]) -> dict[int, float]:
    """The model's probability of writing each of `values` next, after `tokens`, as a grammar
    limited to those values (each followed by `,` or `}`) would see it: at every step the
    probabilities are renormalised over the tokens that can still lead to an allowed value.

    Reads llama.cpp's logits of the last evaluated token directly (the Python buffer holds none
    without `logits_all`); evaluates `tokens` once, reusing the cached prefix, plus one token per
    branching point of the values' spellings ("1" before "10" and "1,": two evaluations for 1-10).
    """
    import numpy as np

    terminals = {t for t in (llama.tokenize(b",", add_bos=False) + llama.tokenize(b"}", add_bos=False))}
    spellings = {value: llama.tokenize(str(value).encode("utf-8"), add_bos=False) for value in values}
    common = 0
    limit = min(llama.n_tokens, len(tokens) - 1)
    ids = llama.input_ids
    while common < limit and int(ids[common]) == tokens[common]:
        common += 1
    llama.n_tokens = common
    llama.eval(tokens[common:])
    base = llama.n_tokens

    def next_probabilities(path: list[int]) -> Any:
        llama.n_tokens = base
        if path:
            llama.eval(path)
        logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)
        logits -= logits.max()
        return np.exp(logits)

    weights: dict[int, float] = {}
    seen: dict[tuple[int, ...], Any] = {}
    for value, spelling in spellings.items():
        probability = 1.0
        for depth in range(len(spelling) + 1):
            prefix = tuple(spelling[:depth])
            if prefix not in seen:
                seen[prefix] = next_probabilities(list(prefix))
            exp = seen[prefix]
            allowed = {s[depth] for s in spellings.values() if len(s) > depth and tuple(s[:depth]) == prefix}
            if any(tuple(s) == prefix for s in spellings.values()):
                allowed |= terminals
            total = float(sum(exp[t] for t in allowed))
            chosen = spelling[depth] if depth < len(spelling) else None
            if total <= 0:
                probability = 0.0
                break
            probability *= float(exp[chosen] if chosen is not None else sum(exp[t] for t in terminals)) / total
        weights[value] = probability
    llama.n_tokens = base
    total = sum(weights.values())
    return {value: weight / total for value, weight in weights.items()} if total > 0 else {}


def _generate(request: _Request, emit: Callable[[dict[str, Any]], None]) -> None:
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
        extra = {"logits_processor": [_NoCopy(llama)]} if request.structured else {}
        chunks = llama.create_chat_completion(
            messages=request.messages, stream=True, grammar=grammar, **request.kwargs, **extra
        )
        parts: list[str] = []
        prompt_tokens: int | None = None
        finish_reason = "stop"
        # A reply whose scores are decided afterwards (see _decide_scores) is sent whole at the end.
        held_back = bool(_score_fields(request.schema))
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
                    if not held_back:
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
        if held_back:
            prompt_ids = [int(t) for t in llama.input_ids[:prompt_tokens]]
            reply = _decide_scores(llama, request, prompt_ids, reply)
            if request.cancel.is_set():
                return
            emit(_chunk(reply))
        completion_tokens = len(llama.tokenize(reply.encode("utf-8"), add_bos=False, special=True)) if reply else 0
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    emit(_chunk("", finished=True, finish_reason=finish_reason, usage=usage))


def _collect(request: _Request) -> tuple[str, str, dict[str, Any]]:
    """Non-streaming generation: (text, finish_reason, usage). Same path, same cancel checks."""
    parts: list[str] = []
    final: dict[str, Any] = {}

    def emit(chunk: dict[str, Any]) -> None:
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


def complete(request: _Request) -> tuple[str, str, dict[str, Any]]:
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


async def acomplete(request: _Request) -> tuple[str, str, dict[str, Any]]:
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


def stream(request: _Request) -> Iterator[dict[str, Any]]:
    """Blocking stream of chunk dicts; closing the iterator stops the worker."""
    if _on_worker():
        collected: list[dict[str, Any]] = []
        _generate(request, collected.append)
        yield from collected
        return
    items: queue.Queue[tuple[str, Any]] = queue.Queue()

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


async def astream(request: _Request) -> AsyncGenerator[dict[str, Any], None]:
    """Async stream of chunk dicts as tokens arrive.

    The worker hands each chunk to the loop with `call_soon_threadsafe`; if the consumer is
    cancelled or closes this generator, `finally` sets the cancel event and the worker stops
    within a token, releasing the lock.
    """
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

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
