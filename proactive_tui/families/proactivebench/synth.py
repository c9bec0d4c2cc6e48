"""ProactiveBench's data pipeline (the paper's environment gym, upstream `gym/` in
thunlp/ProactiveAgent), on the synth engine. Docs: README "Generate environments", and
docs/protocols.md#synth-proactivebench for where it follows upstream and where it chose.

Stages, per item (one trace):

1. scene: the environment seat expands a scene (theme, description, entities, agent operations,
   example events; `synth_prompts.SCENES`) into this item's setting.
2. user: the user seat makes its profile (upstream's UserInfo) and a goal.
3. per batch, at most `batches` (upstream's `action_times`, 7):
   activity: the user's next action toward the goal (or finished, which ends the trace; not
   before the first batch: a session that records nothing is no trace);
   events: the environment turns it into a batch of events, each advancing a simulated clock by
   its `deltatime` seconds;
   propose: the proactive agent answers the batch (a task or null);
   verdict: the user seat (`--judge user`, upstream's default) or the reward-model judge
   (`--judge reward`, upstream's `USE_ACTIVERM`, its input layout) accepts or rejects.

Output: each trace in upstream's test-data format (`<item>.json`, a list of
`{"observation": {"time", "event"}, ...}`, the batch's last event annotated with
`agent_response.candidate_task` and `task_status`), `splits.json` with a split per scene, and
`agent_trainset.jsonl`: one `{"conversations": [...]}` per accepted proposal (upstream's
agent-trainset record). Every trace is read by the family's loader before it is kept.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.families.proactivebench import synth_prompts as sp
from proactive_tui.families.proactivebench.env import FAMILY, load_trace, parse_splits
from proactive_tui.families.proactivebench.judges import JudgeVerdict, ProposalReply
from proactive_tui.families.proactivebench.prompts import agent_system_prompt, reward_messages
from proactive_tui.synth.engine import Outcome, Reject, RoleSpec, StepContext, person_provenance, stable_seed

GENERATOR_VERSION = f"proactivebench-synth-1+{sp.SYNTH_PROMPTS_VERSION}"
STAGES = ("scene", "user", "activity", "events", "propose", "verdict")
TEMPERATURES = {"scene": 0.8, "user": 0.8, "activity": 0.8, "events": 0.8, "propose": 0.0, "verdict": 0.0}
"""Per stage. The simulators sample (a varied trace); the agent and the judge are greedy, as
upstream's evaluation and reward model run (a verdict is reproducible)."""
CLOCK_START = 1717200000
"""The simulated clock starts within 30 days after this unix time (2024-06-01), at a second
derived from the item's seed: upstream lets the environment model name a start time; a derived
one cannot be malformed and is the same on a rerun."""
MAX_DELTA_S = 600
TRAINSET = "agent_trainset.jsonl"
SPLITS = "splits.json"


class SynthOptions(BaseModel):
    """What decides a ProactiveBench run (all of it goes into the config hash)."""

    model_config = ConfigDict(extra="forbid")

    scenes: list[str]
    n: int = Field(ge=1)
    """Traces tried per scene."""
    batches: int = Field(default=7, ge=1, le=30)
    """Activities (event batches) per trace at most: upstream's `action_times`."""
    judge: Literal["user", "reward"] = "user"


# -- reply schemas ----------------------------------------------------------------------------

class SceneSetting(BaseModel):
    overview: str
    entities: list[str]
    agent_ops: list[str]


class UserProfile(BaseModel):
    name: str
    age: int
    job: str
    education: str
    characteristics: list[str]
    identities: list[str]
    goal: str


class Activity(BaseModel):
    is_finished: bool = False
    act: str


class NewEvent(BaseModel):
    event: str
    deltatime: int


class EventBatch(BaseModel):
    thoughts: str
    events: list[NewEvent]


class UserJudge(BaseModel):
    """Upstream's `Judge` (gym/models/user.py): the user seat's verdict."""

    thought: str
    is_accepted: bool


