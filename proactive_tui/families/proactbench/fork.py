"""Forking a ProactBench session (`core.fork`) at a trigger reply: the agent is asked again (or a
person's edit stands in) at trigger N; the verdicts of earlier triggers are kept, the trigger's
own verdict and every later trigger are redone.

A fork point is (the trigger's dialogue turn, "agent"). The branch resumes by replay
(`core.fork.replay_fork`): every seat gives back its recorded answers before the point (the agent's
earlier replies, the judge's earlier verdicts; online also the Planner's plans and the user's
messages up to and including the trigger turn), so the engine walks the very path it took, then
the agent answers live, and the judging (offline: the judge at that turn; online: the User Agent
at the next turn) and every later turn run live.

Which side of the point an event is on is read off the dialogue turn it belongs to and its place
within the turn (`position`): the Planner's plan (0), the user's message (1), the trigger's
opening (2), the agent's reply (3), the verdict on the turn's reply (4). The fork point is the
agent's reply of its turn: anything at (turn, <3) or an earlier turn is before it. A model call,
its usage line and an error say where they belong through their `purpose` (`turn N plan`, `turn N
user message`, `turn N agent reply`, `verdict on turn N`, as `protocol` names them).
"""

from __future__ import annotations

from proactive_tui.core.family import ForkPart

import re
from typing import TYPE_CHECKING, Any

from proactive_tui.core.fork import EDITED_BY, ForkError, ForkPoint, ForkStep, Side
from proactive_tui.core.replay import RecordedAnswer

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

if TYPE_CHECKING:  # types only: forking loads nothing more than it did
    from proactive_tui.families.proactbench.env import EvaluationResult
    from proactive_tui.families.proactbench.record import ProactBenchSection, TriggerRecord

PLAN, USER, OPENED, AGENT, VERDICT = range(5)
_PURPOSE = re.compile(r"^(?:turn (\d+) (plan|user message|agent reply)|verdict on turn (\d+))$")
_PLACE = {"plan": PLAN, "user message": USER, "agent reply": AGENT}


def purpose_position(purpose: str) -> tuple[int, int] | None:
    """(turn, place) of a call by its purpose, or None when it names no turn."""
    match = _PURPOSE.match(purpose or "")
    if match is None:
        return None
    if match.group(3):
        return int(match.group(3)), VERDICT
    return int(match.group(1)), _PLACE[match.group(2)]


def position(event: Any) -> tuple[int, int] | None:
    """Where an event belongs in the dialogue: (turn, place within the turn), or None."""
    kind = getattr(event, "type", "")
    if kind == "proactbench.recorded_turn":
        return event.turn, PLAN
    if kind == "proactbench.planned":
        return event.turn, PLAN
    if kind == "proactbench.trigger_opened":
        return event.turn, OPENED
    if kind == "proactbench.trigger_judged":
        return event.turn, VERDICT
    if kind == "message_started":
        return event.turn, AGENT if event.role == "agent" else USER
    if kind == "message_done":
        return event.message.turn, AGENT if event.message.role == "agent" else USER
    if kind in ("model_called", "usage_recorded", "error"):
        return purpose_position(getattr(event, "purpose", ""))
    return None


def fork_steps(record: RunRecord) -> list[ForkStep]:
    """Every trigger whose reply was asked for (written, failed or empty): the agent's reply there."""
    messages = {m.turn: m for m in record.messages if m.role == "agent"}
    steps = []
    for trigger in sorted(record.section.triggers, key=lambda t: t.index):
        if not trigger.judged and trigger.turn not in messages:
            continue
        message = messages.get(trigger.turn)
        text = message.content if message is not None and not message.partial else (trigger.response or "")
        state = trigger.counted if trigger.judged else "not judged"
        steps.append(ForkStep(turn=trigger.turn, seat="agent", text=text,
                              label=f"trigger {trigger.index} · turn {trigger.turn} · {trigger.type} reply",
                              summary=f"trigger {trigger.index} ({trigger.type}, {state}): "
                                      + (" ".join(text.split()) or "(no reply)")))
    return steps


class Sides:
    """`ForkPart.sides` for ProactBench (see the module doc)."""

    def __init__(self, point: ForkPoint) -> None:
        self.key = (point.turn, AGENT)
        self.messages: dict[str, Side] = {}

    def _side(self, at: tuple[int, int]) -> Side:
        return "before" if at < self.key else "after"

    def __call__(self, event: Any) -> Side:
        kind = getattr(event, "type", "")
        if kind in ("message_delta", "message_discarded"):
            return self.messages.get(event.message_id)
        if kind == "awaiting_human":
            place = AGENT if event.seat == "agent" else (PLAN if event.seat == "judge" else USER)
            return self._side((event.turn, place))
        if kind == "session_ended":
            return "after"
        at = position(event)
        if at is None:
            if kind == "model_called" and event.message_id in self.messages:
                return self.messages[event.message_id]
            return None
        side = self._side(at)
        if kind == "message_started":
            self.messages[event.message_id] = side
        return side


