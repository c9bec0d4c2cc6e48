"""The rubric of the current trigger point: its type and what earns PASS, PARTIAL and FAIL.

The Planner wrote it before the assistant answered, and the model under test never sees it. A
person playing the agent does not either, until their reply at that turn is in: showing it first
would tell them what is being tested. The panel then says it is hidden and why (`set_hidden`).
Criteria are data: `plain` into rich Text.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain

COLOURS = {"PASS": "green", "PARTIAL": "yellow", "FAIL": "red"}


class RubricPanel(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: int | None = None
        self.turn: int | None = None
        self.rubric: Any = None
        self.total: int | None = None
        self.hidden: str | None = None
        self.shown = Text()
        """What the panel shows now (the tests read it)."""

    def on_mount(self) -> None:
        self._redraw()

    def show_rubric(self, index: int, turn: int, rubric: Any, total: int | None = None) -> None:
        self.index, self.turn, self.rubric, self.total = index, turn, rubric, total
        self._redraw()

    def set_hidden(self, why: str | None) -> None:
        """Hide the criteria (`why` says so in the panel) or show them again (None)."""
        self.hidden = why
        self._redraw()

    def _redraw(self) -> None:
        self.shown = self._body()
        self.update(self.shown)

    def _body(self) -> Text:
        of = f"/{self.total}" if self.total else ""
        if self.rubric is None:
            self.border_title = "Rubric"
            return Text("no trigger point yet", style="dim italic")
        self.border_title = f"Rubric · trigger {self.index}{of} · turn {self.turn} · {self.rubric.type}"
        if self.hidden:
            return Text(self.hidden, style="italic")
        text = Text()
        for i, (level, criterion) in enumerate(self.rubric.criteria()):  # each level said once ("PASS if…")
            if i:
                text.append("\n")
            text.append(f"{level} ", style=f"bold {COLOURS[level]}")
            text.append(plain(criterion))
        return text
