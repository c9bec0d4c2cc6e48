"""ProactBench sessions: the offline protocol (the default) and the online three-role loop.

Rules from the kit's PROTOCOL.md (upstream's `proactbench/evaluation/offline.py` and `online.py`,
read by the kit's author and summarised in our words), and the family's settings:

Offline (upstream's offline evaluation, how models are scored on the released dialogues). For
each trigger point in turn order (the first `max_triggers` when set):

- the turns before the trigger turn stay as recorded, with the curation model's replies
  (`proactbench.recorded_turn`, once each); earlier trigger turns are in the context with their
  ORIGINAL reply too (`trigger_opened.original_response`), never the agent's, so every trigger is
  scored independently of the others, as upstream;
- `proactbench.trigger_opened`: the rubric (fixed before the answer), the recorded user message
  and the curation model's reply there;
- the agent (the seat under test) writes its reply to that context, streamed as the common
  message events; it sees only the chat, and no system message unless one is set;
- the judge seat rates the reply against the rubric in neutral mode (no persona, no style):
  `proactbench.trigger_judged` with PASS / PARTIAL / FAIL, a rationale and an evidence quote that
  is checked against the reply (`evidence_in_reply`).

A failed or unusable judge call, or an agent call that failed or gave an empty reply, still ends
in a `trigger_judged` event, with no result and a one-line `problem`: the trigger is SKIPPED,
kept in the record and never counted as a score. A trigger turn with no recorded user message is
left out, as upstream leaves it out (a warning says so). Setup failures (no key, unknown model,
unreachable server) end the session instead: every further call would fail the same way.

Online (setting `protocol="online"`, a labelled deviation). Per turn, up to `max_turns`:

1. the Planner (the judge seat, upstream's temperature 0.1) plans the turn (`proactbench.planned`):
   whether this turn is a trigger point and its rubric (refused once six exist, as upstream's
   validation refuses it), whether to stop, and a tactical order for the user;
2. the User Agent (the user seat, 0.7) writes the user's message following the order and, when
   the previous turn was a trigger, first scores that reply (as upstream, the score of turn t
   comes with the user's message of turn t+1); a person in the user seat gets the order as their
   brief and gives the verdict themselves (`judged_by="person"`);
3. the agent answers the whole chat so far.
The Planner saying stop on a non-trigger turn ends before the user speaks; on a trigger turn,
after the agent's reply. A trigger still pending at the end is scored by a score-only call to
the user seat. A failed Planner, User Agent or agent call stops the dialogue (upstream's rule);
the pending trigger is still scored, and the session ends in error.

Every call names what it is for (`purpose`) with the dialogue turn it belongs to (`turn N plan`,
`turn N user message`, `turn N agent reply`, `verdict on turn N`): forks place events by it
(`fork.Sides`) and a replayed seat matches its recorded answers by (seat, turn).
"""

from __future__ import annotations

from proactive_tui.core.family import EnginePart, UnsupportedFamily

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel

from proactive_tui import __version__
from proactive_tui.core.events import (
    AwaitingHuman, ChatMessage, ErrorRaised, MessageDelta, MessageDiscarded, MessageDone, MessageRecord, MessageStarted,
    Retrying, Seat, SessionStarted, UsageInfo, UsageRecorded, now_iso,
)
from proactive_tui.core.participants import Participant, ReplyRequest, UserStopped, failed_seat
from proactive_tui.core.replay import is_replaying, next_writer
from proactive_tui.core.session import SessionBase
from proactive_tui.core.writers import by_person
from proactive_tui.families.proactbench import prompts
from proactive_tui.families.proactbench.env import MAX_TRIGGERS, PlannerOutput, ProactBenchEnv, Rubric, TriggerPoint
from proactive_tui.families.proactbench.events import JudgedBy, Planned, RecordedTurn, TriggerJudged, TriggerOpened
from proactive_tui.families.proactbench.judges import (
    PERSON_HINT, JudgeVerdict, UserTurnScoring, evidence_found, parse_person_verdict, planner_schema, user_agent_schema,
)
from proactive_tui.families.proactbench.settings import (
    AGENT_MAX_TOKENS, AGENT_TEMPERATURE, JUDGE_TEMPERATURE, PLANNER_TEMPERATURE, USER_AGENT_TEMPERATURE, ProactBenchSettings,
)
from proactive_tui.llm.errors import ModelError

