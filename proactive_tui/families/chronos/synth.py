"""Chronos's data pipeline (the paper's section 3.3, "Iterative Data Synthesis Pipeline"), on the
synth engine. Docs: README "Generate environments", docs/protocols.md (Chronos synth).

Per item (a template, a tier, a number):

1. Scenario background (`generator`): persona, initial need, supplemental constraints, the
   multi-stage market states, and for the complex tier the intention shift; plus the two endings
   the sample branches into. The paper's assumptions (i)-(v) are checked by rules on both
   branches (`assumption_violation`); a violation rejects the item as `assumption_i` ...
   `assumption_v`. Then the scenario goes through the family's own loader, the check a person's
   file gets (`invalid_scenario` when it refuses it).
2. Interactive dialogue: each branch is played as a real Chronos session (the protocol, its
   oracle and its observations), with the `user` seat (user simulator) and the `agent` seat
   (agent simulator) as the two alternating simulators. Every utterance is a draft scored by
   its own critic (`user_critic`, `agent_critic`: Appendix F.1 / F.2's five criteria, 0-20
   each) and kept only when the sum reaches the threshold (75, the paper's) and the critic says
   passed; else drafted again, at most `max_attempts` drafts (ours: 3; the paper states none).
   Where a rule decides, no critic is asked: an agent draft whose action the protocol does not
   accept or whose status is wrong, or a user reply to an offer that does not read as the
   confirmation (or refusal) it must be, is a failed draft. Every draft and every score is a
   step file. No draft passing rejects the item (`critic_user`, `critic_agent`).
3. Double branches: the positive session must end with the agent completing the task after the
   user's thanks, the negative with the agent keeping silent through the last state (the
   session's own verdict); anything else rejects the item (`branch_positive`, `branch_negative`).

Kept: the branching scenario (`<template>/<item>.json`, loads as `<id>/positive` and
`<id>/negative`) and one chat-format line per branch in `chronos-dialogues.jsonl` (the agent's
system prompt, then what the agent read, user messages and observations as user turns, and its
structured replies as assistant turns: what the paper fine-tunes on).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.core.events import SeatInfo
from proactive_tui.core.participants import Participant, Reply
from proactive_tui.families.chronos import synth_prompts as prompts
from proactive_tui.families.chronos.env import FAMILY, fork, load_scenarios
from proactive_tui.families.chronos.events import TimelineFinished
from proactive_tui.families.chronos.oracle import classify_reply, expect, expected_status
from proactive_tui.families.chronos.prompts import agent_system
from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
from proactive_tui.families.chronos.reply import AgentReply
from proactive_tui.llm.errors import ModelError
from proactive_tui.synth.engine import Outcome, Reject, RoleSpec, StepContext, _slug, gather_calls, person_provenance
from proactive_tui.textsafe import json_text

GENERATOR_VERSION = f"chronos-synth-1+{prompts.SYNTH_PROMPTS_VERSION}"
STAGES = ("background", "user", "user_critic", "agent", "agent_critic")
TIERS = ("simple", "complex")
BRANCHES = ("positive", "negative")
PAPER_THRESHOLD = 75
"""Appendix F.1 / F.2: a reply is acceptable when its total score is at least 75 (of 100)."""
TEMPERATURES = {"background": 0.9, "user": 0.7, "agent": 0.7, "user_critic": 0.0, "agent_critic": 0.0}
"""Ours (the paper states none for generation): drafts vary, so a regenerated draft can differ;
the critics are greedy so a score is reproducible."""
TURN_LIMIT = {"simple": 20, "complex": 24}
"""The scenario's turn limit, as the shipped samples set it."""
DIALOGUE_FILE = "chronos-dialogues.jsonl"
SESSION_SETTINGS = {"prompt_variant": "standard", "confirmation_reader": "keywords", "monitor_delay_s": 0.0}
"""The agent simulator reads the basic prompt (Appendix D.1, the agent simulator's in the paper);
the user's reply to an offer is read by the keyword rule, which the user's drafts are checked
against (a rule decides, so no model is asked); the monitor does not wait."""