def edit_answer(point: ForkPoint, text: str, record: RunRecord) -> RecordedAnswer:
    """A person's edit of the agent's reply at the point: any non-empty text is a reply."""
    if point.seat != "agent":
        raise ForkError("a ProactBench session forks at the agent's reply to a trigger point")
    if not text.strip():
        raise ForkError(f"the edited reply for turn {point.turn} is empty")
    return RecordedAnswer(seat="agent", turn=point.turn, text=text, model=EDITED_BY)


def _verdict_value(result: EvaluationResult) -> dict[str, Any]:
    return {"rationale": result.rationale, "score": result.score, "evidence": result.evidence}


def recorded_answers(record: RunRecord) -> list[RecordedAnswer]:
    """Every seat's answers in the order the engine asked for them (`core.replay`)."""
    online = (record.settings or {}).get("protocol") == "online"
    return _online_answers(record) if online else _offline_answers(record)


def _agent_answer(record: RunRecord, turn: int, problem: str = "") -> RecordedAnswer:
    message = next((m for m in record.messages if m.role == "agent" and m.turn == turn and not m.partial), None)
    if message is None:  # it failed or was empty: replayed as a failed call, so the engine skips it again
        return RecordedAnswer(seat="agent", turn=turn, error=problem or "the agent gave no reply", model="")
    return RecordedAnswer(seat="agent", turn=turn, text=message.content, model=message.model, usage=message.usage)


def _offline_answers(record: RunRecord) -> list[RecordedAnswer]:
    out = []
    for trigger in sorted(record.section.triggers, key=lambda t: t.index):
        if not trigger.judged:
            out.append(_agent_answer(record, trigger.turn))
            continue
        agent = _agent_answer(record, trigger.turn, trigger.problem)
        out.append(agent)
        if agent.error is not None:
            continue  # the judge was never asked
        if trigger.result is not None:
            out.append(RecordedAnswer(seat="judge", turn=trigger.turn, value=_verdict_value(trigger.result),
                                      model=trigger.judge or ""))
        else:
            out.append(RecordedAnswer(seat="judge", turn=trigger.turn, error=trigger.problem or "no verdict",
                                      model=trigger.judge or ""))
    return out


def _online_answers(record: RunRecord) -> list[RecordedAnswer]:
    section: ProactBenchSection = record.section
    plans = {p.turn: p for p in section.plans}
    users = {m.turn: m for m in record.messages if m.role == "user" and not m.partial}
    by_scoring_turn: dict[int, TriggerRecord] = {}
    triggers = sorted(section.triggers, key=lambda t: t.turn)
    for earlier, later in zip(triggers, triggers[1:] + [None]):
        del later
        by_scoring_turn[earlier.turn + 1] = earlier  # the User Agent scores turn t's reply at turn t+1
    person_user = "user" in record.human_seats
    out: list[RecordedAnswer] = []
    last = 0
    for turn in sorted(plans):
        plan = plans[turn]
        out.append(RecordedAnswer(seat="judge", turn=turn, value=plan.plan.model_dump(mode="json"), model=plan.model))
        user = users.get(turn)
        if user is None:
            break
        scored = by_scoring_turn.get(turn)
        verdict = scored.result if scored is not None and scored.judged else None
        if person_user:
            if scored is not None and verdict is not None:
                out.append(RecordedAnswer(seat="user", turn=turn, value=_verdict_value(verdict), model=scored.judge or ""))
            out.append(RecordedAnswer(seat="user", turn=turn, text=user.content, model=user.model))
        elif verdict is not None:
            out.append(RecordedAnswer(seat="user", turn=turn, model=user.model, text=user.content,
                                      value={"evaluation": _verdict_value(verdict), "user_message": user.content}))
        else:
            out.append(RecordedAnswer(seat="user", turn=turn, model=user.model, text=user.content,
                                      value={"user_message": user.content}))
        out.append(_agent_answer(record, turn))
        last = turn
    final = next((t for t in triggers if t.turn == last and t.judged), None)
    if final is not None:  # the score-only call after the last turn
        if final.result is not None:
            out.append(RecordedAnswer(seat="user", turn=last + 1, value=_verdict_value(final.result), model=final.judge or ""))
        else:
            out.append(RecordedAnswer(seat="user", turn=last + 1, error=final.problem or "no verdict", model=final.judge or ""))
    return out


class ProactBenchFork(ForkPart):
    """Forks by replay (the default `build`): the parent's answers up to the point, then live."""

    def steps(self, record: RunRecord) -> list[Any]:
        return list(fork_steps(record))

    def sides(self, point: Any) -> Sides:
        return Sides(point)

    def recorded_answers(self, record: RunRecord) -> list[Any]:
        return recorded_answers(record)

    def edit_answer(self, point: Any, text: str, record: RunRecord) -> RecordedAnswer:
        return edit_answer(point, text, record)


FORK = ProactBenchFork()