if TYPE_CHECKING:
    from proactive_tui.core.spec import SessionSpec

SEATS: tuple[Seat, ...] = ("agent", "user", "judge")
SETUP_FAILURES = frozenset({"missing_key", "unknown_model", "unknown_provider", "no_api", "unreachable", "auth"})
"""Model errors that every further call would repeat: they end the session rather than skip one
trigger after another."""


class EmptyReply(Exception):
    """The agent's reply had no text: it is never scored as a real reply."""


class ProactBenchSeats(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    agent: Any
    user: Any = None
    judge: Any = None

    def get(self, seat: Seat) -> Participant:
        """A seat the protocol asks (offline the user seat may be empty: it is never asked)."""
        participant: Participant = getattr(self, seat)
        return participant

    @property
    def present(self) -> dict[str, Participant]:
        """The seats that are filled, in `SEATS` order."""
        return {s: p for s in SEATS if (p := getattr(self, s)) is not None}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def persona_of(env: ProactBenchEnv) -> tuple[str, str]:
    """(persona, communication style) for the online roles: the dialogue's own fields when a row
    carries them (the release keeps only the persona's uuid and a style index), else "(not provided)"."""
    extra = env.dialogue.model_extra or {}
    persona = next((str(extra[k]) for k in ("persona", "persona_text", "user_persona") if isinstance(extra.get(k), str)
                    and extra[k].strip()), prompts.NOT_PROVIDED)
    style = next((str(extra[k]) for k in ("communication_style", "style", "style_description")
                  if isinstance(extra.get(k), str) and extra[k].strip()), prompts.NOT_PROVIDED)
    return persona, style


def blueprint_of(env: ProactBenchEnv) -> dict[str, Any]:
    """The online Planner's blueprint: the release does not include the blueprints, so their
    stand-in is the dialogue's recorded anchors (what the recorded Planner told the user to reveal)."""
    d = env.dialogue
    return {"blueprint_id": d.blueprint_id, "scenario_id": d.scenario_id, "category": d.category_key,
            "anchors": env.anchors()}


class ProactBenchSession(SessionBase):
    family = "proactbench"

    def __init__(self, env: ProactBenchEnv, seats: ProactBenchSeats, settings: ProactBenchSettings | None = None,
                 session_id: str | None = None, models: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__(session_id)
        self.env = env
        self.seats = seats
        self.settings = settings or ProactBenchSettings()
        self.models = models or {}
        self._awaiting: tuple[int, int, Rubric, list[tuple[str, str]], str, str] | None = None
        """Offline: the trigger whose reply is written and not yet judged (index, turn, rubric,
        earlier turns, user message, reply), for "stop and score"."""
        self._pending: tuple[int, int, Rubric, str] | None = None
        """Online: the trigger whose reply waits for the User Agent's score (index, turn, rubric, reply)."""
        self._turns: list[tuple[str, str]] = []
        """Online: the finished turns (user message, agent reply)."""

    @property
    def offline(self) -> bool:
        return self.settings.protocol == "offline"

    def triggers_to_run(self) -> list[TriggerPoint]:
        triggers = self.env.triggers
        return triggers[: self.settings.max_triggers] if self.settings.max_triggers else triggers

    def _retry_cb(self, seat: Seat) -> Callable[[Any], None]:
        def callback(notice: Any) -> None:
            self.emit(Retrying(seat=seat, model=notice.model, attempt=notice.attempt,
                               max_attempts=notice.max_attempts, wait_s=notice.wait_s, reason=notice.reason))
        return callback

    def _person_parser(self, seat: Seat, turn: int) -> Callable[[str], JudgeVerdict]:
        """A person's typed verdict read by `parse_person_verdict`; a line that is not one is asked
        for again, and said (a new AwaitingHuman, so a stdin reader prompts again)."""
        def parse(text: str) -> JudgeVerdict:
            try:
                return parse_person_verdict(text)
            except ValueError as exc:
                self.emit(AwaitingHuman(seat=seat, turn=turn, hint=str(exc)))
                raise
        return parse

    def _human(self, seat: Seat) -> bool:
        participant = self.seats.get(seat)
        return participant is not None and participant.info.kind == "human"

    # -- the agent -------------------------------------------------------------------------------

    async def _agent_reply(self, turn: int, messages: list[dict[str, str]]) -> MessageRecord:
        """The agent's reply to `messages` (the chat, its last line the user's message of `turn`),
        streamed as the common message events. Raises ModelError (after keeping any partial text
        as a partial message) or EmptyReply (the message is retracted: an empty reply is not one)."""
        participant: Participant = self.seats.agent
        human = participant.info.kind == "human"
        if human and not is_replaying(participant):
            self.emit(AwaitingHuman(seat="agent", turn=turn, hint="your reply as the assistant"))
        if not human and not is_replaying(participant):
            await participant.start("agent")  # an agent program: its name and version for the line below
        message_id = f"agent-{turn}-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        parts: list[str] = []

        def on_delta(text: str) -> None:
            if text:
                parts.append(text)
                self.emit(MessageDelta(message_id=message_id, text=text))

        def record(content: str, partial: bool, usage: UsageInfo | None = None, model: str | None = None) -> MessageRecord:
            return MessageRecord(id=message_id, role="agent", content=content, turn=turn, started_at=started,
                                 finished_at=now_iso(), model=model or participant.info.label, usage=usage or UsageInfo(),
                                 visible_context=[ChatMessage(**m) for m in messages], partial=partial)

        self.emit(MessageStarted(message_id=message_id, role="agent", turn=turn,
                                 model=next_writer(participant, "agent", turn)))
        request = ReplyRequest(seat="agent", system=self.settings.system_prompt, messages=list(messages), turn=turn,
                               on_delta=on_delta, on_retry=self._retry_cb("agent"), purpose=f"turn {turn} agent reply",
                               message_id=message_id)
        while True:
            try:
                reply = await participant.reply(request)
            except asyncio.CancelledError:
                if parts:
                    self.emit(MessageDone(message=record("".join(parts), partial=True)))
                raise
            except ModelError as exc:
                partial = "".join(parts) or exc.partial_text
                if partial:
                    self.emit(MessageDone(message=record(partial, partial=True)))
                raise
            if reply.text.strip():
                break
            if human and not is_replaying(participant):  # a person is asked again
                self.emit(AwaitingHuman(seat="agent", turn=turn, hint="an empty reply cannot be scored: write your reply"))
                continue
            self.emit(MessageDiscarded(message_id=message_id, reason="the agent's reply was empty"))
            raise EmptyReply(f"{reply.model}: the reply was empty")
        message = record(reply.text, partial=False, usage=reply.usage, model=reply.model)
        self.emit(MessageDone(message=message))
        return message

    # -- verdicts ---------------------------------------------------------------------------------

    def _judged(self, index: int, turn: int, response: str, verdict: JudgeVerdict | None, writer: str,
                judged_by: JudgedBy, problem: str = "") -> None:
        """Emit the verdict on trigger `index`: a result (its evidence checked against the reply),
        or none with the one-line `problem` (SKIPPED)."""
        if verdict is None:
            self.emit(TriggerJudged(index=index, turn=turn, response=response, result=None, judge=writer,
                                    judged_by=judged_by, problem=_one_line(problem)))
            return
        person = by_person(writer) or judged_by == "person"
        check = None if person and not verdict.evidence.strip() else evidence_found(verdict.evidence, response)
        self.emit(TriggerJudged(index=index, turn=turn, response=response, result=verdict.to_result(), judge=writer,
                                judged_by="person" if person else judged_by,
                                evidence_in_reply=check))

    async def _verdict(self, seat: Seat, index: int, turn: int, system: str, message: str, response: str,
                       judged_by: JudgedBy, request_turn: int | None = None) -> bool:
        """One verdict asked of `seat` alone (the offline judge; online, the score-only call):
        emits `trigger_judged` either way. Returns False when the seat failed to give one."""
        participant: Participant = self.seats.get(seat)
        human = participant.info.kind == "human"
        asked_turn = turn if request_turn is None else request_turn
        purpose = f"verdict on turn {turn}"
        if human and not is_replaying(participant):
            self.emit(AwaitingHuman(seat=seat, turn=asked_turn, hint=f"score the reply at turn {turn}: {PERSON_HINT}"))
        request = ReplyRequest(seat=seat, system=system, messages=[{"role": "user", "content": message}], turn=asked_turn,
                               on_retry=self._retry_cb(seat), purpose=purpose)
        try:
            value, reply = await participant.reply_structured(
                request, JudgeVerdict, self._person_parser(seat, asked_turn) if human else None)
        except ModelError as exc:
            problem = f"no verdict: {exc.message}"
            self._judged(index, turn, response, None, participant.info.label, judged_by, problem)
            if exc.kind in SETUP_FAILURES:  # the session ends on it (run_protocol says so once)
                raise
            self.emit(ErrorRaised(seat=seat, message=f"trigger {index} (turn {turn}): {problem}; SKIPPED, not counted",
                                  purpose=purpose, judgement=True))
            return False
        self.emit(UsageRecorded(seat=seat, model=reply.model, purpose=purpose, usage=reply.usage))
        self._judged(index, turn, response, value, reply.model, judged_by)
        return True

    # -- offline -----------------------------------------------------------------------------------

    def _context(self, upto: int) -> list[tuple[str, str]]:
        """The recorded turns before turn `upto`, each with the curation model's reply."""
        return [(t.user_message, t.assistant_response) for t in sorted(self.env.dialogue.turn_records, key=lambda t: t.turn)
                if t.turn < upto]

    async def _offline(self) -> tuple[str, str]:
        dialogue = self.env.dialogue
        shown: set[int] = set()
        trigger_turns = {t.turn for t in self.env.triggers}
        run = self.triggers_to_run()
        for index, trigger in enumerate(run, 1):
            await self.checkpoint()
            turn = trigger.turn
            for record in sorted(dialogue.turn_records, key=lambda t: t.turn):
                if record.turn < turn and record.turn not in shown and record.turn not in trigger_turns:
                    shown.add(record.turn)
                    self.emit(RecordedTurn(turn=record.turn, user_message=record.user_message,
                                           assistant_response=record.assistant_response, model=dialogue.evaluated_model))
            at = dialogue.turn(turn)
            if at is None or not at.user_message.strip():  # upstream leaves such a trigger out
                self.emit(ErrorRaised(message=f"trigger {index} (turn {turn}): the dialogue has no user message at "
                                              "that turn; left out, as upstream leaves it out", purpose="trigger"))
                continue
            self.emit(TriggerOpened(index=index, turn=turn, rubric=trigger.evaluation_rubric, user_message=at.user_message,
                                    original_response=at.assistant_response))
            earlier = self._context(turn)
            messages = [m for user, assistant in earlier for m in
                        ({"role": "user", "content": user}, {"role": "assistant", "content": assistant})]
            messages.append({"role": "user", "content": at.user_message})
            try:
                reply = await self._agent_reply(turn, messages)
            except (ModelError, EmptyReply) as exc:
                text = exc.message if isinstance(exc, ModelError) else str(exc)
                self._judged(index, turn, "", None, self.seats.agent.info.label, "judge",
                             f"the agent gave no reply to score: {text}")
                if isinstance(exc, ModelError) and exc.kind in SETUP_FAILURES:
                    raise
                self.emit(ErrorRaised(seat="agent", message=f"trigger {index} (turn {turn}): the agent gave no reply "
                                      f"({text}); SKIPPED, not counted", purpose=f"turn {turn} agent reply",
                                      judgement=False))
                continue
            self._awaiting = (index, turn, trigger.evaluation_rubric, earlier, at.user_message, reply.content)
            await self._judge_awaiting()
        if len(run) < len(self.env.triggers):
            return "completed", f"scored the first {len(run)} of {len(self.env.triggers)} trigger points (max_triggers)"
        return "completed", ""

    async def _judge_awaiting(self) -> None:
        if self._awaiting is None:
            return
        index, turn, rubric, earlier, user_message, reply = self._awaiting
        await self._verdict("judge", index, turn, prompts.JUDGE_SYSTEM,
                            prompts.judge_message(rubric, earlier, user_message, reply), reply, "judge")
        self._awaiting = None

    # -- online ------------------------------------------------------------------------------------

    def _history(self) -> list[dict[str, str]]:
        return [m for user, agent in self._turns for m in
                ({"role": "user", "content": user}, {"role": "assistant", "content": agent})]

    async def _plan(self, turn: int, declared: list[dict[str, Any]]) -> PlannerOutput:
        planner: Participant = self.seats.judge
        persona, _ = persona_of(self.env)
        purpose = f"turn {turn} plan"
        if planner.info.kind == "human" and not is_replaying(planner):
            self.emit(AwaitingHuman(seat="judge", turn=turn, hint="the plan of this turn as JSON (see the planner format)"))
        request = ReplyRequest(seat="judge", system=prompts.PLANNER_SYSTEM, on_retry=self._retry_cb("judge"),
                               purpose=purpose, turn=turn, messages=[{"role": "user", "content": prompts.planner_message(
                                   persona, blueprint_of(self.env), turn, self.settings.max_turns, self._turns, declared,
                                   MAX_TRIGGERS)}])
        value, reply = await planner.reply_structured(request, planner_schema(len(declared)))
        self.emit(UsageRecorded(seat="judge", model=reply.model, purpose=purpose, usage=reply.usage))
        plan = value.to_plan()
        self.emit(Planned(turn=turn, plan=plan, model=reply.model))
        return plan

    def _user_message(self, turn: int, text: str, model: str, usage: UsageInfo, context: list[dict[str, str]]) -> None:
        """A model User Agent's message, whole (it came inside a structured answer), as the common
        message events."""
        message_id = f"user-{turn}-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        self.emit(MessageStarted(message_id=message_id, role="user", turn=turn, model=model))
        self.emit(MessageDelta(message_id=message_id, text=text))
        self.emit(MessageDone(message=MessageRecord(id=message_id, role="user", content=text, turn=turn, started_at=started,
                                                    finished_at=now_iso(), model=model, usage=usage,
                                                    visible_context=[ChatMessage(**m) for m in context])))

    async def _user_turn(self, turn: int, plan: PlannerOutput) -> str:
        """The user's message of `turn` (and the pending trigger's verdict before it)."""
        user: Participant = self.seats.user
        persona, style = persona_of(self.env)
        pending = self._pending
        if user.info.kind == "human":
            if pending is not None:
                index, at, _rubric, scored_reply = pending
                if not is_replaying(user):
                    self.emit(AwaitingHuman(seat="user", turn=turn, hint=f"first score the assistant's reply at turn {at}: "
                                                                         f"{PERSON_HINT}"))
                request = ReplyRequest(seat="user", system="", turn=turn, purpose=f"turn {turn} user message",
                                       messages=[{"role": "user", "content": prompts.score_only_message(
                                           _rubric, self._turns, scored_reply)}])
                verdict, answer = await user.reply_structured(request, JudgeVerdict, self._person_parser("user", turn))
                self._pending = None
                self._judged(index, at, scored_reply, verdict, answer.model, "person")
            return await self._person_message(turn, plan)
        system = prompts.user_agent_system(persona, style)
        content = prompts.user_agent_message(plan.tactical_order, self._turns,
                                             None if pending is None else (pending[2], pending[3]))
        purpose = f"turn {turn} user message"
        request = ReplyRequest(seat="user", system=system, messages=[{"role": "user", "content": content}], turn=turn,
                               on_retry=self._retry_cb("user"), purpose=purpose)
        value, reply = await user.reply_structured(request, user_agent_schema(pending is not None))
        self._user_message(turn, value.user_message, reply.model, reply.usage, self._history())
        if pending is not None and isinstance(value, UserTurnScoring):
            index, at, _rubric, answered = pending
            self._pending = None
            self._judged(index, at, answered, value.evaluation, reply.model, "user_agent")
        return value.user_message

    async def _person_message(self, turn: int, plan: PlannerOutput) -> str:
        """A person in the user seat writes the turn's message, the Planner's order as their brief."""
        user: Participant = self.seats.user
        if not is_replaying(user):
            self.emit(AwaitingHuman(seat="user", turn=turn, hint=prompts.brief(plan.tactical_order)))
        message_id = f"user-{turn}-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        context = self._history()
        self.emit(MessageStarted(message_id=message_id, role="user", turn=turn, model=next_writer(user, "user", turn)))
        request = ReplyRequest(seat="user", system="", messages=context, turn=turn, purpose=f"turn {turn} user message",
                               hint=prompts.brief(plan.tactical_order), message_id=message_id,
                               on_delta=lambda text: self.emit(MessageDelta(message_id=message_id, text=text)))
        while True:
            reply = await user.reply(request)
            if reply.text.strip():
                break
            self.emit(AwaitingHuman(seat="user", turn=turn, hint="an empty message is no message: write it again"))
        self.emit(MessageDone(message=MessageRecord(id=message_id, role="user", content=reply.text, turn=turn,
                                                    started_at=started, finished_at=now_iso(), model=reply.model,
                                                    visible_context=[ChatMessage(**m) for m in context])))
        return reply.text

    async def _online(self) -> tuple[str, str]:
        declared: list[dict[str, Any]] = []
        index = 0
        self.gate_turn = 0
        for turn in range(1, self.settings.max_turns + 1):
            await self.checkpoint(turn)
            try:
                plan = await self._plan(turn, declared)
            except ModelError as exc:
                return self._stopped("judge", f"turn {turn}: the planner failed: {exc.message}", exc, f"turn {turn} plan",
                                     judgement=False)
            if plan.stop_conversation and not plan.is_trigger_point:
                return "completed", f"the planner ended the dialogue before turn {turn}"
            try:
                user_text = await self._user_turn(turn, plan)
            except ModelError as exc:
                return self._stopped("user", f"turn {turn}: the user agent failed: {exc.message}", exc,
                                     f"turn {turn} user message", judgement=None)
            rubric = plan.evaluation_rubric if plan.is_trigger_point else None
            if rubric is not None:
                index += 1
                for item in declared:
                    item["awaiting_score"] = False
                declared.append({"turn": turn, "type": rubric.type, "awaiting_score": True})
                self.emit(TriggerOpened(index=index, turn=turn, rubric=rubric))
            messages = self._history() + [{"role": "user", "content": user_text}]
            try:
                reply = await self._agent_reply(turn, messages)
            except (ModelError, EmptyReply) as exc:
                text = exc.message if isinstance(exc, ModelError) else str(exc)
                if rubric is not None:
                    self._judged(index, turn, "", None, self.seats.agent.info.label, "user_agent",
                                 f"the agent gave no reply to score: {text}")
                return self._stopped("agent", f"turn {turn}: the agent gave no reply: {text}",
                                     exc if isinstance(exc, ModelError) else None, f"turn {turn} agent reply",
                                     judgement=False)
            self._turns.append((user_text, reply.content))
            if rubric is not None:
                self._pending = (index, turn, rubric, reply.content)
            if plan.stop_conversation:
                return "completed", f"the planner ended the dialogue after turn {turn}"
        return "max_turns", ""

    def _stopped(self, seat: Seat, message: str, exc: ModelError | None, purpose: str,
                 judgement: bool | None) -> tuple[str, str]:
        """Upstream stops the dialogue when a role's call fails; the session ends in error.
        `judgement`: the User Agent's call both scores and speaks (None: it was both)."""
        if exc is not None and exc.kind in SETUP_FAILURES:
            raise exc
        self.emit(ErrorRaised(seat=seat, message=message, fatal=True, purpose=purpose,
                              judgement=judgement))
        return "error", message

    async def _score_pending(self) -> None:
        """Online: the trigger whose reply no User Agent turn scored, scored on its own."""
        if self._pending is None:
            return
        index, turn, rubric, reply = self._pending
        self._pending = None
        persona, style = persona_of(self.env)
        human = self._human("user")
        await self._verdict("user", index, turn, prompts.user_agent_system(persona, style),
                            prompts.score_only_message(rubric, self._turns, reply), reply,
                            "person" if human else "user_agent", request_turn=len(self._turns) + 1)

    # -- the session -------------------------------------------------------------------------------

    async def run_protocol(self) -> None:
        infos = {s: p.info for s, p in self.seats.present.items()}
        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id, environment=self.env.model_dump(mode="json"),
            mode="play" if any(i.kind == "human" for i in infos.values()) else "watch", seats=infos,
            settings=self.settings.model_dump(), models={s: m for s, m in self.models.items() if s in infos},
            prompt_version=prompts.PROMPT_VERSION, app_version=__version__,
        ))
        reason, detail = "error", ""
        try:
            reason, detail = await (self._offline() if self.offline else self._online())
            if not self.offline:
                await self._score_pending()
        except asyncio.CancelledError:
            reason = "cancelled"
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            if self.score_on_stop:  # "stop and score": a reply already written is still judged
                try:
                    await (self._judge_awaiting() if self.offline else self._score_pending())
                except (ModelError, UserStopped):
                    pass
        except UserStopped:
            reason = "user_stopped"
        except ModelError as exc:
            reason, detail = "error", exc.message
            seat = failed_seat(exc)
            self.emit(ErrorRaised(seat=seat, message=exc.message, fatal=True,
                                  judgement=None if seat is None else (seat == "judge" and self.offline)))
        self.end(reason, detail)


