"""ProactiveBench session: after every observed event the agent proposes help (or null), the user judges.

Rules from docs/protocols.md#proactivebench, following upstream's evaluation (thunlp/ProactiveAgent
`eval/script.py`, `eval/judge_agent_prediction.py`, `eval/calculate_agent_performance.py`,
Apache-2.0) unless a setting says otherwise:

- One agent call per event, with no window. The newest event is wrapped with upstream's
  instruction (`prompts.event_message`); every earlier event is its plain `{"Time", "Event"}`
  JSON and every earlier reply is `json.dumps` of the reply as parsed. Only `Proactive Task` is
  read (`judges.read_agent_reply`); missing, null or "null" means no proposal, any other value is
  a proposal (upstream's `extrat_pred`). A reply with no JSON object, or with none of the expected
  keys, is an agent format error: asked again, then the event is not counted and the record,
  report and screen say why (`ProposalMetricsUpdated.format_error`), never read as "stayed quiet".
- The `user` seat judges each proposed task (a null proposal included: accepting null = "no help
  was needed") from upstream's reward-model input, byte for byte (`prompts.reward_messages`), so
  the paper's fine-tuned reward model can sit in it. The user is a model or a person who accepts,
  rejects or skips.
- Counting is per (task, verdict) pair, as upstream's `calculate_scores`.

Settings, each recorded in the run record:

- `feedback` (off): the paper's ablation. On, the agent's history carries the user's verdict on
  its previous reply (a note before the next event) and its retry exchanges.
- `retries` (0): after a rejection the agent may answer the same event again, told it was
  rejected and why, up to N times (upstream's gym re-asks on reward-model rejection); the event is
  scored on its last attempt.
- `candidates` (1): or 3 (the agent proposes up to three tasks; each is judged and counted).
- `max_events`: stop after the first N events (quick looks, the offline demo model).
- `agent_temperature`: upstream's 0.5 unless the user chose one (`build_proactivebench_session`).

Each event ends with ProposalMetricsUpdated carrying the running confusion and six metrics, so a
viewer never recomputes them.
"""

from __future__ import annotations

from proactive_tui.core.family import EnginePart

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel

from proactive_tui import __version__
from proactive_tui.families.proactivebench import prompts
from proactive_tui.core.events import AwaitingHuman, ErrorRaised, Retrying, SessionStarted, UsageRecorded
from proactive_tui.families.proactivebench.calls import ask
from proactive_tui.families.proactivebench.events import ObservationShown, ProposalMade, ProposalMetricsUpdated, ProposalVerdict
from proactive_tui.families.proactivebench.judges import (
    HUMAN_CHOICES, AgentReading, CandidatesReply, HumanVerdict, JudgeVerdict, ProposalReply,
    parse_verdict_text, read_agent_reply, read_verdict,
)
from proactive_tui.families.proactivebench.metrics import Confusion, EventJudgement, Judgement, add_judgement, metrics
from proactive_tui.core.participants import Participant, ReplyRequest, UserStopped, failed_seat
from proactive_tui.core.replay import is_replaying, wrap_seats
from proactive_tui.core.run_record import RunRecord
from proactive_tui.core.session import SessionBase
from proactive_tui.families.proactivebench.resume import complete_events, recorded_answers
from proactive_tui.families.proactivebench.settings import AGENT_TEMPERATURE, ProactiveBenchSettings
from proactive_tui.families.proactivebench.env import ProactiveBenchEnv
from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.jsonreply import NoJSON, extract_json

if TYPE_CHECKING:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.settings import Role


class ProactiveBenchSeats(BaseModel):
    """The agent proposes; the user (a reward-model judge or a person) accepts or rejects."""

    model_config = {"arbitrary_types_allowed": True}

    agent: Any
    user: Any

    def get(self, seat: str) -> Participant:
        participant: Participant = getattr(self, seat)
        return participant


SEATS = ("agent", "user")


def parse_agent_text(text: str, candidates: int = 1) -> ProposalReply | CandidatesReply:
    """A person in the agent seat: the JSON reply, or just the task on one line ("null" or "-" for
    none, as the prompt says). A JSON object is read as a model's is, so one with none of the
    expected keys is refused (ValueError: the person is asked again)."""
    schema = CandidatesReply if candidates > 1 else ProposalReply
    try:
        data = extract_json(text)
    except (NoJSON, ValueError):
        data = None
    if isinstance(data, dict):
        return schema.model_validate(data)
    line = text.strip()
    if not line:
        raise ValueError("type the task you offer, or null (or -) to offer nothing")
    none = line.lower() == "null" or line == "-"
    tasks: Any = None if none else ([t.strip() for t in line.split("|") if t.strip()][:3] if candidates > 1 else line)
    return schema.model_validate({"Purpose": "", "Thoughts": "", "Proactive Task": tasks, "Response": None if none else line})


