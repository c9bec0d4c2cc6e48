"""ProactBench session event logs built by hand from the event contracts (`families/proactbench/events.py`
and the common events), for tests of what reads a record: export, reports, screens, labels.

Why built by hand and not run: these tests check readers, so the events must be known exactly
(every verdict, every token count, a judge call that failed) whatever the protocol engine does.
The dialogue is the shipped sample (`BP_PROFESSIONAL_01_Q__style4__...`, the second row of
`samples/final_dialogues_sample.jsonl`), loaded the way `--envs` loads it.

- `offline_events()`: upstream's offline evaluation of that dialogue. Its four trigger points
  (turn 1 EMERGENT, 4 CRITICAL, 6 CRITICAL, 8 RECOVERY) are judged PASS, PARTIAL, FAIL, and the last
  judge call fails (SKIPPED: an error event, `result=None`, no usage).
- `online_events()`: a three-turn online session from the same dialogue's identifiers: the planner
  declares turn 1 an EMERGENT trigger and turn 3 a RECOVERY trigger (with stop); the user agent
  scores turn 1's reply with its message of turn 2 (PARTIAL), and the score-only call after the
  loop fails (SKIPPED).

Token usage is fixed per call (`AGENT_USAGE`, `JUDGE_USAGE`, ...) so totals per seat can be
checked by arithmetic. `fold(events)` (core.run_record) gives the run record.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.core.events import (
    ErrorRaised, MessageDone, MessageRecord, SeatInfo, SessionEnded, SessionStarted, UsageInfo, UsageRecorded,
)
from proactive_tui.families.proactbench.env import EvaluationResult, PlannerOutput, ProactBenchEnv, Rubric
from proactive_tui.families.proactbench.events import Planned, RecordedTurn, TriggerJudged, TriggerOpened
from proactive_tui.families.proactbench.settings import ProactBenchSettings

SAMPLE_UID = "BP_PROFESSIONAL_01_Q__style4__531a542ff1714bb080d8f06f3cd2daff"
ENV_ID = f"proactbench/{SAMPLE_UID}"
AGENT_MODEL = "openai/agent-under-test"
JUDGE_MODEL = "openai/judge-model"
PLANNER_MODEL = "openai/planner-model"
USER_AGENT_MODEL = "openai/user-agent-model"
OFFLINE_SESSION = "pbexport0001"
ONLINE_SESSION = "pbexport0002"

AGENT_USAGE = UsageInfo(prompt_tokens=100, completion_tokens=20, total_tokens=120)
JUDGE_USAGE = UsageInfo(prompt_tokens=300, completion_tokens=40, total_tokens=340)
PLANNER_USAGE = UsageInfo(prompt_tokens=500, completion_tokens=60, total_tokens=560)
USER_AGENT_USAGE = UsageInfo(prompt_tokens=200, completion_tokens=30, total_tokens=230)

OFFLINE_VERDICTS: tuple[str | None, ...] = ("PASS", "PARTIAL", "FAIL", None)
"""The offline session's verdict per trigger, in order; None: the judge call failed."""
JUDGE_FAILURE = "judge-model: no valid verdict after 3 replies"


def sample_env() -> ProactBenchEnv:
    """The sample dialogue as `--envs` loads it (package data, never ../shared)."""
    from proactive_tui.envs import load_paths
    from proactive_tui.families.proactbench import family

    env = load_paths(family.sample_sources()).get(ENV_ID)
    assert env is not None, f"{ENV_ID} is not among the shipped samples"
    return env


def reply_text(turn: int) -> str:
    """The agent's (made-up, recognisable) reply at a turn: quoted in the verdicts' evidence."""
    return f"Agent reply at turn {turn}: before you wipe it, also image the drive <b>[not markup]</b>."


def _ts(n: int) -> str:
    return f"2026-01-02T03:{n // 60:02d}:{n % 60:02d}.000+00:00"


