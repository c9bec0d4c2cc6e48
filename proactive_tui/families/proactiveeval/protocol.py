"""ProactiveEval session: target planning (task A) then dialogue guidance (task B), judged live.

Turn rules from docs/protocols.md#proactiveeval: the agent speaks first; one turn is an agent message plus a user
reply; a turn check after every turn may end the dialogue early; each model sees only the last
`memory_turns` turns plus its static context; at the end a judge gives one overall 1-10 (the
headline), reasoning first, and five dimension scores as diagnostics.

What the dialogue is judged against: the target and sub-targets the agent guided with. That is the
reference, or the agent's own plan with `guide_with = own_plan` (the paper judges a dialogue
against the target it used); every turn check and guidance score records which
(`judged_against`). The plan itself is always scored against the reference (task A).

Overlap: after the user replies, the turn check (and the live score) run while the agent's next
message is already being generated. If the check says the target was reached, that speculative
message is cancelled and announced as MessageDiscarded, so judging costs no wall time on the
critical path (agent + user calls). Not when agent and judge share one model instance (the embedded
model) and early stopping is on: there the message ahead only queues in front of the check, and is
often thrown away. Early stopping (`early_stop`) is off by default with the embedded judge, and
ending early never re-asks that judge the live score's identical prompt for the final score.

Resume: given the run record of an interrupted session (`resume_from`), the session keeps its
plan and its complete turns, replays them as events (so every consumer and the new event log
show them, and the new log folds to the whole dialogue), runs any turn check the interruption
cut off (and any live score it cut off), and continues the dialogue at the next turn.
"""

from __future__ import annotations

from proactive_tui.core.family import EnginePart

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Callable, Literal

from pydantic import BaseModel

from proactive_tui import __version__
from proactive_tui.families.proactiveeval import prompts
from proactive_tui.core.events import (
    AwaitingHuman, ChatMessage, ErrorRaised, MessageDelta, MessageDiscarded, MessageDone, MessageRecord, MessageStarted, PhaseChanged, Retrying, SessionStarted, UsageInfo, UsageRecorded, now_iso,
)
from proactive_tui.families.proactiveeval.events import (
    GuidanceScore, GuidanceScored, JudgedAgainst, Plan, PlanProposed, PlanScored, TurnCheck, TurnChecked,
)
from proactive_tui.families.proactiveeval.judges import (
    GuidanceJudgement, PlanDraft, PlanJudgement, TurnVerdict, parse_plan_text, probe_message,
)
from proactive_tui.core.participants import Participant, ReplyRequest, UserStopped, failed_seat
from proactive_tui.core.replay import is_replaying, next_writer
from proactive_tui.core.run_record import RunRecord
from proactive_tui.core.session import SessionBase
from proactive_tui.families.proactiveeval.record import complete_turns
from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings
from proactive_tui.families.proactiveeval.shared_plan import PlanGroup, PlanScoreShared
from proactive_tui.families.proactiveeval.env import ProactiveEvalEnv, ProactiveEvalItem
from proactive_tui.llm.errors import ModelError

if TYPE_CHECKING:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.llm.settings import Role


class ProactiveEvalSeats(BaseModel):
    model_config = {"arbitrary_types_allowed": True}

    agent: Any
    user: Any
    judge: Any

    def get(self, seat: str) -> Participant:
        participant: Participant = getattr(self, seat)
        return participant



async def _ready(message: MessageRecord) -> MessageRecord:
    return message


