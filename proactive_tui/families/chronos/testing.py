"""Chronos test doubles: seats that follow the protocol exactly, for tests, demos and gold data.

`OracleAgent` always answers what the expected-action oracle expects (an `override` may change a
turn, to provoke a rule); `ScriptedPersona` (in `persona`, since it is also the offline user
simulator) is a user that does exactly what its brief says, in fixed words. Neither is used by the
protocol itself: they sit in seats like any participant.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from proactive_tui.core.participants import Participant, Reply, ReplyRequest
from proactive_tui.families.chronos.oracle import expect, expected_status
from proactive_tui.families.chronos.persona import ScriptedPersona
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
from proactive_tui.families.chronos.settings import ChronosSettings
from proactive_tui.families.chronos.reply import AgentReply

if TYPE_CHECKING:
    from proactive_tui.core.spec import SessionSpec


def oracle_reply(session: ChronosSession) -> AgentReply:
    """The reply the oracle expects now: right action, right status, the task as the user stated it."""
    st = session.state
    expectation = session.pending or expect(st)
    action = expectation.action
    intention, constraints = st.intention, st.told()
    texts = {
        "INFO_RETRIEVAL": "Let me check what is available right now.",
        "SET_REMINDER": "Nothing suitable yet. I'll keep an eye out and tell you as soon as something fits.",
        "FOLLOW_UP": "Good news: this one fits everything you asked for: " + "; ".join(st.current.listings),
        "KEEP_SILENT": "Nothing suitable in this update.",
        "COMPLETE_TASK": "Glad I could help. You can go ahead and arrange it directly.",
        "FAILED_TASK": "I'm sorry it didn't work out. I've stopped the search.",
        "NO_ACTION": "Thanks, noted. Anything else I should know about what you need?",
    }
    done = action in ("COMPLETE_TASK", "FAILED_TASK")
    return AgentReply.model_validate({
        "response_text": texts[action],
        "proactive_action": action,
        "trigger_condition": {"type": "EVENT", "value": f"a new listing that fits: {intention}"} if action == "SET_REMINDER" else {},
        "task_description": {"intention": None if done else intention, "constraints": None if done else constraints,
                             "status": expected_status(st, action)},
    })


class OracleAgent(Participant):
    """An agent that always answers what the oracle expects; `override(session, reply)` may change it."""

    def __init__(self, override: Any = None, label: str = "oracle") -> None:
        from proactive_tui.core.events import SeatInfo

        self.info = SeatInfo(kind="scripted", label=label)
        self.override = override
        self.session: ChronosSession | None = None

    def attach(self, session: ChronosSession) -> None:
        self.session = session

    async def reply_structured(self, request: ReplyRequest, schema: type, parse_text: Any = None):
        assert self.session is not None, "OracleAgent is attached by the ChronosSession it sits in"
        reply = oracle_reply(self.session)
        if self.override is not None:
            changed = self.override(self.session, reply)
            if changed is not None:
                reply = changed if isinstance(changed, AgentReply) else AgentReply.model_validate(changed)
        await asyncio.sleep(0)
        return reply, Reply(text=reply.model_dump_json(), model=self.info.label)


def reference_session(spec: SessionSpec, env: Any, gateway: Any) -> ChronosSession:
    """The oracle agent and the scripted user on the scenario, no model (`eval chronos --reference`):
    the scoring's own check, where every rate should be perfect."""
    return ChronosSession(env, ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()), ChronosSettings(**spec.settings))