class SynthOptions(BaseModel):
    """What decides a Chronos run (all of it goes into the config hash)."""

    model_config = ConfigDict(extra="forbid")

    templates: list[str]
    tiers: list[Literal["simple", "complex"]] = Field(default_factory=lambda: list(TIERS))
    n: int = Field(ge=1)
    """Items tried per template and tier."""
    threshold: int = Field(default=PAPER_THRESHOLD, ge=0, le=100)
    max_attempts: int = Field(default=3, ge=1, le=10)


# -- reply schemas ------------------------------------------------------------------------------

class StateDraft(BaseModel):
    time: str
    listings: list[str]
    meets_needs: bool
    note: str = ""


class ConstraintDraft(BaseModel):
    key: str
    value: str
    reveal_turn: int


class KeyValue(BaseModel):
    key: str
    value: str


class ShiftDraft(BaseModel):
    utterance: str
    intention: str
    constraints: list[KeyValue]
    timeline: list[StateDraft]


class SimpleBackground(BaseModel):
    title: str
    persona: str
    initial_need: str
    intention: str
    constraints: list[ConstraintDraft]
    start_time: str
    timeline: list[StateDraft]
    positive_ending: StateDraft
    negative_ending: StateDraft


class ComplexBackground(SimpleBackground):
    intention_shift: ShiftDraft


class UserUtterance(BaseModel):
    text: str


class UserScores(BaseModel):
    profile_consistency: int = Field(ge=0, le=20)
    intention_clarity: int = Field(ge=0, le=20)
    intention_shift: int = Field(ge=0, le=20)
    naturalness: int = Field(ge=0, le=20)
    contextual_logic: int = Field(ge=0, le=20)


class AgentScores(BaseModel):
    tool_usage: int = Field(ge=0, le=20)
    reminder_setting: int = Field(ge=0, le=20)
    context_understanding: int = Field(ge=0, le=20)
    proactivity: int = Field(ge=0, le=20)
    status_accuracy: int = Field(ge=0, le=20)


class UserCritique(BaseModel):
    scores: UserScores
    passed: bool
    feedback: str


class AgentCritique(BaseModel):
    scores: AgentScores
    passed: bool
    feedback: str


def total(critique: UserCritique | AgentCritique) -> int:
    """The total score, summed by code from the five criteria (the model's own sum is not asked)."""
    return sum(critique.scores.model_dump().values())


# -- the scenario -------------------------------------------------------------------------------

def scenario_from(draft: SimpleBackground, tier: str) -> dict[str, Any]:
    """The draft in the family's file format: a branching scenario (`branches`)."""
    raw: dict[str, Any] = {
        "title": draft.title.strip(), "scenario": "", "tier": tier, "persona": draft.persona.strip(),
        "initial_need": draft.initial_need.strip(), "intention": draft.intention.strip(),
        "constraints": [c.model_dump() for c in draft.constraints], "start_time": draft.start_time.strip(),
        "timeline": [s.model_dump() for s in draft.timeline],
        "branches": {"positive": [draft.positive_ending.model_dump()],
                     "negative": [draft.negative_ending.model_dump()]},
        "turn_limit": TURN_LIMIT[tier],
    }
    if isinstance(draft, ComplexBackground):
        shift = draft.intention_shift
        raw["intention_shift"] = {"utterance": shift.utterance.strip(), "intention": shift.intention.strip(),
                                  "constraints": {kv.key: kv.value for kv in shift.constraints},
                                  "timeline": [s.model_dump() for s in shift.timeline]}
    return raw


def _when(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"time {value!r} is not a string")
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"time {value!r} is not an ISO 8601 time") from None


