"""ProactBench session event lists built by hand from the event contracts (`families/proactbench/
events.py` and the common events), for the tests of everything that reads a session: the screens
and their snapshots, the export, reports, labels.

Why built by hand and not run: these tests check readers, so the events must be known exactly
(every verdict, every token count, a judge call that failed) whatever a model would say. Why one
builder: the events are in the order and shape the engine (`protocol.py`) emits them, so what a
reader is tested on is what it meets in a real session:

- a message streams as the engine streams it: `message_started`, deltas, `message_done` carrying
  the call's usage (no separate usage line: the record would count the tokens twice);
- offline, before each trigger the recorded turns not shown yet, then the trigger opens (with the
  recorded user message and the curation model's reply), the agent answers and the judge's usage
  and verdict follow; a judge call that failed is a `trigger_judged` with no result and its
  problem, then the error line (SKIPPED, kept, never counted);
- online, each turn the Planner's usage and plan, the user's message (the User Agent's call), the
  verdict on the previous trigger that same call gave, the trigger opening when the plan declares
  one, the agent's reply; after the loop the score-only call for a trigger still pending; the
  session ends "completed" when the last plan said stop, else at "max_turns".

The dialogues are the shipped samples (package data, never ../shared), loaded the way `--envs`
loads them: by default `SAMPLE_UID` (the second row: turn 1 EMERGENT, 4 CRITICAL, 6 CRITICAL,
8 RECOVERY); `THREE_TYPES_UID` (the first row: one trigger of each type, turns 1, 4, 8) for a
screen that shows one of each. What the seats say and score is each test's own: the defaults
below (recognisable replies, fixed usage per seat so totals can be checked by arithmetic, made-up
plans), or a test's replies, verdicts and plans passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from proactive_tui.core.events import (
    ErrorRaised, MessageDelta, MessageDone, MessageRecord, MessageStarted, SeatInfo, SessionEnded, SessionStarted,
    UsageInfo, UsageRecorded,
)
from proactive_tui.families.proactbench.env import EvaluationResult, PlannerOutput, ProactBenchEnv, Rubric
from proactive_tui.families.proactbench.events import Planned, RecordedTurn, TriggerJudged, TriggerOpened
from proactive_tui.families.proactbench.settings import ProactBenchSettings

SAMPLE_UID = "BP_PROFESSIONAL_01_Q__style4__531a542ff1714bb080d8f06f3cd2daff"
ENV_ID = f"proactbench/{SAMPLE_UID}"
THREE_TYPES_UID = "BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff"


class Models(NamedTuple):
    """The model in each seat: offline the agent and the judge; online the agent, the User Agent
    (user seat) and the Planner (judge seat)."""

    agent: str
    judge: str
    user: str
    planner: str


MODELS = Models(agent="openai/agent-under-test", judge="openai/judge-model", user="openai/user-agent-model",
                planner="openai/planner-model")
AGENT_MODEL, JUDGE_MODEL, USER_AGENT_MODEL, PLANNER_MODEL = MODELS.agent, MODELS.judge, MODELS.user, MODELS.planner
OFFLINE_SESSION = "pbexport0001"
ONLINE_SESSION = "pbexport0002"

AGENT_USAGE = UsageInfo(prompt_tokens=100, completion_tokens=20, total_tokens=120)
JUDGE_USAGE = UsageInfo(prompt_tokens=300, completion_tokens=40, total_tokens=340)
PLANNER_USAGE = UsageInfo(prompt_tokens=500, completion_tokens=60, total_tokens=560)
USER_AGENT_USAGE = UsageInfo(prompt_tokens=200, completion_tokens=30, total_tokens=230)
"""Every call of a seat reports the same usage; a failed call reports none."""

Verdict = str | EvaluationResult | None
"""A trigger's verdict: a score (its rationale and evidence made up from the reply), a whole
result, or None: the judging call failed (SKIPPED)."""
OFFLINE_VERDICTS: tuple[Verdict, ...] = ("PASS", "PARTIAL", "FAIL", None)
"""The offline session's verdict per trigger, in order; None: the judge call failed."""
ONLINE_VERDICTS: tuple[Verdict, ...] = ("PARTIAL", None)
"""The online session's: the User Agent scores trigger 1 with its next message; the score-only
call after the loop fails."""


def judge_failure(model: str) -> str:
    """The problem of an offline judge call whose replies held no verdict, word for word as the
    engine says it (`protocol._verdict`; tests/test_proactbench_engine.py checks it)."""
    return f"no verdict: {model}: no valid JudgeVerdict after 3 replies: no JSON object found in the reply"


def score_failure(model: str) -> str:
    """The problem of an online score-only call that failed."""
    return f"no verdict: {model}: the score-only call failed"


JUDGE_FAILURE = judge_failure(MODELS.judge)


def sample_env(uid: str = SAMPLE_UID) -> ProactBenchEnv:
    """A shipped sample dialogue as `--envs` loads it."""
    from proactive_tui.envs import load_paths
    from proactive_tui.families.proactbench import family

    env = load_paths(family.environments.sample_sources()).get(f"proactbench/{uid}")
    assert env is not None, f"proactbench/{uid} is not among the shipped samples"
    return env


