"""The fake OpenAI server, proven through the real `litellm.acompletion` path (no mocks, 127.0.0.1 only)."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map from the internet

import asyncio
import json
import time
import urllib.request
from typing import Literal

import litellm
import pytest
from pydantic import BaseModel

from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, example_for_schema

MODEL = "fake-model"


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


async def complete(srv: FakeOpenAIServer, content: str = "hello there", **kwargs):
    kwargs.setdefault("num_retries", 0)
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("timeout", 5)
    return await litellm.acompletion(
        model=f"openai/{MODEL}",
        api_base=srv.base_url,
        api_key="sk-test",
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": content}],
        **kwargs,
    )


def post_raw(srv: FakeOpenAIServer, body: dict) -> dict:
    request = urllib.request.Request(
        srv.base_url + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.asyncio
async def test_plain_completion_returns_scripted_text_and_usage(server):
    server.script(Reply.text("the scripted answer"))
    response = await complete(server, "one two three")
    assert response.choices[0].message.content == "the scripted answer"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.completion_tokens == 3
    assert response.usage.prompt_tokens == 5  # "be brief" + "one two three"
    assert response.usage.total_tokens == 8
    assert server.reply_queue == type(server.reply_queue)()  # the script was consumed


@pytest.mark.asyncio
async def test_default_responder_echoes_last_user_message(server):
    response = await complete(server, "ping me")
    assert response.choices[0].message.content == "ok: ping me"


@pytest.mark.asyncio
async def test_custom_responder_used_once_script_is_empty():
    with FakeOpenAIServer(responder=lambda req: f"{len(req['messages'])} messages") as srv:
        srv.script("scripted first")
        first = await complete(srv)
        second = await complete(srv)
    assert first.choices[0].message.content == "scripted first"
    assert second.choices[0].message.content == "2 messages"


@pytest.mark.asyncio
async def test_streaming_yields_several_chunks_joining_to_full_text(server):
    text = "streaming works in several small pieces"
    server.script(Reply.text(text))
    stream = await complete(server, stream=True, stream_options={"include_usage": True})
    pieces = []
    finish = None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    assert "".join(pieces) == text
    assert len([p for p in pieces if p]) >= 3
    assert finish == "stop"
    assert server.last_request["stream"] is True


@pytest.mark.asyncio
async def test_drop_stream_ends_without_the_full_text(server):
    text = "a b c d e f g h"
    server.script(Reply.text(text, fault="drop_stream"))
    pieces = []
    try:
        stream = await complete(server, stream=True)
        async for chunk in stream:
            if chunk.choices:
                pieces.append(chunk.choices[0].delta.content or "")
    except Exception:
        pass  # litellm raises (MidStreamFallbackError today); a short stream would also do
    received = "".join(pieces)
    assert received and received != text and text.startswith(received)


class Mood(BaseModel):
    label: Literal["calm", "tense"]
    score: float


class Verdict(BaseModel):
    should_act: bool
    reason: str
    attempts: int
    tags: list[str]
    mood: Mood
    note: str | None


@pytest.mark.asyncio
async def test_json_schema_response_format_gets_a_valid_object(server):
    response = await complete(server, response_format=Verdict)
    verdict = Verdict.model_validate_json(response.choices[0].message.content)
    assert verdict.mood.label == "calm"
    assert server.last_request["response_format"]["type"] == "json_schema"


@pytest.mark.asyncio
async def test_json_object_response_format_gets_json(server):
    response = await complete(server, response_format={"type": "json_object"})
    assert isinstance(json.loads(response.choices[0].message.content), dict)


def test_example_for_schema_handles_refs_anyof_enums_and_types():
    schema = {
        "type": "object",
        "required": ["a", "b", "c", "d", "e", "f"],
        "properties": {
            "a": {"$ref": "#/$defs/Inner"},
            "b": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "c": {"type": "array", "items": {"type": "string"}},
            "d": {"enum": ["first", "second"]},
            "e": {"type": ["null", "boolean"]},
            "f": {"type": "string"},
            "optional": {"type": "string"},
        },
        "$defs": {"Inner": {"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}}}},
    }
    assert example_for_schema(schema) == {"a": {"n": 1.0}, "b": 1, "c": [], "d": "first", "e": True, "f": "x"}


@pytest.mark.asyncio
async def test_429_surfaces_as_rate_limit_error_with_retry_after(server):
    server.script(Reply.error(429, "slow down", retry_after=1))
    with pytest.raises(litellm.RateLimitError):
        await complete(server)
    assert server.request_count == 1  # no silent retries


@pytest.mark.asyncio
async def test_500_surfaces_as_internal_server_error(server):
    server.script(Reply.error(500, "boom"))
    with pytest.raises((litellm.InternalServerError, litellm.APIError)):
        await complete(server)
    assert server.request_count == 1


@pytest.mark.asyncio
async def test_401_surfaces_as_authentication_error(server):
    server.script(Reply.error(401, "bad key"))
    with pytest.raises(litellm.AuthenticationError):
        await complete(server)


@pytest.mark.asyncio
async def test_malformed_body_raises(server):
    server.script(Reply(fault="malformed"))
    with pytest.raises(Exception):
        await complete(server)


@pytest.mark.asyncio
async def test_hang_triggers_client_timeout_and_stop_interrupts_it():
    srv = FakeOpenAIServer().start()
    try:
        srv.script(Reply(fault="hang"))
        started = time.monotonic()
        with pytest.raises(litellm.Timeout):
            await complete(srv, timeout=0.3)
        assert time.monotonic() - started < 2
    finally:
        started = time.monotonic()
        srv.stop()
        assert time.monotonic() - started < 1


@pytest.mark.asyncio
async def test_requests_are_recorded_with_messages_and_headers(server):
    server.script("first", "second")
    await complete(server, "question one")
    await complete(server, "question two", temperature=0.2)
    assert server.request_count == 2
    first, last = server.requests[0], server.last_request
    assert first.path == "/v1/chat/completions"
    assert first["model"] == MODEL
    assert first.body["messages"][-1] == {"role": "user", "content": "question one"}
    assert last["messages"][-1]["content"] == "question two"
    assert last.get("temperature") == 0.2
    assert last.headers["authorization"] == "Bearer sk-test"


@pytest.mark.asyncio
async def test_concurrent_requests_each_get_an_answer(server):
    responses = await asyncio.gather(*(complete(server, f"q{i}") for i in range(20)))
    assert sorted(r.choices[0].message.content for r in responses) == sorted(f"ok: q{i}" for i in range(20))
    assert server.request_count == 20


def test_many_sequential_requests_and_models_endpoint(server):
    for i in range(250):
        assert post_raw(server, {"model": "m", "messages": [{"role": "user", "content": str(i)}]})["choices"][0][
            "message"
        ]["content"] == f"ok: {i}"
    with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
        assert json.loads(response.read())["object"] == "list"
    assert server.request_count == 251


def test_latency_delays_the_first_byte():
    with FakeOpenAIServer(latency=0.2) as srv:
        started = time.monotonic()
        post_raw(srv, {"model": "m", "messages": []})
        assert time.monotonic() - started >= 0.2


def test_context_manager_stops_the_server():
    with FakeOpenAIServer() as srv:
        base = srv.base_url
    with pytest.raises(RuntimeError):
        srv.base_url  # noqa: B018 - property access is the assertion
    with pytest.raises(OSError):
        urllib.request.urlopen(base + "/models", timeout=1)


def post_status(url: str, body: dict) -> tuple[int, object]:
    """(status, JSON body) of a POST, error statuses included."""
    import urllib.error

    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
AS_SCHEMA = {"type": "json_schema", "json_schema": {"name": "A", "schema": SCHEMA}}
AS_OBJECT = {"type": "json_object", "schema": SCHEMA}
ASK_BODY = {"model": MODEL, "messages": [{"role": "user", "content": "json please"}]}


def content_of(answer: object) -> str:
    return answer["choices"][0]["message"]["content"]  # type: ignore[index]


def test_llama_cpp_flavor_refuses_json_schema_like_the_real_server_and_routes_only_under_v1():
    with FakeOpenAIServer(flavor="llama_cpp") as srv:
        status, body = post_status(srv.base_url + "/chat/completions", {**ASK_BODY, "response_format": AS_SCHEMA})
        assert status == 500 and "Input should be 'text' or 'json_object'" in body["error"]["message"]
        assert "'response_format', 'type'" in body["error"]["message"]
        status, body = post_status(srv.base_url + "/chat/completions", {**ASK_BODY, "response_format": AS_OBJECT})
        assert status == 200 and json.loads(content_of(body)) == {"name": "x"}  # constrained to the schema
        assert post_status(srv.root_url + "/chat/completions", ASK_BODY) == (404, {"detail": "Not Found"})


def test_lm_studio_flavor_refuses_json_object_with_a_string_error():
    with FakeOpenAIServer(flavor="lm_studio") as srv:
        status, body = post_status(srv.base_url + "/chat/completions", {**ASK_BODY, "response_format": AS_OBJECT})
        assert (status, body) == (400, {"error": "'response_format.type' must be 'json_schema' or 'text'"})
        status, body = post_status(srv.base_url + "/chat/completions", {**ASK_BODY, "response_format": AS_SCHEMA})
        assert status == 200 and json.loads(content_of(body)) == {"name": "x"}


def test_ollama_flavor_takes_everything_and_its_json_object_ignores_the_schema():
    with FakeOpenAIServer(flavor="ollama") as srv:
        url = srv.base_url + "/chat/completions"
        assert json.loads(content_of(post_status(url, {**ASK_BODY, "response_format": AS_SCHEMA})[1])) == {"name": "x"}
        assert content_of(post_status(url, {**ASK_BODY, "response_format": AS_OBJECT})[1]) == "{}"
        status, body = post_status(url, {**ASK_BODY, "response_format": {"type": "grammar"}})
        assert status == 200 and content_of(body).startswith("ok: json please")  # unknown type ignored
        assert srv.chat_requests()[1]["response_format"] == AS_OBJECT  # recorded as sent


def test_unknown_flavor_is_refused():
    with pytest.raises(ValueError, match="unknown flavor"):
        FakeOpenAIServer(flavor="vllm")  # type: ignore[arg-type]


def _post(srv: FakeOpenAIServer, stream: bool) -> tuple[int, str, bytes]:
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "stream": stream}).encode()
    request = urllib.request.Request(srv.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_the_no_reply_faults_are_what_they_say_on_the_wire(server, stream: bool) -> None:
    server.script(Reply(fault="html"), Reply(fault="empty_choices"))
    status, ctype, raw = _post(server, stream)
    assert (status, ctype) == (200, "text/html") and raw.startswith(b"<html>")
    status, _, raw = _post(server, stream)
    if stream:
        events = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: {")]
        assert events and all(e["choices"] == [] for e in events) and raw.rstrip().endswith(b"data: [DONE]")
    else:
        assert status == 200 and json.loads(raw)["choices"] == []


def test_an_empty_stream_holds_only_done(server) -> None:
    server.script(Reply(content="unsent", fault="empty_stream"))
    assert _post(server, stream=True)[2].strip() == b"data: [DONE]"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_reset_aborts_the_connection(server, stream: bool) -> None:
    server.script(Reply(content="one two three four five six", fault="reset"))
    with pytest.raises(ConnectionResetError):  # an RST, not an orderly end of the body
        _post(server, stream)


def test_keep_alive_answers_whole_replies_on_one_connection_and_closes_streams() -> None:
    """Benchmarks run the server the way real ones run: one connection for many whole replies."""
    import http.client

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with FakeOpenAIServer(keep_alive=True) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for _ in range(3):
            conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
            reply = conn.getresponse()
            assert reply.status == 200 and reply.getheader("Connection") != "close"
            assert json.loads(reply.read())["choices"][0]["message"]["content"]
        first_socket = conn.sock
        conn.request("POST", "/v1/chat/completions", json.dumps({**json.loads(body), "stream": True}),
                     {"Content-Type": "application/json"})
        assert conn.sock is first_socket  # still the first connection: three replies and a stream on it
        reply = conn.getresponse()
        assert reply.getheader("Connection") == "close" and b"[DONE]" in reply.read()
    with FakeOpenAIServer() as server:  # the default: one request per connection
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        assert conn.getresponse().getheader("Connection") == "close"


def test_settle_waits_for_a_request_a_dead_client_left_behind() -> None:
    """A client that wrote its request and died (a synth run killed with -9) must be counted
    before a test counts what the next run sends: `settle` returns only once it is recorded."""
    import socket

    with FakeOpenAIServer(latency=0.2) as server:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        sock.close()  # gone before any answer
        server.settle()
        assert sorted(r.method for r in server.requests) == ["GET", "POST"]  # settle's own, and the dead client's
        assert server.in_flight.get("m", 0) == 0
