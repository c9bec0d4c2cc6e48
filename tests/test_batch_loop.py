"""The batch loop (`llm.batch_loop`): litellm's set-up of an allowed call runs on the loop's thread,
aiohttp's body writer starts at once on Python 3.11, and everything else is as on the stock loop."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import socket
import sys
import threading
import types

import pytest

from proactive_tui.llm import batch_loop
from proactive_tui.llm.batch_loop import BatchLoop
from proactive_tui.llm.gateway import Gateway, litellm_module
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply

eager_writes_here = pytest.mark.skipif(not batch_loop.EAGER_WRITES,
                                       reason="from Python 3.12 on aiohttp starts its writer eagerly itself")


def on_batch_loop(make):
    """Run `make(loop)` (a coroutine function) on a fresh `BatchLoop`; its result and the loop."""
    seen: list[BatchLoop] = []

    async def main():
        loop = asyncio.get_running_loop()
        assert isinstance(loop, BatchLoop)
        seen.append(loop)
        return await make(loop)

    result = batch_loop.run(main())
    return result, seen[0]


# -- the set-up, through the real litellm path ----------------------------------------------------


def test_an_openai_seats_calls_run_litellms_set_up_on_the_loop_thread_and_get_their_replies() -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.text("first reply, whole"), Reply.text("second reply, whole"))
        seat = ModelSettings(model="openai/fake-model", api_base=server.base_url)

        async def calls(loop):
            gateway = Gateway(stream_replies=False)
            return [(await gateway.complete(seat, [{"role": "user", "content": f"hello {n}"}])).text for n in (1, 2)]

        texts, loop = on_batch_loop(calls)
    assert texts == ["first reply, whole", "second reply, whole"]
    assert loop.inline_set_ups == 2  # litellm's own `completion`, recognised: not the public `litellm.completion`
    if batch_loop.EAGER_WRITES:
        assert loop.eager_writes == 2


def test_a_provider_off_the_list_keeps_litellms_thread_pool() -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.text("a reply"))
        seat = ModelSettings(model="openai/fake-model", api_base=server.base_url)

        async def calls(loop):
            gateway = Gateway(stream_replies=False)
            gateway._set_up_inline[(seat.model, seat.api_base)] = False  # as for a provider off the list
            return (await gateway.complete(seat, [{"role": "user", "content": "hello"}])).text, loop._default_executor

        (text, executor), loop = on_batch_loop(calls)
    assert text == "a reply"
    assert loop.inline_set_ups == 0
    assert executor is not None  # litellm's set-up went to the pool, as on the stock loop


def test_the_gateway_allows_the_inline_set_up_only_for_the_listed_providers() -> None:
    gateway = Gateway()
    allowed = {model: gateway.set_up_inline(ModelSettings(model=model, api_base=base)) for model, base in [
        ("openai/my-model", "http://127.0.0.1:8000/v1"), ("gpt-4o", None), ("hosted_vllm/qwen", "http://127.0.0.1:8000/v1"),
        ("anthropic/claude-sonnet-4-5", None), ("vertex_ai/gemini-2.5-pro", None), ("bedrock/anthropic.claude-v2", None),
        ("azure/my-deployment", "https://example.openai.azure.com"), ("github_copilot/gpt-4o", None),
        ("watsonx/ibm/granite", None)]}
    assert allowed == {"openai/my-model": True, "gpt-4o": True, "hosted_vllm/qwen": True,
                       "anthropic/claude-sonnet-4-5": True, "vertex_ai/gemini-2.5-pro": False,
                       "bedrock/anthropic.claude-v2": False, "azure/my-deployment": False,
                       "github_copilot/gpt-4o": False, "watsonx/ibm/granite": False}


@pytest.mark.parametrize("provider", sorted(batch_loop.INLINE_PROVIDERS))
def test_each_listed_providers_set_up_never_touches_the_network(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes a provider safe to set up on the loop's thread: with every socket refused, its
    set-up (`completion(..., acompletion=True)`, what `acompletion` hands the executor) still
    returns the call's coroutine. GitHub Copilot's fails here (it asks for a device code)."""
    litellm = litellm_module()
    model = f"{provider}/some-model"
    assert litellm.get_llm_provider(model=model, api_base="http://127.0.0.1:9/v1")[1] == provider
    touched: list[str] = []

    def refuse(*args, **kwargs):
        touched.append(repr(args)[:80])
        raise OSError("the network is cut in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    started = litellm.completion(model=model, messages=[{"role": "user", "content": "hi"}], api_key="a-key",
                                 api_base="http://127.0.0.1:9/v1", max_tokens=5, acompletion=True)
    try:
        assert inspect.iscoroutine(started)
    finally:
        if inspect.iscoroutine(started):
            started.close()
    assert touched == []


# -- run_in_executor, in isolation ---------------------------------------------------------------


