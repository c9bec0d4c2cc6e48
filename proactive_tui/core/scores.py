"""A session's comparable score per turn (`RecordPart.turn_scores`): what the compare table and the
compare screen set side by side. Part of the engine (no store, no UI): a family builds it from its
run record; `services.compare` lays the sides' next to each other.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class TurnScores(BaseModel):
    """One family's comparable per-turn score of one session, and its final value."""

    label: str
    """What the per-turn value is (`guidance overall (live)`, `running F1`, `action correct`)."""
    per_turn: list[float | None]
    final_label: str
    final: float | None = None


def turn_scores(record: Any) -> TurnScores:
    """The family's comparable score per turn (`RecordPart.turn_scores`); for a family without one,
    none per turn."""
    from proactive_tui.core import registry

    family = registry.find(record.family)
    scores = family.record.turn_scores(record) if family is not None else None
    return scores if scores is not None else TurnScores(label="-", per_turn=[], final_label="-")
