"""Countdown's own events (type literals prefixed `countdown.`); dialogue uses the common events."""

from __future__ import annotations

from typing import Literal

from proactive_tui.core.events import EventBase


class NumberChecked(EventBase):
    """The rule's check of one agent turn."""

    type: Literal["countdown.checked"] = "countdown.checked"
    turn: int
    said: int | None
    """The number the agent's message held (None when it held none)."""
    expected: int
    correct: bool


class CountdownFinished(EventBase):
    type: Literal["countdown.finished"] = "countdown.finished"
    reached_zero: bool
    correct: int
    turns: int


EVENTS = (NumberChecked, CountdownFinished)

LEGACY_TYPES = {"countdown_checked": "countdown.checked"}
"""A name an imagined earlier version wrote (the contract test reads it back)."""