def _blank(text: str | None) -> bool:
    return text is None or not text.strip()


def _time(seconds: int) -> str:
    """Upstream writes times as unix seconds in a string with a fraction ("1717377997.0")."""
    return f"{float(seconds)}"


def pb_step_rank(step: str) -> tuple[int, int]:
    """Where a step sits in the order an item makes them (see `downstream`)."""
    if step in ("scene", "user"):
        return (0, 0 if step == "scene" else 1)
    match = re.fullmatch(r"(activity|events|propose|verdict)-(\d+)", step)
    if match is None:
        return (2, 0)
    return (1, int(match.group(2)) * 4 + ("activity", "events", "propose", "verdict").index(match.group(1)))


class ProactiveBenchPipeline:
    family = FAMILY
    version = GENERATOR_VERSION
    stages = STAGES

    @property
    def tiers(self) -> tuple[str, ...]:
        """A generated trace's tier is its scene."""
        return tuple(self.options.scenes)

    def __init__(self, options: SynthOptions) -> None:
        unknown = [s for s in options.scenes if s not in sp.SCENES]
        if unknown:
            raise ValueError(f"unknown scene {', '.join(unknown)} (one of {', '.join(sp.SCENES)})")
        self.options = options
        self.roles = (
            RoleSpec(name="environment", purpose="expands the scene, turns each activity into timed events"),
            RoleSpec(name="user", purpose="the simulated user: profile, goal, activities"
                                          + (", and the verdicts" if options.judge == "user" else "")),
            RoleSpec(name="agent", purpose="the proactive agent: a task or null after each batch"),
            *((RoleSpec(name="judge", purpose="the reward-model judge: accepts or rejects each proposal"),)
              if options.judge == "reward" else ()),
        )

    def config(self) -> dict[str, Any]:
        return {"options": self.options.model_dump(mode="json"), "temperatures": TEMPERATURES,
                "scenes": {k: sp.SCENES[k] for k in self.options.scenes}, "clock_start": CLOCK_START}

    def item_ids(self) -> list[str]:
        return [f"{scene}-{i:04d}" for scene in self.options.scenes for i in range(self.options.n)]

    def needs_shared_input(self) -> str | None:
        return None

    async def prepare(self, ctx: StepContext) -> None:
        return None

    async def run_item(self, ctx: StepContext, item_id: str, shared: Any) -> Outcome:
        key = item_id.rsplit("-", 1)[0]
        scene = sp.SCENES[key]
        setting = await ctx.ask("scene", "scene", "environment", sp.scene(scene), SceneSetting, TEMPERATURES["scene"])
        entities = [e.strip() for e in setting.entities if not _blank(e)]
        if _blank(setting.overview) or not entities:
            raise Reject("empty", "the scene's overview or entities are empty")
        overview = setting.overview.strip()
        profile_reply = await ctx.ask("user", "user", "user", sp.user(scene, overview, entities), UserProfile,
                                      TEMPERATURES["user"])
        profile = profile_reply.model_dump(mode="json")
        if _blank(profile_reply.goal) or _blank(profile_reply.name):
            raise Reject("empty", "the user's name or goal is empty")

        clock = CLOCK_START + stable_seed(ctx.run.seed, item_id, "clock") % (30 * 24 * 3600)
        trace: list[dict[str, Any]] = []
        trainset: list[dict[str, Any]] = []
        try:
            await self._batches(ctx, scene, overview, profile, clock, trace, trainset)
        except Reject as exc:
            # a later batch failed: the batches that ended in a verdict are a whole trace, which a
            # person may keep in the studio against the pipeline's verdict (`engine.decide`), when
            # it loads as the family reads it (the failed batch's events are left out)
            whole = max((i + 1 for i, e in enumerate(trace) if "synth_verdict" in e), default=0)
            record = self._record(ctx, item_id, key, profile, trace[:whole], trainset) if whole else None
            if not isinstance(record, dict):
                raise
            raise Reject(exc.reason, exc.detail, record=record, tier=key, group=key) from None
        record = self._record(ctx, item_id, key, profile, trace, trainset)
        if isinstance(record, str):
            raise Reject("loader", record)
        return Outcome(item=item_id, status="kept", tier=key, group=key, record=record)

    async def _batches(self, ctx: StepContext, scene: dict[str, Any], overview: str, profile: dict[str, Any],
                       clock: int, trace: list[dict[str, Any]], trainset: list[dict[str, Any]]) -> None:
        """Stage 3, batch by batch, growing `trace` and `trainset` in place (so what was made
        before a rejection is there to keep)."""
        o = self.options
        history: list[str] = []          # what the simulators see: events, proposals, verdicts
        convo: list[dict[str, str]] = []  # what the agent sees: upstream's step layout
        for batch in range(1, o.batches + 1):
            act = await ctx.ask("activity", f"activity-{batch}", "user", sp.activity(profile, overview, history),
                                Activity, TEMPERATURES["activity"])
            if act.is_finished and trace:
                break  # the goal reached; a "finished" before any event is read as the first action
            if _blank(act.act):
                raise Reject("empty", f"the user's activity of batch {batch} is empty")
            made = await ctx.ask("events", f"events-{batch}", "environment",
                                 sp.events(scene, overview, history, act.act.strip()), EventBatch,
                                 TEMPERATURES["events"])
            texts = [" ".join(e.event.split()) for e in made.events]
            if not texts or any(not t for t in texts):
                raise Reject("empty", f"the environment gave no events or an empty event for batch {batch}")
            pairs: list[tuple[str, str]] = []
            for event, text in zip(made.events, texts):
                clock += min(max(event.deltatime, 1), MAX_DELTA_S)
                pairs.append((_time(clock), text))
                trace.append({"observation": {"time": _time(clock), "event": text}})
                history.append(f"[{_time(clock)}] {text}")
            obs = sp.observations(pairs)
            step = [*convo, {"role": "user", "content": sp.step_message(obs)}]
            messages = [{"role": "system", "content": agent_system_prompt(1)}, *step]
            proposal = await ctx.ask("propose", f"propose-{batch}", "agent", messages, ProposalReply,
                                     TEMPERATURES["propose"])
            task = proposal.proactive_task
            accept, thought = await self._verdict(ctx, batch, profile, history, trace, task, proposal.response)
            pred = proposal.upstream_dict()
            last = trace[-1]
            # upstream's annotations on the event the agent answered: the accepted task is a
            # candidate; help was welcome when a task was accepted or a null was rejected
            last["agent_response"] = {"candidate_task": [task] if accept and task is not None else []}
            last["task_status"] = (task is not None) if accept else (task is None)
            last["synth_verdict"] = {"batch": batch, "proposed_task": task,
                                     "judgement": "accepted" if accept else "rejected", "thought": thought}
            if accept:
                trainset.append({"conversations": [*messages, {"role": "assistant", "content": json.dumps(pred)}]})
            history.append(f"The assistant {'proposed: ' + task if task is not None else 'offered nothing'}; "
                           f"the user {'accepted' if accept else 'rejected'}.")
            convo = [*convo, {"role": "user", "content": sp.history_message(obs)},
                     {"role": "assistant", "content": json.dumps(pred)}]

    def _record(self, ctx: StepContext, item_id: str, key: str, profile: dict[str, Any], events: list[dict[str, Any]],
                trainset: list[dict[str, Any]]) -> dict[str, Any] | str:
        """The item's record (the trace with its provenance, its trainset lines), or what the
        family's loader found wrong with the trace (every trace is read by it before it is kept)."""
        trace = [dict(e) for e in events]
        trace[0]["synth"] = {"generator": GENERATOR_VERSION, "item_id": item_id, "seed": ctx.seed, "scene": key,
                             "models": {spec.name: ctx.run.roles[spec.name].model for spec in self.roles},
                             "judge": self.options.judge, "user_profile": profile}
        splits = {f"synth_{key}": {"theme": sp.SCENES[key]["theme"], "files": [f"{item_id}.json"]}}
        parsed, problems = parse_splits(SPLITS, splits)
        envs, trace_problems = load_trace(item_id, f"{item_id}.json", json.loads(json.dumps(trace)), parsed)
        problems = [*problems, *trace_problems]
        if problems or not envs:
            return "; ".join(p.message for p in problems)[:500] or "the loader made no environment"
        return {"trace": trace, "trainset": trainset, "accepted": len(trainset)}

    async def _verdict(self, ctx: StepContext, batch: int, profile: dict[str, Any], history: list[str],
                       trace: list[dict[str, Any]], task: str | None, response: str | None) -> tuple[bool, str]:
        if self.options.judge == "reward":
            obs = [dict(e["observation"]) for e in trace]  # the trace's observation dicts, as sessions send them
            verdict = await ctx.ask("verdict", f"verdict-{batch}", "judge", reward_messages(obs, task), JudgeVerdict,
                                    TEMPERATURES["verdict"])
            return verdict.judgement == "accepted", verdict.thought
        judged = await ctx.ask("verdict", f"verdict-{batch}", "user", sp.judge(profile, history, task, response),
                               UserJudge, TEMPERATURES["verdict"])
        return judged.is_accepted, judged.thought

    def installed_ids(self, run_name: str) -> str:
        """The ids the installed traces load under (the loader names a trace by its path)."""
        return f"{FAMILY}/{run_name}/<scene>-<n>"

    def installed_id(self, outcome: Outcome, run_name: str) -> str:
        return f"{FAMILY}/{run_name}/{outcome.item}"

    # -- the studio ------------------------------------------------------------------------------

    def schemas(self) -> dict[str, type[BaseModel]]:
        return {cls.__name__: cls for cls in (SceneSetting, UserProfile, Activity, EventBatch, ProposalReply,
                                              JudgeVerdict, UserJudge)}

    def downstream(self, step: str, steps: list[str]) -> list[str]:
        """Each step is made from everything before it (the scene, the user, then per batch the
        activity, its events, the proposal and its verdict): an edit re-makes all after it."""
        mine = pb_step_rank(step)
        return [s for s in steps if pb_step_rank(s) > mine]

    # -- output ------------------------------------------------------------------------------

    def outputs(self, kept: list[Outcome], run_name: str) -> dict[str, Any]:
        """`<item>.json` per trace (its first event's `synth` holds the provenance: the run's name,
        and what a person did in the studio, `engine.person_provenance`), `splits.json` (a split
        per scene and `synth_all`), and the trainset."""
        files: dict[str, Any] = {}
        splits: dict[str, dict[str, Any]] = {}
        lines: list[str] = []
        for outcome in sorted(kept, key=lambda o: o.item):
            record = outcome.record or {}
            trace = [dict(e) for e in record.get("trace", [])]
            trace[0]["synth"] = {**trace[0].get("synth", {}), "run": run_name, **person_provenance(outcome)}
            name = f"{outcome.item}.json"
            files[name] = trace
            scene = sp.SCENES[outcome.group]
            splits.setdefault(f"synth_{outcome.group}", {"theme": scene["theme"], "files": []})["files"].append(name)
            for line in record.get("trainset", []):
                # upstream's message order, role then content (the result file sorted the keys)
                turns = [{"role": m["role"], "content": m["content"]} for m in line["conversations"]]
                lines.append(json.dumps({"conversations": turns}, ensure_ascii=False))
        if files:
            splits["synth_all"] = {"theme": "All", "files": sorted(files)}
            files[SPLITS] = dict(sorted(splits.items()))
        if lines:
            files[TRAINSET] = "\n".join(lines) + "\n"
        return files


def calls_per_item(batches: int) -> int:
    """Model calls of one trace that runs all its batches (no re-asks): scene 1, user 1, and per
    batch activity, events, proposal, verdict; one more activity call when the user finishes
    early (its `is_finished` ends the trace)."""
    return 2 + 4 * batches
