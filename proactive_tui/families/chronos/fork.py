"""Forking a Chronos session (`core.fork`): at an agent turn's reply, or at the user's message it answers.

A fork point is (turn, seat): "agent" changes agent turn N's reply (its action, status and text),
"user" the user's message that agent turn N answers (turn 1 answers the scenario's opening, which
is not the user's: it cannot be forked). Within turn N things happen in this order, and that is
how an event is placed before or after the fork point: the user's brief (and any observation that
is the turn's input), the user's message, the judge's reading of it (and a shift it voices), then
the agent's reply and its outcome. Timeline, reminder and presence events carry no turn: they go
by position.
"""

from __future__ import annotations

from proactive_tui.core.family import ForkPart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.fork import EDITED_BY, ForkError, ForkPoint, ForkStep, Side
from proactive_tui.core.replay import RecordedAnswer

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

ORDER = {"brief": -1.0, "user": 0.0, "judge": 0.5, "shift": 0.7, "agent": 1.0}


def fork_steps(record: RunRecord) -> list[ForkStep]:
    """Every user message and agent reply a branch can start at, named by exchange (the family's
    `turn_unit`, as the status line and transcript count); an agent reply answering its own check
    is the exchange's reply 2, 3... A step's `turn` stays the engine's (what `--turn` takes)."""
    from proactive_tui.families.chronos import family
    from proactive_tui.families.chronos.record import exchange_of

    unit = family.turn_unit.name
    messages = {(m.role, m.turn): m for m in record.messages if not m.partial}
    steps: list[ForkStep] = []
    replies: dict[int, int] = {}
    for outcome in record.section.turns:
        exchange = exchange_of(record, outcome.turn)
        replies[exchange] = replies.get(exchange, 0) + 1
        nth = "" if replies[exchange] == 1 else f" {replies[exchange]} (after its check)"
        user = messages.get(("user", outcome.turn)) if outcome.turn > 1 else None
        if user is not None:
            steps.append(ForkStep(turn=outcome.turn, seat="user", label=f"{unit} {exchange} · user message",
                                  text=user.content))
        if outcome.reply is not None:  # the JSON a person edits, one field a line; the list shows the gist
            reply = outcome.reply
            text = reply.model_dump_json(indent=2)
            summary = f"{reply.proactive_action} / {reply.task_description.status}: {reply.response_text}"
        else:
            text, summary = outcome.raw, f"(format failure) {outcome.raw}"
        steps.append(ForkStep(turn=outcome.turn, seat="agent", label=f"{unit} {exchange} · agent reply{nth}", text=text,
                              summary=summary))
    return steps


class Sides:
    """`ForkPart.sides` for Chronos (see the module doc)."""

    def __init__(self, point: ForkPoint) -> None:
        self.key = (point.turn, ORDER[point.seat])
        self.messages: dict[str, Side] = {}

    def _side(self, turn: int | None, part: str) -> Side:
        if turn is None:
            return None
        return "before" if (turn, ORDER[part]) < self.key else "after"

    def __call__(self, event: Any) -> Side:
        kind = getattr(event, "type", "")
        if kind == "message_started":
            side = self._side(event.turn, event.role) if event.turn > 1 or event.role == "agent" else "before"
            self.messages[event.message_id] = side
            return side
        if kind == "message_delta":
            return self.messages.get(event.message_id)
        if kind == "message_done":
            return self.messages.get(event.message.id) or self._side(event.message.turn, event.message.role)
        if kind in ("model_called", "awaiting_human"):
            return self._side(event.turn, event.seat if event.seat in ORDER else "agent")
        if kind == "chronos.timeline_user_brief":
            return self._side(event.brief.turn, "brief")
        if kind == "chronos.timeline_observation":
            return self._side(event.turn, "brief")
        if kind == "chronos.timeline_shift":
            return self._side(event.turn, "shift")
        if kind == "chronos.timeline_turn":
            return self._side(event.outcome.turn, "agent")
        if kind in ("chronos.timeline_outcome", "session_ended"):
            return "after"
        return None


def edit_answer(point: ForkPoint, text: str, record: RunRecord) -> RecordedAnswer:
    """The edited agent reply (its JSON, or the compact `ACTION [STATUS]: text` line a person
    types in play) or the user's edited message (plain text; a person's seat also takes the
    /confirm, /refuse and /shift commands)."""
    if point.seat == "user":
        if point.turn <= 1:
            raise ForkError("turn 1 answers the scenario's opening, not a user message: fork at turn 2 or later")
        if not text.strip():
            raise ForkError(f"the edited user message for turn {point.turn} is empty")
        return RecordedAnswer(seat="user", turn=point.turn, text=text, model=EDITED_BY)
    from proactive_tui.families.chronos.reply import parse_agent_text

    previous = next((t.reply for t in reversed(record.section.turns) if t.turn < point.turn and t.reply is not None),
                    None)
    try:
        reply = parse_agent_text(text, previous)
    except ValueError as exc:
        raise ForkError(f"the edited agent reply for turn {point.turn} cannot be read: {exc}") from None
    return RecordedAnswer(seat="agent", turn=point.turn, text=text, value=reply.model_dump(), model=EDITED_BY)


class ChronosFork(ForkPart):
    """Forks by replay (the default `build`): the parent's replies up to the point, then live."""

    steps = staticmethod(fork_steps)
    sides = staticmethod(Sides)

    def recorded_answers(self, record: RunRecord) -> list[Any]:
        from proactive_tui.families.chronos.resume import recorded_answers

        return list(recorded_answers(record))

    edit_answer = staticmethod(edit_answer)


FORK = ChronosFork()
