"""Self-hosted OpenAI-compatible servers through the real litellm path: structured-output
negotiation against each server's real refusals (the fake server's flavors), memory per api base,
no blind retries (requests counted on the server), the call's bounds and the error texts.

Bounds are exercised with small limits against faults that last far longer (a stall of 30 s, an
endless stream): the assertions are on what happened (which bound, what text was kept, how many
requests), never on how long it took.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.gateway import Gateway, RetryNotice
from proactive_tui.llm.settings import ModelSettings, resolve_roles
from proactive_tui.llm.structured import ModeMemory, memory_key, memory_path, redacted_base
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, UnacceptingPort

pytestmark = pytest.mark.asyncio
ASK = [{"role": "user", "content": "judge this"}]


class Verdict(BaseModel):
    reasoning: str
    score: int = Field(ge=1, le=10)
    reached: bool


def seat(server: FakeOpenAIServer, **kw) -> ModelSettings:
    return ModelSettings(model="openai/fake-model", api_base=kw.pop("api_base", server.base_url), **kw)


def counting_gateway() -> tuple[Gateway, list[RetryNotice], list[float]]:
    notices: list[RetryNotice] = []
    slept: list[float] = []

    async def no_sleep(seconds: float) -> None:
        slept.append(seconds)

    return Gateway(on_retry=notices.append, sleep=no_sleep, jitter=lambda: 0.5), notices, slept


def formats(server: FakeOpenAIServer) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in server.chat_requests()]


# -- negotiation --------------------------------------------------------------------------------


async def test_llama_cpp_falls_to_json_object_at_once_and_remembers_it() -> None:
    with FakeOpenAIServer(flavor="llama_cpp") as server:
        gateway, notices, slept = counting_gateway()
        first = await gateway.complete_structured(seat(server), ASK, Verdict)
        # json_schema refused with the server's 500, json_object taken: 2 requests, not 5 + 1
        assert formats(server) == ["json_schema", "json_object"]
        assert notices == [] and slept == []
        assert first.completion.structured_mode == "json_object" and first.value.score == 1
        sent = server.chat_requests()[1].body
        assert sent["response_format"]["schema"]["properties"]["score"]["maximum"] == 10
        assert '"reached"' in sent["messages"][-1]["content"]  # the schema is in the prompt too

        again = await Gateway().complete_structured(seat(server), ASK, Verdict)  # a new gateway, same process
        assert formats(server) == ["json_schema", "json_object", "json_object"]
        assert again.completion.structured_mode == "json_object"

        # written beside the config, so the next run starts right
        saved = ModeMemory(memory_path())
        entry = saved.entry(redacted_base(server.base_url))
        assert entry is not None and entry.mode == "json_object" and entry.rejected == ["json_schema"]


async def test_remembered_mode_is_per_api_base() -> None:
    with FakeOpenAIServer(flavor="llama_cpp") as llama, FakeOpenAIServer() as plain:
        gateway = Gateway()
        await gateway.complete_structured(seat(llama), ASK, Verdict)
        await gateway.complete_structured(seat(plain), ASK, Verdict)
        assert formats(plain) == ["json_schema"]
        assert gateway.structured_modes(seat(llama))[0] == "json_object"
        assert gateway.structured_modes(seat(plain))[0] == "json_schema"


async def test_lm_studio_takes_json_schema_and_a_forced_json_object_fails_once_with_the_cause() -> None:
    with FakeOpenAIServer(flavor="lm_studio") as server:
        gateway, notices, _ = counting_gateway()
        result = await gateway.complete_structured(seat(server), ASK, Verdict)
        assert formats(server) == ["json_schema"] and result.completion.structured_mode == "json_schema"
        with pytest.raises(ModelError) as info:
            await gateway.complete_structured(seat(server, structured="json_object"), ASK, Verdict)
        assert formats(server) == ["json_schema", "json_object"]  # one request: refused, not retried
        assert notices == []
        assert info.value.kind == "format_rejected"
        assert "rejects response_format 'json_object' (400)" in info.value.message
        assert "must be 'json_schema' or 'text'" in info.value.message
        assert "--structured-mode auto" in info.value.message


async def test_ollama_takes_json_schema_and_json_object_gets_the_schema_in_the_prompt() -> None:
    with FakeOpenAIServer(flavor="ollama") as server:
        result = await Gateway().complete_structured(seat(server), ASK, Verdict)
        assert formats(server) == ["json_schema"] and result.value == Verdict(reasoning="x", score=1, reached=True)
        # Ollama's json_object ignores the schema key (any JSON): the prompt must carry the schema,
        # and "{}" is then re-asked with the validation error
        with pytest.raises(ModelError) as info:
            await Gateway().complete_structured(seat(server, structured="json_object"), ASK, Verdict)
        asked = server.chat_requests()[1:]
        assert len(asked) == 3 and all('"reached"' in r.body["messages"][-1]["content"] or "corrected" in r.body["messages"][-1]["content"] for r in asked)
        assert info.value.kind == "structured" and "reasoning: Field required" in info.value.message


async def test_every_mode_refused_ends_in_the_prompt_mode() -> None:
    with FakeOpenAIServer() as server:
        server.script(
            Reply.error(400, "response_format json_schema is not supported"),
            Reply.error(500, "unsupported response_format type json_object"),
            Reply.text('{"reasoning": "r", "score": 4, "reached": false}'),
        )
        gateway, notices, _ = counting_gateway()
        result = await gateway.complete_structured(seat(server), ASK, Verdict)
        assert formats(server) == ["json_schema", "json_object", None] and notices == []
        assert result.value.score == 4 and result.completion.structured_mode == "prompt"
        assert '"reached"' in server.chat_requests()[2].body["messages"][-1]["content"]
        assert gateway.structured_modes(seat(server)) == ["prompt"]


async def test_a_500_that_does_not_name_response_format_is_still_retried() -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply.error(500, "out of memory"), Reply.text('{"reasoning": "r", "score": 2, "reached": true}'))
        gateway, notices, _ = counting_gateway()
        result = await gateway.complete_structured(seat(server), ASK, Verdict)
        assert formats(server) == ["json_schema", "json_schema"] and len(notices) == 1
        assert result.completion.structured_mode == "json_schema"


async def test_constrained_call_negotiates_without_touching_the_messages() -> None:
    """ProactiveBench's path: the protocol's messages go as they are, only response_format changes."""
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "exact upstream text"}]
    with FakeOpenAIServer(flavor="llama_cpp") as server:
        completion = await Gateway().complete_constrained(seat(server), messages, "Verdict", Verdict.model_json_schema())
        assert formats(server) == ["json_schema", "json_object"]
        assert all(r.body["messages"] == messages for r in server.chat_requests())
        assert completion.structured_mode == "json_object" and Verdict.model_validate_json(completion.text)


async def test_forced_modes_from_the_environment_and_the_config_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.llm.settings import RoleSettings

    roles = resolve_roles(environ={"PROACTIVE_TUI_STRUCTURED_MODE": "prompt", "PROACTIVE_TUI_JUDGE_STRUCTURED_MODE": "json_object"})
    assert (roles.agent.structured, roles.judge.structured) == ("prompt", "json_object")
    roles = resolve_roles(RoleSettings.model_validate({"agent": {"structured": "json_object"}}), environ={})
    assert roles.agent.structured == "json_object" and roles.user.structured == "auto"
    with FakeOpenAIServer() as server:
        server.script('{"reasoning": "r", "score": 3, "reached": true}')
        await Gateway().complete_structured(seat(server, structured="prompt"), ASK, Verdict)
        assert formats(server) == [None]


async def test_memory_key_and_file_never_hold_credentials() -> None:
    secret = "http://someone:sk-supersecret-123456@LocalHost:8080/v1/?api-key=abc#x"
    assert redacted_base(secret) == "http://localhost:8080/v1"
    memory = ModeMemory(memory_path())
    memory.learn(memory_key(ModelSettings(model="openai/m", api_base=secret)), "json_object", ["json_schema"])
    text = memory_path().read_text()
    assert "supersecret" not in text and "someone" not in text and "abc" not in text
    assert json.loads(text)["servers"]["http://localhost:8080/v1"]["mode"] == "json_object"
    assert ModeMemory(memory_path()).get("http://localhost:8080/v1") == "json_object"


# -- token caps -------------------------------------------------------------------------------


async def test_every_seat_sends_a_token_cap() -> None:
    assert ModelSettings(model="openai/gpt-4.1").token_cap() == 4096
    assert ModelSettings(model="openai/x", api_base="http://h/v1").token_cap(structured=True) == 1024
    assert ModelSettings(model="local/smollm2").token_cap() == 80
    assert ModelSettings(model="local/smollm2").token_cap(structured=True) == 384
    assert ModelSettings(model="openai/x", max_tokens=33).token_cap(structured=True) == 33
    with FakeOpenAIServer() as server:
        await Gateway().complete(seat(server), ASK)
        await Gateway().complete_structured(seat(server), ASK, Verdict)
        assert [r["max_tokens"] for r in server.chat_requests()] == [1024, 1024]


async def test_models_summary_records_each_seats_cap() -> None:
    from proactive_tui.core.spec import SessionSpec

    roles = resolve_roles(cli={"agent": {"model": "openai/a", "api_base": "http://u:p@h:1/v1"},
                               "user": {"model": "openai/u", "max_tokens": 64}}, environ={})
    summary = SessionSpec(env_id="proactiveeval/x", roles=roles).models_summary()
    assert summary["agent"]["max_tokens"] == 1024 and summary["agent"]["max_tokens_default"] is True
    assert summary["agent"]["api_base"] == "http://h:1/v1"  # no credentials in records
    assert summary["user"]["max_tokens"] == 64 and summary["user"]["max_tokens_default"] is False
    assert summary["judge"]["max_tokens"] == 80 and summary["judge"]["max_tokens_structured"] == 384


# -- the call's bounds ------------------------------------------------------------------------


async def test_slow_first_token_is_not_a_dead_server() -> None:
    """A prefill longer than the silence bound: only the first-token bound applies before text."""
    with FakeOpenAIServer() as server:
        server.script(Reply(content="late but whole reply", fault="slow_first_token", delay=0.6))
        stream = Gateway().stream(seat(server, first_token_timeout=30, idle_timeout=0.1), ASK)
        text = "".join([d async for d in stream])
        assert text == "late but whole reply" and server.request_count == 1


async def test_first_token_bound_names_itself_and_is_retried() -> None:
    with FakeOpenAIServer() as server:
        server.script(Reply(content="never in time", fault="slow_first_token", delay=30), "second try")
        gateway, notices, _ = counting_gateway()
        completion = await gateway.complete(seat(server, first_token_timeout=0.3), ASK, on_delta=lambda d: None)
        assert completion.text == "second try" and server.request_count == 2
        assert "no first token within 0.3s" in notices[0].reason and "first-token timeout" in notices[0].reason


async def test_a_stalled_stream_is_cut_by_the_silence_bound_and_kept_as_partial() -> None:
    words = "one two three four five six seven eight nine ten"
    with FakeOpenAIServer() as server:
        server.script(Reply(content=words, fault="stall"))
        stream = Gateway().stream(seat(server, idle_timeout=0.3, max_retries=3), ASK)
        with pytest.raises(ModelError) as info:
            async for _ in stream:
                pass
        assert info.value.kind == "timeout" and "went silent for 0.3s" in info.value.message
        assert "idle timeout between tokens" in info.value.message
        assert info.value.partial_text == stream.text and words.startswith(stream.text) and stream.text != words
        assert server.request_count == 1  # text had arrived: never retried (it would be lost or doubled)


async def test_an_endless_stream_is_cut_by_the_whole_call_bound() -> None:
    with FakeOpenAIServer(chunk_delay=0.01) as server:
        server.script(Reply(content="again and ", fault="endless"))
        stream = Gateway().stream(seat(server, timeout=0.5, idle_timeout=5, first_token_timeout=5), ASK)
        with pytest.raises(ModelError) as info:
            async for _ in stream:
                pass
        assert info.value.kind == "timeout" and "took longer than 0.5s" in info.value.message
        assert "whole-call timeout" in info.value.message and "the reply was cut after" in info.value.message
        assert info.value.partial_text.startswith("again and ") and server.request_count == 1


async def test_connect_bound_names_itself() -> None:
    with UnacceptingPort() as port:
        settings = ModelSettings(model="openai/x", api_base=port.base_url, connect_timeout=0.3, max_retries=0)
        with pytest.raises(ModelError) as info:
            await Gateway().complete(settings, ASK)
        assert info.value.kind == "timeout"
        assert f"could not connect to {port.base_url} within 0.3s (connect timeout)" in info.value.message


# -- errors that say the true cause -------------------------------------------------------------


async def test_base_without_v1_is_no_api_not_an_unknown_model() -> None:
    with FakeOpenAIServer(flavor="llama_cpp") as server:
        gateway, notices, _ = counting_gateway()
        with pytest.raises(ModelError) as info:
            await gateway.complete(seat(server, api_base=server.root_url), ASK)
        assert info.value.kind == "no_api" and notices == [] and server.request_count == 1
        assert info.value.message == f"no OpenAI-compatible API at {server.root_url}; did you mean {server.root_url}/v1?"


async def test_unknown_provider_is_named_before_any_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOO_API_KEY", raising=False)
    with pytest.raises(ModelError) as info:
        await Gateway().complete(ModelSettings(model="foo/bar"), ASK)
    assert info.value.kind == "unknown_provider" and info.value.message.startswith("unknown provider foo")
    assert "API key" not in info.value.message


async def test_a_url_in_the_model_field_points_at_api_base() -> None:
    with pytest.raises(ModelError) as info:
        await Gateway().complete(ModelSettings(model="http://localhost:8080"), ASK)
    assert "belongs in --api-base" in info.value.message and "--api-base http://localhost:8080/v1" in info.value.message
    assert "HTTP:_API_KEY" not in info.value.message and "API key" not in info.value.message


async def test_concurrent_first_calls_negotiate_once() -> None:
    """A session overlaps structured calls; only one of them may pay for the refused probe."""
    import asyncio

    with FakeOpenAIServer(flavor="llama_cpp", latency=0.05) as server:
        gateway = Gateway()
        results = await asyncio.gather(*(gateway.complete_structured(seat(server), ASK, Verdict) for _ in range(3)))
        assert formats(server) == ["json_schema", "json_object", "json_object", "json_object"]
        assert {r.completion.structured_mode for r in results} == {"json_object"}


async def test_calls_that_waited_for_the_negotiation_then_go_together() -> None:
    """Once the first call has found the server's mode, the calls that queued behind it are not
    sent one after another (a batch's sessions all open with a structured call): the server sees
    them overlap."""
    import asyncio

    with FakeOpenAIServer(flavor="llama_cpp", latency=0.2) as server:
        gateway = Gateway()
        results = await asyncio.gather(*(gateway.complete_structured(seat(server), ASK, Verdict) for _ in range(4)))
        assert formats(server) == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
        assert {r.completion.structured_mode for r in results} == {"json_object"}
        assert server.max_in_flight["fake-model"] >= 2
