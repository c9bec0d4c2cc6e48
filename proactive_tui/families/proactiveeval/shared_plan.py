"""One target plan per environment, agent model and repeat in a batch, reused by its agreeableness levels.

The paper plans once per environment and guides three times, once per agreeableness level: its
Table 4 counts 328 target-planning judgements against 984 dialogue-guidance ones (328 x 3). The
plan does not depend on the user's level (the agent sees only the user information and the
trigger), so planning again for every level would judge three plans where the paper judges one,
and the planning means would weigh different plans of one environment. In a batch (`eval
proactiveeval`) the sessions of one (environment, agent model, repeat) therefore share it: the
first to start plans and has the plan judged; the others take that plan and that score, recorded
as reused with the session they came from (`PlanProposed.reused_from`, `PlanScored.reused_from`).

A session that plans and fails leaves no plan: the next session of its group tries. A plan whose
scoring failed (or was cut off) is reused without a score, and the session that reuses it has it
judged. On `--resume` the folder's finished sessions seed the share, so the rest of a group reuses
the plan it already has. Shards keep a group together (`evalrun.plan.shard_keys`).

A plain `run` or the playground plans in every session: each is one session at one level.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PlanScoreShared:
    """A plan's score as a reusing session records it (from `PlanScored`)."""

    score: int
    reasoning: str
    judge_model: str
    source: str
    """The session whose judge call gave this score."""


@dataclass
class PlanGroup:
    """The plan of one (environment, agent model, repeat) and, once judged, its score."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a session of the group plans: the others wait for its plan, not plan beside it."""
    target: str | None = None
    sub_targets: list[str] = field(default_factory=list)
    model: str = ""
    source: str = ""
    """The session that made the plan."""
    _score: PlanScoreShared | None = None
    _score_known: asyncio.Event = field(default_factory=asyncio.Event)

    def publish(self, target: str, sub_targets: list[str], model: str, source: str) -> None:
        self.target, self.sub_targets, self.model, self.source = target, list(sub_targets), model, source

    def scored(self, value: PlanScoreShared | None) -> None:
        """Give the plan's score (None: there is none to reuse); only the first call counts."""
        if not self._score_known.is_set():
            self._score = value
            self._score_known.set()

    async def score(self) -> PlanScoreShared | None:
        """The score, once the session that plans has it judged (or gives up)."""
        await self._score_known.wait()
        return self._score


def group_key(key: Any) -> tuple[str, str, int]:
    """The sessions that share a plan: one environment, one agent model, one repeat (every other
    setting is the batch's, and the swept agreeableness level does not reach the planner)."""
    return key.env_id, key.agent, key.repeat


class PlanShare:
    """`BatchPart.share` of ProactiveEval: the plan groups of one batch run."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str, int], PlanGroup] = {}

    def seed(self, results: list[Any]) -> None:
        """Groups from finished sessions in the batch folder (`evalrun.folder.SessionResult`)."""
        for result in results:
            record = result.record
            planning = getattr(record.section, "planning", None)
            if planning is None or planning.target is None:
                continue
            group = self.groups.setdefault(group_key(result.key), PlanGroup())
            if group.target is not None:
                continue
            group.target, group.sub_targets, group.model = planning.target, list(planning.sub_targets), planning.model or ""
            group.source = planning.reused_from or record.id
            group.scored(None if planning.score is None else PlanScoreShared(
                score=planning.score, reasoning=planning.reasoning or "", judge_model=planning.judge_model or "",
                source=planning.score_reused_from or record.id))

    def attach(self, session: Any, key: Any) -> None:
        """Give a batch session its group (a session that is not ProactiveEval's is left alone)."""
        from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSession

        if isinstance(session, ProactiveEvalSession):
            session.plan_group = self.groups.setdefault(group_key(key), PlanGroup())
