"""The Chronos structured reply, a person's compact form, and how a user's answer to an offer reads."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from proactive_tui.families.chronos.protocol import parse_user_command
from proactive_tui.families.chronos.oracle import classify_reply
from proactive_tui.families.chronos.reply import AgentReply, parse_agent_text, typed_reply


def test_reply_shape_from_the_spec_validates_with_lenient_spellings() -> None:
    reply = AgentReply.model_validate({
        "response_text": "Let me check.", "proactive_action": "info retrieval",
        "trigger_condition": {"type": "null", "value": "null"},
        "task_description": {"intention": "buy a car", "constraints": {"budget": 12000}, "status": "pending"},
    })
    assert reply.proactive_action == "INFO_RETRIEVAL" and reply.trigger_condition.type is None
    assert reply.task_description.status == "PENDING" and reply.task_description.constraints == {"budget": 12000}
    assert AgentReply.model_validate({"proactive_action": "NO_ACTION", "trigger_condition": None,
                                      "task_description": {"status": "PENDING", "constraints": "null"}}).response_text == ""


@pytest.mark.parametrize("bad", [
    {"proactive_action": "WAIT", "task_description": {"status": "PENDING"}},
    {"proactive_action": "NO_ACTION", "task_description": {"status": "DONE"}},
    {"proactive_action": "NO_ACTION"},
    {"proactive_action": "SET_REMINDER", "task_description": {"status": "IN_PROGRESS"}},
    {"proactive_action": "SET_REMINDER", "trigger_condition": {"type": "EVENT", "value": " "},
     "task_description": {"status": "IN_PROGRESS"}},
])
def test_invalid_replies_are_rejected(bad: dict) -> None:
    with pytest.raises(ValidationError):
        AgentReply.model_validate(bad)


def test_compact_line_and_carry_over() -> None:
    first = parse_agent_text("INFO_RETRIEVAL: Let me check.")
    assert (first.action, first.status, first.response_text) == ("INFO_RETRIEVAL", "PENDING", "Let me check.")
    prev = AgentReply.model_validate({"proactive_action": "NO_ACTION", "task_description": {
        "intention": "rent a flat", "constraints": {"rent": "≤ €900"}, "status": "PENDING"}})
    r = parse_agent_text("set reminder in progress: I'll watch. @event a furnished flat under €900", prev)
    assert (r.action, r.status) == ("SET_REMINDER", "IN_PROGRESS")
    assert (r.trigger_condition.type, r.trigger_condition.value) == ("EVENT", "a furnished flat under €900")
    assert r.task_description.intention == "rent a flat" and r.task_description.constraints == {"rent": "≤ €900"}
    assert parse_agent_text("KEEP_SILENT/IN_PROGRESS: nothing", prev).status == "IN_PROGRESS"
    assert parse_agent_text("KEEP_SILENT: nothing", r).status == "IN_PROGRESS"  # carried over
    js = parse_agent_text('```json\n{"proactive_action": "FOLLOW_UP", "task_description": {"status": "IN_PROGRESS"}}\n```')
    assert js.action == "FOLLOW_UP"


@pytest.mark.parametrize("text", ["hello?", "DANCE: now", "SET_REMINDER: watching", "{not json"])
def test_compact_line_problems(text: str) -> None:
    with pytest.raises((ValueError, ValidationError)):
        parse_agent_text(text)


@pytest.mark.parametrize("text,action,status,said,trigger", [
    ("KEEP_SILENT [IN_PROGRESS]: not suitable yet", "KEEP_SILENT", "IN_PROGRESS", "not suitable yet", (None, None)),
    ("FOLLOW_UP [in progress]: found one", "FOLLOW_UP", "IN_PROGRESS", "found one", (None, None)),
    ("NO_ACTION (COMPLETED): done", "NO_ACTION", "COMPLETED", "done", (None, None)),
    ("SET_REMINDER [IN_PROGRESS]: @EVENT a 7-seat car", "SET_REMINDER", "IN_PROGRESS", "", ("EVENT", "a 7-seat car")),
    ("SET_REMINDER [PENDING]: I'll watch. @TIME 2026-03-10 09:00", "SET_REMINDER", "PENDING", "I'll watch.",
     ("TIME", "2026-03-10 09:00")),
])
def test_compact_line_as_the_hint_prints_it(text, action, status, said, trigger) -> None:
    """The hint prints `ACTION [STATUS]: text @EVENT condition`: typed with its brackets, it is read so."""
    reply = parse_agent_text(text)
    assert (reply.action, reply.status, reply.response_text) == (action, status, said)
    assert (reply.trigger_condition.type, reply.trigger_condition.value) == trigger
    assert typed_reply(text)


@pytest.mark.parametrize("text,reason", [
    ("KEEP_SILENT [IN_PROGRES]: x", "unknown status 'IN_PROGRES'"),
    ("KEEP_SILNET: x", "unknown action 'KEEP_SILNET'"),
    ("SET_REMINDER [IN_PROGRESS]: I will watch.", "SET_REMINDER needs trigger_condition.value"),
    ("I'll watch @EVENT a car", "write `ACTION [STATUS]: text`"),
    ('{"proactive_action": "WAIT", "task_description": {"status": "PENDING"}}', "proactive_action: Input should be"),
])
def test_a_line_in_the_reply_shape_that_does_not_parse_says_why(text: str, reason: str) -> None:
    """Such text is a reply attempt (the agent form refuses it, never sends it as plain text), and
    the reason is one line: the field and pydantic's message, without its `Value error, ` prefix."""
    assert typed_reply(text)
    with pytest.raises(ValueError) as caught:
        parse_agent_text(text)
    assert str(caught.value).startswith(reason) or reason in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value) and "Value error" not in str(caught.value)


@pytest.mark.parametrize("text", ["Let me check.", "Note: it is red", "I checked (twice): nothing yet",
                                  "FYI: the dealer closes at 6", "Found one: a 2017 Honda Jazz."])
def test_plain_text_for_the_user_is_not_a_reply_attempt(text: str) -> None:
    assert not typed_reply(text)


@pytest.mark.parametrize("text,want", [
    ("Thank you, that's exactly what I was looking for. My needs are met.", "confirm"),
    ("Perfect, how do I book it?", "confirm"),
    ("Great, thanks a lot!", "confirm"),
    ("Thanks, but that doesn't work for me: it's too expensive.", "refuse"),
    ("No thanks.", "refuse"),
    ("I'm disappointed, please cancel the search.", "refuse"),
    ("Hmm, what colour is it?", "reply"),
])
def test_reading_an_answer_to_an_offer(text: str, want: str) -> None:
    assert classify_reply(text) == want


@pytest.mark.parametrize("text,kind,rest", [
    ("/dormant", "dormant", ""), ("/shift We need a bigger car", "shift", "We need a bigger car"),
    ("/confirm", "confirm", ""), ("/cancel", "refuse", ""), ("/thanks great", "confirm", "great"),
    ("just text", "reply", "just text"), ("/unknown thing", "reply", "/unknown thing"),
])
def test_user_commands(text: str, kind: str, rest: str) -> None:
    cmd = parse_user_command(text)
    assert (cmd.kind, cmd.text) == (kind, rest)
