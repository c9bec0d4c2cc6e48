"""ProactiveBench session: after every observed event the agent proposes help (or null), the user judges.

Rules from docs/protocols.md#proactivebench: one agent call per event; the agent sees every earlier event and its
own earlier replies (no window) and answers Purpose / Thoughts / Proactive Task / Response; the
`user` seat judges each reply, a null proposal included (accepting null = "no help was needed").
The user is a model in the reward-model role, or a person who accepts, rejects or skips.

Settings from the paper's ablations and upstream's gym, each recorded in the run record:

- `retries`: after a rejection the agent may answer the same event again, told it was rejected
  and why, up to N times (upstream's gym re-asks on reward-model rejection); the event is scored
  on its last attempt.
- `candidates`: 1, or 3 (the agent proposes up to three tasks; each is judged, and the event
  counts as accepted when the user accepts any one).
- `feedback`: the agent's history carries the user's verdict on its previous reply (accepted,
  rejected or ignored) and its retry exchanges; off, it sees only its own final replies.
- `max_events`: stop after the first N events (quick looks, the offline demo model).

Each event ends with ProposalMetricsUpdated carrying the running confusion and six metrics, so a
viewer never recomputes them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from proactive_tui import __version__
from proactive_tui.families.proactivebench import prompts
from proactive_tui.core.events import AwaitingHuman, ErrorRaised, Retrying, SessionStarted, UsageRecorded
from proactive_tui.families.proactivebench.events import ObservationShown, ProposalMade, ProposalMetricsUpdated, ProposalVerdict
from proactive_tui.families.proactivebench.judges import (
    HUMAN_CHOICES, CandidatesReply, HumanVerdict, JudgeVerdict, ProposalReply, is_nullish, parse_verdict_text,
)
from proactive_tui.families.proactivebench.metrics import Confusion, EventJudgement, Judgement, add_judgement, metrics
from proactive_tui.core.participants import Participant, ReplyRequest, UserStopped
from proactive_tui.core.session import SessionBase
from proactive_tui.families.proactivebench.settings import ProactiveBenchSettings
from proactive_tui.families.proactivebench.env import ProactiveBenchEnv
from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.jsonreply import NoJSON, extract_json



class ProactiveBenchSeats(BaseModel):
    """The agent proposes; the user (a reward-model judge or a person) accepts or rejects."""

    model_config = {"arbitrary_types_allowed": True}

    agent: Any
    user: Any

    def get(self, seat: str) -> Participant:
        return getattr(self, seat)


SEATS = ("agent", "user")


def parse_agent_text(text: str, candidates: int = 1) -> ProposalReply | CandidatesReply:
    """A person in the agent seat: the JSON reply, or just the task on one line ("null" or "-" for none)."""
    schema = CandidatesReply if candidates > 1 else ProposalReply
    try:
        return schema.model_validate(extract_json(text))
    except (NoJSON, ValueError):
        pass
    line = text.strip()
    if not line:
        raise ValueError("type the task you offer, or null (or -) to offer nothing")
    none = is_nullish(line) or line == "-"
    tasks: Any = None if none else ([t.strip() for t in line.split("|") if t.strip()][:3] if candidates > 1 else line)
    return schema.model_validate({"Purpose": "", "Thoughts": "", "Proactive Task": tasks, "Response": None if none else line})


@dataclass
class _Judged:
    candidate: int | None
    task: str | None
    verdict: Judgement
    thought: str


class ProactiveBenchSession(SessionBase):
    family = "proactivebench"

    def __init__(self, env: ProactiveBenchEnv, seats: ProactiveBenchSeats, settings: ProactiveBenchSettings | None = None,
                 session_id: str | None = None, models: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(session_id)
        self.env = env
        self.seats = seats
        self.settings = settings or ProactiveBenchSettings()
        self.models = models or {}
        self.history: list[dict[str, str]] = []
        """The agent's conversation so far (system prompt excluded)."""
        self.confusion = Confusion()
        self._unanswered: list[str] = []
        self._last_feedback: str | None = None

    @property
    def schema(self) -> type[ProposalReply] | type[CandidatesReply]:
        return CandidatesReply if self.settings.candidates > 1 else ProposalReply

    @property
    def events_to_run(self) -> int:
        n = len(self.env.events)
        return min(n, self.settings.max_events) if self.settings.max_events else n

    def _retry_cb(self, seat: str):
        def callback(notice: Any) -> None:
            self.emit(Retrying(seat=seat, model=notice.model, attempt=notice.attempt,
                               max_attempts=notice.max_attempts, wait_s=notice.wait_s, reason=notice.reason))
        return callback

    # -- the agent ------------------------------------------------------------------------------

    async def _propose(self, index: int, attempt: int, convo: list[dict[str, str]]):
        agent: Participant = self.seats.agent
        if agent.info.kind == "human":
            self.emit(AwaitingHuman(seat="agent", turn=index, hint=(
                "the task you offer" + (" (up to three, separated by |)" if self.settings.candidates > 1 else "")
                + ", or null to offer nothing; or the full JSON reply")))
        request = ReplyRequest(seat="agent", system=prompts.agent_system_prompt(self.settings.candidates),
                               messages=list(convo), turn=index, on_retry=self._retry_cb("agent"))

        def parse(text: str) -> ProposalReply | CandidatesReply:
            try:
                return parse_agent_text(text, self.settings.candidates)
            except ValueError as exc:  # ask again, and say so, so a stdin reader prompts again
                self.emit(AwaitingHuman(seat="agent", turn=index, hint=str(exc)))
                raise

        value, reply = await agent.reply_structured(request, self.schema, parse)
        self.emit(UsageRecorded(seat="agent", model=reply.model, purpose=f"event {index} proposal", usage=reply.usage))
        self.emit(ProposalMade(index=index, attempt=attempt, purpose=value.purpose, thoughts=value.thoughts,
                               tasks=value.tasks, response=value.response, model=reply.model, usage=reply.usage,
                               raw=reply.text))
        return value

    # -- the user-judge -------------------------------------------------------------------------

    async def _judge_one(self, index: int, candidate: int | None, task: str | None) -> _Judged:
        user: Participant = self.seats.user
        observations = [(e.observation.time, e.observation.event) for e in self.env.events[:index]]
        request = ReplyRequest(seat="user", system=prompts.JUDGE_SYSTEM,
                               messages=[{"role": "user", "content": prompts.judge_prompt(observations, task)}],
                               turn=index, on_retry=self._retry_cb("user"))
        if user.info.kind == "human":
            what = f"the offer {task!r}" if task else "no offer (null): accept if you needed no help"
            hint = f"event {index}, {what} — {HUMAN_CHOICES}"
            self.emit(AwaitingHuman(seat="user", turn=index, hint=hint))

            def parse(text: str) -> HumanVerdict:
                try:
                    return parse_verdict_text(text)
                except ValueError as exc:  # ask again, and say so, so a stdin reader prompts again
                    self.emit(AwaitingHuman(seat="user", turn=index, hint=f"{exc}"))
                    raise

            value, reply = await user.reply_structured(request, HumanVerdict, parse)
        else:
            try:
                value, reply = await user.reply_structured(request, JudgeVerdict)
            except ModelError as exc:
                if exc.kind != "structured":
                    raise
                self.emit(ErrorRaised(seat="user", message=f"event {index}: no usable verdict ({exc.message}); not counted"))
                return _Judged(candidate, task, "skipped", "")
            self.emit(UsageRecorded(seat="user", model=reply.model, purpose=f"event {index} verdict", usage=reply.usage))
        return _Judged(candidate, task, value.judgement, value.thought)

    async def _judge(self, index: int, attempt: int, tasks: list[str]) -> list[_Judged]:
        targets: list[tuple[int | None, str | None]] = list(enumerate(tasks)) if tasks else [(None, None)]
        if self.seats.user.info.kind == "human":
            judged = [await self._judge_one(index, c, t) for c, t in targets]
        else:
            judged = list(await asyncio.gather(*(self._judge_one(index, c, t) for c, t in targets)))
        user = self.seats.user.info
        for j in judged:
            self.emit(ProposalVerdict(index=index, attempt=attempt, candidate=j.candidate, task=j.task, judgement=j.verdict,
                                      thought=j.thought, by=user.label, by_kind=user.kind))
        return judged

    # -- one event --------------------------------------------------------------------------------

    async def _run_event(self, index: int) -> None:
        obs = self.env.events[index - 1].observation
        self.emit(ObservationShown(index=index, total=self.events_to_run, time=obs.time, event=obs.event))
        feedback = self._last_feedback if self.settings.feedback else None
        fresh = prompts.event_message(index, obs.time, obs.event, feedback)
        user_msg = "\n\n".join(self._unanswered + [fresh])
        convo = self.history + [{"role": "user", "content": user_msg}]
        attempt = 0
        while True:
            try:
                reply = await self._propose(index, attempt, convo)
            except ModelError as exc:
                if exc.kind != "structured":
                    raise
                self.emit(ErrorRaised(seat="agent", message=f"event {index}: no usable reply ({exc.message}); "
                                      + ("not counted" if attempt == 0 else "scored on the previous attempt")))
                if attempt == 0:
                    self._unanswered.append(prompts.event_message(index, obs.time, obs.event))
                    self._finish_event(index, EventJudgement(), attempts=1)
                    return
                break  # score the last usable attempt
            judged = await self._judge(index, attempt, reply.tasks)
            outcome = EventJudgement(tasks=reply.tasks, verdicts=[j.verdict for j in judged])
            last_reply, last_outcome, last_judged, answered = reply, outcome, judged, convo
            if outcome.judgement != "rejected" or attempt >= self.settings.retries:
                break
            reason = next((j.thought for j in judged if j.verdict == "rejected"), "")
            convo = convo + [
                {"role": "assistant", "content": json.dumps(reply.upstream_dict(), ensure_ascii=False)},
                {"role": "user", "content": prompts.retry_message(reason, had_task=bool(reply.tasks))},
            ]
            attempt += 1
        final = json.dumps(last_reply.upstream_dict(), ensure_ascii=False)
        if self.settings.feedback:
            self.history = answered + [{"role": "assistant", "content": final}]
        else:
            plain_msg = "\n\n".join(self._unanswered + [prompts.event_message(index, obs.time, obs.event)])
            self.history = self.history + [{"role": "user", "content": plain_msg}, {"role": "assistant", "content": final}]
        self._unanswered = []
        deciding = next((j for j in last_judged if j.verdict == last_outcome.judgement), None)
        self._last_feedback = prompts.feedback_note(last_outcome.judgement, deciding.thought if deciding else "",
                                                    had_task=bool(last_reply.tasks))
        self._finish_event(index, last_outcome, attempts=attempt + 1)

    def _finish_event(self, index: int, judgement: EventJudgement, attempts: int) -> None:
        self.confusion = add_judgement(self.confusion, judgement)
        self.emit(ProposalMetricsUpdated(index=index, outcome=judgement.outcome, judgement=judgement.judgement,
                                         attempts=attempts, confusion=self.confusion, metrics=metrics(self.confusion)))

    # -- the session ------------------------------------------------------------------------------

    async def run_protocol(self) -> None:
        infos = {s: self.seats.get(s).info for s in SEATS}
        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id,
            environment=self.env.model_dump(mode="json"),
            mode="play" if any(i.kind == "human" for i in infos.values()) else "watch",
            seats=infos, settings=self.settings.model_dump(), models={s: m for s, m in self.models.items() if s in SEATS},
            prompt_version=prompts.PROMPT_VERSION, app_version=__version__,
        ))
        total = len(self.env.events)
        reason, detail = "completed", ""
        try:
            for index in range(1, self.events_to_run + 1):
                await self.checkpoint()  # pause / step in the playground hold here, between events
                await self._run_event(index)
            if self.events_to_run < total:
                detail = f"stopped after {self.events_to_run} of {total} events (max_events)"
        except asyncio.CancelledError:
            reason = "cancelled"
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except UserStopped:
            reason = "user_stopped"
        except ModelError as exc:
            reason, detail = "error", exc.message
            self.emit(ErrorRaised(seat=None, message=exc.message, fatal=True))
        self.end(reason, detail)
