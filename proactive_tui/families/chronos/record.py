"""The `timeline` section of a Chronos run record, folded from the session's events.

`apply_timeline_event` is registered in run_record.FAMILY_REDUCERS. It only reads events, so a
replayed event log rebuilds the same section; it holds what the dialogue messages alone cannot
say: the observations the agent read, the oracle's verdict on every turn, the reminders, the
user's briefs, the shift, the clock, and the session's verdict with its accuracies.
"""

from __future__ import annotations

from proactive_tui.core.family import RecordPart, RerunPart
from proactive_tui.families.chronos import resume, report as report_module
from proactive_tui.families.chronos.events import EVENTS, LEGACY_TYPES

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from proactive_tui.families.chronos.events import (
    AgentTurnJudged, IntentionShifted, Reminder, RemindersChanged, SessionOutcome, TimelineAdvanced, TimelineFinished,
    TimelineObservation, TimelineView, TurnOutcome, UserBrief, UserBriefed, UserPresenceChanged,
)

if TYPE_CHECKING:
    from proactive_tui.core.verdicts import Verdict
    from proactive_tui.core.run_record import RunRecord


class ObservationRecord(BaseModel):
    turn: int
    source: Literal["tool_call", "internal_trigger"]
    clock: str
    state_index: int
    content: str


class ShiftRecord(BaseModel):
    turn: int
    utterance: str
    intention: str
    constraints: dict[str, str]


class ChronosSection(BaseModel):
    scenario: str = ""
    branch: str = ""
    tier: str = ""
    view: TimelineView | None = None
    """The timeline as it last stood: the clock, the current state, past and upcoming states."""
    user_dormant: bool = False
    observations: list[ObservationRecord] = Field(default_factory=list)
    briefs: list[UserBrief] = Field(default_factory=list)
    reminders: list[Reminder] = Field(default_factory=list)
    shift: ShiftRecord | None = None
    turns: list[TurnOutcome] = Field(default_factory=list)
    outcome: SessionOutcome | None = None


def new_section(record: RunRecord) -> ChronosSection:
    scenario = (record.environment or {}).get("scenario") or {}
    return ChronosSection(scenario=str(scenario.get("scenario", "")), branch=str(scenario.get("branch", "")),
                          tier=str(scenario.get("tier", "")))


def apply_timeline_event(record: RunRecord, event: Any) -> None:
    """Fold one Chronos event into `record.section`."""
    section: ChronosSection = record.section
    if isinstance(event, TimelineAdvanced):
        section.view = event.view
    elif isinstance(event, TimelineObservation):
        section.observations.append(ObservationRecord(turn=event.turn, source=event.source, clock=event.clock,
                                                      state_index=event.state_index, content=event.content))
    elif isinstance(event, UserBriefed):
        section.briefs.append(event.brief)
    elif isinstance(event, RemindersChanged):
        section.reminders = list(event.reminders)
    elif isinstance(event, UserPresenceChanged):
        section.user_dormant = event.dormant
    elif isinstance(event, AgentTurnJudged):
        section.turns.append(event.outcome)
    elif isinstance(event, IntentionShifted):
        section.shift = ShiftRecord(turn=event.turn, utterance=event.utterance, intention=event.intention,
                                    constraints=dict(event.constraints))
    elif isinstance(event, TimelineFinished):
        section.outcome = event.outcome



def answers_own_check(record: RunRecord, turn: int) -> bool:
    """Whether agent turn `turn` answers the agent's own INFO_RETRIEVAL (continuing an exchange)
    rather than the user or the monitor. A judged turn says so itself (`input_kind`); the turn in
    progress is read from its input: a tool observation numbered `turn` with no user message and no
    monitor scan of that number (a check that hands the turn on is followed by one of those)."""
    section: ChronosSection = record.section
    for outcome in section.turns:
        if outcome.turn == turn:
            return outcome.input_kind == "tool_call"
    sources = {o.source for o in section.observations if o.turn == turn}
    said = any(m.role == "user" and m.turn == turn for m in getattr(record, "messages", []))
    return "tool_call" in sources and "internal_trigger" not in sources and not said


