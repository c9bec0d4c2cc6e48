"""The agent's current task_description (intention, constraints, status), with what changed since
the agent's previous turn highlighted (new or changed lines bold and marked, dropped ones struck)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


class TaskPanel(Static):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.current: Any = None
        self.previous: Any = None
        self.turn = 0

    def on_mount(self) -> None:
        self.border_title = "Agent's task"
        self.update(Text("no agent turn yet", style="dim italic"))

    def show_task(self, turn: int, task: Any, where: str) -> None:
        """`where`: the reply's place in the family's unit (`exchange 3`), as the screen counts."""
        self.previous, self.current, self.turn = self.current, task, turn
        self.border_subtitle = where
        self.update(self.render_text())

    def render_text(self) -> Text:
        task, prev = self.current, self.previous
        text = Text()
        if task is None:
            return Text("no agent turn yet", style="dim italic")

        def mark(changed: bool) -> tuple[str, str]:
            return ("● ", "bold") if changed and prev is not None else ("  ", "")

        sign, style = mark(prev is None or prev.intention != task.intention)
        text.append(sign + "intention  ", style="bold")
        text.append(plain(task.intention or "—") + "\n", style=style)
        sign, style = mark(prev is None or prev.status != task.status)
        text.append(sign + "status     ", style="bold")
        text.append(task.status + "\n", style=style or "")
        text.append("  constraints\n", style="bold")
        now = task.constraints or {}
        before = (prev.constraints or {}) if prev is not None else {}
        if not now and not before:
            text.append("    none\n", style="dim italic")
        for key, value in now.items():
            sign, style = mark(before.get(key) != value)
            text.append(f"{sign}  {plain(str(key))}: {plain(str(value))}\n", style=style)
        for key, value in before.items():
            if key not in now:
                text.append(f"    {plain(str(key))}: {plain(str(value))}\n", style="dim strike")
        if prev is not None:
            text.append("● changed since the agent's previous reply", style="dim italic")
        return text.rstrip() or text