def assumption_violation(branch: dict[str, Any]) -> tuple[str, str] | None:
    """The first of the paper's assumptions (section 3.3) one branch of a scenario breaks, as
    (`assumption_<n>`, why), or None. Rules, no model:

    (i) the user expresses the intent progressively: some constraint is revealed after the opening
        (reveal_turn >= 1);
    (ii) the initial state (`timeline[0]`, the market as the dialogue opens) does not meet the needs;
    (iii) the monitor delivers the states at a fixed frequency: every state after the first is the
        same interval after the one before (the shift's and the branch's included), later than it;
    (iv) complex: the user shifts only after the agent's first follow-up with a state meeting the
        initial needs, so the first timeline has such a state, and it is its last (the user shifts
        right after it: a later pre-shift state would never be seen);
    (v) complex: the first state after the shift does not meet the new needs.
    A malformed time is `invalid_scenario` (the loader would say so too)."""
    constraints = branch.get("constraints") or []
    if not any(isinstance(c, dict) and isinstance(c.get("reveal_turn"), int) and c["reveal_turn"] >= 1
               for c in constraints):
        return "assumption_i", "no constraint is added after the opening message (every reveal_turn is 0)"
    timeline = branch.get("timeline") or []
    if not timeline:
        return "invalid_scenario", "the timeline is empty"
    if timeline[0].get("meets_needs"):
        return "assumption_ii", "the initial state already meets the needs"
    shift = branch.get("intention_shift")
    states = list(timeline) + (list(shift.get("timeline") or []) if isinstance(shift, dict) else [])
    try:
        start = _when(branch.get("start_time"))
        times = [_when(s.get("time")) for s in states]
    except ValueError as exc:
        return "invalid_scenario", str(exc)
    if times[0] < start:
        return "assumption_iii", "the initial state is earlier than the start"
    gaps = [b - a for a, b in zip(times[1:], times[2:])]
    if any(g.total_seconds() <= 0 for g in gaps) or (times[1:] and times[1] <= times[0]):
        return "assumption_iii", "the monitored states are not in strictly increasing time"
    if len(set(gaps)) > 1:
        return "assumption_iii", ("the monitored states do not come at a fixed frequency (intervals "
                                  + "; ".join(str(g) for g in gaps) + ")")
    if branch.get("tier") == "complex" and isinstance(shift, dict):
        meets = [i for i, s in enumerate(timeline) if s.get("meets_needs")]
        if not meets:
            return "assumption_iv", "no state before the shift meets the initial needs (nothing to follow up on)"
        if meets[0] != len(timeline) - 1:
            return "assumption_iv", (f"state {meets[0]} meets the initial needs but {len(timeline) - 1 - meets[0]} "
                                     "more states follow before the shift (the user shifts right after the follow-up)")
        after = shift.get("timeline") or []
        if after and after[0].get("meets_needs"):
            return "assumption_v", "the first state after the shift already meets the new needs"
    return None


def check_scenario(raw: dict[str, Any], stem: str) -> list[Any]:
    """Both branches through the assumptions, then the family's loader (a person's file's check);
    returns the loaded environments (two: positive, negative)."""
    forked = fork(raw)
    if isinstance(forked, str):
        raise Reject("invalid_scenario", forked)
    for name, one in forked:
        violation = assumption_violation(one)
        if violation is not None:
            raise Reject(violation[0], f"{name} branch: {violation[1]}")
    envs, problems = load_scenarios(stem, f"{stem}.json", raw)
    if problems:
        first = problems[0]
        raise Reject("invalid_scenario", first.message + (f" ({first.field})" if first.field else ""))
    return envs


# -- the simulators, as seats of a real session ---------------------------------------------------

class _Draft(BaseModel):
    """What became of one draft (for the provenance and a rejection's detail)."""

    branch: str
    turn: int
    role: str
    attempt: int
    score: int | None = None
    rule: str | None = None
    kept: bool = False


class _Seat(Participant):
    """A seat that answers by drafts, each scored by its critic, until one passes (or the
    attempts run out: the item is rejected). An error is kept and raised again after the session
    (the session would swallow it into its own ending)."""

    kind: str = ""

    def __init__(self, ctx: StepContext, branch: str, options: SynthOptions, log: list[_Draft]) -> None:
        self.ctx = ctx
        self.branch = branch
        self.options = options
        self.log = log
        self.session: Any = None
        self.error: BaseException | None = None
        self.info = SeatInfo(kind="llm", label=ctx.run.roles[self.kind].model)

    def attach(self, session: Any) -> None:
        self.session = session

    async def _drafts(self, turn: int, draft: Any, judge: Any) -> Any:
        tried: list[str] = []
        for attempt in range(1, self.options.max_attempts + 1):
            record = _Draft(branch=self.branch, turn=turn, role=self.kind, attempt=attempt)
            self.log.append(record)
            step = f"{self.branch}-t{turn:02d}-{self.kind}-a{attempt}"
            try:
                value = await self.ctx.ask(self.kind, step, self.kind, draft(), self.schema, TEMPERATURES[self.kind])
            except Reject as exc:
                record.rule = exc.reason
                tried.append(f"draft {attempt}: {exc.reason}")
                continue
            problem = self.rule(value)
            if problem is not None:
                record.rule = problem
                tried.append(f"draft {attempt}: {problem}")
                continue
            critic = f"{self.kind}_critic"
            try:
                verdict = await self.ctx.ask(critic, f"{step}-critic", critic, judge(value), self.critique,
                                             TEMPERATURES[critic])
            except Reject as exc:
                record.rule = f"critic {exc.reason}"
                tried.append(f"draft {attempt}: critic {exc.reason}")
                continue
            record.score = total(verdict)
            if record.score >= self.options.threshold and verdict.passed:
                record.kept = True
                return value
            tried.append(f"draft {attempt}: {record.score}" + ("" if verdict.passed else " (not passed)"))
        raise Reject(f"critic_{self.kind}", f"{self.branch} branch, turn {turn}: no {self.kind} draft reached "
                                            f"{self.options.threshold} in {self.options.max_attempts} ("
                                            + "; ".join(tried) + ")")


