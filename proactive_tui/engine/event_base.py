"""Building blocks shared by every family's events: the event base class and common payloads.

Family modules (`events_proposals`, `events_timeline`, ...) import from here, and `events`
gathers them all into one discriminated union, so no import cycle arises.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel

Seat = Literal["agent", "user", "judge"]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class UsageInfo(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None


class SeatInfo(BaseModel):
    kind: Literal["llm", "human", "scripted"]
    label: str
    """The model string for a model, "person" for a human, the script name for a scripted seat."""


class EventBase(BaseModel):
    """Every event: `seq` and `ts` are stamped by the session when it emits the event."""

    seq: int = 0
    ts: str = ""
