"""ProactiveEval's data pipeline (the paper's "Evaluation Data Generation"), on the synth engine.

Stages, per domain and item (docs in README "Generate environments"):

1. topic tree (shared by the items of a domain): first-level sub-topics from the domain's
   description, then each node expanded to `depth` levels with `branching` children; a child too
   like a topic already in the tree (difflib's similarity ratio, case-folded, >= `dedupe_ratio`)
   is dropped. Saved in DIR/tree.json; `--tree FILE` reuses an edited one.
2. environment: user information U and trigger factor F from a leaf topic, the domain's task and
   an in-context example (our shipped sample).
3. `candidates` target candidates (target + ordered sub-targets), sampled at temperature 1.0.
4. target ensemble: one reference from the candidates' strengths.
5. difficulty probe: three probe seats predict the target from (U, F); the judge seat says which
   predictions convey the reference's meaning.
6. refinement while two or more probes succeed: obfuscation rewrite, then noise injection, of U
   and F separately, keeping the reference valid; back to 5, at most `max_rounds` rounds.
7. final check: `validators` seats vote whether the reference is the best target; kept on a
   strict majority.
8. tier: fair = exactly one probe right, hard = none; more is rejected as too easy.

The paper's numbers are the defaults (5 candidates, 3 probes, at most 5 rounds, 5 validators);
every other value is a labelled deviation (`--candidates`, `--max-rounds`, `--validators`).
"""

from __future__ import annotations

import asyncio
import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.families.proactiveeval import synth_prompts as prompts
from proactive_tui.families.proactiveeval.env import DOMAINS, FAMILY
from proactive_tui.llm.errors import ModelError
from proactive_tui.synth.engine import (Outcome, Reject, RoleSpec, StepContext, gather_calls, person_provenance,
                                        stable_seed)

GENERATOR_VERSION = f"proactiveeval-synth-1+{prompts.SYNTH_PROMPTS_VERSION}"
PROBES = 3
STAGES = ("topic_tree", "environment", "candidates", "ensemble", "probe", "refine", "final_check")
TEMPERATURES = {"topic_tree": 0.8, "environment": 0.8, "candidates": 1.0, "ensemble": 0.0, "probe": 0.0,
                "refine": 0.7, "final_check": 0.0}
"""Per stage. The candidates' 1.0 is the paper's "high-temperature sampling"; the judging stages
are greedy so a verdict is reproducible."""


class SynthOptions(BaseModel):
    """What decides a ProactiveEval run (all of it goes into the config hash)."""

    model_config = ConfigDict(extra="forbid")

    domains: list[str]
    n: int = Field(ge=1)
    """Items tried per domain."""
    depth: int = Field(default=2, ge=1, le=4)
    branching: int = Field(default=3, ge=1, le=10)
    candidates: int = Field(default=5, ge=1, le=10)
    max_rounds: int = Field(default=5, ge=0, le=10)
    validators: int = Field(default=5, ge=1, le=9)
    dedupe_ratio: float = Field(default=0.85, gt=0, le=1)
    tree: dict[str, Any] | None = None
    """A given topic tree per domain (`--tree FILE`), else generated."""
    leaves: list[str] = Field(default_factory=list)
    """Chosen leaves (`--leaf "DOMAIN/Root / topic / leaf"`, the studio's topic tree): a domain with
    a chosen leaf draws its items only from its chosen leaves, the others from all of theirs.
    Needs `tree`: a person chooses leaves of a tree they have seen. Left out of the config when
    empty, so the runs made before the option keep their config hash (and resume)."""


# -- reply schemas (sent as the response format) ------------------------------------------------

class TopicList(BaseModel):
    topics: list[str]


class EnvironmentDraft(BaseModel):
    user_information: str
    trigger_factor: str


class TargetDraft(BaseModel):
    target: str
    sub_targets: list[str]


class TargetEnsemble(BaseModel):
    analysis: str
    target: str
    sub_targets: list[str]


class PredictedTarget(BaseModel):
    target: str


class ProbeVerdict(BaseModel):
    matches: list[bool] = Field(min_length=PROBES, max_length=PROBES)
    """One verdict per prediction, in order: in the schema, so a constrained decoder (the
    embedded model's grammar) cannot give another count, and a model that does is re-asked."""