def build_proactbench_session(spec: SessionSpec, env: ProactBenchEnv, seats: dict[str, Any],
                              session_id: str | None = None) -> ProactBenchSession:
    """The factory's builder: every model seat at the family's `seat_temperature` (a chosen one
    wins; else upstream's for the protocol: `ProactBenchEngine.seat_temperature`)."""
    from proactive_tui.core.spec import seat_family_settings

    settings = ProactBenchSettings(**spec.settings)
    spec = seat_family_settings(spec, seats, "proactbench")
    if settings.seed is not None:  # the setting reaches every model call (a seat's own seed wins)
        for participant in seats.values():
            live = participant
            while live is not None and "live" in vars(live):
                live = vars(live)["live"]
            model = getattr(live, "settings", None)
            if model is not None and getattr(model, "seed", 0) is None:
                live.settings = model.model_copy(update={"seed": int(settings.seed)})
    return ProactBenchSession(env, ProactBenchSeats(agent=seats["agent"], user=seats.get("user"), judge=seats.get("judge")),
                              settings, session_id=session_id, models=spec.models_summary())


class ProactBenchEngine(EnginePart):
    def default_temperature(self, seat: str) -> float | None:
        """Upstream's: the agent 0.7, the offline judge 0.7, the User Agent 0.7 (the online
        Planner's 0.1 is `seat_temperature`'s, as it depends on the protocol)."""
        return {"agent": AGENT_TEMPERATURE, "user": USER_AGENT_TEMPERATURE, "judge": JUDGE_TEMPERATURE}.get(seat)

    def default_max_tokens(self, seat: str) -> int | None:
        """Upstream's 8,192 new tokens for the model under test. (Upstream gives the Planner, the
        User Agent and the judge 32,768; we keep the project's default there, as many hosted models
        refuse a cap above their output limit and every verdict would fail: docs/protocols.md.)"""
        return AGENT_MAX_TOKENS if seat == "agent" else None

    def seat_temperature(self, seat: str, roles: Any, settings: dict[str, Any] | None = None) -> float:
        """A temperature someone chose wins; else upstream's for the protocol: the online Planner
        (the judge seat) runs at 0.1, every other seat at `default_temperature`."""
        chosen = roles.for_role(seat)
        if seat == "judge" and "temperature" not in chosen.model_fields_set and (settings or {}).get("protocol") == "online":
            return PLANNER_TEMPERATURE
        return super().seat_temperature(seat, roles, settings)

    def build_session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], session_id: str | None = None) -> ProactBenchSession:
        """The session (`build_proactbench_session`). A person in the user seat needs the online
        protocol: offline, the user's messages are the recorded ones and nobody would ask them."""
        offline = (spec.settings or {}).get("protocol", "offline") == "offline"
        user = seats.get("user")
        if offline and user is not None and getattr(getattr(user, "info", None), "kind", "") == "human":
            raise UnsupportedFamily("a person can play the ProactBench user only in the online protocol "
                                    "(--protocol online): offline, the user's messages are the recorded ones")
        return build_proactbench_session(spec, env, seats, session_id=session_id)


ENGINE = ProactBenchEngine()