class ProactiveEvalSession(SessionBase):
    family = "proactiveeval"

    def __init__(self, env: ProactiveEvalEnv, seats: ProactiveEvalSeats, settings: ProactiveEvalSettings | None = None,
                 session_id: str | None = None, models: dict[str, dict[str, Any]] | None = None,
                 resume_from: RunRecord | None = None, fork_at: tuple[int, str] | None = None) -> None:
        super().__init__(session_id)
        self.resume_from = resume_from
        self.fork_at = fork_at
        """A branch (`core.fork`): `resume_from` is the parent's prefix, which ends just before
        this (turn, seat)'s message: its turns are restored as they are (nothing the prefix holds
        is asked or judged again, nothing it lacks is made up), and for a user-seat fork the
        turn's agent message is restored too, so the dialogue goes on with the user's reply."""
        self.env = env
        self.seats = seats
        self.settings = settings or ProactiveEvalSettings()
        if self.settings.early_stop is None:  # recorded as the value used, never as "auto"
            self.settings = self.settings.model_copy(update={"early_stop": not self.judge_is_embedded()})
        self.models = models or {}
        self._live_prompts: dict[int, tuple[str, GuidanceScore]] = {}
        self.agent_msgs: dict[int, MessageRecord] = {}
        self.user_msgs: dict[int, MessageRecord] = {}
        self.plan: PlanDraft | None = None
        self.covered: set[int] = set()
        self._background: list[asyncio.Task[Any]] = []
        self._discarded: set[str] = set()
        self._started_ids: dict[tuple[str, int], str] = {}
        self._final_score: asyncio.Task[None] | None = None
        self._plan_to_score: PlanDraft | None = None
        self.plan_group: PlanGroup | None = None
        """In a batch, the plan shared by this environment's sessions at every agreeableness level
        (`shared_plan`; set by `PlanShare.attach`); None: this session plans on its own."""
        self._publishes_score = False
        self._plan_model = ""

    # -- context --------------------------------------------------------------------------------

    def judge_is_embedded(self) -> bool:
        """The judge is answered by the in-process embedded model (see Participant.shared_instance)."""
        return getattr(self.seats.judge, "shared_instance", None) is not None

    def agent_shares_judge(self) -> bool:
        """Agent and judge are one model instance: their calls run one after the other, never together."""
        instance = getattr(self.seats.agent, "shared_instance", None)
        return instance is not None and instance == getattr(self.seats.judge, "shared_instance", None)

    @property
    def item(self) -> ProactiveEvalItem:
        return self.env.item

    def guide_source(self) -> JudgedAgainst:
        """Whose target the agent guides with, and so what the judges compare the dialogue with:
        its own plan only when asked for and one exists (a failed planning falls back to the reference)."""
        return "own_plan" if self.settings.guide_with == "own_plan" and self.plan is not None else "reference"

    def guide_target(self) -> tuple[str, list[str]]:
        if self.guide_source() == "own_plan":
            assert self.plan is not None
            return self.plan.target, self.plan.sub_targets
        return self.item.target, self.item.sub_target

    def _window(self, turn: int) -> list[int]:
        return list(range(max(1, turn - self.settings.memory_turns), turn))

    def agent_context(self, turn: int) -> tuple[str, list[dict[str, str]], list[int]]:
        target: str | None
        target, steps = self.guide_target()
        if self.settings.without_target:  # the paper's ablation: the judges keep the target, the agent has none
            target, steps = None, []
        system = prompts.agent_system_prompt(
            self.item.environment.user_information, self.item.environment.trigger_factor, target, steps
        )
        window = self._window(turn)
        opening = prompts.AGENT_OPENING if not window or window[0] == 1 else prompts.WINDOW_NOTE
        msgs = [{"role": "user", "content": opening}]
        for k in window:
            msgs.append({"role": "assistant", "content": self.agent_msgs[k].content})
            msgs.append({"role": "user", "content": self.user_msgs[k].content})
        return system, msgs, window

    def user_context(self, turn: int) -> tuple[str, list[dict[str, str]], list[int]]:
        system = prompts.user_system_prompt(
            self.item.environment.user_information, self.item.environment.trigger_factor, self.settings.agreeableness
        )
        window = self._window(turn)
        msgs: list[dict[str, str]] = []
        for k in window:
            msgs.append({"role": "user", "content": self.agent_msgs[k].content})
            msgs.append({"role": "assistant", "content": self.user_msgs[k].content})
        msgs.append({"role": "user", "content": self.agent_msgs[turn].content})
        return system, msgs, window

    def transcript(self, upto_turn: int | None = None) -> str:
        lines = []
        for turn in sorted(self.agent_msgs):
            if upto_turn is not None and turn > upto_turn:
                break
            lines.append(f"Assistant: {self.agent_msgs[turn].content}")
            if turn in self.user_msgs:
                lines.append(f"User: {self.user_msgs[turn].content}")
        return "\n".join(lines)

    # -- plumbing -------------------------------------------------------------------------------

    def _retry_cb(self, seat: Role) -> Callable[[Any], None]:
        def callback(notice: Any) -> None:
            self.emit(Retrying(seat=seat, model=notice.model, attempt=notice.attempt,
                               max_attempts=notice.max_attempts, wait_s=notice.wait_s, reason=notice.reason))
        return callback

    async def _generate(self, role: Literal["agent", "user"], turn: int) -> MessageRecord:
        participant: Participant = self.seats.get(role)
        system, msgs, window = self.agent_context(turn) if role == "agent" else self.user_context(turn)
        message_id = f"{role}-{turn}-{uuid.uuid4().hex[:6]}"
        started = now_iso()
        parts: list[str] = []

        def on_delta(text: str) -> None:
            parts.append(text)
            self.emit(MessageDelta(message_id=message_id, text=text))

        if participant.info.kind == "human" and not is_replaying(participant):
            self.emit(AwaitingHuman(seat=role, turn=turn, hint="your reply as the user" if role == "user" else "your message as the agent"))
        elif not is_replaying(participant):
            await participant.start(role)  # an agent program: its name and version for the line below
        self._started_ids[(role, turn)] = message_id
        self.emit(MessageStarted(message_id=message_id, role=role, turn=turn, model=next_writer(participant, role, turn)))

        def record(content: str, partial: bool, usage: UsageInfo | None = None, model: str | None = None) -> MessageRecord:
            return MessageRecord(
                id=message_id, role=role, content=content, turn=turn, started_at=started, finished_at=now_iso(),
                model=model or participant.info.label, usage=usage or UsageInfo(),
                visible_context=[ChatMessage(**m) for m in msgs], context_turns=window, partial=partial,
            )

        request = ReplyRequest(seat=role, system=system, messages=msgs, turn=turn, on_delta=on_delta,
                               purpose=f"{role} message", message_id=message_id,
                               on_retry=self._retry_cb(role))
        try:
            reply = await participant.reply(request)
        except asyncio.CancelledError:
            if message_id not in self._discarded and parts:
                self.emit(MessageDone(message=record("".join(parts), partial=True)))
            raise
        except ModelError as exc:
            partial_text = "".join(parts) or exc.partial_text
            if partial_text:
                self.emit(MessageDone(message=record(partial_text, partial=True)))
            raise
        message = record(reply.text, partial=False, usage=reply.usage, model=reply.model)
        self.emit(MessageDone(message=message))
        return message

    async def _judge(self, schema: type[BaseModel], prompt: str, purpose: str, turn: int = 0) -> tuple[Any, str]:
        """`turn`: the dialogue turn a turn check or live score is about (0: the plan, the final score)."""
        judge: Participant = self.seats.judge
        request = ReplyRequest(seat="judge", system="You are a careful, fair evaluator.",
                               messages=[{"role": "user", "content": prompt}], on_retry=self._retry_cb("judge"),
                               purpose=purpose, turn=turn)
        value, reply = await judge.reply_structured(request, schema)
        self.emit(UsageRecorded(seat="judge", model=reply.model, purpose=purpose, usage=reply.usage))
        return value, reply.model

    # -- phases ---------------------------------------------------------------------------------

    async def _planning(self) -> None:
        self.emit(PhaseChanged(phase="planning"))
        env = self.item.environment
        agent: Participant = self.seats.agent
        if agent.info.kind == "human":
            self.emit(AwaitingHuman(seat="agent", turn=0, hint="your plan: the target on the first line, then one step per line"))
        request = ReplyRequest(seat="agent", system="You are a proactive assistant planning your next move.",
                               messages=[{"role": "user", "content": prompts.planning_prompt(env.user_information, env.trigger_factor)}],
                               on_retry=self._retry_cb("agent"), purpose="planning")
        try:
            draft, reply = await agent.reply_structured(request, PlanDraft, parse_plan_text)
        except ModelError as exc:
            self.emit(ErrorRaised(seat="agent", message=f"planning failed: {exc.message}", purpose="planning",
                                  judgement=False))
            return
        self.emit(UsageRecorded(seat="agent", model=reply.model, purpose="planning", usage=reply.usage))
        self.plan = draft
        self._plan_model = reply.model
        self.emit(PlanProposed(plan=Plan(target=draft.target, sub_targets=draft.sub_targets, model=reply.model)))
        # Scoring the plan does not gate the dialogue: it runs while the agent opens (started
        # in _dialogue just after the opening message's request, which is on the critical path).
        self._plan_to_score = draft

    async def _planning_in_group(self, group: PlanGroup) -> None:
        """Plan once per batch group (`shared_plan`): the first session plans, with the group's
        lock held; a later one takes its plan, and its score once judged, as reused."""
        async with group.lock:
            if group.target is None:
                await self._planning()
                if self.plan is not None:
                    group.publish(self.plan.target, self.plan.sub_targets, self._plan_model, self.session_id)
                    self._publishes_score = True
                return
        self.emit(PhaseChanged(phase="planning"))
        self.plan = PlanDraft(target=group.target, sub_targets=group.sub_targets)
        self.emit(PlanProposed(plan=Plan(target=group.target, sub_targets=list(group.sub_targets), model=group.model),
                               reused_from=group.source))
        self._background.append(asyncio.create_task(self._reuse_score(group, self.plan)))

    async def _reuse_score(self, group: PlanGroup, draft: PlanDraft) -> None:
        shared = await group.score()
        if shared is None:  # the planning session got no score: judge the plan here
            await self._score_plan(draft)
            return
        self.emit(PlanScored(score=shared.score, reasoning=shared.reasoning, judge_model=shared.judge_model,
                             reused_from=shared.source))

    async def _score_plan(self, draft: PlanDraft) -> None:
        env = self.item.environment
        shared: PlanScoreShared | None = None
        try:
            try:
                verdict, judge_model = await self._judge(PlanJudgement, prompts.plan_judge_prompt(
                    env.user_information, env.trigger_factor, draft.target, draft.sub_targets, self.item.target,
                    self.item.sub_target), "plan score")
            except ModelError as exc:
                self.emit(ErrorRaised(seat="judge", message=f"plan scoring failed: {exc.message}", purpose="plan score",
                                      judgement=True))
                return
            shared = PlanScoreShared(score=verdict.score, reasoning=verdict.reasoning, judge_model=judge_model,
                                     source=self.session_id)
            self.emit(PlanScored(score=verdict.score, reasoning=verdict.reasoning, judge_model=judge_model))
        finally:
            self._give_score(shared)

    def _give_score(self, shared: PlanScoreShared | None) -> None:
        """The session that planned for its batch group hands the plan's score to the group's
        other sessions (None: no score came, so they judge the plan themselves)."""
        if self._publishes_score and self.plan_group is not None:
            self._publishes_score = False
            self.plan_group.scored(shared)

    async def _check_turn(self, turn: int) -> bool:
        agent_text = self.agent_msgs[turn].content
        probes = probe_message(agent_text, first_message=turn == 1)
        against = self.guide_source()
        target, steps = self.guide_target()
        n_steps = len(steps)
        try:
            verdict, judge_model = await self._judge(TurnVerdict, prompts.turn_check_prompt(
                target, steps, self.transcript(turn), agent_text), f"turn {turn} check", turn=turn)
        except ModelError as exc:
            self.emit(ErrorRaised(seat="judge", message=f"turn {turn} check failed: {exc.message}", purpose="turn check",
                                  judgement=True))
            self.emit(TurnChecked(check=TurnCheck(turn=turn, target_reached=None, reason=f"judge failed: {exc.message}",
                                                  cumulative_sub_targets=sorted(self.covered), probes=probes,
                                                  judged_against=against)))
            return False
        covered = sorted({i for i in verdict.covered_steps if 1 <= i <= n_steps})
        self.covered |= set(covered)
        self.emit(TurnChecked(check=TurnCheck(
            turn=turn, target_reached=verdict.target_reached, reason=verdict.reasoning, covered_sub_targets=covered,
            target_density=len(covered), cumulative_sub_targets=sorted(self.covered), probes=probes, judge_model=judge_model,
            judged_against=against,
        )))
        reached: bool = verdict.target_reached
        return reached

    async def _score_guidance(self, live: bool, turn: int) -> None:
        if not self.agent_msgs:
            return
        env = self.item.environment
        against = self.guide_source()
        target, steps = self.guide_target()
        prompt = prompts.guidance_judge_prompt(env.user_information, env.trigger_factor, target, steps, self.transcript(turn))
        earlier = self._live_prompts.get(turn)
        if not live and earlier is not None and earlier[0] == prompt and self.judge_is_embedded():
            # Ending early after a live score: the final prompt is the live one, and the embedded
            # judge is deterministic and busy; asking again would repeat the same ~26 s call.
            self.emit(GuidanceScored(score=earlier[1].model_copy(update={"live": False})))
            return
        try:
            verdict, judge_model = await self._judge(GuidanceJudgement, prompt,
                                                     "live guidance score" if live else "guidance score",
                                                     turn=turn if live else 0)
        except ModelError as exc:
            self.emit(ErrorRaised(seat="judge", message=f"{'live ' if live else ''}guidance scoring failed: {exc.message}",
                                  purpose="live guidance score" if live else "guidance score", judgement=True))
            return
        score = GuidanceScore(**verdict.model_dump(), judge_model=judge_model, live=live, turn=turn, judged_against=against)
        if live:
            self._live_prompts[turn] = (prompt, score)
        self.emit(GuidanceScored(score=score))

    # -- resume -------------------------------------------------------------------------------

    def _restore_plan(self, record: RunRecord) -> None:
        """Keep the interrupted session's plan (and its score, or score it again later)."""
        p = record.section.planning
        if p.target is None:
            return
        self.emit(PhaseChanged(phase="planning"))
        self.plan = PlanDraft(target=p.target, sub_targets=p.sub_targets)
        self.emit(PlanProposed(plan=Plan(target=p.target, sub_targets=p.sub_targets, model=p.model or "")))
        if p.score is not None:
            self.emit(PlanScored(score=p.score, reasoning=p.reasoning or "", judge_model=p.judge_model or ""))
        else:
            self._plan_to_score = self.plan

    def _replay_message(self, message: MessageRecord) -> None:
        self.emit(MessageStarted(message_id=message.id, role=message.role, turn=message.turn, model=message.model))
        self.emit(MessageDelta(message_id=message.id, text=message.content))
        self.emit(MessageDone(message=message))

    async def _restore_turns(self, record: RunRecord) -> tuple[int, bool]:
        """Replay the complete turns; returns (turns kept, whether the target was already reached)."""
        kept = complete_turns(record)
        done: dict[tuple[str, int], MessageRecord] = {(m.role, m.turn): m for m in record.messages if not m.partial}
        checks = {c.turn: c for c in record.section.turn_checks if c.turn <= kept}
        reached = False
        for turn in range(1, kept + 1):
            for role, msgs in (("agent", self.agent_msgs), ("user", self.user_msgs)):
                msgs[turn] = done[(role, turn)]
                self._replay_message(msgs[turn])
            if turn in checks:
                self.covered |= set(checks[turn].covered_sub_targets)
                self.emit(TurnChecked(check=checks[turn]))
                reached = reached or bool(checks[turn].target_reached)
        scored = set()
        for score in record.section.live_scores:
            if score.turn <= kept:
                self.emit(GuidanceScored(score=score))
                scored.add(score.turn)
        if self.fork_at is not None:  # a branch: the prefix is what it is (see `fork_at`)
            if self.fork_at[1] == "user" and ("agent", kept + 1) in done:
                self.agent_msgs[kept + 1] = done[("agent", kept + 1)]
                self._replay_message(self.agent_msgs[kept + 1])
            return kept, reached
        for turn in range(1, kept + 1):  # checks the interruption cut off
            if turn not in checks and not reached:
                reached = await self._check_turn(turn)
        if self.settings.live_judging:  # live scores it cut off (every turn but the last has one)
            for turn in range(1, min(kept, self.settings.max_turns - 1) + 1):
                if turn not in scored:
                    await self._score_guidance(live=True, turn=turn)
        return kept, reached

    async def _dialogue(self) -> str:
        self.emit(PhaseChanged(phase="dialogue"))
        max_turns = self.settings.max_turns
        early_stop = bool(self.settings.early_stop)
        # Generating the agent's next message ahead pays off only if it can run beside the judges.
        # On one shared instance it queues in front of the turn check, and when the check ends the
        # session it is thrown away (~12 s on the embedded model); without early stopping it is
        # never thrown away, so it still goes first and the dialogue appears sooner.
        speculate = self.seats.agent.info.kind != "human" and not (early_stop and self.agent_shares_judge())
        turn = 1
        if self.resume_from is not None:
            if self.fork_at is not None:
                self._plan_to_score = None  # a branch's plan and its score (or its lack) are the parent's
            if self._plan_to_score is not None:  # the interrupted session's plan was never scored
                self._background.append(asyncio.create_task(self._score_plan(self._plan_to_score)))
                self._plan_to_score = None
            kept, reached = await self._restore_turns(self.resume_from)
            if reached and early_stop:
                return "target_reached"
            if kept >= max_turns:
                self.emit(PhaseChanged(phase="scoring"))
                self._final_score = asyncio.create_task(self._score_guidance(live=False, turn=kept))
                self._background.append(self._final_score)
                return "max_turns"
            turn = kept + 1
        await self.checkpoint(turn)
        if turn in self.agent_msgs:  # a branch forked at this turn's user reply: its agent message is the parent's
            agent_task: asyncio.Task[MessageRecord] = asyncio.create_task(_ready(self.agent_msgs[turn]))
        else:
            agent_task = asyncio.create_task(self._generate("agent", turn))
        self._background.append(agent_task)
        if self._plan_to_score is not None:
            self._background.append(asyncio.create_task(self._score_plan(self._plan_to_score)))
        while True:
            self.agent_msgs[turn] = await agent_task
            self.user_msgs[turn] = await self._generate("user", turn)
            last = turn >= max_turns
            ahead = speculate and not last and not self.paused
            if ahead:
                # Created first so its request goes out before the judges': it is on the critical path.
                await self.checkpoint(turn + 1)
                agent_task = asyncio.create_task(self._generate("agent", turn + 1))
                self._background.append(agent_task)
            check = asyncio.create_task(self._check_turn(turn))
            self._background.append(check)
            if last:
                # The dialogue is over whatever the check says: the final score need not wait for it.
                self.emit(PhaseChanged(phase="scoring"))
                self._final_score = asyncio.create_task(self._score_guidance(live=False, turn=turn))
                self._background.append(self._final_score)
                return "target_reached" if await check else "max_turns"
            if self.settings.live_judging:
                self._background.append(asyncio.create_task(self._score_guidance(live=True, turn=turn)))
            if await check and early_stop:
                if ahead:
                    await self._discard(agent_task, turn + 1)
                return "target_reached"
            if not ahead:
                await self.checkpoint(turn + 1)  # paused or stepping: the judges ran, now wait for the person
                agent_task = asyncio.create_task(self._generate("agent", turn + 1))
                self._background.append(agent_task)
            turn += 1

    async def _discard(self, task: asyncio.Task[MessageRecord], turn: int) -> None:
        """Cancel a speculative agent message; if it had already finished, retract it."""
        message_id = self._started_ids.get(("agent", turn))
        if message_id:
            self._discarded.add(message_id)  # before cancelling: no partial MessageDone for it
        if not task.done():
            task.cancel()
        try:
            await task
        except (asyncio.CancelledError, ModelError):
            pass
        if message_id:
            self.emit(MessageDiscarded(message_id=message_id, reason="target reached before this message was needed"))

    async def _finish_background(self, cancel: bool) -> None:
        pending = [t for t in self._background if not t.done()]
        for task in pending:
            if cancel:
                task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def run_protocol(self) -> None:
        self.emit(SessionStarted(
            session_id=self.session_id, family=self.family, env_id=self.env.id,
            environment=self.env.model_dump(mode="json"),
            mode="play" if any(self.seats.get(s).info.kind == "human" for s in ("agent", "user", "judge")) else "watch",
            seats={s: self.seats.get(s).info for s in ("agent", "user", "judge")},
            settings=self.settings.model_dump(), models=self.models,
            prompt_version=prompts.PROMPT_VERSION, app_version=__version__,
            resumed_from=None if self.resume_from is None else {
                "session_id": self.resume_from.id, "turns": complete_turns(self.resume_from)},
        ))
        reason, detail, score = "error", "", True
        # the turns a resumed session already has ran before this one: its first to begin is the next
        self.gate_turn = 0 if self.resume_from is None else complete_turns(self.resume_from)
        try:
            if self.resume_from is not None:
                self._restore_plan(self.resume_from)
            if self.settings.planning and self.plan is None and self.fork_at is None:
                if self.plan_group is not None:
                    await self._planning_in_group(self.plan_group)
                else:
                    await self._planning()
            reason = await self._dialogue()
            await self._finish_background(cancel=False)
        except asyncio.CancelledError:
            reason, score = "cancelled", self.score_on_stop
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            await self._finish_background(cancel=True)
        except UserStopped:
            reason = "user_stopped"
            await self._finish_background(cancel=True)
        except ModelError as exc:
            reason, detail, score = "error", exc.message, False
            seat = failed_seat(exc)  # its judge seat only judges
            self.emit(ErrorRaised(seat=seat, message=exc.message, fatal=True,
                                  judgement=None if seat is None else seat == "judge"))
            await self._finish_background(cancel=True)
        except Exception:
            self._give_score(None)  # a bug ends this session; the batch group's others go on
            raise
        if self._final_score is not None:
            pass  # already scored alongside the last turn check (awaited with the background tasks)
        elif score and self.agent_msgs:
            self.emit(PhaseChanged(phase="scoring"))
            last_turn = max(self.user_msgs) if self.user_msgs else max(self.agent_msgs)
            await self._score_guidance(live=False, turn=last_turn)
        self._give_score(None)  # planned but never scored (cut off first): the group must not wait
        self.end(reason, detail)