class SynthAgent(_Seat):
    kind = "agent"
    schema = AgentReply
    critique = AgentCritique

    def rule(self, reply: AgentReply) -> str | None:
        """What the protocol refuses in a draft, by rule: an action the oracle does not accept
        now, a wrong status, or nothing to read where the person would read it."""
        st = self.session.state
        expectation = self.session.pending or expect(st)
        if reply.proactive_action not in expectation.acceptable:
            return f"off_protocol ({reply.proactive_action}; the protocol expects {expectation.action})"
        want = expected_status(st, reply.proactive_action)
        if reply.task_description.status != want:
            return f"wrong_status ({reply.task_description.status}; should be {want})"
        shown = reply.proactive_action in ("NO_ACTION", "FOLLOW_UP", "COMPLETE_TASK", "FAILED_TASK") or (
            not st.monitoring and reply.proactive_action in ("INFO_RETRIEVAL", "SET_REMINDER"))
        if shown and not reply.response_text.strip():
            return "empty_response (the person would read nothing)"
        return None

    async def reply_structured(self, request: Any, schema: type, parse_text: Any = None) -> Any:
        messages = [{"role": "system", "content": request.system}, *request.messages]
        try:
            value = await self._drafts(request.turn, lambda: messages,
                                       lambda v: prompts.agent_critic(request.messages, v.model_dump_json()))
        except (Reject, ModelError) as exc:
            self.error = exc
            raise
        return value, Reply(text=value.model_dump_json(), model=self.info.label)


class SynthUser(_Seat):
    kind = "user"
    schema = UserUtterance
    critique = UserCritique

    def rule(self, utterance: UserUtterance) -> str | None:
        """A reply to an offer must read (by the keyword rule the session uses here) as the
        confirmation or refusal its brief asks for; and say something."""
        text = utterance.text.strip()
        if not text:
            return "empty"
        brief = self.session.current_brief
        reading = classify_reply(text)
        if brief.situation == "offer_meets" and reading != "confirm":
            return f"not_a_confirmation (reads as {reading})"
        if brief.situation == "offer_fails" and reading != "refuse":
            return f"not_a_refusal (reads as {reading})"
        return None

    async def reply(self, request: Any) -> Any:
        messages = [{"role": "system", "content": request.system}, *request.messages]
        persona = self.session.scenario.persona
        try:
            value = await self._drafts(request.turn, lambda: messages,
                                       lambda v: prompts.user_critic(persona, request.messages, v.text.strip(),
                                                                     request.hint))
        except (Reject, ModelError) as exc:
            self.error = exc
            raise
        return Reply(text=value.text.strip(), model=self.info.label)