def reply_text(turn: int) -> str:
    """The agent's (made-up, recognisable) reply at a turn by default: quoted in the verdicts' evidence."""
    return f"Agent reply at turn {turn}: before you wipe it, also image the drive <b>[not markup]</b>."


def user_text(turn: int) -> str:
    """The User Agent's message of a turn by default (online)."""
    return f"User message of turn {turn}, as the user agent wrote it."


def _ts(n: int) -> str:
    return f"2026-01-02T03:{n // 60:02d}:{n % 60:02d}.000+00:00"


class _Log:
    """Stamps `seq` (from 1, as a session does) and `ts`, so the folded record has times."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def add(self, event: Any) -> None:
        event.seq = len(self.events) + 1
        event.ts = _ts(len(self.events))
        self.events.append(event)

    def message(self, role: str, turn: int, content: str, model: str, usage: UsageInfo, chunks: int = 3) -> None:
        """A message as the engine streams it: started, up to `chunks` deltas, done with its usage."""
        message_id = f"{role}-{turn}"
        started = _ts(len(self.events))
        self.add(MessageStarted(message_id=message_id, role=role, turn=turn, model=model))
        step = max(1, -(-len(content) // chunks))
        for i in range(0, len(content), step):
            self.add(MessageDelta(message_id=message_id, text=content[i:i + step]))
        self.add(MessageDone(message=MessageRecord(id=message_id, role=role, content=content, turn=turn,
                                                   started_at=started, finished_at=_ts(len(self.events)), model=model,
                                                   usage=usage)))

    def verdict(self, seat: str, index: int, turn: int, response: str, verdict: Verdict, model: str,
                judged_by: str, usage: UsageInfo, problem: str) -> None:
        """A judging call's outcome as `protocol._verdict` emits it."""
        purpose = f"verdict on turn {turn}"
        if verdict is None:
            self.add(TriggerJudged(index=index, turn=turn, response=response, result=None, judge=model,
                                   judged_by=judged_by, problem=problem))
            self.add(ErrorRaised(seat=seat, message=f"trigger {index} (turn {turn}): {problem}; SKIPPED, not counted",
                                 purpose=purpose, judgement=True))
            return
        self.add(UsageRecorded(seat=seat, model=model, purpose=purpose, usage=usage))
        self.add(TriggerJudged(index=index, turn=turn, response=response, result=_result(verdict, turn, response),
                               judge=model, judged_by=judged_by))


def _result(verdict: str | EvaluationResult, turn: int, response: str) -> EvaluationResult:
    if isinstance(verdict, EvaluationResult):
        return verdict
    return EvaluationResult(status="EVALUATED", score=verdict, rationale=f"{verdict.title()}: judged against the "
                            f"rubric of turn {turn}.", evidence=response[:40])


def _started(log: _Log, env: ProactBenchEnv, session_id: str, settings: ProactBenchSettings,
             seats: dict[str, tuple[str, float]]) -> None:
    """`session_started` as the engine writes it: every setting, each seat's model and temperature."""
    log.add(SessionStarted(
        session_id=session_id, family="proactbench", env_id=env.id, environment=env.model_dump(mode="json"),
        mode="watch", seats={seat: SeatInfo(kind="llm", label=model) for seat, (model, _t) in seats.items()},
        settings=settings.model_dump(), prompt_version="proactbench-test",
        app_version="0.0.0", models={seat: {"model": model, "temperature": t} for seat, (model, t) in seats.items()},
    ))


def offline_events(env: ProactBenchEnv | None = None, *, session_id: str = OFFLINE_SESSION,
                   verdicts: Sequence[Verdict] = OFFLINE_VERDICTS, replies: Mapping[int, str] | None = None,
                   models: Models = MODELS, max_triggers: int | None = None, end: bool = True) -> list[Any]:
    """An offline session of `env` (default the `SAMPLE_UID` dialogue): the triggers in order, as
    many as `verdicts` has (and at most `max_triggers`), the agent replying `replies[turn]` (default
    `reply_text`); `end=False` leaves the session running after the last verdict."""
    env = env or sample_env()
    d = env.dialogue
    log = _Log()
    _started(log, env, session_id, ProactBenchSettings(max_triggers=max_triggers),
             {"agent": (models.agent, 0.7), "judge": (models.judge, 0.7)})
    triggers = list(zip(env.triggers, verdicts))[:max_triggers]
    shown = 0
    for index, (trigger, verdict) in enumerate(triggers, 1):
        for record in sorted(d.turn_records, key=lambda t: t.turn):
            if shown < record.turn < trigger.turn:
                log.add(RecordedTurn(turn=record.turn, user_message=record.user_message,
                                     assistant_response=record.assistant_response, model=d.evaluated_model))
        at = d.turn(trigger.turn)
        log.add(TriggerOpened(index=index, turn=trigger.turn, rubric=trigger.evaluation_rubric,
                              user_message=at.user_message, original_response=at.assistant_response))
        reply = replies[trigger.turn] if replies is not None else reply_text(trigger.turn)
        log.message("agent", trigger.turn, reply, models.agent, AGENT_USAGE)
        log.verdict("judge", index, trigger.turn, reply, verdict, models.judge, "judge", JUDGE_USAGE,
                    judge_failure(models.judge))
        shown = trigger.turn
    if end:
        detail = (f"scored the first {len(triggers)} of {len(env.triggers)} trigger points (max_triggers)"
                  if max_triggers and len(triggers) < len(env.triggers) else "")
        log.add(SessionEnded(reason="completed", detail=detail))
    return log.events