class Rewrite(BaseModel):
    text: str
    reference_still_valid: bool


class FinalCheck(BaseModel):
    reasoning: str
    reference_is_best: bool


class TopicNode(BaseModel):
    topic: str
    children: list["TopicNode"] = Field(default_factory=list)

    def leaves(self, trail: tuple[str, ...] = ()) -> list[str]:
        here = (*trail, self.topic)
        if not self.children:
            return [" / ".join(here)]
        return [leaf for child in self.children for leaf in child.leaves(here)]


def _blank(text: str) -> bool:
    return not text or not text.strip()


def near_duplicate(topic: str, seen: list[str], ratio: float) -> bool:
    """Whether `topic` is too like one already in the tree, by difflib's `SequenceMatcher` ratio
    (the standard library's fuzzy matcher) on case-folded, whitespace-normalised text."""
    norm = " ".join(topic.casefold().split())
    for other in seen:
        other_norm = " ".join(other.casefold().split())
        if norm == other_norm or difflib.SequenceMatcher(None, norm, other_norm).ratio() >= ratio:
            return True
    return False


class ProactiveEvalPipeline:
    family = FAMILY
    version = GENERATOR_VERSION
    stages = STAGES
    tiers = ("fair", "hard")

    def __init__(self, options: SynthOptions) -> None:
        unknown = [d for d in options.domains if d not in DOMAINS]
        if unknown:
            raise ValueError(f"unknown domain {', '.join(unknown)} (one of {', '.join(DOMAINS)})")
        self.options = options
        if options.tree is not None:
            missing = [d for d in options.domains if d not in options.tree]
            if missing:
                raise ValueError(f"--tree holds no tree for {', '.join(missing)}")
            for domain in options.domains:
                TopicNode.model_validate(options.tree[domain])
        self.chosen = self._chosen_leaves(options)
        self.roles = (
            RoleSpec(name="generator", purpose="topic tree, environments, target candidates, ensemble, refinement"),
            *(RoleSpec(name=f"probe{k}", purpose=f"difficulty probe {k} of {PROBES}: predicts the target")
              for k in range(1, PROBES + 1)),
            RoleSpec(name="judge", purpose="judges which probe predictions convey the reference"),
            *(RoleSpec(name=f"validator{k}", purpose=f"final check, vote {k} of {options.validators}")
              for k in range(1, options.validators + 1)),
        )

    @staticmethod
    def _chosen_leaves(options: SynthOptions) -> dict[str, list[str]]:
        """Domain -> its chosen leaves as `TopicNode.leaves` spells them (the root's title may be
        left out of a `--leaf`); an unknown leaf is refused, naming it."""
        if not options.leaves:
            return {}
        if options.tree is None:
            raise ValueError("--leaf needs --tree: leaves are chosen from a topic tree you have seen")
        chosen: dict[str, list[str]] = {}
        for given in options.leaves:
            domain, sep, path = given.partition("/")
            domain = domain.strip()
            if not sep or not path.strip():
                raise ValueError(f'--leaf {given!r}: expected "DOMAIN/topic / ... / leaf"')
            if domain not in options.domains:
                raise ValueError(f"--leaf {given!r}: {domain} is not one of the run's domains "
                                 f"({', '.join(options.domains)})")
            root = TopicNode.model_validate(options.tree[domain])
            wanted = " / ".join(part.strip() for part in path.split(" / "))
            match = [leaf for leaf in root.leaves()
                     if leaf == wanted or leaf.split(" / ", 1)[-1] == wanted]
            if not match:
                raise ValueError(f"--leaf {given!r}: no such leaf in the {domain} topic tree")
            if match[0] not in chosen.setdefault(domain, []):
                chosen[domain].append(match[0])
        return chosen

    def config(self) -> dict[str, Any]:
        return {"options": self.options.model_dump(mode="json", exclude={"leaves"} if not self.options.leaves else None), "probes": PROBES, "temperatures": TEMPERATURES}

    def item_ids(self) -> list[str]:
        return [f"{domain}-{i:04d}" for domain in self.options.domains for i in range(self.options.n)]

    def needs_shared_input(self) -> str | None:
        if self.options.tree is None:
            return ("shards must share one topic tree: make it first (`synth proactiveeval --tree-only ...`) and give "
                    "it to every shard with --tree DIR/tree.json")
        return None

    # -- stage 1: the topic tree ---------------------------------------------------------------

    async def prepare(self, ctx: StepContext) -> dict[str, list[str]]:
        """The leaves per domain (a domain whose tree could not be made has none: its items are
        rejected, the others go on). The trees are written to DIR/tree.json."""
        from proactive_tui.evalrun.folder import write_atomic
        from proactive_tui.synth.engine import file_text

        trees: dict[str, TopicNode | None] = {}
        for domain in self.options.domains:
            if self.options.tree is not None:
                trees[domain] = TopicNode.model_validate(self.options.tree[domain])
                continue
            try:
                trees[domain] = await self._tree(ctx, domain)
            except Reject:
                trees[domain] = None
        write_atomic(ctx.run.folder / "tree.json",
                     file_text({d: t.model_dump(mode="json") for d, t in trees.items() if t is not None}))
        return {d: (self.chosen.get(d) or (t.leaves() if t is not None else [])) for d, t in trees.items()}

    async def _tree(self, ctx: StepContext, domain: str) -> TopicNode:
        o = self.options
        title = DOMAINS[domain]
        root = TopicNode(topic=title)
        seen: list[str] = [title]

        async def ask(path: list[int], names: list[str]) -> TopicList:
            step = f"tree-{domain}-" + (".".join(map(str, path)) if path else "root")
            messages = (prompts.first_level(domain, title, o.branching) if not path
                        else prompts.expand(domain, title, names, o.branching))
            return await ctx.ask("topic_tree", step, "generator", messages, TopicList, TEMPERATURES["topic_tree"])

        def adopt(node: TopicNode, reply: TopicList) -> None:
            for topic in reply.topics:
                topic = " ".join(topic.split())
                if _blank(topic) or near_duplicate(topic, seen, o.dedupe_ratio):
                    continue
                seen.append(topic)
                node.children.append(TopicNode(topic=topic))
                if len(node.children) >= o.branching:
                    break

        adopt(root, await ask([], []))
        if not root.children:
            raise Reject("no_topics", f"{domain}: the generator gave no usable first-level topic")
        frontier = [(child, [i], [child.topic]) for i, child in enumerate(root.children)]
        for _level in range(1, o.depth):
            # the nodes of a level are asked together, their replies adopted in node order: which
            # reply came first must not decide which of two near-duplicates is kept
            replies = await gather_calls(*(ask(path, names) for _node, path, names in frontier))
            for (node, _path, _names), reply in zip(frontier, replies):
                adopt(node, reply)
            frontier = [(child, [*path, i], [*names, child.topic])
                        for node, path, names in frontier for i, child in enumerate(node.children)]
        return root

    # -- stages 2-8: one item ------------------------------------------------------------------

    def _topic(self, domain: str, index: int, leaves: list[str]) -> str:
        order = sorted(leaves, key=lambda leaf: (stable_seed(0, domain, leaf), leaf))
        return order[index % len(order)]

    async def run_item(self, ctx: StepContext, item_id: str, shared: dict[str, list[str]]) -> Outcome:
        o = self.options
        domain, number = item_id.rsplit("-", 1)
        title = DOMAINS[domain]
        leaves = shared.get(domain) or []
        if not leaves:
            raise Reject("no_topics", f"{domain} has no topic tree (its generation was rejected)")
        topic_path = self._topic(domain, int(number), leaves)
        topic = topic_path.split(" / ", 1)[1] if " / " in topic_path else topic_path
        env = await ctx.ask("environment", "environment", "generator", prompts.environment(domain, title, topic_path),
                            EnvironmentDraft, TEMPERATURES["environment"])
        if _blank(env.user_information) or _blank(env.trigger_factor):
            raise Reject("empty", "the environment's user information or trigger factor is empty")
        user_info, trigger = env.user_information.strip(), env.trigger_factor.strip()

        drafts = await asyncio.gather(*(
            ctx.ask("candidates", f"candidate-{k}", "generator", prompts.target(domain, title, user_info, trigger),
                    TargetDraft, TEMPERATURES["candidates"]) for k in range(1, o.candidates + 1)),
            return_exceptions=True)
        for draft in drafts:
            if isinstance(draft, ModelError):
                raise draft
            if isinstance(draft, BaseException) and not isinstance(draft, Reject):
                raise draft
        usable = [(d.target.strip(), [s.strip() for s in d.sub_targets if not _blank(s)]) for d in drafts
                  if isinstance(d, TargetDraft) and not _blank(d.target)]
        usable = [(t, subs) for t, subs in usable if subs]
        if not usable:
            raise Reject("empty", f"none of the {o.candidates} target candidates was usable")

        merged = await ctx.ask("ensemble", "ensemble", "generator",
                               prompts.ensemble(domain, title, user_info, trigger, usable), TargetEnsemble,
                               TEMPERATURES["ensemble"])
        reference = merged.target.strip()
        sub_targets = [s.strip() for s in merged.sub_targets if not _blank(s)]
        if _blank(reference) or not sub_targets:
            raise Reject("empty", "the ensemble gave an empty reference target or no sub-targets")

        def record(correct: int, rounds: int, votes: int | None) -> dict[str, Any]:
            """The environment as made so far (a rejection carries it, for a person to keep)."""
            return {
                "environment": {"user_information": user_info, "trigger_factor": trigger},
                "target": reference,
                "sub_target": sub_targets,
                "topic": topic,
                "synth": {"generator": GENERATOR_VERSION, "item_id": item_id, "seed": ctx.seed,
                          "models": {spec.name: ctx.run.roles[spec.name].model for spec in self.roles},
                          "probes_right": correct, "refinement_rounds": rounds, "validator_votes": votes},
            }

        rounds = 0
        while True:
            correct = await self._probe(ctx, domain, title, user_info, trigger, reference, rounds)
            if correct <= 1:
                break
            if rounds >= o.max_rounds:
                raise Reject("too_easy", f"{correct} of {PROBES} probes still predicted the target after "
                                         f"{rounds} refinement rounds", record=record(correct, rounds, None),
                             group=domain)
            rounds += 1
            user_info, trigger = await self._refine(ctx, user_info, trigger, reference, sub_targets, rounds)
        tier = "hard" if correct == 0 else "fair"

        votes = await gather_calls(*(
            ctx.ask("final_check", f"validator-{k}", f"validator{k}",
                    prompts.final_check(domain, title, user_info, trigger, reference, sub_targets), FinalCheck,
                    TEMPERATURES["final_check"]) for k in range(1, o.validators + 1)))
        yes = sum(1 for v in votes if v.reference_is_best)
        if yes * 2 <= o.validators:
            raise Reject("validators", f"{yes} of {o.validators} validators judged the reference the best target",
                         record=record(correct, rounds, yes), tier=tier, group=domain)
        record_ = record(correct, rounds, yes)
        return Outcome(item=item_id, status="kept", tier=tier, group=domain, record=record_)

    async def _probe(self, ctx: StepContext, domain: str, title: str, user_info: str, trigger: str, reference: str,
                     round_: int) -> int:
        """Stage 5: how many probes predicted a target the judge says conveys the reference."""
        predictions = await gather_calls(*(
            ctx.ask("probe", f"probe-r{round_}-{k}", f"probe{k}", prompts.probe(domain, title, user_info, trigger),
                    PredictedTarget, TEMPERATURES["probe"]) for k in range(1, PROBES + 1)))
        verdict = await ctx.ask("probe", f"judge-r{round_}", "judge",
                                prompts.probe_judge(reference, [p.target for p in predictions]), ProbeVerdict,
                                TEMPERATURES["probe"])
        return sum(1 for m in verdict.matches if m)

    async def _refine(self, ctx: StepContext, user_info: str, trigger: str, reference: str, sub_targets: list[str],
                      round_: int) -> tuple[str, str]:
        """Stage 6: obfuscation rewrite, then noise injection, of U and F separately."""
        for kind in ("obfuscate", "noise"):
            new_user, new_trigger = await gather_calls(*(
                ctx.ask("refine", f"{kind}-{field}-r{round_}", "generator",
                        prompts.rewrite(kind, field, text, reference, sub_targets), Rewrite, TEMPERATURES["refine"])
                for field, text in (("user_information", user_info), ("trigger_factor", trigger))))
            for field, reply in (("user_information", new_user), ("trigger_factor", new_trigger)):
                if _blank(reply.text):
                    raise Reject("empty", f"the {kind} rewrite of {field} is empty (round {round_})")
                if not reply.reference_still_valid:
                    raise Reject("target_rewritten_away", f"the {kind} rewrite of {field} no longer supports the "
                                                          f"reference target (round {round_})")
            user_info, trigger = new_user.text.strip(), new_trigger.text.strip()
        return user_info, trigger

    # -- the studio ------------------------------------------------------------------------------

    def schemas(self) -> dict[str, type[BaseModel]]:
        return {cls.__name__: cls for cls in (TopicList, EnvironmentDraft, TargetDraft, TargetEnsemble,
                                              PredictedTarget, ProbeVerdict, Rewrite, FinalCheck)}

    def downstream(self, step: str, steps: list[str]) -> list[str]:
        """The steps made after `step` in the item's order (environment, candidates, ensemble, then
        per round: probes, judge, obfuscation, noise; the validators last): each is made from the
        outputs before it. Steps of the same rank (the five candidates, a round's probes, the two
        fields of a rewrite) are siblings, made apart, and stay."""
        mine = step_rank(step)
        return [s for s in steps if step_rank(s) > mine]

    # -- output --------------------------------------------------------------------------------

    def installed_ids(self, run_name: str) -> str:
        """The ids the installed items load under (the loader names a generated item by its run)."""
        return f"{self.family}/<domain>/<tier>/{run_name}-<item>"

    def installed_id(self, outcome: Outcome, run_name: str) -> str:
        return f"{self.family}/{outcome.group}/{outcome.tier}/{run_name}-{outcome.item}"

    def outputs(self, kept: list[Outcome], run_name: str) -> dict[str, Any]:
        """Upstream's layout, `<domain>/<tier>.json`, items by id; each record's `synth` holds its
        provenance, the run's name included (its id: `env.record_id`)."""
        files: dict[str, list[dict[str, Any]]] = {}
        for outcome in sorted(kept, key=lambda o: o.item):
            record = dict(outcome.record or {})
            record["synth"] = {**record.get("synth", {}), "run": run_name, **person_provenance(outcome)}
            files.setdefault(f"{outcome.group}/{outcome.tier}.json", []).append(record)
        return dict(sorted(files.items()))


