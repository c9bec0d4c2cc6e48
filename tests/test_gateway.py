"""The gateway over the real litellm path against a local fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import BaseModel, Field

from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.gateway import Gateway, RetryNotice
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply

pytestmark = pytest.mark.asyncio


class Verdict(BaseModel):
    reasoning: str
    score: int = Field(ge=1, le=10)
    reached: bool


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def settings(server: FakeOpenAIServer, **kw) -> ModelSettings:
    return ModelSettings(model="openai/fake-model", api_base=server.base_url, **kw)


def no_wait_gateway(notices: list[RetryNotice]) -> tuple[Gateway, list[float]]:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    return Gateway(on_retry=notices.append, sleep=fake_sleep, jitter=lambda: 0.5), slept


async def test_streaming_yields_deltas_and_usage(server: FakeOpenAIServer) -> None:
    server.script(Reply.text("Hello there, how is the garden doing today?"))
    stream = Gateway().stream(settings(server), [{"role": "user", "content": "hi"}])
    deltas = [d async for d in stream]
    assert len(deltas) >= 3
    assert "".join(deltas) == "Hello there, how is the garden doing today?"
    completion = stream.completion()
    assert completion.usage.completion_tokens == 8 and completion.usage.total_tokens > 8
    assert completion.usage.cost is None  # self-hosted: price unknown, never 0
    assert server.last_request["stream"] is True


async def test_complete_one_shot(server: FakeOpenAIServer) -> None:
    server.script("plain answer")
    completion = await Gateway().complete(settings(server, temperature=0.3, max_tokens=50), [{"role": "user", "content": "q"}])
    assert completion.text == "plain answer" and completion.attempts == 1
    assert server.last_request["temperature"] == 0.3 and server.last_request["max_tokens"] == 50


async def test_a_gateway_without_streamed_replies_asks_for_the_whole_reply_and_still_gives_it_as_a_delta(
        server: FakeOpenAIServer) -> None:
    """A headless batch's gateway: the caller takes deltas, the provider is asked for one reply."""
    server.script("one two three four", "one two three four")
    deltas: list[str] = []
    whole = await Gateway(stream_replies=False).complete(settings(server), [{"role": "user", "content": "q"}],
                                                         on_delta=deltas.append)
    assert not server.last_request.get("stream") and deltas == ["one two three four"] == [whole.text]
    streamed: list[str] = []
    await Gateway().complete(settings(server), [{"role": "user", "content": "q"}], on_delta=streamed.append)
    assert server.last_request["stream"] is True and len(streamed) > 1 and "".join(streamed) == whole.text


async def test_cancel_mid_stream_keeps_partial_text() -> None:
    with FakeOpenAIServer(chunk_delay=0.05) as server:
        server.script(Reply.text("one two three four five six seven eight nine ten eleven twelve"))
        stream = Gateway().stream(settings(server), [{"role": "user", "content": "count"}])
        got: list[str] = []

        async def consume() -> None:
            async for delta in stream:
                got.append(delta)

        task = asyncio.create_task(consume())
        while len(got) < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert stream.text == "".join(got)
        assert stream.text.startswith("one two") and "twelve" not in stream.text


async def test_structured_output_uses_json_schema_and_reasks(server: FakeOpenAIServer) -> None:
    server.script(
        Reply.text("Sure! Here it is: {\"reasoning\": \"ok\", \"score\": 42, \"reached\": true}"),  # out of range
        Reply.text("```json\n{\"reasoning\": \"fine\", \"score\": 7, \"reached\": false}\n``` hope that helps"),
    )
    result = await Gateway().complete_structured(settings(server), [{"role": "user", "content": "judge"}], Verdict)
    assert result.value == Verdict(reasoning="fine", score=7, reached=False)
    assert result.asks == 2
    first, second = server.requests[0].body, server.requests[1].body
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["schema"]["properties"]["score"]["maximum"] == 10
    reask = second["messages"][-1]["content"]
    assert "score: Input should be less than or equal to 10" in reask


async def test_structured_output_prompt_mode_and_final_failure(server: FakeOpenAIServer) -> None:
    server.script("no json here", "still none", "[1, 2")
    with pytest.raises(ModelError) as info:
        await Gateway().complete_structured(settings(server, structured="prompt"), [{"role": "user", "content": "j"}], Verdict)
    assert info.value.kind == "structured"
    assert "no valid Verdict after 3 replies" in info.value.message
    assert "response_format" not in server.requests[0].body
    assert '"reached"' in server.requests[0].body["messages"][-1]["content"]  # schema in the prompt


@pytest.mark.parametrize(
    "fault,reason",
    [(Reply.error(429, "slow down", retry_after=3), "rate limited"), (Reply.error(500, "boom"), "provider failed")],
)
async def test_retry_with_events(server: FakeOpenAIServer, fault: Reply, reason: str) -> None:
    server.script(fault, fault, "finally")
    notices: list[RetryNotice] = []
    gateway, slept = no_wait_gateway(notices)
    completion = await gateway.complete(settings(server), [{"role": "user", "content": "x"}])
    assert completion.text == "finally" and completion.attempts == 3
    assert [(n.attempt, n.max_attempts) for n in notices] == [(2, 5), (3, 5)]
    assert all(reason in n.reason for n in notices)
    if fault.status == 429:
        assert slept == [3.0, 3.0]  # Retry-After honoured
    else:
        assert slept == [1.0, 2.0]  # exponential backoff (jitter fixed at the midpoint)
    assert notices[0].describe().startswith("Retrying (2/5) in")


