"""The judged sub-targets, ticked as the dialogue covers them (cumulative, from turn checks): the
reference's, or the agent's own plan's once it guides with it (`set_steps`), since the turn checks
then number the plan's steps.

The steps are the reference plan: a person playing the user would be steered by them, and one
planning as the agent would copy them. So the checklist can hide their text (`set_hidden(hint)`):
it then shows only which numbers are covered, and a line saying the steps are hidden and how to
show them.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class SubTargetChecklist(Static):
    def __init__(self, steps: list[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.steps = steps
        self.done: set[int] = set()
        self.hidden_hint: str | None = None
        """None: the steps show; else they are hidden and this line says how to show them."""

    def on_mount(self) -> None:
        self.border_title = "Sub-targets"
        self._redraw()

    def tick(self, covered: list[int]) -> None:
        self.done = set(covered)
        self._redraw()

    def set_steps(self, steps: list[str], title: str) -> None:
        """Show these steps instead (the turn checks judge against them from now on)."""
        self.steps = list(steps)
        self.border_title = title
        self._redraw()

    def set_hidden(self, hint: str | None) -> None:
        self.hidden_hint = hint
        self._redraw()

    def _redraw(self) -> None:
        text = Text()
        if self.hidden_hint is not None:
            for i in range(1, len(self.steps) + 1):
                mark = "☑" if i in self.done else "☐"
                text.append(f"{mark} {i}  ", style="bold" if i in self.done else "dim")
            text.append("\n")
            text.append(self.hidden_hint, style="italic")
        else:
            for i, step in enumerate(self.steps, 1):
                mark = "☑" if i in self.done else "☐"
                text.append(f"{mark} {i}. ", style="bold" if i in self.done else "dim")
                text.append(plain(step) + ("\n" if i < len(self.steps) else ""), style="" if i in self.done else "dim")
        self.border_subtitle = f"{len(self.done)}/{len(self.steps)}"
        self.update(text)