@dataclass
class _Judged:
    candidate: int | None
    task: str | None
    verdict: Judgement
    thought: str
    edited: bool = False
    """A person's edit in a fork gave this verdict (`core.fork`): it is theirs, not the seat's."""


def _user(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


class ProactiveBenchSession(SessionBase):
    family = "proactivebench"

    def __init__(self, env: ProactiveBenchEnv, seats: ProactiveBenchSeats, settings: ProactiveBenchSettings | None = None,
                 session_id: str | None = None, models: dict[str, dict[str, Any]] | None = None,
                 resume_from: RunRecord | None = None) -> None:
        """`resume_from`: the run record of an interrupted session of this trace. Its complete
        events are played again from their recorded replies (`resume.recorded_answers`, through
        `core.replay.ReplaySeat`: nobody is asked again), which rebuilds the agent's history and
        the counts exactly, and the session goes on live from the first event left incomplete."""
        super().__init__(session_id)
        self.env = env
        self.resume_from = resume_from
        if resume_from is not None:
            seats = ProactiveBenchSeats(**wrap_seats({s: seats.get(s) for s in SEATS}, recorded_answers(resume_from)))
        self.seats = seats
        self.settings = settings or ProactiveBenchSettings()
        self.models = models or {}
        self.history: list[dict[str, str]] = []
        """The agent's conversation so far (system prompt excluded): the events before the current
        one as plain `{"Time", "Event"}` JSON, each followed by the agent's reply as parsed."""
        self.confusion = Confusion()
        self._last_feedback: str | None = None

    @property
    def schema(self) -> type[ProposalReply] | type[CandidatesReply]:
        return CandidatesReply if self.settings.candidates > 1 else ProposalReply

    @property
    def events_to_run(self) -> int:
        n = len(self.env.events)
        return min(n, self.settings.max_events) if self.settings.max_events else n

    def _retry_cb(self, seat: Role) -> Callable[[Any], None]:
        def callback(notice: Any) -> None:
            self.emit(Retrying(seat=seat, model=notice.model, attempt=notice.attempt,
                               max_attempts=notice.max_attempts, wait_s=notice.wait_s, reason=notice.reason))
        return callback

    # -- the agent ------------------------------------------------------------------------------

    async def _propose(self, index: int, attempt: int, convo: list[dict[str, str]]) -> AgentReading:
        agent: Participant = self.seats.agent
        if agent.info.kind == "human" and not is_replaying(agent):
            self.emit(AwaitingHuman(seat="agent", turn=index, hint=(
                "the task you offer" + (" (up to three, separated by |)" if self.settings.candidates > 1 else "")
                + ", or null to offer nothing; or the full JSON reply")))
        request = ReplyRequest(seat="agent", system=prompts.agent_system_prompt(self.settings.candidates),
                               messages=list(convo), turn=index, on_retry=self._retry_cb("agent"),
                               purpose=f"event {index} proposal")
        candidates = self.settings.candidates

        def parse(text: str) -> ProposalReply | CandidatesReply:
            try:
                return parse_agent_text(text, candidates)
            except ValueError as exc:  # ask again, and say so, so a stdin reader prompts again
                self.emit(AwaitingHuman(seat="agent", turn=index, hint=str(exc)))
                raise

        value, reply, reading = await ask(agent, request, lambda text: read_agent_reply(text, candidates), self.schema,
                                          asking_schema=self.schema.asking_schema(), parse_text=parse)
        if reading is None:  # a scripted or human seat: its typed reply is what the history holds
            reading = AgentReading(reply=value, data=value.upstream_dict())
        answer = reading.reply
        self.emit(UsageRecorded(seat="agent", model=reply.model, purpose=f"event {index} proposal", usage=reply.usage))
        self.emit(ProposalMade(index=index, attempt=attempt, purpose=answer.purpose, thoughts=answer.thoughts,
                               tasks=answer.tasks, response=answer.response, model=reply.model, usage=reply.usage,
                               raw=reply.text))
        return reading

    # -- the user-judge -------------------------------------------------------------------------

    def judge_messages(self, index: int, task: str | None) -> list[dict[str, str]]:
        """Upstream's reward-model input for event `index` (1-based) and one proposed task:
        the observation dicts of events 1..index, oldest first, and the task (None for null)."""
        observations = [e.observation.model_dump() for e in self.env.events[:index]]
        return prompts.reward_messages(observations, task)

    async def _judge_one(self, index: int, candidate: int | None, task: str | None) -> _Judged:
        user: Participant = self.seats.user
        system, *messages = self.judge_messages(index, task)
        request = ReplyRequest(seat="user", system=system["content"], messages=messages, turn=index,
                               on_retry=self._retry_cb("user"),
                               purpose=f"event {index} verdict" + (f" on candidate {candidate + 1}"
                                                                   if candidate is not None and self.settings.candidates > 1 else ""))
        if user.info.kind == "human":
            what = f"the offer {task!r}" if task is not None else "no offer (null): accept if you needed no help"
            hint = f"event {index}, {what} — {HUMAN_CHOICES}"
            if not is_replaying(user):
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
                value, reply, _ = await ask(user, request, read_verdict, JudgeVerdict)
            except ModelError as exc:
                if exc.kind != "structured":
                    raise
                self.emit(ErrorRaised(seat="user", message=f"event {index}: no usable verdict ({exc.message}); not counted",
                                      purpose="event verdict", judgement=True))
                return _Judged(candidate, task, "skipped", "")
            self.emit(UsageRecorded(seat="user", model=reply.model, purpose=f"event {index} verdict", usage=reply.usage))
        from proactive_tui.core.fork import EDITED_BY

        return _Judged(candidate, task, value.judgement, value.thought, edited=reply.model == EDITED_BY)

    async def _judge(self, index: int, attempt: int, tasks: list[str]) -> list[_Judged]:
        from proactive_tui.core.fork import EDITED_BY

        targets: list[tuple[int | None, str | None]] = list(enumerate(tasks)) if tasks else [(None, None)]
        if self.seats.user.info.kind == "human":
            judged = [await self._judge_one(index, c, t) for c, t in targets]
        else:
            judged = list(await asyncio.gather(*(self._judge_one(index, c, t) for c, t in targets)))
        user = self.seats.user.info
        for j in judged:
            by_kind: Literal["llm", "human", "scripted"]
            by, by_kind = (EDITED_BY, "human") if j.edited else (user.label, user.kind)
            self.emit(ProposalVerdict(index=index, attempt=attempt, candidate=j.candidate, task=j.task, judgement=j.verdict,
                                      thought=j.thought, by=by, by_kind=by_kind))
        return judged

    # -- one event --------------------------------------------------------------------------------

    async def _run_event(self, index: int) -> None:
        obs = self.env.events[index - 1].observation
        self.emit(ObservationShown(index=index, total=self.events_to_run, time=obs.time, event=obs.event))
        note = [_user(self._last_feedback)] if self.settings.feedback and self._last_feedback else []
        self._last_feedback = None
        plain = _user(prompts.history_event_message(obs.time, obs.event))
        convo = self.history + note + [_user(prompts.event_message(obs.time, obs.event))]
        attempt = 0
        last: tuple[AgentReading, EventJudgement, list[_Judged], list[dict[str, str]]] | None = None
        while True:
            try:
                reading = await self._propose(index, attempt, convo)
            except ModelError as exc:
                if exc.kind != "structured":
                    raise
                self.emit(ErrorRaised(seat="agent", message=f"event {index}: agent format error ({exc.message}); "
                                      + ("not counted" if last is None else "scored on the previous attempt"),
                                      purpose="proposal", judgement=False))
                if last is None:
                    # Upstream skips the event (`continue`): no reply goes into the history. The
                    # event stays there, as an earlier event: plain, only the newest is wrapped.
                    self.history = self.history + note + [plain]
                    self._finish_event(index, EventJudgement(), attempts=1,
                                       format_error=f"agent format error: {exc.message}")
                    return
                break  # score the last usable attempt
            judged = await self._judge(index, attempt, reading.reply.tasks)
            outcome = EventJudgement(tasks=reading.reply.tasks, verdicts=[j.verdict for j in judged])
            last = (reading, outcome, judged, convo)
            if outcome.judgement != "rejected" or attempt >= self.settings.retries:
                break
            reason = next((j.thought for j in judged if j.verdict == "rejected"), "")
            convo = convo + [
                {"role": "assistant", "content": prompts.reply_message(reading.data)},
                _user(prompts.retry_message(reason, had_task=bool(reading.reply.tasks))),
            ]
            attempt += 1
        reading, outcome, judged, answered = last
        final = {"role": "assistant", "content": prompts.reply_message(reading.data)}
        if self.settings.feedback:
            # the ablation keeps what the agent was told: the verdict note and the retry exchanges
            kept = list(answered)
            kept[len(self.history) + len(note)] = plain
            self.history = kept + [final]
            deciding = next((j for j in judged if j.verdict == outcome.judgement), None)
            self._last_feedback = prompts.feedback_note(outcome.judgement, deciding.thought if deciding else "",
                                                        had_task=bool(reading.reply.tasks))
        else:
            self.history = self.history + [plain, final]
        self._finish_event(index, outcome, attempts=attempt + 1)

    def _finish_event(self, index: int, judgement: EventJudgement, attempts: int, format_error: str = "") -> None:
        self.confusion = add_judgement(self.confusion, judgement)
        self.emit(ProposalMetricsUpdated(index=index, outcome=judgement.outcome, judgement=judgement.judgement,
                                         cells=judgement.cells(), attempts=attempts, confusion=self.confusion,
                                         metrics=metrics(self.confusion), format_error=format_error))

    # -- the session ------------------------------------------------------------------------------

    async def run_protocol(self) -> None:
        infos = {s: self.seats.get(s).info for s in SEATS}
        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id,
            environment=self.env.model_dump(mode="json"),
            mode="play" if any(i.kind == "human" for i in infos.values()) else "watch",
            seats=infos, settings=self.settings.model_dump(), models={s: m for s, m in self.models.items() if s in SEATS},
            prompt_version=prompts.PROMPT_VERSION, app_version=__version__,
            resumed_from=None if self.resume_from is None else {
                "session_id": self.resume_from.id, "turns": complete_events(self.resume_from)},
        ))
        total = len(self.env.events)
        reason, detail = "completed", ""
        self.gate_turn = 0
        try:
            for index in range(1, self.events_to_run + 1):
                await self.checkpoint(index)  # pause / step in the playground hold here, between events
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
            seat = failed_seat(exc)  # its user seat only judges
            self.emit(ErrorRaised(seat=seat, message=exc.message, fatal=True,
                                  judgement=None if seat is None else seat == "user"))
        self.end(reason, detail)