class _Log:
    """Stamps `seq` and `ts` as a session does, so the folded record has times."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def add(self, event: Any) -> None:
        event.seq = len(self.events)
        event.ts = _ts(len(self.events))
        self.events.append(event)

    def message(self, role: str, turn: int, content: str, model: str, usage: UsageInfo) -> None:
        n = len(self.events)
        self.add(MessageDone(message=MessageRecord(
            id=f"m{n}", role=role, content=content, turn=turn, started_at=_ts(n), finished_at=_ts(n), model=model,
            usage=usage)))


def _verdict(score: str, turn: int) -> EvaluationResult:
    return EvaluationResult(status="EVALUATED", score=score, rationale=f"{score.title()}: judged against the rubric of turn {turn}.",
                            evidence=reply_text(turn)[:40])


def offline_events(session_id: str = OFFLINE_SESSION, verdicts: tuple[str | None, ...] = OFFLINE_VERDICTS) -> list[Any]:
    """An offline session of the sample dialogue: recorded turns, then at each trigger the rubric,
    the agent's reply and the judge's verdict (None: a failed judge call, SKIPPED)."""
    env = sample_env()
    d = env.dialogue
    log = _Log()
    log.add(SessionStarted(
        session_id=session_id, family="proactbench", env_id=env.id, environment=env.model_dump(mode="json"),
        mode="watch", seats={"agent": SeatInfo(kind="llm", label=AGENT_MODEL), "judge": SeatInfo(kind="llm", label=JUDGE_MODEL)},
        settings=ProactBenchSettings().model_dump(), prompt_version="proactbench-test", app_version="0.0.0",
        models={"agent": {"model": AGENT_MODEL, "temperature": 0.7}, "judge": {"model": JUDGE_MODEL, "temperature": 0.7}},
    ))
    recorded: set[int] = set()
    for index, (trigger, verdict) in enumerate(zip(env.triggers, verdicts), 1):
        for record in sorted(d.turn_records, key=lambda t: t.turn):
            if record.turn < trigger.turn and record.turn not in recorded:
                recorded.add(record.turn)
                log.add(RecordedTurn(turn=record.turn, user_message=record.user_message,
                                     assistant_response=record.assistant_response, model=d.evaluated_model))
        at = d.turn(trigger.turn)
        log.add(TriggerOpened(index=index, turn=trigger.turn, rubric=trigger.evaluation_rubric,
                              user_message=at.user_message, original_response=at.assistant_response))
        log.message("agent", trigger.turn, reply_text(trigger.turn), AGENT_MODEL, AGENT_USAGE)
        if verdict is None:
            log.add(ErrorRaised(seat="judge", message=JUDGE_FAILURE, purpose="trigger verdict", judgement=True))
            log.add(TriggerJudged(index=index, turn=trigger.turn, response=reply_text(trigger.turn), result=None,
                                  judge=JUDGE_MODEL, problem=JUDGE_FAILURE))
        else:
            log.add(UsageRecorded(seat="judge", model=JUDGE_MODEL, purpose="trigger verdict", usage=JUDGE_USAGE))
            log.add(TriggerJudged(index=index, turn=trigger.turn, response=reply_text(trigger.turn),
                                  result=_verdict(verdict, trigger.turn), judge=JUDGE_MODEL))
    log.add(SessionEnded(reason="completed"))
    return log.events


ONLINE_TRIGGERS = {1: "EMERGENT", 3: "RECOVERY"}
"""Online: the turns the planner declares trigger points, and their types."""


def _rubric(kind: str, turn: int) -> Rubric:
    return Rubric(type=kind, pass_criteria=f"turn {turn}: acts on the unstated need",
                  partial_criteria=f"turn {turn}: shows awareness only", fail_criteria=f"turn {turn}: purely reactive")


def online_plan(turn: int) -> PlannerOutput:
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


def user_text(turn: int) -> str:
    return f"User message of turn {turn}, as the user agent wrote it."


def online_events(session_id: str = ONLINE_SESSION) -> list[Any]:
    """A three-turn online session (planner in the judge seat, user agent in the user seat)."""
    env = sample_env()
    log = _Log()
    log.add(SessionStarted(
        session_id=session_id, family="proactbench", env_id=env.id, environment=env.model_dump(mode="json"),
        mode="watch",
        seats={"agent": SeatInfo(kind="llm", label=AGENT_MODEL), "user": SeatInfo(kind="llm", label=USER_AGENT_MODEL),
               "judge": SeatInfo(kind="llm", label=PLANNER_MODEL)},
        settings=ProactBenchSettings(protocol="online", max_turns=3).model_dump(), prompt_version="proactbench-test",
        app_version="0.0.0",
        models={"agent": {"model": AGENT_MODEL, "temperature": 0.7}, "user": {"model": USER_AGENT_MODEL, "temperature": 0.7},
                "judge": {"model": PLANNER_MODEL, "temperature": 0.1}},
    ))
    pending: tuple[int, int] | None = None  # (index, turn) of the trigger awaiting its score
    index = 0
    for turn in (1, 2, 3):
        plan = online_plan(turn)
        log.add(UsageRecorded(seat="judge", model=PLANNER_MODEL, purpose="plan", usage=PLANNER_USAGE))
        log.add(Planned(turn=turn, plan=plan, model=PLANNER_MODEL))
        log.message("user", turn, user_text(turn), USER_AGENT_MODEL, USER_AGENT_USAGE)
        if pending is not None:  # as upstream: the user agent's call of this turn scored the pending trigger
            log.add(TriggerJudged(index=pending[0], turn=pending[1], response=reply_text(pending[1]),
                                  result=_verdict("PARTIAL", pending[1]), judge=USER_AGENT_MODEL, judged_by="user_agent"))
            pending = None
        if plan.is_trigger_point:
            index += 1
            log.add(TriggerOpened(index=index, turn=turn, rubric=plan.evaluation_rubric))
        log.message("agent", turn, reply_text(turn), AGENT_MODEL, AGENT_USAGE)
        if plan.is_trigger_point:
            pending = (index, turn)
    assert pending is not None
    problem = "user-agent-model: the score-only call failed"
    log.add(ErrorRaised(seat="user", message=problem, purpose="trigger score", judgement=True))
    log.add(TriggerJudged(index=pending[0], turn=pending[1], response=reply_text(pending[1]), result=None,
                          judge=USER_AGENT_MODEL, judged_by="user_agent", problem=problem))
    log.add(SessionEnded(reason="completed"))
    return log.events
