"""Chronos metrics (docs/protocols.md#chronos) as pure functions over per-turn outcomes.

- Task success per branch: the share of scored sessions of that branch that succeeded.
- Overall success: the mean of the positive- and negative-branch rates (each branch weighs the
  same, whatever its count), as the paper reports it. With one branch missing there is no overall:
  one rate is not the paper's number, so `overall_success` is None and `missing_branch` names it.
- Paired samples: a branching scenario's two branches share a `sample_id`; `paired_success` is
  the share of samples with both branches scored where both succeeded.
- Per tier (`by_tier`): the same figures for the simple and the complex tier apart, as the paper
  reports each tier in its own table.
- Action accuracy / status accuracy: the share of agent turns, pooled over all sessions, whose
  `proactive_action` was acceptable / whose `status` followed the status rules. A format failure is a
  turn with neither right.

Sessions that were not played to a verdict (`success is None`: cancelled, stopped, error) are left
out entirely. The same `accuracy` function gives a single session's values in its run record.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Protocol

from pydantic import BaseModel, Field


class TurnMark(Protocol):
    action_correct: bool
    status_correct: bool


class SessionSample(BaseModel):
    """One session as the batch metrics see it."""

    branch: Literal["positive", "negative"]
    success: bool | None
    tier: Literal["simple", "complex"] | None = None
    sample_id: str | None = None
    """The branching sample this session is one branch of (None for a one-branch scenario)."""
    action_correct: list[bool] = Field(default_factory=list)
    status_correct: list[bool] = Field(default_factory=list)

    @classmethod
    def from_turns(cls, branch: str, success: bool | None, turns: Iterable[TurnMark],
                   tier: str | None = None, sample_id: str | None = None) -> "SessionSample":
        turns = list(turns)
        return cls(branch=branch, success=success, tier=tier, sample_id=sample_id, action_correct=[t.action_correct for t in turns],  # type: ignore[arg-type]
                   status_correct=[t.status_correct for t in turns])


class ChronosMetrics(BaseModel):
    sessions: int = 0
    positive_sessions: int = 0
    negative_sessions: int = 0
    positive_success: float | None = None
    negative_success: float | None = None
    overall_success: float | None = None
    missing_branch: Literal["positive", "negative"] | None = None
    """A branch with no scored session (then there is no overall success); None when both ran
    (or neither did)."""
    paired_samples: int = 0
    """Branching samples with both branches scored (the latest session of each branch)."""
    paired_success: float | None = None
    """Share of those samples where both branches succeeded: the agent told the two futures apart."""
    turns: int = 0
    action_accuracy: float | None = None
    status_accuracy: float | None = None


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def accuracy(turns: Iterable[TurnMark]) -> tuple[float | None, float | None]:
    """(action accuracy, status accuracy) of one session's turns; None for a session with no turns."""
    turns = list(turns)
    return _share([t.action_correct for t in turns]), _share([t.status_correct for t in turns])


def chronos_metrics(samples: Iterable[SessionSample]) -> ChronosMetrics:
    scored = [s for s in samples if s.success is not None]
    pos = [bool(s.success) for s in scored if s.branch == "positive"]
    neg = [bool(s.success) for s in scored if s.branch == "negative"]
    missing: Literal["positive", "negative"] | None = None
    if pos and not neg:
        missing = "negative"
    elif neg and not pos:
        missing = "positive"
    pairs: dict[str, dict[str, bool]] = {}
    for s in scored:
        if s.sample_id:
            pairs.setdefault(s.sample_id, {})[s.branch] = bool(s.success)
    both = [all(p.values()) for p in pairs.values() if len(p) == 2]
    actions = [flag for s in scored for flag in s.action_correct]
    statuses = [flag for s in scored for flag in s.status_correct]
    return ChronosMetrics(
        sessions=len(scored), positive_sessions=len(pos), negative_sessions=len(neg),
        positive_success=_share(pos), negative_success=_share(neg),
        overall_success=(_share(pos) + _share(neg)) / 2 if pos and neg else None,  # type: ignore[operator]
        missing_branch=missing, paired_samples=len(both), paired_success=_share(both),
        turns=len(actions), action_accuracy=_share(actions), status_accuracy=_share(statuses),
    )


TIERS = ("simple", "complex")


def by_tier(samples: Iterable[SessionSample]) -> dict[str, ChronosMetrics]:
    """`chronos_metrics` for each tier that has samples, in the paper's order (simple, complex)."""
    samples = list(samples)
    return {tier: chronos_metrics([s for s in samples if s.tier == tier])
            for tier in TIERS if any(s.tier == tier for s in samples)}


def samples_from_records(records: Iterable[Any]) -> list[SessionSample]:
    """Chronos run records -> samples (records of other families, or without a verdict, are skipped)."""
    out = []
    for rec in records:
        section = rec.section if getattr(rec, "family", None) == "chronos" else None
        if section is None or section.outcome is None:
            continue
        out.append(SessionSample.from_turns(section.outcome.branch, section.outcome.success, section.turns,
                                            tier=section.outcome.tier,
                                            sample_id=(rec.environment or {}).get("sample_id")))
    return out