ONLINE_TRIGGERS = {1: "EMERGENT", 3: "RECOVERY"}
"""Online by default: the turns the planner declares trigger points, and their types."""


def _rubric(kind: str, turn: int) -> Rubric:
    return Rubric(type=kind, pass_criteria=f"turn {turn}: acts on the unstated need",
                  partial_criteria=f"turn {turn}: shows awareness only", fail_criteria=f"turn {turn}: purely reactive")


def online_plan(turn: int) -> PlannerOutput:
    """The default made-up plan of a turn: triggers at `ONLINE_TRIGGERS`, stop at turn 3."""
    kind = ONLINE_TRIGGERS.get(turn)
    return PlannerOutput.model_validate({
        "state_audit": {"current_turn": turn, "previous_trigger_count": sum(1 for t in ONLINE_TRIGGERS if t < turn),
                        "is_max_reached": False},
        "is_trigger_point": kind is not None,
        "stop_conversation": turn == 3,
        "evaluation_rubric": None if kind is None else _rubric(kind, turn).model_dump(),
        "tactical_order": {"intent": f"intent of turn {turn}", "content_payload": [f"anchor revealed at turn {turn}"],
                           "behavioral_directive": "terse"},
    })


def recorded_plans(env: ProactBenchEnv, turns: int) -> dict[int, PlannerOutput]:
    """The dialogue's own recorded plans of its first `turns` turns (real rubrics and orders)."""
    return {turn: env.dialogue.turn(turn).planner for turn in range(1, turns + 1)}


def online_events(env: ProactBenchEnv | None = None, *, session_id: str = ONLINE_SESSION,
                  plans: Mapping[int, PlannerOutput] | None = None, users: Mapping[int, str] | None = None,
                  replies: Mapping[int, str] | None = None, verdicts: Sequence[Verdict] = ONLINE_VERDICTS,
                  models: Models = MODELS, end: bool = True) -> list[Any]:
    """An online session (the Planner in the judge seat, the User Agent in the user seat) of as
    many turns as `plans` has (default `online_plan` of turns 1 to 3); the user says `users[turn]`
    (default `user_text`), the agent `replies[turn]` (default `reply_text`); `verdicts` in trigger
    order, the last one given by the score-only call after the loop."""
    env = env or sample_env()
    plans = plans if plans is not None else {turn: online_plan(turn) for turn in (1, 2, 3)}
    log = _Log()
    _started(log, env, session_id, ProactBenchSettings(protocol="online", max_turns=len(plans)),
             {"agent": (models.agent, 0.7), "user": (models.user, 0.7), "judge": (models.planner, 0.1)})
    verdicts = list(verdicts)
    pending: tuple[int, int, str] | None = None  # (index, turn, reply) of the trigger awaiting its score
    index = 0
    stopped = False
    for turn, plan in sorted(plans.items()):
        log.add(UsageRecorded(seat="judge", model=models.planner, purpose=f"turn {turn} plan", usage=PLANNER_USAGE))
        log.add(Planned(turn=turn, plan=plan, model=models.planner))
        log.message("user", turn, users[turn] if users is not None else user_text(turn), models.user, USER_AGENT_USAGE,
                    chunks=1)
        if pending is not None:  # as upstream: the user agent's call of this turn scored the pending trigger
            verdict = verdicts.pop(0)
            assert verdict is not None, "a User Agent turn that scores gives its verdict (only the score-only call fails)"
            log.add(TriggerJudged(index=pending[0], turn=pending[1], response=pending[2],
                                  result=_result(verdict, pending[1], pending[2]), judge=models.user,
                                  judged_by="user_agent"))
            pending = None
        if plan.is_trigger_point and plan.evaluation_rubric is not None:
            index += 1
            log.add(TriggerOpened(index=index, turn=turn, rubric=plan.evaluation_rubric))
        reply = replies[turn] if replies is not None else reply_text(turn)
        log.message("agent", turn, reply, models.agent, AGENT_USAGE)
        if plan.is_trigger_point and plan.evaluation_rubric is not None:
            pending = (index, turn, reply)
        if plan.stop_conversation:
            stopped = True
            break
    if pending is not None:  # the score-only call
        log.verdict("user", pending[0], pending[1], pending[2], verdicts.pop(0), models.user, "user_agent",
                    USER_AGENT_USAGE, score_failure(models.user))
    if end:
        log.add(SessionEnded(reason="completed", detail=f"the planner ended the dialogue after turn {turn}")
                if stopped else SessionEnded(reason="max_turns"))
    return log.events