def build_proactiveeval_session(spec: SessionSpec, env: Any, seats: dict[str, Any], session_id: str | None = None,
                                resume_from: Any = None, fork_at: tuple[int, str] | None = None) -> ProactiveEvalSession:
    """The session, each model seat at the family's `seat_temperature` and with the `seed`
    setting (a seat's own seed wins); `resume_from` restores a record's complete turns (a resume,
    or a fork's prefix with `fork_at`)."""
    from proactive_tui.core.spec import seat_family_settings

    spec = seat_family_settings(spec, seats, "proactiveeval")
    seed = spec.settings.get("seed")
    if seed is not None:  # the setting reaches every model call (a seat's own seed wins)
        for participant in seats.values():
            settings = getattr(participant, "settings", None)
            if settings is not None and getattr(settings, "seed", 0) is None:
                participant.settings = settings.model_copy(update={"seed": int(seed)})
    return ProactiveEvalSession(env, ProactiveEvalSeats(**{s: seats[s] for s in ("agent", "user", "judge")}),
                                ProactiveEvalSettings(**spec.settings), session_id=session_id,
                                models=spec.models_summary(), resume_from=resume_from, fork_at=fork_at)


class ProactiveEvalEngine(EnginePart):
    def build_session(self, spec: SessionSpec, env: Any, seats: dict[str, Any], session_id: str | None = None) -> ProactiveEvalSession:
        return build_proactiveeval_session(spec, env, seats, session_id=session_id)


ENGINE = ProactiveEvalEngine()