def build_proactivebench_session(spec: SessionSpec, env: ProactiveBenchEnv, seats: dict[str, Participant],
                                 session_id: str | None = None,
                                 resume_from: RunRecord | None = None) -> ProactiveBenchSession:
    """The factory's builder. Each model seat runs at the family's `seat_temperature`: the agent at
    the temperature the user chose (`agent_temperature`, else the agent model's own temperature
    when set in the setup screen, the config or the environment), otherwise at upstream's 0.5
    (`AGENT_TEMPERATURE`). The agent's is recorded twice: in the settings (`agent_temperature`)
    and in the agent's model settings."""
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.core.spec import seat_family_settings

    settings = ProactiveBenchSettings(**spec.settings)
    agent = seats["agent"]
    spec = seat_family_settings(spec, seats, "proactivebench")
    if isinstance(getattr(agent, "live", agent), LLMParticipant):
        settings = settings.model_copy(update={"agent_temperature": spec.roles.agent.temperature})
    return ProactiveBenchSession(env, ProactiveBenchSeats(agent=agent, user=seats["user"]), settings,
                                 session_id=session_id, models=spec.models_summary(), resume_from=resume_from)


class ProactiveBenchEngine(EnginePart):
    def default_temperature(self, seat: str) -> float | None:
        """The agent runs at upstream's 0.5 (`settings.AGENT_TEMPERATURE`) unless someone chose another."""
        return AGENT_TEMPERATURE if seat == "agent" else None

    def seat_temperature(self, seat: str, roles: Any, settings: dict[str, Any] | None = None) -> float:
        """The `agent_temperature` setting (`--agent-temperature`) wins for the agent."""
        chosen = (settings or {}).get("agent_temperature") if seat == "agent" else None
        return float(chosen) if chosen is not None else super().seat_temperature(seat, roles, settings)

    def build_session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], session_id: str | None = None) -> ProactiveBenchSession:
        return build_proactivebench_session(spec, env, seats, session_id=session_id)


ENGINE = ProactiveBenchEngine()
