"""The reference sub-targets, ticked as the dialogue covers them (cumulative, from turn checks)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class SubTargetChecklist(Static):
    def __init__(self, steps: list[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.steps = steps
        self.done: set[int] = set()

    def on_mount(self) -> None:
        self.border_title = "Sub-targets"
        self._redraw()

    def tick(self, covered: list[int]) -> None:
        self.done = set(covered)
        self._redraw()

    def _redraw(self) -> None:
        text = Text()
        for i, step in enumerate(self.steps, 1):
            mark = "☑" if i in self.done else "☐"
            text.append(f"{mark} {i}. ", style="bold" if i in self.done else "dim")
            text.append(plain(step) + ("\n" if i < len(self.steps) else ""), style="" if i in self.done else "dim")
        self.border_subtitle = f"{len(self.done)}/{len(self.steps)}"
        self.update(text)
