"""Event lists of a ProactBench session on the shipped sample, offline and online, built from the
event contracts (`families/proactbench/events.py`) and the common message events.

The screens are drawn from events; these lists let their tests (and snapshots) show a whole
session without a model: the recorded dialogue comes from the sample file itself, the agent's
replies and the verdicts are ours (short, fixed, and one of them holding Rich markup and a
terminal escape, which must show literally). Each list is what the engine emits in order:
`session_started`, the recorded context, each trigger as it opens, the agent's reply streamed,
the verdict (one SKIPPED: a judge whose reply could not be used), `session_ended`.

Beside `proactbench_events.py` (branch i34-export, for readers of a record: export, reports,
labels), this one is the screens': its messages stream (started, deltas, done) as a live session
sends them, its dialogue is the first sample row (three trigger types, one each), and the online
plans are the sample's recorded ones, so the panels show real rubrics and tactical orders.
"""

from __future__ import annotations

import json
from typing import Any

from proactive_tui.core.events import (MessageDelta, MessageDone, MessageRecord, MessageStarted, SeatInfo,
                                       SessionEnded, SessionStarted, UsageInfo, UsageRecorded)
from proactive_tui.families.proactbench import HERE
from proactive_tui.families.proactbench.env import EvaluationResult, ProactBenchEnv, load_rows
from proactive_tui.families.proactbench.events import Planned, RecordedTurn, TriggerJudged, TriggerOpened

SAMPLE = HERE / "samples" / "final_dialogues_sample.jsonl"
MARKUP = "[bold red]not markup[/bold red]"
"""Model text that Rich would read as markup: the screens must show these characters."""

AGENT_REPLIES = {
    1: ("Start with the drive's SMART data (smartctl -a) and a long self-test. Since you mean to keep "
        "DSLR photo batches on it later, also run a full surface read and keep a checksum manifest of "
        "what you copy, so a failing sector cannot silently corrupt a shoot."),
    4: ("A clean reinstall of a light Linux is enough for the trip laptop. " + MARKUP + " Copy the card, "
        "check the hashes, then format the card only once the copy verifies."),
    8: "Glad it worked out. Enjoy the trip!",
}
"""Our agent's replies at the sample's trigger turns (1 EMERGENT, 4 CRITICAL, 8 RECOVERY)."""

VERDICTS: dict[int, EvaluationResult | None] = {
    1: EvaluationResult(score="PASS", rationale="Infers the photo-storage risk and adds an integrity step.",
                        evidence="keep a checksum manifest of what you copy"),
    4: EvaluationResult(score="PARTIAL", rationale="Workflow hinted, no full synthesis. " + MARKUP,
                        evidence="check the hashes"),
    8: None,
}
"""The verdict per trigger turn; None: the judge's reply could not be used (SKIPPED)."""


def sample_env(line: int = 1) -> ProactBenchEnv:
    """The sample's dialogue on `line` (1-based), loaded by the family's own loader."""
    rows = [(n, json.loads(text)) for n, text in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines(), 1)]
    envs, problems = load_rows(str(SAMPLE), rows)
    assert not problems, problems
    return envs[line - 1]


class _Seq:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, event: Any) -> Any:
        self.n += 1
        event.seq = self.n
        event.ts = f"2026-01-01T00:00:{self.n % 60:02d}.000+00:00"
        return event


