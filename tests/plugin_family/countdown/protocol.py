"""The countdown protocol: each turn the agent says a number, a rule checks it, the user replies.

The session ends `reached_zero` when the agent says 0, or `max_turns` at the turn limit
(`settings.max_turns`, else start + 1 numbers).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from proactive_tui.core.events import (
    AwaitingHuman, ChatMessage, MessageDelta, MessageDone, MessageRecord, MessageStarted, SessionStarted, now_iso,
)
from proactive_tui.core.family import EnginePart
from proactive_tui.core.participants import Participant, ReplyRequest, ScriptedParticipant, UserStopped
from proactive_tui.core.session import SessionBase
from plugin_family.countdown.env import CountdownEnv
from plugin_family.countdown.events import CountdownFinished, NumberChecked
from plugin_family.countdown.record import CountdownSettings

SEATS = ("agent", "user")
PROMPT_VERSION = "countdown-1"


def said_number(text: str) -> int | None:
    match = re.search(r"-?\d+", text)
    return int(match.group()) if match else None


def counting_agent(start: int, wrong_at: tuple[int, ...] = ()) -> ScriptedParticipant:
    """A scripted agent that counts down correctly, except on the turns in `wrong_at`."""
    return ScriptedParticipant(lambda r: f"{start - r.turn + 1 + (7 if r.turn in wrong_at else 0)}", label="counting-agent")


def replying_user() -> ScriptedParticipant:
    return ScriptedParticipant(lambda r: f"ok, heard turn {r.turn}", label="scripted-user")


class CountdownSession(SessionBase):
    family = "countdown"

    def __init__(self, env: CountdownEnv, agent: Participant, user: Participant,
                 settings: CountdownSettings | None = None, session_id: str | None = None,
                 models: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(session_id)
        self.env = env
        self.seats = {"agent": agent, "user": user}
        self.settings = settings or CountdownSettings()
        self.models = models or {}
        self.dialogue: list[dict[str, str]] = []

    @property
    def turn_limit(self) -> int:
        return self.settings.max_turns or self.env.countdown.start + 1

    async def _say(self, role: str, turn: int) -> MessageRecord:
        participant = self.seats[role]
        message_id = f"{role}-{turn}"
        started = now_iso()
        if participant.info.kind == "human":
            self.emit(AwaitingHuman(seat=role, turn=turn, hint="the next number" if role == "agent" else "your reply"))
        self.emit(MessageStarted(message_id=message_id, role=role, turn=turn, model=participant.info.label))
        context = [{"role": ("assistant" if m["role"] == role else "user"), "content": m["content"]} for m in self.dialogue]
        system = (f"Count down from {self.env.countdown.start} to 0, one number per message."
                  if role == "agent" else "Acknowledge each number briefly.")
        request = ReplyRequest(seat=role, system=system, messages=context, turn=turn,
                               on_delta=lambda text: self.emit(MessageDelta(message_id=message_id, text=text)))
        reply = await participant.reply(request)
        message = MessageRecord(id=message_id, role=role, content=reply.text, turn=turn, started_at=started,  # type: ignore[arg-type]
                                finished_at=now_iso(), model=reply.model, usage=reply.usage,
                                visible_context=[ChatMessage(**m) for m in context])
        self.emit(MessageDone(message=message))
        self.dialogue.append({"role": role, "content": reply.text})
        return message

    async def run_protocol(self) -> None:
        infos = {s: self.seats[s].info for s in SEATS}
        from proactive_tui import __version__

        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id, environment=self.env.model_dump(mode="json"),
            mode="play" if any(i.kind == "human" for i in infos.values()) else "watch", seats=infos,
            settings=self.settings.model_dump(), models={s: m for s, m in self.models.items() if s in SEATS},
            prompt_version=PROMPT_VERSION, app_version=__version__,
        ))
        correct = turns = 0
        reached = False
        reason = "max_turns"
        try:
            for turn in range(1, self.turn_limit + 1):
                await self.checkpoint()
                message = await self._say("agent", turn)
                said, expected = said_number(message.content), self.env.countdown.start - turn + 1
                turns += 1
                correct += said == expected
                self.emit(NumberChecked(turn=turn, said=said, expected=expected, correct=said == expected))
                if said == 0:
                    reached, reason = True, "reached_zero"
                    break
                await self._say("user", turn)
        except asyncio.CancelledError:
            reason = "cancelled"
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except UserStopped:
            reason = "user_stopped"
        self.emit(CountdownFinished(reached_zero=reached, correct=correct, turns=turns))
        self.end(reason)


class CountdownEngine(EnginePart):
    def build_session(self, spec: Any, env: Any, seats: dict[str, Any], session_id: str | None = None) -> CountdownSession:
        return CountdownSession(env, seats["agent"], seats["user"], CountdownSettings(**spec.settings),
                                session_id=session_id, models=spec.models_summary())


ENGINE = CountdownEngine()
