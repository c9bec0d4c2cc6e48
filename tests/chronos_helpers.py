"""Chronos sessions with protocol-following seats, for engine, export and CLI tests."""

from __future__ import annotations

import json
from typing import Any, Callable

from conftest import SAMPLE_DIRS
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.envs import load_paths

CHRONOS_DIR = SAMPLE_DIRS["chronos"]
SCENARIOS = sorted(e.id.removeprefix("chronos/") for e in load_paths([CHRONOS_DIR]).environments)
"""Every shipped scenario, by id without the family (a branching sample gives two: `<sample>/positive`, `<sample>/negative`)."""


def chronos_env(name: str):
    env = load_paths([CHRONOS_DIR]).get(f"chronos/{name}")
    assert env is not None, name
    return env


def make_session(name: str, agent: Any = None, user: Any = None, session_id: str | None = None,
                 judge: Any = None, **settings: Any) -> ChronosSession:
    seats = ChronosSeats(agent=agent or OracleAgent(), user=user or ScriptedPersona(), judge=judge)
    return ChronosSession(chronos_env(name), seats, ChronosSettings(**settings), session_id=session_id)


async def play(session: ChronosSession) -> tuple[list, RunRecord]:
    events = [event async for event in session.events()]
    return events, fold(events)


def actions(record: RunRecord) -> list[str | None]:
    return [t.action for t in record.section.turns]


def when(condition: Callable[[ChronosSession], bool], action: str, status: str | None = None,
         text: str = "scripted deviation") -> OracleAgent:
    """An oracle agent that answers `action` (and `status`) instead whenever `condition(session)` holds."""

    def override(session: ChronosSession, reply):
        if not condition(session):
            return None
        data = reply.model_dump()
        data["proactive_action"] = action
        data["response_text"] = text
        if status is not None:
            data["task_description"]["status"] = status
        if action == "SET_REMINDER":
            data["trigger_condition"] = {"type": "EVENT", "value": "anything new"}
        return data

    return OracleAgent(override=override, label="deviating-oracle")


def reply_json(action: str, status: str, text: str = "ok", trigger: dict | None = None) -> str:
    return json.dumps({"response_text": text, "proactive_action": action,
                       "trigger_condition": trigger or {"type": None, "value": None},
                       "task_description": {"intention": "buy a car", "constraints": {"budget": "low"}, "status": status}})


def scripted_agent_responder(body: dict) -> str:
    """A fake-server agent that follows the protocol on a simple negative-branch scenario.

    It reads only what a model would: the messages. Trigger -> KEEP_SILENT, tool observation ->
    NO_ACTION, then by the number of user messages: INFO_RETRIEVAL, NO_ACTION, SET_REMINDER.
    The user seat (no response_format) answers a fixed line; the judge seat (schema ReplyReading)
    reads the reply it is shown with the keyword check, reasoning first.
    """
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if schema == "ReplyReading":
        from proactive_tui.families.chronos.oracle import classify_reply

        reply = body["messages"][-1]["content"].rpartition("The person replied:\n")[2]
        reading = {"reply": "other"}.get(classify_reply(reply), classify_reply(reply))
        return json.dumps({"reasoning": "fake judge: read by its words", "reading": reading})
    if schema != "AgentReply":
        return "My budget is about 12,000 and I'd like under 90,000 km."
    last = body["messages"][-1]["content"]
    if 'source="internal_trigger"' in last:
        return reply_json("KEEP_SILENT", "IN_PROGRESS", "not yet")
    if 'source="tool_call"' in last:
        return reply_json("NO_ACTION", "PENDING", "Nothing fits yet. What is your budget?")
    user_msgs = [m for m in body["messages"] if m["role"] == "user" and "<observation" not in m["content"]
                 and "could not be used" not in m["content"]]
    if len(user_msgs) == 1:
        return reply_json("INFO_RETRIEVAL", "PENDING", "Let me check.")
    if len(user_msgs) == 2:
        return reply_json("NO_ACTION", "PENDING", "Noted. Anything else?")
    return reply_json("SET_REMINDER", "IN_PROGRESS", "I'll watch for it.", {"type": "EVENT", "value": "a match"})