def exchange_of(record: RunRecord, turn: int) -> int:
    """The exchange (the unit the turn limit counts, the declaration's `turn_unit`) engine turn `turn`
    belongs to: one per agent turn answering the user or the monitor, the answers to its own
    checks continuing the one before. A user message of turn `turn` opens that exchange."""
    return sum(1 for t in range(1, turn + 1) if not answers_own_check(record, t)) if turn > 0 else 0


def exchanges_done(record: RunRecord) -> int:
    """Exchanges with every agent turn judged: the count History and `sessions list` show."""
    section: ChronosSection = record.section
    return sum(1 for outcome in section.turns if outcome.input_kind != "tool_call")


def verdicts(record: RunRecord) -> list[Verdict]:
    """The checks a person can label (`services.labels`): per agent turn, the rule-based oracle's
    action check (was the proactive action right?) and status check (was the task status
    right?), whose judge is the oracle (`core.verdicts.ORACLE`), not a model; and, where the judge
    seat's model read the user's reply (confirm, refuse, shift), that reading ("reading:<turn>")."""
    from proactive_tui.core.verdicts import ORACLE, Verdict

    section: ChronosSection = record.section
    out: list[Verdict] = []
    for turn in section.turns:
        action = str(turn.reply.proactive_action) if turn.reply is not None else "(no valid reply)"
        expected = ", ".join(turn.acceptable_actions) or turn.expected_action
        out.append(Verdict(key=f"action_check:{turn.turn}", kind="action check", judge=ORACLE, value=turn.action_correct,
                           label=f"turn {turn.turn}: action {action} correct? (expected {expected})", detail=turn.why))
        out.append(Verdict(key=f"status_check:{turn.turn}", kind="status check", judge=ORACLE, value=turn.status_correct,
                           label=f"turn {turn.turn}: status correct? (expected {turn.expected_status})", detail=turn.why))
        if turn.user_read_by == "judge" and turn.user_read_as:
            out.append(Verdict(key=f"reading:{turn.turn}", kind="reply reading", judge=turn.user_read_model or "-",
                               value=turn.user_read_as, label=f"turn {turn.turn}: how the user's reply was read",
                               detail=turn.user_read_note))
    return out


class ChronosRecord(RecordPart):
    """The timeline section; the family counts exchanges (`exchange_of`), not engine turns."""

    section_model = ChronosSection
    events = EVENTS
    legacy_types = LEGACY_TYPES

    new_section = staticmethod(new_section)
    apply = staticmethod(apply_timeline_event)
    scores = staticmethod(report_module.scores)
    verdicts = staticmethod(verdicts)

    def upgrade_record(self, data: dict[str, Any]) -> dict[str, Any]:
        data["section"] = data.get("timeline")
        return data

    complete_turns = staticmethod(resume.complete_turns)
    unit_number = staticmethod(exchange_of)
    units_done = staticmethod(exchanges_done)

    def turn_scores(self, record: RunRecord) -> Any:
        """Per exchange (the family's `turn_unit`), the share of its agent turns whose action the
        oracle accepts (1 or 0 for an exchange of one turn); success at the end."""
        from proactive_tui.core.scores import TurnScores

        outcome = record.section.outcome
        success = None if outcome is None or outcome.success is None else float(outcome.success)
        marks: dict[int, list[float]] = {}
        for t in record.section.turns:
            marks.setdefault(exchange_of(record, t.turn), []).append(float(t.action_correct))
        per_exchange: list[float | None] = [sum(m) / len(m) for _, m in sorted(marks.items())]
        return TurnScores(label="action correct", per_turn=per_exchange, final_label="success", final=success)


class ChronosRerun(RerunPart):
    def user_turns(self, record: RunRecord) -> list[Any]:
        # turn 1's input is the scenario's opening, not something the user was asked for
        return sorted((m for m in record.messages if m.role == "user" and not m.partial and m.turn > 1),
                      key=lambda m: m.turn)


RECORD = ChronosRecord()
RERUN = ChronosRerun()
