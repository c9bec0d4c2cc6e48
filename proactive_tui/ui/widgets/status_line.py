"""The session's status line: turn n/N, what is happening now, tokens, cost, elapsed, retries.

What is happening comes from two places: the screen's `activity` (set from engine events: who is
generating, who is judged, whose turn it is) and the session's turn gate (`gate`, asked on every
refresh), so "paused" is said only while the session really holds between turns, and a step's
running turn reads as running ("pauses after turn 3"), not as paused. The turn a pause is said to
stop after is the engine's (`SessionBase.last_to_run`): the turn the gate let through last plus the
steps still allowed, so a step pressed while a turn runs, or a turn the engine began ahead, is
counted, and the turn named is the last one that really runs.

Tokens are the record's totals (exact, from each call's usage) plus, while messages stream,
the chunks received so far (`streaming`, one chunk being about one token as providers stream):
shown as "~N tokens" so a long reply visibly counts up instead of the number jumping only when
the message ends, and said to be an estimate until the call's real usage replaces it.
"""

from __future__ import annotations

import time
from typing import Callable, Literal

GateState = Literal["", "holding", "pausing"]
Gate = tuple[GateState, "int | None"]
"""The turn gate as the status line asks for it: its state and the last turn that begins before it
holds (None when the session does not number its turns: a demo steps by message)."""

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    UNIT = "turn"
    """What is counted: the family's `turn_unit` name ("turn", "event", "exchange"), given as `unit`;
    the turn gate holds before each one, so the pause names the same unit."""
    clock = staticmethod(time.monotonic)
    """Where elapsed time comes from (snapshot tests stop it)."""

    def __init__(self, max_turns: int, unit: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        if unit:
            self.UNIT = unit
        self.turn = 0
        self.max_turns = max_turns
        self.activity = "starting…"
        self.tokens = 0
        self.streaming = 0
        """Chunks of messages still streaming (an estimate of their tokens, not in `tokens` yet)."""
        self.cost: float | None = None
        self.retry = ""
        self.started = self.clock()
        self.finished: float | None = None
        self.gate: Callable[[], Gate] | None = None
        """The session's turn gate: "holding" (paused between turns), "pausing" (a turn runs, then
        it holds) or "" (auto-play), with the last turn that begins before it holds; None before
        the session exists."""

    def counter_text(self) -> str:
        """How far the session is, in the family's unit: `turn 3/10`, `event 4/12`, `exchange 3/24`."""
        return f"{self.UNIT} {self.turn}/{self.max_turns}"

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh_line)
        self.refresh_line()

    def refresh_line(self) -> None:
        """One line; where it does not fit, cost, then tokens, then the clock give way (the
        activity and a retry notice are what a person needs now)."""
        elapsed = (self.finished or self.clock()) - self.started
        cost = "-" if self.cost is None else f"${self.cost:.4f}"
        tokens = f"~{self.tokens + self.streaming} tokens" if self.streaming else f"{self.tokens} tokens"
        extras = [tokens, f"cost {cost}", f"{int(elapsed // 60)}:{int(elapsed % 60):02d}"]
        room = self.content_region.width if self.is_attached and self.size.width else 0
        drop_order = [1, 0, 2]  # cost, tokens, elapsed
        while True:
            line = Text()
            line.append(self.counter_text(), style="bold")
            line.append("  ·  ")
            line.append(self.activity_text())
            for extra in extras:
                if extra:
                    line.append(f"  ·  {extra}")
            if self.retry:
                line.append(f"  ·  {self.retry}", style="bold")
            if not room or line.cell_len <= room or not drop_order:
                break
            extras[drop_order.pop(0)] = ""
        self.update(line)

    def on_resize(self) -> None:
        self.refresh_line()

    def activity_text(self) -> str:
        """The activity as shown now: the gate's state wins over a stale "next" while paused, and
        names the turn the session holds before, or the last one that runs before it holds."""
        state, last = self.gate() if self.gate is not None and self.finished is None else ("", None)
        unit = self.UNIT
        if state == "holding":
            after = f"{unit} {last + 1}" if last is not None else f"the next {unit}"
            return f"paused before {after}: s steps, a auto-plays"
        if state == "pausing":
            if last is None:
                return f"{self.activity} (pauses after this {unit})"
            if last == 0:
                return f"{self.activity} (pauses before {unit} 1)"
            return f"{self.activity} (pauses after {unit} {self.last_possible(last)})"
        return self.activity

    def last_possible(self, turn: int) -> int:
        """`turn`, or the last turn there is when it is beyond (a step pressed on the last turn
        lets through a turn that never comes: the session ends first)."""
        return min(turn, self.max_turns) if self.max_turns else turn

    def set(self, **changes) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        self.refresh_line()
