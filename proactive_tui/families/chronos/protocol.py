"""Chronos session: long-term intent maintenance on a simulated timeline (docs/protocols.md#chronos).

Every agent turn answers one input (a user message, a tool observation, or an internal-trigger
observation from the monitor) with a structured reply (`AgentReply`). What the action causes:

- INFO_RETRIEVAL: the system answers at once with a tool observation of the current state.
- SET_REMINDER: the reminder is registered and the user goes dormant; the monitor then advances
  the timeline to the next state and injects an internal-trigger observation (new state + the task
  as the agent last described it) in place of a user message.
- KEEP_SILENT: nothing reaches the user; the monitor moves on (while the user is active this is
  premature silence and fails the task).
- FOLLOW_UP / NO_ACTION: the text reaches the user, who wakes and answers.
- COMPLETE_TASK / FAILED_TASK: the task ends.

The protocol logic (the expected-action oracle, the failure rules, what the simulated user is told)
lives in `timeline_oracle`; this module does the talking and emits the events
(`events_timeline`). A session ends with a TimelineFinished verdict: success or failure and why,
with the per-session action and status accuracy.

The user seat plays the persona. Its opening message is the scenario's `initial_need`. Before each
reply it gets a brief (the constraints to reveal now, whether the offer in front of it meets its
needs, when to voice the intention shift); a model gets it in its system prompt, a person as the
hint of AwaitingHuman. A person may also type commands:

    /dormant          do not answer; time passes (only once a reminder is set)
    /shift [text]     voice the intention shift (complex scenarios, once); no text = the scenario's words
    /confirm [text]   say the needs are met (explicit confirmation)
    /refuse [text]    turn the offer down / cancel the task

Explicit confirmation: a reply to an offer counts as the user's explicit confirmation (or a
refusal) when it is `/confirm` (`/refuse`), or when the judge seat reads it so: the judge's model
gets the agent's offer and the user's reply (nothing else) and answers confirm / refuse / other
(`prompts.CONFIRMATION_JUDGE_SYSTEM`, schema `ReplyReading`). The documented keyword check
(`oracle.classify_reply`; a refusal cue wins) is the offline fallback
(`ChronosSettings.confirmation_reader = "keywords"`, or no judge seat) and reads any reply the judge
gave no usable reading of. A reply to an offer is the only place it is read: the engine knows when
it told the user the needs were met, so "thanks" said earlier (while the user is still adding
details) never completes anything. A model user at the shift point is taken to have voiced the
shift (it was told to); a person shifts with /shift. Every turn records what read the message it
answers (`TurnOutcome.user_read_by`, with the judge's model and reasoning).

Turn budget: the turn limit counts the agent turns that answer the user or the monitor. A turn
answering the agent's own INFO_RETRIEVAL continues the same exchange and is not counted; such
runs are bounded instead (`ChronosSettings.max_tool_calls`): after that many INFO_RETRIEVALs in a
row the last observation (marked unchanged) goes into the dialogue and the user, or while the user
is dormant the monitor, gives the next input. So an agent that keeps checking (the small local
model does) can neither keep a person from their turn nor spend their turns. Once the limit is
used up the session ends before the user is asked for a reply no agent turn would answer.

Controls for a viewer: `fast_forward()` runs the monitor's next scan now (with
`monitor_delay_s=None` the monitor waits for it: step-by-step time), `state` exposes the
protocol state (clock, current state, dormancy), `pending` the oracle's expectation for the turn
being generated. A person in the agent seat answers with the JSON reply or the compact line of
`timeline_reply.parse_agent_text`.
"""

from __future__ import annotations

from proactive_tui.core.family import EnginePart

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel, ValidationError