async def play_branch(ctx: StepContext, env: Any, options: SynthOptions, log: list[_Draft],
                      played: dict[str, dict[str, Any]] | None = None) -> list[dict[str, str]]:
    """One branch as a Chronos session with the two simulators; the dialogue the agent read and
    wrote, once the session's verdict is the branch's ending. A branch played to an ending (a
    wrong one included) is put in `played` (its dialogue and the session's verdict) before any
    rejection: a person may keep the item against the verdict, and the studio shows how each
    branch ended."""
    branch = env.scenario.branch
    agent = SynthAgent(ctx, branch, options, log)
    user = SynthUser(ctx, branch, options, log)
    settings = ChronosSettings(**SESSION_SETTINGS)
    session = ChronosSession(env, ChronosSeats(agent=agent, user=user), settings, session_id=f"synth-{branch}")
    verdict = None
    async for event in session.events():
        if isinstance(event, TimelineFinished):
            verdict = event.outcome
    for seat in (agent, user):
        if seat.error is not None:
            raise seat.error
    dialogue = [{"role": "system", "content": agent_system(settings.prompt_variant)},
                *[dict(m) for m in session.dialogue]]
    if played is not None:
        played[branch] = {"dialogue": dialogue, "reason": "no verdict" if verdict is None else verdict.reason,
                          "detail": "" if verdict is None else verdict.detail}
    want = "completed" if branch == "positive" else "kept_silent"
    if verdict is None or not verdict.success or verdict.reason != want:
        got = "no verdict" if verdict is None else f"{verdict.reason}: {verdict.detail}"
        raise Reject(f"branch_{branch}", f"the {branch} dialogue did not end as its branch must ({want}); it ended "
                                         f"{got}")
    return dialogue


def chronos_step_rank(step: str) -> tuple[str, int, int, int, int] | None:
    """(branch, turn, user 0 / agent 1, attempt, draft 0 / critic 1) of a branch's step, in the
    order a branch makes them: the user's message of turn t (its reply to the agent's turn t-1)
    comes before the agent's turn t. None for a step of no branch (the background)."""
    match = re.fullmatch(r"(positive|negative)-t(\d+)-(user|agent)-a(\d+)(-critic)?", step)
    if match is None:
        return None
    return (match.group(1), int(match.group(2)), 0 if match.group(3) == "user" else 1, int(match.group(4)),
            1 if match.group(5) else 0)