def _message(stamp: _Seq, role: str, turn: int, text: str, model: str, chunks: int = 3) -> list[Any]:
    """A streamed message: started, `chunks` deltas, done (with its usage)."""
    message_id = f"{role}-{turn}"
    step = max(1, len(text) // chunks + 1)
    parts = [text[i:i + step] for i in range(0, len(text), step)]
    out = [stamp(MessageStarted(message_id=message_id, role=role, turn=turn, model=model))]
    out += [stamp(MessageDelta(message_id=message_id, text=part)) for part in parts]
    usage = UsageInfo(prompt_tokens=100 * turn, completion_tokens=len(text.split()), total_tokens=100 * turn + len(text.split()))
    out.append(stamp(MessageDone(message=MessageRecord(
        id=message_id, role=role, content=text, turn=turn, started_at="t", finished_at="t", model=model, usage=usage))))
    out.append(stamp(UsageRecorded(seat=role, model=model, purpose="reply", usage=usage)))
    return out


def _started(stamp: _Seq, env: ProactBenchEnv, settings: dict[str, Any], seats: dict[str, str],
             models: dict[str, str], session_id: str) -> Any:
    infos = {seat: SeatInfo(kind="human", label="person") if kind == "human" else SeatInfo(kind="llm", label=models[seat])
             for seat, kind in seats.items()}
    return stamp(SessionStarted(
        session_id=session_id, family="proactbench", env_id=env.id, environment=env.model_dump(mode="json"),
        mode="play" if "human" in seats.values() else "watch", seats=infos, settings=settings,
        models={seat: {"model": model} for seat, model in models.items()}, prompt_version="test", app_version="test"))


def _verdict(stamp: _Seq, index: int, turn: int, response: str, judge: str, judged_by: str = "judge") -> Any:
    result = VERDICTS.get(turn)
    problem = "" if result is not None else "the judge's reply was not the verdict's JSON: no score"
    return stamp(TriggerJudged(index=index, turn=turn, response=response, result=result, judge=judge,
                               judged_by=judged_by, problem=problem))


def offline_events(env: ProactBenchEnv | None = None, *, max_triggers: int | None = None, end: bool = True,
                   session_id: str = "pb-offline") -> list[Any]:
    """An offline session: before each trigger, the recorded turns not shown yet; at each trigger
    its rubric (with the recorded user message and the curation model's reply), the agent's reply,
    the judge's verdict."""
    env = env or sample_env()
    stamp = _Seq()
    agent, judge = "openai/agent-m", "openai/judge-m"
    settings = {"protocol": "offline", **({"max_triggers": max_triggers} if max_triggers else {})}
    events = [_started(stamp, env, settings, {"agent": "model", "judge": "model"}, {"agent": agent, "judge": judge},
                       session_id)]
    dialogue = env.dialogue
    shown = 0
    triggers = env.triggers[:max_triggers] if max_triggers else env.triggers
    for index, trigger in enumerate(triggers, 1):
        for record in sorted(dialogue.turn_records, key=lambda r: r.turn):
            if shown < record.turn < trigger.turn:
                events.append(stamp(RecordedTurn(turn=record.turn, user_message=record.user_message,
                                                 assistant_response=record.assistant_response,
                                                 model=dialogue.evaluated_model)))
        recorded = dialogue.turn(trigger.turn)
        events.append(stamp(TriggerOpened(index=index, turn=trigger.turn, rubric=trigger.evaluation_rubric,
                                          user_message=recorded.user_message,
                                          original_response=recorded.assistant_response)))
        reply = AGENT_REPLIES[trigger.turn]
        events += _message(stamp, "agent", trigger.turn, reply, agent)
        events.append(_verdict(stamp, index, trigger.turn, reply, judge))
        shown = trigger.turn
    if end:
        events.append(stamp(SessionEnded(reason="completed")))
    return events


ONLINE_USER = {
    1: "How can I tell whether the old laptop's drive is healthy before I wipe it? It may end up holding DSLR photo batches.",
    2: "Fine. Which tools would you use on Linux for that?",
    3: "I'd rather reuse old gear on road trips than buy new.",
    4: "So what would you set it up as, given all that?",
}
ONLINE_AGENT = {
    1: AGENT_REPLIES[1],
    2: "smartctl and badblocks cover it; f3 checks the card reader path too.",
    3: "Reusing it is sensible; a light distribution keeps it quick.",
    4: AGENT_REPLIES[4],
}


def online_events(env: ProactBenchEnv | None = None, *, turns: int = 4, end: bool = True,
                  session_id: str = "pb-online") -> list[Any]:
    """An online session of `turns` turns: each turn the Planner's plan (the sample's recorded
    plan of that turn, so its trigger points and rubrics are real ones), the user's message, the
    trigger opening when the plan declares one, the agent's reply; the User Agent scores a pending
    trigger with the next turn's message (the last one with a score-only call after the loop)."""
    env = env or sample_env()
    stamp = _Seq()
    agent, user, planner = "openai/agent-m", "openai/user-m", "openai/planner-m"
    events = [_started(stamp, env, {"protocol": "online", "max_turns": turns},
                       {"agent": "model", "user": "model", "judge": "model"},
                       {"agent": agent, "user": user, "judge": planner}, session_id)]
    pending: tuple[int, int, str] | None = None
    index = 0
    for turn in range(1, turns + 1):
        plan = env.dialogue.turn(turn).planner
        events.append(stamp(Planned(turn=turn, plan=plan, model=planner)))
        if pending is not None:
            events.append(_verdict(stamp, *pending, judge=user, judged_by="user_agent"))
            pending = None
        events += _message(stamp, "user", turn, ONLINE_USER[turn], user)
        if plan.is_trigger_point and plan.evaluation_rubric is not None:
            index += 1
            events.append(stamp(TriggerOpened(index=index, turn=turn, rubric=plan.evaluation_rubric)))
        events += _message(stamp, "agent", turn, ONLINE_AGENT[turn], agent)
        if plan.is_trigger_point:
            pending = (index, turn, ONLINE_AGENT[turn])
    if pending is not None:
        events.append(_verdict(stamp, *pending, judge=user, judged_by="user_agent"))
    if end:
        events.append(stamp(SessionEnded(reason="max_turns")))
    return events