from proactive_tui import __version__
from proactive_tui.families.chronos import prompts
from proactive_tui.core.events import (
    AwaitingHuman, ChatMessage, ErrorRaised, MessageDelta, MessageDone, MessageRecord, MessageStarted, PhaseChanged,
    Retrying, SessionStarted, UsageInfo, UsageRecorded, now_iso,
)
from proactive_tui.families.chronos.events import (
    AgentTurnJudged, IntentionShifted, Reminder, RemindersChanged, SessionOutcome, TimelineAdvanced, TimelineFinished,
    TimelineObservation, TurnOutcome, UserBrief, UserBriefed, UserPresenceChanged,
)
from proactive_tui.families.chronos.metrics import accuracy
from proactive_tui.core.participants import Participant, Reply, ReplyRequest, UserStopped, failed_seat
from proactive_tui.families.chronos.oracle import (
    CRITICAL_TEXT, Expectation, ProtocolState, Signal, brief, classify_reply, critical, expect, expected_status,
)
from proactive_tui.core.replay import is_replaying, next_writer, replaying, wrap_seats
from proactive_tui.core.run_record import RunRecord
from proactive_tui.core.session import SessionBase
from proactive_tui.families.chronos.resume import complete_turns, recorded_answers
from proactive_tui.families.chronos.settings import ChronosSettings
from proactive_tui.families.chronos.reply import AGENT_FORM_HINT, AgentReply, agent_text_parser
from proactive_tui.families.chronos.env import ChronosEnv
from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.gateway import STRUCTURED_REASKS

if TYPE_CHECKING:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.settings import Role


SEATS = ("agent", "user", "judge")
AGENT_TEMPERATURE = 0.2
"""The model under test's temperature unless the user set one: **our choice**. The paper's text
states no sampling temperature (the protocol notes this project started from gave 0.2 as the
paper's, which the paper does not bear out); a low one keeps the JSON replies steady while
letting a model word its messages, and 0.2 is kept so earlier runs stay comparable."""



class ChronosSeats(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    agent: Any
    user: Any
    judge: Any = None
    """Reads the user's reply to an offer; None: the keyword check reads it (no model call)."""

    def get(self, seat: str) -> Participant | None:
        participant: Participant | None = getattr(self, seat)
        return participant

    @property
    def present(self) -> dict[str, Participant]:
        return {s: p for s in SEATS if (p := getattr(self, s)) is not None}


class _Ended(Exception):
    """The dialogue is over: carries the SessionEnded reason and the verdict."""

    def __init__(self, reason: str, success: bool | None, why: str, detail: str = "") -> None:
        super().__init__(why)
        self.reason, self.success, self.why, self.detail = reason, success, why, detail


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())) or 'reply'}: {e.get('msg')}"
                         for e in exc.errors(include_url=False)[:3])
    return str(exc)


class ReplyReading(BaseModel):
    """The judge seat's reading of the user's reply to an offer (reasoning first, then the call)."""

    reasoning: str = ""
    reading: Literal["confirm", "refuse", "other"]


class UserReading(BaseModel):
    """How the user's latest message was read and by what, for the agent turn that answers it."""

    read_as: str
    by: Literal["command", "judge", "keywords", "brief"]
    model: str | None = None
    note: str = ""


class UserCommand(BaseModel):
    kind: Literal["reply", "dormant", "shift", "confirm", "refuse"]
    text: str = ""


def parse_user_command(text: str) -> UserCommand:
    stripped = text.strip()
    if stripped.startswith("/"):
        head, _, rest = stripped[1:].partition(" ")
        name = {"cancel": "refuse", "thanks": "confirm", "wait": "dormant"}.get(head.lower(), head.lower())
        if name in ("dormant", "shift", "confirm", "refuse"):
            return UserCommand(kind=name, text=rest.strip())  # type: ignore[arg-type]
    return UserCommand(kind="reply", text=stripped)