class ChronosPipeline:
    """The paper's three steps per item (see the module docstring); nothing is shared between
    items, so shards need no shared input."""

    tiers = TIERS

    family = FAMILY
    version = GENERATOR_VERSION
    stages = STAGES
    roles = (
        RoleSpec(name="generator", purpose="scenario backgrounds (persona, needs, constraints, states, shift, endings)"),
        RoleSpec(name="user", purpose="the user simulator"),
        RoleSpec(name="agent", purpose="the agent simulator (structured replies)"),
        RoleSpec(name="user_critic", purpose="scores each user utterance (Appendix F.1's criteria)"),
        RoleSpec(name="agent_critic", purpose="scores each agent reply (Appendix F.2's criteria)"),
    )

    def __init__(self, options: SynthOptions) -> None:
        unknown = [t for t in options.templates if t not in prompts.TEMPLATES]
        if unknown:
            raise ValueError(f"unknown template {', '.join(unknown)} (one of {', '.join(prompts.TEMPLATES)})")
        if not options.templates:
            raise ValueError("no template given")
        self.options = options

    def config(self) -> dict[str, Any]:
        return {"options": self.options.model_dump(mode="json"), "temperatures": TEMPERATURES,
                "turn_limits": TURN_LIMIT, "session": SESSION_SETTINGS}

    def item_ids(self) -> list[str]:
        o = self.options
        return [f"{t}-{tier}-{i:04d}" for t in o.templates for tier in o.tiers for i in range(o.n)]

    def needs_shared_input(self) -> str | None:
        return None

    async def prepare(self, ctx: StepContext) -> None:
        return None

    async def run_item(self, ctx: StepContext, item_id: str, shared: Any) -> Outcome:
        template, tier, _number = item_id.rsplit("-", 2)
        schema = ComplexBackground if tier == "complex" else SimpleBackground
        draft = await ctx.ask("background", "background", "generator", prompts.background(template, tier), schema,
                              TEMPERATURES["background"])
        raw = scenario_from(draft, tier)
        raw["scenario"] = template
        for key in ("title", "persona", "initial_need", "intention"):
            if not raw[key]:
                raise Reject("empty", f"the background's {key} is empty")
        envs = check_scenario(raw, _slug(item_id))
        log: list[_Draft] = []
        played: dict[str, dict[str, Any]] = {}
        try:
            await gather_calls(*(play_branch(ctx, env, self.options, log, played) for env in envs))
        except Reject as exc:
            # The scenario passed every check, so it is an environment: a person may keep it
            # against the verdict (`engine.decide`), with the dialogues that reached an ending.
            raise Reject(exc.reason, exc.detail, record=self._record(ctx, item_id, template, raw, log, played),
                         tier=tier, group=template) from None
        record = self._record(ctx, item_id, template, raw, log, played)
        return Outcome(item=item_id, status="kept", tier=tier, group=template, record=record)

    def _record(self, ctx: StepContext, item_id: str, template: str, raw: dict[str, Any], log: list[_Draft],
                played: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The item's record: the scenario with its provenance, the dialogue of each branch played
        to an ending, how each ended (the session's verdict), and every draft with its fate."""
        drafts = sorted(log, key=lambda d: (d.branch, d.turn, d.role, d.attempt))
        raw["synth"] = {
            "generator": GENERATOR_VERSION, "item_id": item_id, "seed": ctx.seed, "template": template,
            "models": {spec.name: ctx.run.roles[spec.name].model for spec in self.roles},
            "critic_threshold": self.options.threshold, "max_attempts": self.options.max_attempts,
            "drafts": len(drafts), "regenerated": sum(1 for d in drafts if not d.kept),
        }
        return {"scenario": raw,
                "dialogues": {b: played[b]["dialogue"] for b in BRANCHES if b in played},
                "endings": {b: {"reason": played[b]["reason"], "detail": played[b]["detail"]}
                            for b in BRANCHES if b in played},
                "drafts": [d.model_dump() for d in drafts]}

    def installed_ids(self, run_name: str) -> str:
        """The ids the installed scenarios load under: a branch per scenario file."""
        return f"{self.family}/{run_name}/<template>/<item>/<branch>"

    def installed_id(self, outcome: Outcome, run_name: str) -> str:
        """The id "Play it now" opens: the positive branch (the negative is beside it)."""
        return f"{self.family}/{run_name}/{outcome.group}/{_slug(outcome.item)}/positive"

    # -- the studio ------------------------------------------------------------------------------

    def schemas(self) -> dict[str, type[BaseModel]]:
        return {cls.__name__: cls for cls in (SimpleBackground, ComplexBackground, UserUtterance, AgentReply,
                                              UserCritique, AgentCritique)}

    def downstream(self, step: str, steps: list[str]) -> list[str]:
        """The background feeds everything; a draft (or its critic's score) feeds what its branch
        said after it: later turns, later drafts of the same turn, the critic of the draft. The
        other branch is played apart and stays."""
        if step == "background":
            return [s for s in steps if s != "background"]
        mine = chronos_step_rank(step)
        if mine is None:
            return []
        return [s for s in steps if (r := chronos_step_rank(s)) is not None and r[0] == mine[0] and r > mine]

    def outputs(self, kept: list[Outcome], run_name: str) -> dict[str, Any]:
        """`<template>/<item>.json` (the branching scenario, its provenance in `synth`) and the
        dialogues, one JSONL line per branch, in item then branch order."""
        files: dict[str, Any] = {}
        lines = []
        for outcome in sorted(kept, key=lambda o: o.item):
            record = outcome.record or {}
            scenario = dict(record.get("scenario") or {})
            # A person's hand (rewritten steps, a keep against the verdict) is named in the
            # provenance the installed scenario and each dialogue line carry.
            scenario["synth"] = {**scenario.get("synth", {}), "run": run_name, **person_provenance(outcome)}
            files[f"{outcome.group}/{_slug(outcome.item)}.json"] = scenario
            for branch in BRANCHES:
                messages = (record.get("dialogues") or {}).get(branch)
                if not messages:
                    continue
                lines.append(json_text({
                    "id": f"{run_name}/{outcome.item}/{branch}",
                    "env_id": f"{FAMILY}/{run_name}/{outcome.group}/{_slug(outcome.item)}/{branch}",
                    "branch": branch, "tier": outcome.tier, "scenario": outcome.group,
                    "messages": messages, "synth": scenario["synth"],
                }, sort_keys=True))
        if lines:
            files[DIALOGUE_FILE] = "".join(line + "\n" for line in lines)
        return dict(sorted(files.items()))
