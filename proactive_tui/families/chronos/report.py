"""Chronos's report sections: the scenario, then every turn in the order it happened (the user's
message or the observation that was the turn's input, the agent's reply text with its action and
status, the oracle's expectation), then the verdict with action and status accuracy.

The agent's reply is structured JSON; views show its `response_text` (dimmed when it did not reach
the user) and the action on the line under it, never the raw JSON, which the run-record and
chronos exports keep.
"""

from __future__ import annotations

from proactive_tui.core.family import ReportPart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.report import Block, Facts, Line, ReportSection, Speech, pct
from proactive_tui.core.run_record import Score
from proactive_tui.core.writers import PERSON, speaker

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def turn_blocks(record: RunRecord) -> list[Any]:
    """Inputs and replies in the order things happened: turn t's input precedes its reply. When
    the agent checked as often in a row as `max_tool_calls` allows, the last observation and the
    user's reply are both inputs of one turn: the observation came first."""
    section = record.section
    user_msgs: dict[int, list[Any]] = {}
    for m in record.messages:
        if m.role == "user":
            user_msgs.setdefault(m.turn, []).append(m)
    observations: dict[int, list[Any]] = {}
    for obs in section.observations:
        observations.setdefault(obs.turn, []).append(obs)
    shift_turn = section.shift.turn if section.shift else None
    blocks: list[Any] = []
    turns = {t.turn: t for t in section.turns}
    for turn in sorted(set(turns) | set(user_msgs) | set(observations)):
        for obs in observations.get(turn, []):
            source = "tool call" if obs.source == "tool_call" else "internal trigger"
            blocks.append(Speech(speaker="observation", who=f"{source} @ {obs.clock}", turn=turn, text=obs.content))
        for m in user_msgs.get(turn, []):
            who = speaker(m.model, played="user" in record.human_seats, you=PERSON)
            blocks.append(Speech(speaker="user", who=who, turn=turn, text=m.content, partial=m.partial))
        if shift_turn == turn and section.shift is not None:
            blocks.append(Line(label="↻ intention shift:", text=section.shift.intention, style="warn", indent=1))
        outcome = turns.get(turn)
        if outcome is None:
            continue
        who = speaker(outcome.model, played="agent" in record.human_seats, you=PERSON)
        if outcome.reply is None:
            blocks.append(Speech(speaker="agent", who=who, turn=turn,
                                 text=f"no valid reply after {outcome.asks} tries: {outcome.raw}"))
        else:
            reply = outcome.reply
            blocks.append(Speech(speaker="agent", who=who, turn=turn, text=reply.response_text or "(no text)",
                                 muted=not outcome.delivered))
            trigger = reply.trigger_condition
            extra = f" · watch {trigger.type or 'EVENT'}: {trigger.value}" if trigger.value else ""
            blocks.append(Line(text=f"⤷ {reply.proactive_action} / {reply.task_description.status}{extra}", style="judge",
                               indent=1))
        ok = outcome.action_correct and outcome.status_correct
        blocks.append(Line(
            text=(f"oracle expected {'|'.join(outcome.acceptable_actions)} / {outcome.expected_status} "
                  f"(action {_mark(outcome.action_correct)}, status {_mark(outcome.status_correct)}) — {outcome.why}"),
            style="dim" if ok else "warn", indent=2))
        if outcome.user_read_by:
            blocks.append(Line(text=f"user's message read as {outcome.user_read_as} ({read_by(outcome)})",
                               style="dim", indent=2))
        if outcome.task_reset is False:
            blocks.append(Line(text=TASK_NOT_RESET, style="warn", indent=2))
        if outcome.critical:
            blocks.append(Line(text=f"✗ {outcome.critical.replace('_', ' ')}", style="bad", indent=2))
    if not blocks:
        blocks.append(Line(text="(no turns)", style="dim"))
    return blocks


READ_BY = {"command": "by the person's command", "judge": "by the judge", "keywords": "by the keyword check, no judge model",
           "brief": "from the user's brief"}


def read_by(outcome: Any) -> str:
    """`by the judge (model): reasoning`, `by the keyword check, no judge model (why)`, ..."""
    text = READ_BY[outcome.user_read_by]
    if outcome.user_read_by == "judge":
        text += f" {outcome.user_read_model}" if outcome.user_read_model else ""
        return text + (f": {outcome.user_read_note}" if outcome.user_read_note else "")
    return text + (f"; {outcome.user_read_note}" if outcome.user_read_note else "")
"""Who produced the reading of a user's message that decides the task (shown next to the turn)."""
TASK_NOT_RESET = "✗ COMPLETE_TASK kept intention/constraints (they should be null): a status error"


def report(record: RunRecord) -> list[ReportSection]:
    section = record.section
    scenario = (record.environment or {}).get("scenario") or {}
    facts = [("Scenario", f"{section.scenario or '-'}, {section.branch or '-'} branch, {section.tier or '-'} tier")]
    if scenario.get("initial_need"):
        facts.append(("Initial need", str(scenario["initial_need"])))
    if section.view is not None:
        facts.append(("Simulated clock", section.view.clock))
    facts.append(("Agent prompt", str((record.settings or {}).get("prompt_variant") or "standard")))
    active = [r for r in section.reminders if r.status == "active"]
    if active:
        facts.append(("Active reminder", f"{active[-1].type or 'EVENT'}: {active[-1].value or ''}"))
    out = [ReportSection(title="Scenario", blocks=[Facts(rows=facts)], id="chronos.scenario"),
           ReportSection(title="Timeline", blocks=turn_blocks(record), id="chronos.timeline")]
    o = section.outcome
    verdict: list[Block]
    if o is None:
        verdict = [Line(text="No verdict: the session did not reach one.", style="dim")]
    else:
        success = "n/a" if o.success is None else ("yes" if o.success else "no")
        verdict = [Facts(rows=[
            ("Success", success), ("Reason", o.reason.replace("_", " ") + (f" — {o.detail}" if o.detail else "")),
            ("Branch / tier", f"{o.branch} / {o.tier}"), ("Action accuracy", pct(o.action_accuracy)),
            ("Status accuracy", pct(o.status_accuracy)), ("Agent turns", str(o.turns)),
            ("Judged by", "the expected-action oracle (rules, no model)"),
        ])]
    out.append(ReportSection(title="Verdict", blocks=verdict, summary=True, id="chronos.verdict"))
    return out


def scores(record: RunRecord) -> list[Score]:
    o = record.section.outcome
    if o is None:
        return []
    success = None if o.success is None else (1.0 if o.success else 0.0)
    return [
        Score(name="success", label="Success", value=success, display="n/a" if success is None else ("yes" if o.success else "no"),
              by="oracle", by_kind="rule"),
        Score(name="action", label="Action accuracy", value=o.action_accuracy, display=pct(o.action_accuracy, 0),
              by="oracle", by_kind="rule"),
        Score(name="status", label="Status accuracy", value=o.status_accuracy, display=pct(o.status_accuracy, 0),
              by="oracle", by_kind="rule"),
    ]


class ChronosReport(ReportPart):
    def sections(self, record: RunRecord) -> list[ReportSection]:
        return report(record)


REPORT = ChronosReport()
