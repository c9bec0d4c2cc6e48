"""Resuming a Chronos session: which recorded replies a resumed session replays.

A step is one agent turn with its outcome (AgentTurnJudged), together with the input it answers:
the user's reply that became that turn's input (asked as turn k, answered by agent turn k) and
the judge's reading of it. Turns that got their outcome are complete; the resumed session replays
their replies through `core.replay.ReplaySeat` (nobody is asked again), so the oracle's state, the
timeline, the reminders and the dialogue come back exactly, and it asks live from the first turn
without an outcome, starting with the user's reply to it if that was cut off.

What the record holds of each reply, and how it is handed back:

- the agent: the validated reply (`TurnOutcome.reply`) with the raw text it came from, or, for a
  format failure, that error.
- the user: the message's text; for a person, the command it came from where the turn's reading
  says one was typed (`/confirm`, `/refuse`, `/shift`), and `/dormant` where the user was briefed
  but said nothing.
- the judge: its reading and reasoning (`user_read_*`), or, where it failed and the keyword check
  read the reply instead, that error.
"""

from __future__ import annotations

from proactive_tui.core.family import ResumePart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.events import UsageInfo
from proactive_tui.core.replay import RecordedAnswer

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.core.spec import SessionSpec

JUDGE_FAILED = "the judge failed: "
"""How a turn's `user_read_note` starts when the judge gave no usable reading (protocol.py)."""


def complete_turns(record: RunRecord) -> int:
    """Agent turns with their outcome (the ones a resume keeps)."""
    return len(record.section.turns)


def recorded_answers(record: RunRecord) -> list[RecordedAnswer]:
    """Every seat's replies within the complete turns, in the order they were asked."""
    section = record.section
    human_user = record.seats.get("user") is not None and record.seats["user"].kind == "human"
    messages = {(m.role, m.turn): m for m in record.messages if not m.partial}
    partial_agent = {m.turn: m for m in record.messages if m.role == "agent" and m.partial}
    briefed = {b.turn for b in section.briefs}
    answers: list[RecordedAnswer] = []
    for outcome in section.turns:
        turn = outcome.turn
        user = messages.get(("user", turn)) if turn > 1 else None  # turn 1's input is the scenario's opening
        if user is not None:
            text = user.content
            if human_user and outcome.user_read_by == "command" and outcome.user_read_as in ("confirm", "refuse", "shift"):
                text = f"/{outcome.user_read_as} {text}"
            answers.append(RecordedAnswer(seat="user", turn=turn, text=text, model=user.model, usage=user.usage))
        elif human_user and turn in briefed:
            answers.append(RecordedAnswer(seat="user", turn=turn, text="/dormant", model="person"))
        if outcome.user_read_by == "judge":
            reading = "other" if outcome.user_read_as == "reply" else outcome.user_read_as
            answers.append(RecordedAnswer(seat="judge", turn=turn, model=outcome.user_read_model or "",
                                          value={"reasoning": outcome.user_read_note, "reading": reading}))
        elif outcome.user_read_by == "keywords" and outcome.user_read_note.startswith(JUDGE_FAILED):
            answers.append(RecordedAnswer(seat="judge", turn=turn, error=outcome.user_read_note.removeprefix(JUDGE_FAILED)))
        agent = messages.get(("agent", turn))
        if outcome.reply is not None:
            answers.append(RecordedAnswer(seat="agent", turn=turn, text=outcome.raw, value=outcome.reply.model_dump(),
                                          model=outcome.model, asks=outcome.asks,
                                          usage=agent.usage if agent is not None else UsageInfo()))
        else:
            partial = partial_agent.get(turn)
            answers.append(RecordedAnswer(seat="agent", turn=turn, error=outcome.raw, model=outcome.model,
                                          text=partial.content if partial is not None else ""))
    return answers


class ChronosResume(ResumePart):
    def session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], record: RunRecord, session_id: str | None = None) -> Any:
        """The session replaying `record`'s complete turns, then live (`ChronosSession`)."""
        from proactive_tui.families.chronos.protocol import build_chronos_session

        return build_chronos_session(spec, env, seats, session_id, resume_from=record)


RESUME = ChronosResume()
