"""What each model saw: every model call of a session is kept as a `model_called` event whose
request is exactly what the server received, labelled with its seat and purpose (issue 17)."""

from __future__ import annotations

import asyncio
import json

import pytest

from family_runs import RUNS
from proactive_tui.cli.main import main
from proactive_tui.llm import trace
from proactive_tui.llm.gateway import Gateway
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.store import open_store
from proactive_tui.store.queries import load_events, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply


def sent(server: FakeOpenAIServer) -> list[list[dict]]:
    return [r.body["messages"] for r in server.requests if r.method == "POST"]


@pytest.mark.parametrize("family", sorted(RUNS))
def test_every_call_of_a_session_is_kept_with_exactly_what_the_server_received(family, tmp_path) -> None:
    run = RUNS[family]
    with FakeOpenAIServer(responder=run.responder) as server:
        assert main(["run", run.env_id, *run.args, "--api-base", server.base_url, "--out", str(tmp_path / "r.json")]) == 0
        received = sent(server)
        base_url = server.base_url
    session_id = json.loads((tmp_path / "r.json").read_text())["id"]
    with open_store() as store:
        events = load_events(store, session_id)
        record = load_record(store, session_id)
    calls = [e for e in events if e.type == "model_called"]
    def canonical(batch: list[list[dict]]) -> list[str]:  # overlapping calls finish in their own order
        return sorted(json.dumps(m, sort_keys=True) for m in batch)

    assert canonical([c.call.request["messages"] for c in calls]) == canonical(received)  # one trace a request
    assert all(c.call.error is None and c.call.reply and c.call.attempts == 1 for c in calls)
    assert all(c.call.model.startswith("openai/") and c.call.api_base == base_url for c in calls)
    assert {c.seat for c in calls} <= {"agent", "user", "judge"} and "unknown" not in {c.seat for c in calls}
    assert all(set(c.call.request) <= set(trace.REQUEST_FIELDS) for c in calls)  # never a key or a header
    # a dialogue message's call names the message it became, and its reply is that message's raw text
    if family == "proactivebench":  # no dialogue: each event's proposal call is named by its event
        proposals = [e for e in events if e.type == "proactivebench.proposal_made"]
        asked = {c.turn: c for c in calls if c.seat == "agent"}
        assert proposals and all(asked[p.index].purpose == f"event {p.index} proposal" and asked[p.index].call.reply
                                 == p.raw for p in proposals)
        assert {c.purpose for c in calls if c.seat == "user"} >= {f"event {p.index} verdict" for p in proposals}
        return
    by_id = {m.id: m for m in record.messages}
    produced = [c for c in calls if c.message_id in by_id]
    assert produced, "no call is linked to the message it produced"
    for c in produced:
        assert c.seat == by_id[c.message_id].role and c.turn == by_id[c.message_id].turn
        if family == "proactiveeval":
            assert c.call.reply == by_id[c.message_id].content and c.purpose == f"{c.seat} message"
        if family == "proactbench":
            assert c.call.reply == by_id[c.message_id].content and c.purpose == f"turn {c.turn} agent reply"
    if family == "proactbench":  # the judge's call at each trigger turn, named by the turn it scores
        judged = [t.turn for t in record.section.triggers if t.judged]
        assert judged and sorted(c.purpose for c in calls if c.seat == "judge") == [f"verdict on turn {n}" for n in judged]


async def test_a_retried_and_a_failed_call_are_each_one_trace_with_their_reasons() -> None:
    seen: list[tuple[trace.CallTrace, trace.CallLabel | None]] = []

    async def no_sleep(_: float) -> None:
        return None

    with FakeOpenAIServer() as server:
        settings = ModelSettings(model="openai/m", api_base=server.base_url, max_retries=1)
        gateway = Gateway(sleep=no_sleep)
        server.script(Reply.error(503, "busy"), "fine now", Reply.error(503, "busy"), Reply.error(503, "still busy"))
        with trace.listening(lambda t, label: seen.append((t, label))):
            with trace.labelled("judge", "plan score", turn=0):
                await gateway.complete(settings, [{"role": "user", "content": "one"}])
            with pytest.raises(Exception):
                await gateway.complete(settings, [{"role": "user", "content": "two"}])
        await gateway.complete(settings, [{"role": "user", "content": "unheard"}])  # nobody listening: no trace
    (ok, label), (failed, no_label) = seen
    assert label == trace.CallLabel(seat="judge", purpose="plan score", turn=0) and no_label is None
    assert ok.reply == "fine now" and ok.attempts == 2 and len(ok.retries) == 1 and "503" in ok.retries[0]
    assert ok.error is None and ok.request["messages"] == [{"role": "user", "content": "one"}]
    assert failed.error and "503" in failed.error and failed.attempts == 2 and failed.reply == ""
    assert len(seen) == 2


async def test_overlapping_calls_keep_their_own_labels() -> None:
    """A judge's turn check overlaps the agent's next message: each task carries its own label."""
    seen: list[tuple[str, str]] = []
    with FakeOpenAIServer(latency=0.05) as server:
        settings = ModelSettings(model="openai/m", api_base=server.base_url)
        gateway = Gateway()

        async def call(seat: str, text: str) -> None:
            with trace.labelled(seat, f"{seat} call"):
                await gateway.complete(settings, [{"role": "user", "content": text}])

        with trace.listening(lambda t, label: seen.append((label.seat, t.request["messages"][0]["content"]))):
            await asyncio.gather(call("agent", "a"), call("judge", "j"), call("user", "u"))
    assert sorted(seen) == [("agent", "a"), ("judge", "j"), ("user", "u")]
