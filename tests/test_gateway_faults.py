"""A server fault is an error that says what came back, never an empty reply that passes for one
(issue 15). Each fault is served by the fake server over the real litellm path: an HTML page
with HTTP 200, `choices: []`, a stream with no content, a connection reset before or during the
answer, a server that accepts and then never answers."""

from __future__ import annotations

import pytest

from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.gateway import Gateway, RetryNotice
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply

MESSAGES = [{"role": "user", "content": "x"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


def seat(server: FakeOpenAIServer, **kw) -> ModelSettings:
    return ModelSettings(model="openai/fake-model", api_base=server.base_url, **kw)


def quick_gateway(notices: list[RetryNotice]) -> Gateway:
    async def no_sleep(seconds: float) -> None:
        return None

    return Gateway(on_retry=notices.append, sleep=no_sleep, jitter=lambda: 0.5)


async def call(gateway: Gateway, settings: ModelSettings, streamed: bool) -> str:
    got: list[str] = []
    completion = await gateway.complete(settings, MESSAGES, on_delta=got.append if streamed else None)
    return completion.text


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_an_html_page_with_200_is_an_error_naming_it(server: FakeOpenAIServer, streamed: bool) -> None:
    server.script(*[Reply(content="never shown", fault="html")] * 3)
    notices: list[RetryNotice] = []
    with pytest.raises(ModelError) as info:
        await call(quick_gateway(notices), seat(server, max_retries=2), streamed)
    message = info.value.message
    assert info.value.kind == "server"
    assert "answered HTTP 200 with a non-JSON body (an HTML page?" in message
    assert "provider failed (500)" not in message  # litellm's wording: the server said 200
    if not streamed:
        assert "<html><head><title>502 Bad Gateway" in message  # a short excerpt of what came back
        assert len(message) < 400
    assert len(server.chat_requests()) == 3 and len(notices) == 2  # retried as a server fault, then given up


@pytest.mark.parametrize("fault", ["html", "empty_choices", "empty_stream"])
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_an_answer_without_a_reply_is_retried_not_returned_empty(server: FakeOpenAIServer, fault: str,
                                                                       streamed: bool) -> None:
    server.script(Reply(content="lost", fault=fault), "the real reply")  # type: ignore[arg-type]
    notices: list[RetryNotice] = []
    text = await call(quick_gateway(notices), seat(server), streamed)
    expect_retry = fault != "empty_stream" or streamed  # empty_stream is a streaming fault only
    assert text == ("the real reply" if expect_retry else "lost")
    assert len(notices) == (1 if expect_retry else 0)


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_empty_choices_that_persist_are_a_clear_error(server: FakeOpenAIServer, streamed: bool) -> None:
    server.script(*[Reply(fault="empty_choices")] * 2)
    with pytest.raises(ModelError) as info:
        await call(quick_gateway([]), seat(server, max_retries=1), streamed)
    assert info.value.kind == "server" and info.value.partial_text == ""
    assert ("no reply text" if streamed else "no choices") in info.value.message


async def test_a_stream_reset_midway_says_the_stream_was_cut(server: FakeOpenAIServer) -> None:
    server.script(Reply(content="alpha beta gamma delta epsilon zeta eta theta", fault="reset"), "unused")
    gateway = quick_gateway([])
    stream = gateway.stream(seat(server), MESSAGES)
    with pytest.raises(ModelError) as info:
        async for _ in stream:
            pass
    assert info.value.kind == "stream_broken"
    assert "stream was cut after" in info.value.message and "cannot reach" not in info.value.message
    assert info.value.partial_text == stream.text and stream.text.startswith("alpha")
    assert len(server.chat_requests()) == 1  # a partial reply is not retried (it would be lost or doubled)


async def test_a_reset_before_the_answer_is_not_cannot_reach(server: FakeOpenAIServer) -> None:
    server.script(Reply(fault="reset"), Reply(fault="drop_stream", content="half of a body"))
    with pytest.raises(ModelError) as info:
        await call(quick_gateway([]), seat(server, max_retries=1), streamed=False)
    assert info.value.kind == "server" and "cannot reach" not in info.value.message
    assert "closed the connection before its answer was complete" in info.value.message


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_a_server_that_never_answers_is_cut_by_the_bounds(server: FakeOpenAIServer, streamed: bool) -> None:
    server.script(*[Reply(fault="hang", delay=20)] * 5)
    bounds = dict(first_token_timeout=0.3, idle_timeout=0.3, timeout=0.6, max_retries=4)
    with pytest.raises(ModelError) as info:
        await call(quick_gateway([]), seat(server, **bounds), streamed)
    assert info.value.kind == "timeout"
    assert len(server.chat_requests()) == 2  # a silent server is asked twice, not max_retries + 1 times
    assert ("first-token timeout" if streamed else "whole-call timeout") in info.value.message


async def test_a_stall_after_some_text_is_a_cut_reply_naming_the_idle_bound(server: FakeOpenAIServer) -> None:
    server.script(Reply(content="one two three four five six", fault="stall", delay=20))
    stream = quick_gateway([]).stream(seat(server, idle_timeout=0.3, timeout=5), MESSAGES)
    with pytest.raises(ModelError) as info:
        async for _ in stream:
            pass
    assert info.value.kind == "timeout" and "idle timeout" in info.value.message
    assert info.value.partial_text.startswith("one")


def test_the_excerpt_of_a_bad_body_is_short_plain_and_masked() -> None:
    """What came back is quoted as data: one line, no escape sequences, no key, a bounded length."""
    from proactive_tui.llm.errors import non_json_body

    key = "sk-" + "K" * 30
    body = f"<html>\x1b[31m\n  <p>proxy says: key={key}</p>" + "x" * 500 + "</html>"
    message = non_json_body("openai/m", " at http://h/v1", 200, body)
    assert "answered HTTP 200 with a non-JSON body (an HTML page?" in message
    assert "\x1b" not in message and "\n" not in message and key not in message
    assert len(message) < 300


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_a_whitespace_reply_is_no_reply(server: FakeOpenAIServer, streamed: bool) -> None:
    server.script(*[Reply.text(" \n\t ")] * 2)
    with pytest.raises(ModelError) as info:
        await call(quick_gateway([]), seat(server, max_retries=1), streamed)
    assert info.value.kind == "server" and ("no reply text" if streamed else "empty reply") in info.value.message
    assert len(server.chat_requests()) == (1 if streamed else 2)  # text already shown is never asked for again


async def test_a_server_error_reads_as_the_servers_words(server: FakeOpenAIServer) -> None:
    """Not "InternalServerError: InternalServerError: OpenAIException - overloaded"."""
    server.script(Reply.error(503, "overloaded"))
    with pytest.raises(ModelError) as info:
        await call(quick_gateway([]), seat(server, max_retries=0), streamed=False)
    assert info.value.message == "openai/fake-model: the provider failed (503): overloaded"


def test_only_litellms_unstarted_stream_warning_is_silenced() -> None:
    """A call cancelled between litellm building its streaming (or completion) coroutine and awaiting it drops the
    coroutine unstarted (seen under the fault suite's stalls): that one warning is silenced once
    litellm is loaded, any other un-awaited coroutine still warns."""
    import warnings

    from proactive_tui.llm.gateway import litellm_module

    litellm_module()  # loaded already, in a worker that ran other tests: the filter must hold anyway
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()  # what another test's catch_warnings leaves: none of our filters
        warnings.simplefilter("always")
        litellm_module()
        warnings.warn("coroutine 'OpenAIChatCompletion.async_streaming' was never awaited", RuntimeWarning, stacklevel=2)
        warnings.warn("coroutine 'OpenAIChatCompletion.acompletion' was never awaited", RuntimeWarning, stacklevel=2)  # not streamed
        warnings.warn("coroutine 'Ours.reply' was never awaited", RuntimeWarning, stacklevel=2)
    assert [str(w.message) for w in seen] == ["coroutine 'Ours.reply' was never awaited"]