async def test_retry_on_timeout(server: FakeOpenAIServer) -> None:
    server.script(Reply(fault="hang", delay=5), "after timeout")
    notices: list[RetryNotice] = []
    gateway, _ = no_wait_gateway(notices)
    completion = await gateway.complete(settings(server, timeout=0.5), [{"role": "user", "content": "x"}])
    assert completion.text == "after timeout"
    assert len(notices) == 1 and "timeout" in notices[0].reason


async def test_gives_up_after_max_retries(server: FakeOpenAIServer) -> None:
    server.script(*[Reply.error(500, "down")] * 3)
    notices: list[RetryNotice] = []
    gateway, _ = no_wait_gateway(notices)
    with pytest.raises(ModelError) as info:
        await gateway.complete(settings(server, max_retries=2), [{"role": "user", "content": "x"}])
    assert info.value.kind == "server" and len(notices) == 2 and server.request_count == 3


async def test_no_retry_on_auth_error(server: FakeOpenAIServer) -> None:
    server.script(Reply.error(401, "bad key"), "never reached")
    notices: list[RetryNotice] = []
    gateway, _ = no_wait_gateway(notices)
    with pytest.raises(ModelError) as info:
        await gateway.complete(settings(server), [{"role": "user", "content": "x"}])
    assert info.value.kind == "auth" and "rejected the API key" in info.value.message
    assert notices == [] and server.request_count == 1


async def test_no_retry_on_bad_request(server: FakeOpenAIServer) -> None:
    server.script(Reply.error(400, "context too long"))
    notices: list[RetryNotice] = []
    gateway, _ = no_wait_gateway(notices)
    with pytest.raises(ModelError) as info:
        await gateway.complete(settings(server), [{"role": "user", "content": "x"}])
    assert info.value.kind == "bad_request" and notices == []


async def test_missing_key_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelError) as info:
        await Gateway().complete(ModelSettings(model="anthropic/claude-sonnet-4-5"), [{"role": "user", "content": "x"}])
    assert info.value.message == (
        "no API key for provider anthropic: set ANTHROPIC_API_KEY or run `proactive-tui keys set anthropic`"
    )


async def test_unreachable_api_base_is_plain() -> None:
    with FakeOpenAIServer() as srv:
        dead = srv.base_url  # the port is closed once the server stops
    with pytest.raises(ModelError) as info:
        await Gateway().complete(ModelSettings(model="openai/x", api_base=dead, max_retries=0), [{"role": "user", "content": "x"}])
    assert info.value.kind == "unreachable" and f"cannot reach {dead}" in info.value.message


async def test_unknown_provider_message() -> None:
    with pytest.raises(ModelError) as info:
        await Gateway().complete(ModelSettings(model="nosuchprovider/thing", api_base="http://127.0.0.1:9/v1", max_retries=0), [{"role": "user", "content": "x"}])
    assert info.value.kind == "unknown_provider"
    assert info.value.message.startswith("unknown provider nosuchprovider in model 'nosuchprovider/thing'")


async def test_stream_broken_keeps_partial(server: FakeOpenAIServer) -> None:
    server.script(Reply(content="alpha beta gamma delta epsilon zeta", fault="drop_stream"))
    stream = Gateway().stream(settings(server), [{"role": "user", "content": "x"}])
    with pytest.raises(ModelError) as info:
        async for _ in stream:
            pass
    assert stream.text and "zeta" not in stream.text
    assert info.value.partial_text == stream.text


async def test_canary_key_never_in_logs_or_errors(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    canary = "sk-canary-" + "Z" * 24
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    caplog.set_level(logging.DEBUG)
    server.script(Reply.error(401, f"Incorrect API key provided: {canary}"), "ok")
    with pytest.raises(ModelError) as info:
        await Gateway().complete(settings(server), [{"role": "user", "content": "x"}])
    # the key really was sent, and appears nowhere a person could read it
    assert server.last_request.headers["authorization"] == f"Bearer {canary}"
    assert canary not in info.value.message
    assert canary not in caplog.text
    from proactive_tui.redact import redact

    assert redact(f"key={canary} and Bearer {canary}") == "key=[redacted] and Bearer [redacted]"


async def test_litellm_does_not_price_a_reply_the_gateway_prices_itself(
        server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm's logging priced every reply again (for a model it has no price for, a thousand
    regex searches that fail each time: 12% of a batch call's CPU) and nothing read the figure;
    the gateway's own price is unchanged (`Gateway._cost`)."""
    from litellm import cost_calculator

    from proactive_tui.llm.gateway import litellm_module

    litellm_module()
    priced: list[str] = []
    real = cost_calculator.completion_cost

    def counted(*args, **kwargs):
        priced.append(str(kwargs.get("model")))
        return real(*args, **kwargs)

    monkeypatch.setattr(cost_calculator, "completion_cost", counted)
    server.script("one", "two")
    for gateway in (Gateway(stream_replies=False), Gateway()):
        completion = await gateway.complete(settings(server), [{"role": "user", "content": "q"}])
        assert completion.text in ("one", "two") and completion.usage.total_tokens > 0
        assert completion.usage.cost is None  # self-hosted: no price, as before
    await asyncio.sleep(0.2)  # litellm logs a success after the reply is handed back
    assert priced == []
