"""Forking a ProactiveBench session (`core.fork`): at a trace event's first proposal or its verdict.

A fork point is (event index, seat): "agent" changes the first proposal the agent made for that
event, "user" the user-judge's verdict on it (the first candidate's, with several). Every event
of this family names its trace event (`index`), so which side of the fork point an event falls on
is read off it: the events of earlier trace events come before; at the forked event, its
observation comes before, and for a verdict fork so does the first proposal (with the call and
the waiting notice that produced it).
"""

from __future__ import annotations

from proactive_tui.core.family import ForkPart

import json
from typing import TYPE_CHECKING, Any

from proactive_tui.core.fork import EDITED_BY, ForkError, ForkPoint, ForkStep, Side
from proactive_tui.core.replay import RecordedAnswer

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord


def fork_steps(record: RunRecord) -> list[ForkStep]:
    from proactive_tui.families.proactivebench.resume import complete_events

    kept = complete_events(record)
    steps: list[ForkStep] = []
    for ev in sorted(record.section.events, key=lambda e: e.index):
        if ev.index > kept or not ev.attempts:
            continue
        first = min(ev.attempts, key=lambda a: a.attempt)
        task = " | ".join(first.tasks) if first.tasks else "null"
        steps.append(ForkStep(turn=ev.index, seat="agent", label=f"event {ev.index} · proposal", text=task))
        if first.verdicts:
            verdict = first.verdicts[0]
            steps.append(ForkStep(turn=ev.index, seat="user", label=f"event {ev.index} · verdict",
                                  text=f"{verdict.judgement} {verdict.thought}".strip()))
    return steps


class Sides:
    """`ForkPart.sides` for ProactiveBench (see the module doc)."""

    def __init__(self, point: ForkPoint) -> None:
        self.point = point

    def __call__(self, event: Any) -> Side:
        kind = getattr(event, "type", "")
        n, seat = self.point.turn, self.point.seat
        index = getattr(event, "index", None)
        if kind.startswith("proactivebench.") and index is not None:
            if index != n:
                return "before" if index < n else "after"
            if kind == "proactivebench.trace_observation":
                return "before"
            if kind == "proactivebench.proposal_made" and seat == "user" and event.attempt == 0:
                return "before"
            return "after"
        if kind in ("model_called", "awaiting_human"):
            turn = event.turn
            if turn is None:
                return None
            if turn != n:
                return "before" if turn < n else "after"
            if seat == "user" and event.seat == "agent":
                return None  # the first proposal's call comes before; a retry's after: by position
            return "after"
        if kind == "session_ended":
            return "after"
        return None


def edit_answer(point: ForkPoint, text: str, record: RunRecord) -> RecordedAnswer:
    """The edited proposal (the task on one line, `null`, or the reply's JSON) or verdict
    (`accepted`/`rejected`, optionally a reason; or JSON with `judgement` and `thought`)."""
    from proactive_tui.families.proactivebench.judges import parse_verdict_text
    from proactive_tui.families.proactivebench.protocol import parse_agent_text

    candidates = int((record.settings or {}).get("candidates") or 1)
    if point.seat == "agent":
        try:
            reply = parse_agent_text(text, candidates)
        except ValueError as exc:
            raise ForkError(f"the edited proposal for event {point.turn} cannot be read: {exc}") from None
        value = reply.upstream_dict()
        return RecordedAnswer(seat="agent", turn=point.turn, text=json.dumps(value, ensure_ascii=False), value=value,
                              model=EDITED_BY)
    try:
        data = json.loads(text)
        verdict = {"judgement": str(data["judgement"]), "thought": str(data.get("thought", ""))}
    except (ValueError, TypeError, KeyError):
        try:
            parsed = parse_verdict_text(text)
        except ValueError as exc:
            raise ForkError(f"the edited verdict for event {point.turn}: {exc}") from None
        verdict = {"judgement": parsed.judgement, "thought": parsed.thought}
    human = record.seats.get("user") is not None and record.seats["user"].kind == "human"
    allowed = ("accepted", "rejected", "skipped") if human else ("accepted", "rejected")
    if verdict["judgement"] not in allowed:
        raise ForkError(f"the edited verdict for event {point.turn} must be one of {', '.join(allowed)} "
                        f"(got {verdict['judgement']!r})")
    return RecordedAnswer(seat="user", turn=point.turn, value=verdict, model=EDITED_BY)


class ProactiveBenchFork(ForkPart):
    """Forks by replay (the default `build`): the parent's answers up to the point, then live."""

    steps = staticmethod(fork_steps)
    sides = staticmethod(Sides)

    def recorded_answers(self, record: RunRecord) -> list[Any]:
        from proactive_tui.families.proactivebench.resume import recorded_answers

        return list(recorded_answers(record))

    edit_answer = staticmethod(edit_answer)


FORK = ProactiveBenchFork()