class ChronosSession(SessionBase):
    family = "chronos"

    def __init__(self, env: ChronosEnv, seats: ChronosSeats, settings: ChronosSettings | None = None,
                 session_id: str | None = None, models: dict[str, dict[str, Any]] | None = None,
                 resume_from: RunRecord | None = None) -> None:
        """`resume_from`: the run record of an interrupted session of this scenario. Its complete
        turns are played again from their recorded replies (`resume.recorded_answers`, through
        `core.replay.ReplaySeat`: nobody is asked again, the monitor does not wait), which
        rebuilds the timeline, the oracle's state and the dialogue exactly, and the session goes
        on live from the first turn without an outcome."""
        super().__init__(session_id)
        self.env = env
        self.scenario = env.scenario
        self.resume_from = resume_from
        if resume_from is not None:
            seats = ChronosSeats(**wrap_seats({s: seats.get(s) for s in SEATS}, recorded_answers(resume_from)))
        self.seats = seats
        self.settings = settings or ChronosSettings()
        self.models = models or {}
        self.state = ProtocolState(self.scenario)
        self.dialogue: list[dict[str, str]] = []
        """What the agent's model sees, in order (observations as user-role messages)."""
        self.user_view: list[tuple[str, str]] = []
        """What reached the user: ("agent" | "user", text)."""
        self.turns: list[TurnOutcome] = []
        self.replies: list[AgentReply] = []
        self.reminders: list[Reminder] = []
        self.pending: Expectation | None = None
        self.current_brief: UserBrief | None = None
        self._failure: str | None = None
        self.counted_turns = 0
        """Agent turns that count against the turn limit (those answering the user or the monitor)."""
        self._tool_calls = 0
        """INFO_RETRIEVALs in a row since the last user message or monitor scan."""
        self._reading: UserReading | None = None
        """How the user's latest message was read and by what, for the turn that answers it."""
        self._wake = asyncio.Event()
        self._fast_forwarded = False
        for seat in self.seats.present:
            attach = getattr(self.seats.get(seat), "attach", None)
            if callable(attach):
                attach(self)

    # -- controls -------------------------------------------------------------------------------

    @property
    def turn_limit(self) -> int:
        return self.settings.max_turns or self.scenario.turn_limit

    @property
    def user_dormant(self) -> bool:
        return self.state.monitoring

    def fast_forward(self) -> bool:
        """Run the monitor's next scan now instead of after `monitor_delay_s` (only while the user is dormant)."""
        if not self.state.monitoring or self.ended:
            return False
        self._fast_forwarded = True
        self._wake.set()
        return True

    # -- plumbing -------------------------------------------------------------------------------

    def _retry_cb(self, seat: Role) -> Callable[[Any], None]:
        def callback(notice: Any) -> None:
            self.emit(Retrying(seat=seat, model=notice.model, attempt=notice.attempt,
                               max_attempts=notice.max_attempts, wait_s=notice.wait_s, reason=notice.reason))
        return callback

    def _message(self, role: Literal["agent", "user"], turn: int, content: str, model: str, started: str,
                 message_id: str, usage: UsageInfo | None = None, context: list[dict[str, str]] | None = None,
                 partial: bool = False) -> MessageRecord:
        record = MessageRecord(
            id=message_id, role=role, content=content, turn=turn, started_at=started, finished_at=now_iso(), model=model,
            usage=usage or UsageInfo(), visible_context=[ChatMessage(**m) for m in (context or [])],
            context_turns=list(range(1, turn)), partial=partial,
        )
        self.emit(MessageDone(message=record))
        return record

    def _task_context(self) -> dict[str, Any] | None:
        """The task as the agent last described it (the latest reply that names an intention);
        null once the task is completed (COMPLETE_TASK nulls it, whatever the reply held)."""
        if self.replies and self.replies[-1].proactive_action == "COMPLETE_TASK":
            return None
        for reply in reversed(self.replies):
            if reply.task_description.intention:
                return reply.task_description.model_dump(exclude={"status"})
        return None

    def _active_reminder(self) -> dict[str, Any] | None:
        for r in reversed(self.reminders):
            if r.status == "active":
                return {"type": r.type, "value": r.value}
        return None

    def _observe(self, turn: int, source: Literal["tool_call", "internal_trigger"], repeated: bool = False,
                 handover: Literal["user", "monitor"] | None = None) -> None:
        st = self.state
        if source == "tool_call":
            content = prompts.tool_observation(st.clock, st.current.listings, repeated=repeated, handover=handover)
        else:
            content = prompts.trigger_observation(st.clock, st.current.listings, self._active_reminder(), self._task_context())
        self.dialogue.append({"role": "user", "content": content})
        self.emit(TimelineObservation(turn=turn, source=source, clock=st.clock, state_index=st.global_index, content=content))

    def _presence(self, dormant: bool, reason: str) -> None:
        self.emit(UserPresenceChanged(dormant=dormant, reason=reason, clock=self.state.clock))

    def _close_reminders(self, status: Literal["done", "cancelled"]) -> None:
        if any(r.status == "active" for r in self.reminders):
            for r in self.reminders:
                if r.status == "active":
                    r.status = status
            self.emit(RemindersChanged(reminders=[r.model_copy() for r in self.reminders]))

    def _set_reminder(self, turn: int, reply: AgentReply) -> None:
        for r in self.reminders:
            if r.status == "active":
                r.status = "superseded"
        self.reminders.append(Reminder(
            id=len(self.reminders) + 1, turn=turn, type=reply.trigger_condition.type, value=reply.trigger_condition.value,
            set_at=self.state.clock, intention=reply.task_description.intention,
        ))
        self.emit(RemindersChanged(reminders=[r.model_copy() for r in self.reminders]))

    # -- the agent ------------------------------------------------------------------------------

    async def _agent_reply(self, turn: int) -> tuple[AgentReply | None, Reply | None, str]:
        participant: Participant = self.seats.agent
        context = [dict(m) for m in self.dialogue]
        message_id = f"agent-{turn}-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        parse = agent_text_parser(lambda: self.replies[-1] if self.replies else None)
        if participant.info.kind == "human":
            value, reply = await self._human_agent_reply(participant, turn, context, parse)
            self.emit(MessageStarted(message_id=message_id, role="agent", turn=turn, model=reply.model))
            self._message("agent", turn, value.model_dump_json(), reply.model, started, message_id, context=context)
            return value, reply, reply.text
        self.emit(MessageStarted(message_id=message_id, role="agent", turn=turn, model=next_writer(participant, "agent", turn)))
        request = ReplyRequest(seat="agent", system=prompts.agent_system(self.settings.prompt_variant), messages=context, turn=turn,
                               on_retry=self._retry_cb("agent"), purpose="agent turn", message_id=message_id)
        try:
            value, reply = await participant.reply_structured(request, AgentReply, parse)
        except ModelError as exc:
            if exc.kind != "structured":
                raise
            self.emit(ErrorRaised(seat="agent", message=f"turn {turn}: {exc.message}", purpose="agent reply",
                                  judgement=False))
            self._message("agent", turn, exc.partial_text, participant.info.label, started, message_id,
                          context=context, partial=True)
            return None, None, exc.message
        content = value.model_dump_json()
        self._message("agent", turn, content, reply.model, started, message_id, usage=reply.usage, context=context)
        return value, reply, reply.text

    async def _human_agent_reply(self, participant: Participant, turn: int, context: list[dict[str, str]],
                                 parse: Any) -> tuple[AgentReply, Reply]:
        """A person in the agent seat: asked again, with the problem, until the reply parses."""
        hint = AGENT_FORM_HINT
        while True:
            if not is_replaying(participant):
                self.emit(AwaitingHuman(seat="agent", turn=turn, hint=hint))
            request = ReplyRequest(seat="agent", system=prompts.agent_system(self.settings.prompt_variant), messages=context, turn=turn, hint=hint)
            reply = await participant.reply(request)
            try:
                return parse(reply.text), reply
            except (ValueError, ValidationError) as exc:
                hint = f"That could not be used ({_short(exc)}); try again. {AGENT_FORM_HINT}"

    # -- the user -------------------------------------------------------------------------------

    def _user_messages(self) -> list[dict[str, str]]:
        """The dialogue as the user's model sees it: the agent's delivered texts as `user`, merged."""
        out: list[dict[str, str]] = []
        for who, text in self.user_view:
            role = "user" if who == "agent" else "assistant"
            if out and out[-1]["role"] == role:
                out[-1]["content"] += "\n\n" + text
            else:
                out.append({"role": role, "content": text})
        return out

    async def _user_reply(self, turn: int) -> Signal | Literal["dormant"]:
        st = self.state
        b = brief(st, turn)
        self.current_brief = b
        self.emit(UserBriefed(brief=b))
        participant: Participant = self.seats.user
        human = participant.info.kind == "human"
        told = [f"{k}: {v}" for k, v in st.told().items()]
        system = prompts.user_system_prompt(self.scenario.persona, self.scenario.initial_need, told, b.instruction)
        context = self._user_messages()
        message_id = f"user-{turn}-{uuid.uuid4().hex[:6]}"
        commands = prompts.human_commands(st.can_shift)
        hint = f"{b.instruction}\n({commands})"
        if human:
            while True:
                if not is_replaying(participant):
                    self.emit(AwaitingHuman(seat="user", turn=turn, hint=hint))
                started = now_iso()
                request = ReplyRequest(seat="user", system=system, messages=context, turn=turn, hint=hint)
                answer = await participant.reply(request)
                command = parse_user_command(answer.text)
                problem = self._command_problem(command)
                if problem is None:
                    break
                hint = f"{problem}\n{b.instruction}\n({commands})"
            if command.kind == "dormant":
                return "dormant"
            text, signal = self._human_text(command, b)
            if command.kind in ("shift", "confirm", "refuse"):
                self._reading = UserReading(read_as=signal, by="command")
            writer = answer.model or participant.info.label  # `person (edited)` when a fork edited it
            self.emit(MessageStarted(message_id=message_id, role="user", turn=turn, model=writer))
            self._message("user", turn, text, writer, started, message_id, context=context)
            if command.kind == "reply" and b.offer_meets_needs is not None:
                self._reading = await self._read_offer_reply(turn, text)
                signal = self._reading.read_as  # type: ignore[assignment]
        else:
            started = now_iso()
            self.emit(MessageStarted(message_id=message_id, role="user", turn=turn, model=next_writer(participant, "user", turn)))

            def on_delta(text: str) -> None:
                self.emit(MessageDelta(message_id=message_id, text=text))

            request = ReplyRequest(seat="user", system=system, messages=context, turn=turn, hint=b.instruction,
                                   on_delta=on_delta, on_retry=self._retry_cb("user"), purpose="user message",
                                   message_id=message_id)
            reply = await participant.reply(request)
            text = reply.text.strip()
            self._message("user", turn, text, reply.model, started, message_id, usage=reply.usage, context=context)
            if b.situation == "shift":
                signal = "shift"
                self._reading = UserReading(read_as=signal, by="brief")
            elif b.situation in ("offer_meets", "offer_fails"):
                self._reading = await self._read_offer_reply(turn, text)
                signal = self._reading.read_as  # type: ignore[assignment]
            else:
                signal = "reply"
        self._user_said(turn, text, signal, [c.key for c in b.reveal])
        return signal

    def _command_problem(self, command: UserCommand) -> str | None:
        if command.kind == "dormant" and not self.state.reminder_active:
            return "No reminder is set yet, so nothing would ever wake you: reply instead."
        if command.kind == "shift" and not self.state.can_shift:
            return "There is no change of plans to voice in this scenario (or it was voiced already)."
        if command.kind == "reply" and not command.text:
            return "Type a reply, or one of the commands."
        return None

    def _human_text(self, command: UserCommand, b: UserBrief) -> tuple[str, Signal]:
        if command.kind == "shift":
            assert self.scenario.intention_shift is not None
            return command.text or self.scenario.intention_shift.utterance, "shift"
        if command.kind == "confirm":
            return command.text or prompts.SCRIPTED_CONFIRM, "confirm"
        if command.kind == "refuse":
            return command.text or prompts.SCRIPTED_REFUSE, "refuse"
        return command.text, "reply"  # a reply to an offer is read next (`_read_offer_reply`)

    def _last_offer(self) -> str:
        """The agent's message the user is answering (what the judge reads the reply against)."""
        return next((text for who, text in reversed(self.user_view) if who == "agent"), "")

    async def _read_offer_reply(self, turn: int, text: str) -> UserReading:
        """Read the user's reply to an offer: the judge seat when there is one, else (or when the
        judge gives no usable reading) the keyword check, saying why."""
        judge: Participant | None = self.seats.judge
        if judge is None or self.settings.confirmation_reader == "keywords":
            why = "the keyword check is the chosen reader" if judge is not None or self.settings.confirmation_reader == "keywords" \
                else "no judge seat"
            return UserReading(read_as=classify_reply(text), by="keywords", note=why)
        request = ReplyRequest(seat="judge", system=prompts.CONFIRMATION_JUDGE_SYSTEM,
                               messages=prompts.confirmation_judge_messages(self._last_offer(), text), turn=turn,
                               on_retry=self._retry_cb("judge"), purpose="confirmation reading")
        if judge.info.kind == "human":
            request.hint = "read the user's reply: confirm, refuse or other"
            if not is_replaying(judge):
                self.emit(AwaitingHuman(seat="judge", turn=turn, hint=request.hint))
        try:
            value, reply = await judge.reply_structured(request, ReplyReading, _parse_reading)
        except ModelError as exc:
            self.emit(ErrorRaised(seat="judge", message=f"turn {turn}: no usable reading of the user's reply "
                                                          f"({exc.message}); the keyword check reads it",
                                  purpose="reply reading", judgement=True))
            return UserReading(read_as=classify_reply(text), by="keywords", note=f"the judge failed: {exc.message}")
        self.emit(UsageRecorded(seat="judge", model=reply.model, purpose=f"turn {turn} reply reading", usage=reply.usage))
        read_as = "reply" if value.reading == "other" else value.reading
        return UserReading(read_as=read_as, by="judge", model=reply.model, note=value.reasoning.strip())

    def _user_said(self, turn: int, text: str, signal: Signal, revealed: list[str]) -> None:
        st = self.state
        self.user_view.append(("user", text))
        self.dialogue.append({"role": "user", "content": text})
        st.user_replied(signal, revealed)
        if signal == "shift" and self.scenario.intention_shift is not None:
            shift = self.scenario.intention_shift
            self.emit(IntentionShifted(turn=turn, utterance=text, intention=shift.intention,
                                       constraints=dict(shift.constraints)))
            self.emit(TimelineAdvanced(view=st.view(), cause="shift"))

    # -- the monitor ----------------------------------------------------------------------------

    async def _monitor(self, turn: int) -> None:
        """The user is dormant: wait for the next scan, move the timeline, inject the trigger.
        A resumed session catching up on recorded turns does not wait (that time was spent)."""
        delay = self.settings.monitor_delay_s
        if replaying(self.seats.present):
            delay = 0
        if not self._wake.is_set():
            if delay is None:
                await self._wake.wait()
            elif delay > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                except asyncio.TimeoutError:
                    pass
        cause: Literal["monitor", "fast_forward"] = "fast_forward" if self._fast_forwarded else "monitor"
        self._wake.clear()
        self._fast_forwarded = False
        if not self.state.advance():
            raise self._timeline_end()
        self.emit(TimelineAdvanced(view=self.state.view(), cause=cause))
        self._observe(turn, "internal_trigger")

    def _timeline_end(self) -> _Ended:
        last = self.turns[-1] if self.turns else None
        if self.scenario.branch == "positive":
            return _Ended("timeline_exhausted", False, "timeline_exhausted",
                          "no state left to report and the task was never completed")
        if last is None or last.action != "KEEP_SILENT":
            return _Ended("timeline_exhausted", False, "not_silent_at_end", "the last state was not met with silence")
        if last.status != "IN_PROGRESS":
            return _Ended("timeline_exhausted", False, "wrong_status_at_end", f"status {last.status} while silent, not IN_PROGRESS")
        return _Ended("timeline_exhausted", True, "kept_silent",
                      "kept silent (IN_PROGRESS) through every state that did not meet the needs")

    # -- one agent turn -------------------------------------------------------------------------

    async def _turn(self, turn: int) -> None:
        st = self.state
        last_chance = st.verdict == "refused" or self._failure is not None
        self.pending = expectation = expect(st)
        input_kind, monitoring, clock, index = st.input_kind, st.monitoring, st.clock, st.global_index
        reading, self._reading = (self._reading, None) if input_kind == "user" else (None, self._reading)
        reply, raw_reply, raw = await self._agent_reply(turn)
        action = reply.proactive_action if reply else None
        crit = critical(st, action) if action else "format_failure"
        status_want = expected_status(st, action)
        task_reset = (reply.task_description.intention is None and reply.task_description.constraints is None
                      ) if reply is not None and action == "COMPLETE_TASK" else None
        delivered = action in ("NO_ACTION", "FOLLOW_UP", "COMPLETE_TASK", "FAILED_TASK") or (
            not monitoring and action in ("INFO_RETRIEVAL", "SET_REMINDER"))
        outcome = TurnOutcome(
            turn=turn, input_kind=input_kind, clock=clock, state_index=index, monitoring=monitoring, reply=reply, raw=raw,
            asks=raw_reply.asks if raw_reply else STRUCTURED_REASKS + 1, format_failure=reply is None,
            expected_action=expectation.action, acceptable_actions=expectation.acceptable, expected_status=status_want,
            why=expectation.why, action_correct=action in expectation.acceptable,
            status_correct=reply is not None and reply.task_description.status == status_want and task_reset is not False,
            critical=crit, delivered=bool(delivered and reply and reply.response_text.strip()),
            model=raw_reply.model if raw_reply else self.seats.agent.info.label, task_reset=task_reset,
            user_read_as=reading.read_as if reading else None, user_read_by=reading.by if reading else None,
            user_read_model=reading.model if reading else None, user_read_note=reading.note if reading else "",
        )
        self.turns.append(outcome)
        self.emit(AgentTurnJudged(outcome=outcome))
        if reply is None:
            raise _Ended("derailed", False, "format_failure", CRITICAL_TEXT["format_failure"])
        self.replies.append(reply)
        self.dialogue.append({"role": "assistant", "content": reply.model_dump_json()})
        if outcome.delivered:
            self.user_view.append(("agent", reply.response_text.strip()))
        self._failure = self._failure or crit
        failure = self._failure
        if action == "COMPLETE_TASK":
            self._close_reminders("done")
            if failure:
                raise _Ended("derailed", False, failure, CRITICAL_TEXT.get(failure, failure))
            if reply.task_description.status != "COMPLETED":
                raise _Ended("task_completed", False, "wrong_status_at_end",
                             f"completed with status {reply.task_description.status}, not COMPLETED")
            raise _Ended("task_completed", True, "completed", "completed after the user's explicit confirmation")
        if action == "FAILED_TASK":
            self._close_reminders("cancelled")
            if failure:
                raise _Ended("derailed" if crit else "task_failed", False, failure, CRITICAL_TEXT.get(failure, failure))
            raise _Ended("task_failed", False, "user_refused", "the user turned the offer down or cancelled")
        if failure and (last_chance or crit != "bad_follow_up"):
            raise _Ended("derailed", False, failure, CRITICAL_TEXT.get(failure, failure))
        if last_chance:
            raise _Ended("task_failed", False, "user_refused", "the user turned the offer down or cancelled")
        was_dormant = st.monitoring
        st.agent_acted(action)  # type: ignore[arg-type]
        if action == "INFO_RETRIEVAL":
            self._tool_calls += 1
            handover = self._tool_calls >= self.settings.max_tool_calls
            st.tool_observed()
            self._observe(turn + 1, "tool_call", repeated=self._tool_calls > 1,
                          handover=("monitor" if st.monitoring else "user") if handover else None)
            if not handover:
                return  # the agent answers its own observation (an uncounted turn)
        self._tool_calls = 0
        if action == "SET_REMINDER":
            self._set_reminder(turn, reply)
            if not was_dormant:
                self._presence(True, "a reminder is set: the monitor watches while the user is away")
        if st.monitoring:
            await self._monitor(turn + 1)
            return
        if was_dormant:
            self._presence(False, "the agent's message woke the user")
        if self.counted_turns >= self.turn_limit:
            raise self._turn_limit()  # no agent turn is left to answer the user: do not ask
        said = await self._user_reply(turn + 1)
        if said == "dormant":
            st.go_dormant()
            self._presence(True, "the user chose not to answer")
            await self._monitor(turn + 1)

    async def _dialogue(self) -> None:
        opening = self.scenario.initial_need
        message_id = f"user-1-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        self.emit(MessageStarted(message_id=message_id, role="user", turn=1, model="scenario"))
        self.emit(MessageDelta(message_id=message_id, text=opening))
        self._message("user", 1, opening, "scenario", started, message_id)
        self.user_view.append(("user", opening))
        self.dialogue.append({"role": "user", "content": opening})
        turn = 0
        while True:
            if self.counts_next_turn:
                if self.counted_turns >= self.turn_limit:
                    raise self._turn_limit()
                # A viewer's pause / step holds here, before each exchange (the family's unit, as
                # the status line, transcript and History count): the agent's answers to its own
                # checks continue the exchange without holding, so "pauses after exchange 3"
                # names what really runs last.
                await self.checkpoint(self.counted_turns + 1)
                self.counted_turns += 1
            turn += 1
            await self._turn(turn)

    @property
    def counts_next_turn(self) -> bool:
        """Whether the pending agent turn counts against the turn limit: it answers the user or the
        monitor, not the agent's own INFO_RETRIEVAL (that continues the same exchange)."""
        return self.state.input_kind != "tool_call"

    def _turn_limit(self) -> _Ended:
        return _Ended("max_turns", False, "turn_limit",
                      f"the task was still open after {self.turn_limit} exchanges "
                      "(answers to the agent's own checks continue an exchange)")

    # -- the run --------------------------------------------------------------------------------

    def _verdict(self, success: bool | None, why: str, detail: str) -> SessionOutcome:
        action_acc, status_acc = accuracy(self.turns)
        return SessionOutcome(branch=self.scenario.branch, tier=self.scenario.tier, success=success, reason=why,
                              detail=detail, turns=len(self.turns), action_accuracy=action_acc, status_accuracy=status_acc,
                              task=self._task_context())

    async def run_protocol(self) -> None:
        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id,
            environment=self.env.model_dump(mode="json"),
            mode="play" if any(p.info.kind == "human" for p in self.seats.present.values()) else "watch",
            seats={s: p.info for s, p in self.seats.present.items()},
            settings={**self.settings.model_dump(), "turn_limit": self.turn_limit},
            models={k: v for k, v in self.models.items() if k in self.seats.present},
            prompt_version=prompts.PROMPT_VERSION, app_version=__version__,
            resumed_from=None if self.resume_from is None else {
                "session_id": self.resume_from.id, "turns": complete_turns(self.resume_from)},
        ))
        self.emit(PhaseChanged(phase="dialogue"))
        self.emit(TimelineAdvanced(view=self.state.view(), cause="start"))
        reason, detail = "error", ""
        verdict: SessionOutcome
        self.gate_turn = 0  # a resumed session replays its turns through the gate (numbered from 1)
        try:
            await self._dialogue()
        except _Ended as end:
            reason, detail = end.reason, end.detail
            verdict = self._verdict(end.success, end.why, end.detail)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            reason = "cancelled"
            verdict = self._verdict(None, "cancelled", "the session was stopped before a verdict")
        except UserStopped:
            reason = "user_stopped"
            verdict = self._verdict(None, "user_stopped", "the person left the session")
        except ModelError as exc:
            reason, detail = "error", exc.message
            seat = failed_seat(exc)  # its judge seat only judges
            self.emit(ErrorRaised(seat=seat, message=exc.message, fatal=True,
                                  judgement=None if seat is None else seat == "judge"))
            verdict = self._verdict(None, "error", exc.message)
        self.emit(TimelineFinished(outcome=verdict))
        self.end(reason, detail)


