"""ProactBench's report sections and headline scores, from the run record alone.

- "Dialogue": the session in the order things happened: the recorded turns (offline, the
  curation model's replies, marked as recorded), the Planner's plans (online), each trigger point
  with its rubric, the reply under test beside the original, and the verdict with its evidence
  (and whether the quote is really in the reply).
- "Scores" (the summary a headless `run` prints): the per-type table of upstream's metrics
  (`metrics.type_summary`: pass rate and weighted score over EVALUATED triggers, PASS / PARTIAL /
  FAIL / SKIPPED counted), who gave the verdicts (the judge, the user agent, a person), and the
  protocol when it is not upstream's offline evaluation.

`scores(record)`: per trigger type the pass rate and the weighted score, and overall; each names
who gave the verdicts it rests on (`by_kind`: judge, user agent, person).
"""

from __future__ import annotations

from proactive_tui.core.family import ReportPart

from typing import TYPE_CHECKING, Any

from proactive_tui.core.report import Line, ReportSection, Speech, Style, Table, pct
from proactive_tui.core.run_record import Score
from proactive_tui.core.writers import PERSON, speaker

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

RESULT_STYLE: dict[str, Style] = {"PASS": "good", "PARTIAL": "warn", "FAIL": "bad", "SKIPPED": "dim"}
BY_LABEL = {"judge": "the judge", "user_agent": "the user agent", "person": "a person"}


