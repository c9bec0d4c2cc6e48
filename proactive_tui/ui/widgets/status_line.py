"""The session's status line: turn n/N, who is generating, tokens, cost, elapsed, retries."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    UNIT = "turn"
    """What is counted ("turn"; a subclass may count "event"s)."""
    clock = staticmethod(time.monotonic)
    """Where elapsed time comes from (snapshot tests stop it)."""

    def __init__(self, max_turns: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.turn = 0
        self.max_turns = max_turns
        self.activity = "starting…"
        self.tokens = 0
        self.cost: float | None = None
        self.retry = ""
        self.started = self.clock()
        self.finished: float | None = None
        self.paused = False

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh_line)
        self.refresh_line()

    def refresh_line(self) -> None:
        elapsed = (self.finished or self.clock()) - self.started
        cost = "-" if self.cost is None else f"${self.cost:.4f}"
        line = Text()
        line.append(f"{self.UNIT} {self.turn}/{self.max_turns}", style="bold")
        line.append("  ·  ")
        line.append(self.activity + (" (paused)" if self.paused and self.finished is None else ""))
        line.append(f"  ·  {self.tokens} tokens  ·  cost {cost}  ·  {int(elapsed // 60)}:{int(elapsed % 60):02d}")
        if self.retry:
            line.append(f"  ·  {self.retry}", style="bold")
        self.update(line)

    def set(self, **changes) -> None:
        for key, value in changes.items():
            setattr(self, key, value)
        self.refresh_line()
