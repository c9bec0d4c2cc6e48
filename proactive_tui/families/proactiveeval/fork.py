"""Forking a ProactiveEval session (`core.fork`): at any agent or user message of the dialogue.

A fork point is (turn, seat). The branch restores the parent's plan and the turns before the
point from the prefix (the way resume does) and, for a user-seat fork, that turn's agent message;
the changed message is the person's edit or a fresh reply; the dialogue, its turn checks, live
scores and the final guidance score go on from there. The plan and its score are always the
parent's (they come before the dialogue).

Events are placed by what they are about: a message by its turn and role (agent before user
within a turn), a turn check or live score by the turn it judges (the check of turn N judges the
whole turn, so it follows either fork at N), the plan before everything, the final score after.
Because the dialogue overlaps its judging (the next agent message is written while the last
turn is checked), the parent's events about earlier turns may come after the forked message in
its log; placing them by content rather than position keeps them in the prefix.
"""

from __future__ import annotations

from proactive_tui.core.family import ForkPart

import re
from typing import TYPE_CHECKING, Any

from proactive_tui.core.fork import EDITED_BY, ForkError, ForkPoint, ForkStep, Side
from proactive_tui.core.replay import RecordedAnswer, ReplaySeat

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.core.spec import SessionSpec

ROLE_ORDER = {"agent": 0, "user": 1}
_TURN_CHECK = re.compile(r"turn (\d+) check")


def fork_steps(record: RunRecord) -> list[ForkStep]:
    """Every finished message whose earlier turns are complete (a branch restores those)."""
    from proactive_tui.families.proactiveeval.record import complete_turns

    kept = complete_turns(record)
    messages = sorted((m for m in record.messages if not m.partial and m.turn <= kept + 1),
                      key=lambda m: (m.turn, ROLE_ORDER[m.role]))
    return [ForkStep(turn=m.turn, seat=m.role, label=f"turn {m.turn} · {m.role} message", text=m.content)
            for m in messages]


class Sides:
    """`ForkPart.sides` for ProactiveEval (see the module doc)."""

    def __init__(self, point: ForkPoint) -> None:
        self.key = (point.turn, ROLE_ORDER[point.seat])
        self.turn = point.turn
        self.messages: dict[str, Side] = {}

    def _message(self, turn: int, role: str) -> Side:
        return "before" if (turn, ROLE_ORDER.get(role, 0)) < self.key else "after"

    def _judged(self, turn: int) -> Side:
        return "before" if turn < self.turn else "after"

    def _purpose(self, purpose: str) -> Side:
        if purpose in ("planning", "plan score"):
            return "before"
        if purpose == "guidance score":
            return "after"
        match = _TURN_CHECK.fullmatch(purpose)
        return self._judged(int(match.group(1))) if match else None

    def __call__(self, event: Any) -> Side:
        kind = getattr(event, "type", "")
        if kind == "message_started":
            side = self._message(event.turn, event.role)
            self.messages[event.message_id] = side
            return side
        if kind in ("message_delta", "message_discarded"):
            return self.messages.get(event.message_id)
        if kind == "message_done":
            return self.messages.get(event.message.id) or self._message(event.message.turn, event.message.role)
        if kind == "awaiting_human":
            return "before" if event.turn == 0 else self._message(event.turn, event.seat)
        if kind in ("proactiveeval.plan_proposed", "proactiveeval.plan_scored"):
            return "before"
        if kind == "proactiveeval.turn_checked":
            return self._judged(event.check.turn)
        if kind == "proactiveeval.guidance_scored":
            return self._judged(event.score.turn) if event.score.live else "after"
        if kind == "phase_changed":
            sides: dict[str, Side] = {"planning": "before", "scoring": "after"}
            return sides.get(event.phase)
        if kind == "model_called":
            if event.message_id and event.message_id in self.messages:
                return self.messages[event.message_id]
            side = self._purpose(event.purpose)
            if side is not None or not event.turn:
                return side
            if event.seat == "judge":
                return self._judged(event.turn)
            return self._message(event.turn, event.seat)
        if kind in ("usage_recorded", "error"):
            return self._purpose(event.purpose)
        if kind == "session_ended":
            return "after"
        return None


def build_fork(spec: SessionSpec, env: Any, seats: dict[str, Any], parent: RunRecord, prefix: Any, point: ForkPoint,
               change: Any, session_id: str | None = None) -> Any:
    """The branch: the prefix restored (`ProactiveEvalSession.fork_at`), the forked seat's first
    reply the edit when there is one."""
    seats = dict(seats)
    if change.text is not None:
        if not change.text.strip():
            raise ForkError(f"the edited {point.seat} message for turn {point.turn} is empty")
        edit = RecordedAnswer(seat=point.seat, turn=point.turn, text=change.text, model=EDITED_BY)
        seats[point.seat] = ReplaySeat(seats[point.seat], [edit])
    from proactive_tui.families.proactiveeval.protocol import build_proactiveeval_session

    return build_proactiveeval_session(spec, env, seats, session_id=session_id, resume_from=prefix,
                                       fork_at=(point.turn, point.seat))


class ProactiveEvalFork(ForkPart):
    """Forks by restoring the prefix (as resume does), not by replaying every reply."""

    def steps(self, record: RunRecord) -> list[Any]:
        return list(fork_steps(record))

    def sides(self, point: Any) -> Sides:
        return Sides(point)

    def check_edit(self, point: Any, text: str, record: RunRecord) -> None:
        """Any non-empty text is a message (checked by `core.fork.check_fork`)."""

    def build(self, spec: SessionSpec, env: Any, seats: dict[str, Any], parent: RunRecord, prefix: Any, point: Any, change: Any,
              session_id: str | None = None) -> Any:
        return build_fork(spec, env, seats, parent, prefix, point, change, session_id=session_id)


FORK = ProactiveEvalFork()