@pytest.fixture
def fake_litellm(monkeypatch: pytest.MonkeyPatch):
    """A stand-in `litellm.main` module: what `_is_litellm_set_up` recognises is its `completion`."""
    calls: list[int] = []

    def completion(**kwargs):
        calls.append(threading.get_ident())
        if kwargs.get("fail"):
            raise ValueError("the set-up refused this call")
        return "the call's coroutine"

    monkeypatch.setitem(sys.modules, "litellm.main", types.SimpleNamespace(completion=completion))
    return completion, calls


def set_up_of(completion, **kwargs):
    return functools.partial(contextvars.copy_context().run, functools.partial(completion, **kwargs))


@pytest.mark.parametrize("allowed, litellms, inline", [(True, True, True), (False, True, False), (True, False, False)])
def test_only_litellms_set_up_of_an_allowed_call_runs_inline(fake_litellm, allowed: bool, litellms: bool,
                                                             inline: bool) -> None:
    completion, calls = fake_litellm

    def other(**kwargs):
        calls.append(threading.get_ident())
        return "the call's coroutine"

    async def main(loop):
        with batch_loop.set_up_inline(allowed):
            future = loop.run_in_executor(None, set_up_of(completion if litellms else other))
            done_at_once = future.done()
            return await future, done_at_once

    (result, done_at_once), loop = on_batch_loop(main)
    assert result == "the call's coroutine"
    assert done_at_once is inline
    assert (calls == [threading.get_ident()]) is inline  # this thread, or a pool's
    assert loop.inline_set_ups == (1 if inline else 0)


def test_a_failing_inline_set_up_raises_in_the_awaiting_call(fake_litellm) -> None:
    completion, _calls = fake_litellm

    async def main(loop):
        with batch_loop.set_up_inline(True):
            with pytest.raises(ValueError, match="refused"):
                await loop.run_in_executor(None, set_up_of(completion, fail=True))
        return "went on"

    assert on_batch_loop(main)[0] == "went on"


def test_allowing_the_inline_set_up_lasts_only_for_its_block() -> None:
    assert batch_loop._set_up_inline.get() is False
    with batch_loop.set_up_inline(True):
        assert batch_loop._set_up_inline.get() is True
    assert batch_loop._set_up_inline.get() is False


# -- aiohttp's body writer, in isolation ---------------------------------------------------------

WRITER_SOURCE = '''
class ClientRequest:
    def __init__(self, log, gate=None):
        self.log, self.gate = log, gate

    async def write_bytes(self):
        self.log.append("headers and body written")
        if self.gate is not None:
            try:
                self.log.append(await self.gate)
            except ValueError as exc:
                self.log.append(f"caught {exc}")
                self.log.append(await self.gate2)
            finally:
                self.log.append("writer ended")
        return "written"
'''


def writer_class():
    """A `ClientRequest.write_bytes` as aiohttp names it (module `aiohttp.client_reqrep`)."""
    space: dict = {"__name__": "aiohttp.client_reqrep"}
    exec(WRITER_SOURCE, space)
    return space["ClientRequest"]


@eager_writes_here
def test_a_body_writer_that_needs_no_wait_is_done_when_created() -> None:
    log: list[str] = []

    async def main(loop):
        task = asyncio.create_task(writer_class()(log).write_bytes())
        assert log == ["headers and body written"]  # before any turn of the loop
        assert task.done() and task.result() == "written"
        return loop.eager_writes

    assert on_batch_loop(main)[0] == 1


@eager_writes_here
def test_a_body_writer_that_waits_runs_its_first_step_at_once_then_goes_on_in_a_task() -> None:
    log: list[str] = []

    async def main(loop):
        gate = loop.create_future()
        task = asyncio.create_task(writer_class()(log, gate).write_bytes())
        assert log == ["headers and body written"] and not task.done()
        gate.set_result("socket drained")
        assert await task == "written"
        return log

    assert on_batch_loop(main)[0] == ["headers and body written", "socket drained", "writer ended"]


@eager_writes_here
def test_a_waiting_body_writer_gets_what_its_future_raises_and_can_be_cancelled() -> None:
    log: list[str] = []

    async def main(loop):
        writer = writer_class()(log, loop.create_future())
        writer.gate2 = loop.create_future()
        task = asyncio.create_task(writer.write_bytes())
        writer.gate.set_exception(ValueError("peer reset"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert log[-1] == "caught peer reset" and not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return log

    assert on_batch_loop(main)[0] == ["headers and body written", "caught peer reset", "writer ended"]


def test_any_other_coroutine_starts_as_on_the_stock_loop() -> None:
    log: list[str] = []

    async def job():
        log.append("ran")

    async def main(loop):
        task = asyncio.create_task(job())
        assert log == [] and isinstance(task, asyncio.Task)
        await task
        return loop.eager_writes

    assert on_batch_loop(main)[0] == 0
    assert log == ["ran"]