def _parse_reading(text: str) -> ReplyReading:
    """A person in the judge seat types confirm, refuse or other (or the JSON reading)."""
    word = text.strip().lower()
    if word in ("confirm", "refuse", "other"):
        return ReplyReading(reading=word)  # type: ignore[arg-type]
    from proactive_tui.llm.jsonreply import extract_json

    return ReplyReading.model_validate(extract_json(text))


def build_chronos_session(spec: SessionSpec, env: ChronosEnv, seats: dict[str, Participant], session_id: str | None,
                          resume_from: RunRecord | None = None) -> ChronosSession:
    """The factory's builder: each model seat runs at the family's `seat_temperature` (the agent
    at AGENT_TEMPERATURE, our choice: the paper states none, unless the user chose one); the scripted persona takes the user seat when
    `user_simulator` is "scripted" (and no person plays it); the judge seat sits only when it
    reads (`confirmation_reader` "judge")."""
    from proactive_tui.core.spec import seat_family_settings

    settings = ChronosSettings(**spec.settings)
    user = seats["user"]
    if settings.user_simulator == "scripted" and user.info.kind != "human":
        from proactive_tui.families.chronos.persona import ScriptedPersona

        user = ScriptedPersona()
    judge = seats.get("judge") if settings.confirmation_reader == "judge" else None
    agent = seats["agent"]
    spec = seat_family_settings(spec, seats, "chronos")
    models = spec.models_summary()
    if user is not seats["user"]:
        models["user"] = {"model": user.info.label, "api_base": None, "temperature": None, "max_tokens": None}
    return ChronosSession(env, ChronosSeats(agent=agent, user=user, judge=judge), settings,
                          session_id=session_id, models=models, resume_from=resume_from)


class ChronosEngine(EnginePart):
    def default_temperature(self, seat: str) -> float | None:
        """The agent runs at `AGENT_TEMPERATURE` unless someone chose another."""
        return AGENT_TEMPERATURE if seat == "agent" else None

    def build_session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], session_id: str | None = None) -> ChronosSession:
        return build_chronos_session(spec, env, seats, session_id)


ENGINE = ChronosEngine()
