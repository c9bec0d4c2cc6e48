"""Resuming a ProactiveBench session: which recorded replies a resumed session replays.

A step is one trace event: its observation, every attempt's proposal and the verdicts on it, and
the ProposalMetricsUpdated that commits the event to the counts. The events that got their
metrics are complete; the resumed session replays their replies through `core.replay.ReplaySeat`
(no model or person is asked again) and asks live from the first event without metrics on. An
event cut off half way (a proposal without its verdicts, or verdicts without the metrics) is
asked again from its first attempt, so its counts come from one consistent run.

What the record holds of each reply, and how it is handed back:

- the agent: a model's raw text, read again with the protocol's own reader (so the history it
  goes into is the one the first run built); a scripted seat's reply as the JSON it was; an
  attempt that gave nothing usable (fewer proposals than the metrics' `attempts`) as that error.
- the user-judge: the verdict and its thought; a model's verdict that could not be read
  ("skipped" by a non-person) as that error, so the same ErrorRaised and skip follow.
"""

from __future__ import annotations

from proactive_tui.core.family import ResumePart

import json
from typing import TYPE_CHECKING, Any

from proactive_tui.core.replay import RecordedAnswer

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.core.spec import SessionSpec


def complete_events(record: RunRecord) -> int:
    """Trace events 1..k that were committed with their metrics (the ones a resume keeps)."""
    count = 0
    for ev in sorted(record.section.events, key=lambda e: e.index):
        if ev.judgement is None or ev.index != count + 1:
            break
        count += 1
    return count


def recorded_answers(record: RunRecord) -> list[RecordedAnswer]:
    """The agent's and the user's replies of the complete events, in the order they were asked."""
    kept = complete_events(record)
    agent_kind = record.seats["agent"].kind if "agent" in record.seats else "llm"
    answers: list[RecordedAnswer] = []
    for ev in sorted(record.section.events, key=lambda e: e.index):
        if ev.index > kept:
            break
        attempts = sorted(ev.attempts, key=lambda a: a.attempt)
        for attempt in attempts:
            answers.append(_agent_answer(ev.index, attempt, agent_kind))
            for verdict in attempt.verdicts:
                answers.append(_verdict_answer(ev.index, verdict))
        if len(attempts) < _attempts(record, ev):
            answers.append(RecordedAnswer(seat="agent", turn=ev.index, error="no usable reply (as recorded)"))
    return answers


def _attempts(record: RunRecord, ev: Any) -> int:
    """Attempts the event's metrics counted: one more than the proposals when the last ask failed.
    (The record keeps no count itself; a failed first ask leaves no proposal and a 'none' judgement
    with no cells, a failed retry one proposal fewer than attempts.)"""
    if not ev.attempts:
        return 1
    last = max(ev.attempts, key=lambda a: a.attempt)
    retries = int(record.settings.get("retries") or 0)
    # A rejected final attempt with retries left means the next ask failed (else it would be there).
    return len(ev.attempts) + (1 if last.judgement().judgement == "rejected" and last.attempt < retries else 0)


def _agent_answer(index: int, attempt: Any, kind: str) -> RecordedAnswer:
    if kind == "llm":
        return RecordedAnswer(seat="agent", turn=index, text=attempt.raw, model=attempt.model)
    try:
        value = json.loads(attempt.raw)
    except (json.JSONDecodeError, TypeError):
        value = None
    if not isinstance(value, dict):
        value = {"Purpose": attempt.purpose, "Thoughts": attempt.thoughts, "Response": attempt.response,
                 "Proactive Task": (attempt.tasks or None) if len(attempt.tasks) != 1 else attempt.tasks[0]}
    return RecordedAnswer(seat="agent", turn=index, text=attempt.raw, value=value, model=attempt.model)


def _verdict_answer(index: int, verdict: Any) -> RecordedAnswer:
    if verdict.judgement == "skipped" and verdict.by_kind != "human":
        return RecordedAnswer(seat="user", turn=index, model=verdict.by, error="no usable verdict (as recorded)")
    return RecordedAnswer(seat="user", turn=index, model=verdict.by,
                          value={"judgement": verdict.judgement, "thought": verdict.thought})


class ProactiveBenchResume(ResumePart):
    def session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], record: RunRecord, session_id: str | None = None) -> Any:
        """The session replaying `record`'s judged events, then live."""
        from proactive_tui.families.proactivebench.protocol import build_proactivebench_session

        return build_proactivebench_session(spec, env, seats, session_id=session_id, resume_from=record)


RESUME = ProactiveBenchResume()