def step_rank(step: str) -> tuple[int, int]:
    """Where a step of an item sits in the order its outputs feed one another (see `downstream`)."""
    import re

    fixed = {"environment": (0, 0), "ensemble": (2, 0)}
    if step in fixed:
        return fixed[step]
    if step.startswith("candidate-"):
        return (1, 0)
    if step.startswith("validator-"):
        return (4, 0)
    match = re.fullmatch(r"(probe|judge|obfuscate|noise)-.*r(\d+)(?:-\d+)?", step)
    if match:
        # round r: obfuscate (r, 0), noise (r, 1), probes (r, 2), judge (r, 3); round 0 has only probes and judge
        order = {"obfuscate": 0, "noise": 1, "probe": 2, "judge": 3}[match.group(1)]
        return (3, int(match.group(2)) * 4 + order)
    return (5, 0)  # unknown: made last, so never deleted by an edit before it


def calls_per_item(options: SynthOptions, rounds: int) -> int:
    """Model calls of one item with `rounds` refinement rounds (no re-asks): environment 1,
    candidates, ensemble 1, per probe round 3 probes + 1 judge, per refinement round 4 rewrites,
    validators."""
    return 1 + options.candidates + 1 + (rounds + 1) * (PROBES + 1) + rounds * 4 + options.validators


def tree_calls(options: SynthOptions) -> int:
    """Calls of one domain's tree at most (no duplicates dropped): one per node above the leaves."""
    return sum(options.branching ** level for level in range(options.depth))
