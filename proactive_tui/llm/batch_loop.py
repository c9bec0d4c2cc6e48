"""The event loop a headless batch runs on: a call's request leaves at once, not at the back of the queue.

Why: in a batch worker, 16 sessions share one loop, and the loop runs its ready callbacks in
turn (FIFO). Twice on every call's way out, the stock stack hands the next piece of work to
that queue instead of doing it:
- `litellm.acompletion` runs the call's synchronous set-up (`completion(..., acompletion=True)`:
  routing, parameters, the request's build, about 1 ms) in the loop's default executor, a thread
  pool, and resumes when the pool's thread has run it and the loop's queue has come round twice;
- aiohttp (litellm's transport) writes the request's headers and body in a task of their own,
  which on Python 3.11 starts only when the queue comes round (aiohttp starts it eagerly from
  Python 3.12 on, `ClientRequest.send`).
So while replies were being processed, no session's next request went out until every reply
ready at that moment had been processed: the sessions sent together, got their replies together
and stayed in step, and the worker's core idled while all of them waited on the provider. A
minimal client with the issue-35 workload's shape (32 sessions of 8 steps, 100 ms a call, 5.5 ms
of CPU a call, 2 processes) measured wall / max(ideal, CPU / cores) 1.66 with the deferred write
and 1.18 with it eager, 1.13 and 1.11 with starts spaced (`evalrun.spacing`). The batch itself,
same workload, 8 alternating rounds in one process: wall 1.39 s on the stock loop, 1.33 with the
writer eager, 1.25 with the set-up inline too; wall / max(ideal, CPU / cores) 1.28, 1.17, 1.14
(`benchmarks/batch_throughput.py` has the fresh-process figures).

`BatchLoop` does both at once, and nothing else differently:
- `run_in_executor`: litellm's own set-up (recognised by identity, `_is_litellm_set_up`) runs on
  the loop's thread and returns a finished future, so the call goes on without yielding; only
  while the gateway allows it for this call (`set_up_inline`), which it does only for the
  providers in `INLINE_PROVIDERS`, whose set-up reads a key and builds a request and never waits
  on the network. A provider that may sign in through a token service (Vertex AI, Bedrock,
  Azure AD, watsonx, GitHub Copilot: where depends on its credentials, and GitHub Copilot's
  set-up asks for a device code over the network) could stall every session of the worker on
  the loop's thread; it keeps the thread pool, as does every other job (a DNS lookup:
  `loop.getaddrinfo`). `tests/test_batch_loop.py` runs each listed provider's set-up with the
  network cut.
- `create_task`: aiohttp's body writer (`ClientRequest.write_bytes`) runs its first step at once
  on Python < 3.12, as aiohttp asks for on 3.12 and later (`eager_start=True`); a writer that
  finishes in that step (the usual case: the request fits the socket's buffer) is a finished
  future, as aiohttp's own eager task would be. Every other task starts as ever.

Used by the batch commands only (`run`: `eval` and `synth` in one process, each worker process,
each Ray task). The TUI keeps the stock loop: its loop draws the screen, and nothing there runs
16 sessions at once. If litellm or aiohttp change what they hand over, nothing is recognised and
the loop behaves as the stock one; the tests of both paths then fail, so nobody is told it still works.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import sys
import types
from typing import Any, Callable, Coroutine, Generator, Iterator, TypeVar

T = TypeVar("T")

INLINE_PROVIDERS = frozenset({
    "openai", "hosted_vllm", "lm_studio", "llamafile", "openrouter", "groq", "deepseek", "together_ai",
    "fireworks_ai", "xai", "mistral", "anthropic", "cerebras", "deepinfra",
})
"""litellm providers (`get_llm_provider`'s name) whose set-up is pure CPU: a static key (or none)
and an HTTP request built in memory. `openai` is every `openai/` seat, so every OpenAI-compatible
server (vLLM, llama.cpp's server, the project's fake one). Others keep the thread pool."""

EAGER_WRITES = sys.version_info < (3, 12)
"""Whether the loop starts aiohttp's body writer itself: from 3.12 on aiohttp does."""

_set_up_inline: contextvars.ContextVar[bool] = contextvars.ContextVar("proactive_tui_set_up_inline", default=False)

_Base: type[asyncio.AbstractEventLoop] = (asyncio.ProactorEventLoop if sys.platform == "win32"  # type: ignore[attr-defined]
                                          else asyncio.SelectorEventLoop)


@contextlib.contextmanager
def set_up_inline(yes: bool) -> Iterator[None]:
    """Around one awaited litellm call: whether its set-up may run on the loop's thread (on a
    `BatchLoop`; elsewhere this changes nothing)."""
    token = _set_up_inline.set(yes)
    try:
        yield
    finally:
        _set_up_inline.reset(token)


def _is_litellm_set_up(fn: Callable[..., Any]) -> bool:
    """`functools.partial(context.run, functools.partial(litellm.completion, ...))`: what
    `litellm.acompletion` gives the loop's default executor."""
    main = sys.modules.get("litellm.main")  # its own `completion`, not the public wrapper `litellm.completion`
    if main is None or not isinstance(fn, functools.partial) or not fn.args:
        return False
    inner = fn.args[0]
    return isinstance(inner, functools.partial) and inner.func is getattr(main, "completion", None)


def _is_aiohttp_writer(coro: Any) -> bool:
    frame = getattr(coro, "cr_frame", None)
    return (getattr(coro, "__qualname__", None) == "ClientRequest.write_bytes" and frame is not None
            and frame.f_globals.get("__name__") == "aiohttp.client_reqrep")


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """Go on with a coroutine whose first step has run (and yielded `yielded`) inside a task: what
    the task sends or throws in is passed on, as `yield from` would after that first step."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # a cancellation, or what the awaited future raised
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


class BatchLoop(_Base):  # type: ignore[valid-type,misc]
    """The platform's event loop, with a model call's way out kept off the back of the queue."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inline_set_ups = 0
        """How many litellm set-ups this loop ran on its thread (the tests read it)."""
        self.eager_writes = 0
        """How many aiohttp body writers it started at once."""

    def run_in_executor(self, executor: Any, func: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        if executor is None and _set_up_inline.get() and _is_litellm_set_up(func):
            self.inline_set_ups += 1
            future: asyncio.Future[T] = self.create_future()
            try:
                future.set_result(func(*args))
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:  # the awaiting call raises it, as from the pool
                future.set_exception(exc)
            return future
        return super().run_in_executor(executor, func, *args)  # type: ignore[no-any-return]

    def create_task(self, coro: Any, *, name: str | None = None, context: contextvars.Context | None = None) -> Any:
        if EAGER_WRITES and _is_aiohttp_writer(coro):
            return self._start_eagerly(coro, name, context)
        return super().create_task(coro, name=name, context=context)

    def _start_eagerly(self, coro: Any, name: str | None, context: contextvars.Context | None) -> Any:
        self.eager_writes += 1
        try:
            yielded = coro.send(None) if context is None else context.run(coro.send, None)
        except StopIteration as stop:
            done: asyncio.Future[Any] = self.create_future()
            done.set_result(stop.value)
            return done
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # held as the eager task would hold it
            failed: asyncio.Future[Any] = self.create_future()
            failed.set_exception(exc)
            return failed
        return super().create_task(_resume(coro, yielded), name=name, context=context)


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on a `BatchLoop`."""
    with asyncio.Runner(loop_factory=BatchLoop) as runner:
        return runner.run(main)