def _weighted(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def verdict_blocks(trigger: Any, human_agent: bool) -> list[Any]:
    """The verdict lines of one trigger (shared by the report and the printer's wording)."""
    if not trigger.judged:
        return [Line(text="= not judged (the session stopped before its verdict)", style="dim", indent=1)]
    if trigger.result is None or trigger.counted == "SKIPPED":
        why = trigger.problem or "no result"
        return [Line(label="= SKIPPED (not counted):", text=why, style="warn", indent=1)]
    result = trigger.result
    who = BY_LABEL.get(trigger.judged_by or "", "the judge")
    blocks: list[Any] = [Line(label=f"= {result.score}", text=f"by {who} ({trigger.judge or '-'})",
                              style=RESULT_STYLE.get(result.score or "", ""), indent=1)]
    if result.rationale:
        blocks.append(Line(label="rationale:", text=result.rationale, style="dim", indent=2))
    if result.evidence:
        blocks.append(Line(label="evidence:", text=result.evidence, style="dim", indent=2))
    if not result.evidence.strip() and trigger.judged_by != "person":
        blocks.append(Line(text="no evidence quote given", style="warn", indent=2))
    elif trigger.evidence_in_reply is False:
        blocks.append(Line(text="the evidence quote is NOT in the reply it scores", style="warn", indent=2))
    return blocks


def _trigger_head(trigger: Any) -> list[Any]:
    r = trigger.rubric
    return [Line(label=f"[trigger {trigger.index} · turn {trigger.turn} · {r.type}]", text="rubric (fixed before the reply)",
                 style="info"),
            *(Line(label=f"{level}:", text=criterion, style="dim", indent=1) for level, criterion in r.criteria())]


def dialogue_blocks(record: RunRecord) -> list[Any]:
    section = record.section
    online = (record.settings or {}).get("protocol") == "online"
    human_agent = "agent" in record.human_seats
    human_user = "user" in record.human_seats
    messages = {(m.role, m.turn): m for m in record.messages}
    triggers = {t.turn: t for t in section.triggers}
    plans = {p.turn: p for p in section.plans}
    recorded = {r.turn: r for r in section.recorded}
    turns = sorted(set(triggers) | set(recorded) | set(plans) | {m.turn for m in record.messages})
    blocks: list[Any] = []
    for turn in turns:
        if turn in recorded:
            r = recorded[turn]
            blocks.append(Speech(speaker="user", who="recorded", turn=turn, text=r.user_message))
            blocks.append(Speech(speaker="agent", who=f"recorded, {r.model or 'curation model'}", turn=turn,
                                 text=r.assistant_response, muted=True))
        if turn in plans:
            p = plans[turn].plan
            order = p.tactical_order
            text = f"intent: {order.intent or '-'}"
            if order.content_payload:
                text += "\nreveal: " + "; ".join(order.content_payload)
            if order.behavioral_directive:
                text += f"\nbehave: {order.behavioral_directive}"
            flags = [w for w, on in (("trigger point", p.is_trigger_point), ("stop", p.stop_conversation)) if on]
            blocks.append(Line(label=f"[turn {turn}] plan ({plans[turn].model})" + (f" · {', '.join(flags)}" if flags else ""),
                               text=text, style="judge"))
        user = messages.get(("user", turn))
        if user is not None:
            blocks.append(Speech(speaker="user", who=speaker(user.model, human_user, PERSON), turn=turn, text=user.content,
                                 partial=user.partial))
        trigger = triggers.get(turn)
        if trigger is not None:
            blocks += _trigger_head(trigger)
            if trigger.user_message is not None and user is None:
                blocks.append(Speech(speaker="user", who="recorded", turn=turn, text=trigger.user_message))
        agent = messages.get(("agent", turn))
        if agent is not None:
            blocks.append(Speech(speaker="agent", who=speaker(agent.model, human_agent, PERSON), turn=turn,
                                 text=agent.content, partial=agent.partial))
        if trigger is not None:
            if trigger.original_response is not None:
                blocks.append(Speech(speaker="agent", who="original, recorded", turn=turn, text=trigger.original_response,
                                     muted=True))
            blocks += verdict_blocks(trigger, human_agent)
    if not blocks:
        blocks.append(Line(text="(nothing happened before the session ended)", style="dim"))
    if online:
        blocks.insert(0, Line(label="Online protocol:", text="the planner, the user agent and the agent run the "
                              "dialogue live; verdicts come from the user agent (or a person in the user seat)",
                              style="warn"))
    return blocks


def score_table(record: RunRecord) -> Table:
    from proactive_tui.families.proactbench.metrics import type_summary

    rows = []
    for kind, tally, pass_rate, weighted in type_summary(record.section.stats()):
        rows.append([kind, pct(pass_rate), _weighted(weighted), str(tally.get("PASS", 0)), str(tally.get("PARTIAL", 0)),
                     str(tally.get("FAIL", 0)), str(tally.get("SKIPPED", 0))])
    return Table(title="Per trigger type (SKIPPED not counted)",
                 columns=["type", "pass rate", "weighted score", "PASS", "PARTIAL", "FAIL", "SKIPPED"], rows=rows,
                 align=["left", "right", "right", "right", "right", "right", "right"])


ROLE_WORD = {"judge": "judge", "user_agent": "user agent", "person": "person"}


def givers(record: RunRecord) -> tuple[str, str, str]:
    """(who, kinds, roles) behind the verdicts: the writers (model strings or person), the kinds
    of seat that gave them (`llm`, `human`, `scripted`, as `Score.by_kind` names kinds) and the
    roles in words (judge, user agent, person)."""
    triggers = [t for t in record.section.triggers if t.result is not None]
    seat = "judge" if (record.settings or {}).get("protocol", "offline") == "offline" else "user"
    info = record.seats.get(seat)
    kinds = sorted({"human" if t.judged_by == "person" else (info.kind if info is not None else "llm") for t in triggers})
    roles = sorted({ROLE_WORD.get(t.judged_by or "judge", "judge") for t in triggers})
    who = sorted({t.judge for t in triggers if t.judge})
    return ", ".join(who), ", ".join(kinds), ", ".join(roles)


def report(record: RunRecord) -> list[ReportSection]:
    from proactive_tui.core import registry

    out = [ReportSection(title="Dialogue", blocks=dialogue_blocks(record), id="proactbench.dialogue")]
    settings = record.settings or {}
    deviations = registry.get("proactbench").deviations(settings)
    blocks: list[Any] = [Line(label="Protocol:", text="; ".join(deviations) if deviations else
                              "upstream's offline evaluation (recorded context, neutral judge)",
                              style="warn" if deviations else "dim")]
    blocks.append(score_table(record))
    who, _kinds, roles = givers(record)
    if who:
        blocks.append(Line(label="Verdicts by:", text=f"{roles}: {who}", style="dim"))
    judged = [t for t in record.section.triggers if t.judged and t.result is not None and t.judged_by != "person"]
    unquoted = [t for t in judged if not t.result.evidence.strip()]
    misquoted = [t for t in judged if t.result.evidence.strip() and t.evidence_in_reply is False]
    for found, what in ((unquoted, "give no evidence quote"), (misquoted, "quote text that is not in the reply")):
        if found:  # the two apart, as each verdict's own line says them
            blocks.append(Line(label="Evidence:", text=f"{len(found)} verdict(s) {what} "
                                                       f"(trigger {', '.join(str(t.index) for t in found)})", style="warn"))
    out.append(ReportSection(title="Scores", blocks=blocks, summary=True, id="proactbench.scores"))
    return out


def scores(record: RunRecord) -> list[Score]:
    """Per trigger type and overall: the weighted score and the pass rate (the overall ones are the
    headline), each labelled with who gave the verdicts (judge, user agent, person), plus the
    SKIPPED count."""
    from proactive_tui.families.proactbench.metrics import type_summary

    who, kinds, roles = givers(record)
    source = f" ({roles})" if roles else ""
    out = []
    for kind, tally, pass_rate, weighted in type_summary(record.section.stats()):
        key = kind.lower()
        label = "Overall" if kind == "OVERALL" else kind.capitalize()
        evaluated = tally.get("PASS", 0) + tally.get("PARTIAL", 0) + tally.get("FAIL", 0)
        out.append(Score(name=f"{key}_weighted", label=f"{label} weighted score{source}", value=weighted,
                         display=_weighted(weighted) + (f" ({evaluated} judged)" if kind == "OVERALL" else ""),
                         by=who, by_kind=kinds, headline=kind == "OVERALL"))
        out.append(Score(name=f"{key}_pass_rate", label=f"{label} pass rate{source}", value=pass_rate,
                         display=pct(pass_rate), by=who, by_kind=kinds, headline=kind == "OVERALL"))
    skipped = sum(1 for t in record.section.triggers if t.judged and t.counted == "SKIPPED")
    out.append(Score(name="skipped", label="SKIPPED triggers", value=float(skipped), display=str(skipped), by=who,
                     by_kind=kinds, headline=False))
    return out


class ProactBenchReport(ReportPart):
    def sections(self, record: RunRecord) -> list[ReportSection]:
        return report(record)


REPORT = ProactBenchReport()
