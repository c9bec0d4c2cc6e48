"""The Chronos timeline: the simulated clock, the environment states (past, current, upcoming
greyed), which states would meet the needs, the user's presence and the reminders.

Which state meets the needs is a spoiler for a person playing a seat: `spoilers=False` hides it,
and the listings nobody has been shown yet (upcoming states, and the current one until an
observation carried it), until `toggle_spoilers()` (the screen's t).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain

MARK = {"past": "·", "current": "▶", "upcoming": " ", "skipped": "–"}


def short_time(iso: str) -> str:
    """2026-03-04T09:00 -> 2026-03-04 09:00 (what a person reads)."""
    return plain(iso).replace("T", " ")


class TimelinePanel(Static):
    def __init__(self, spoilers: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spoilers = spoilers
        self.view: Any = None
        self.reminders: list[Any] = []
        self.dormant = False
        self.manual = False
        self.seen: set[int] = set()
        """States (global index) whose listings an observation carried."""

    def on_mount(self) -> None:
        self.border_title = "Timeline"
        self._redraw()

    def show_view(self, view: Any) -> None:
        self.view = view
        self._redraw()

    def show_reminders(self, reminders: list[Any]) -> None:
        self.reminders = list(reminders)
        self._redraw()

    def show_seen(self, index: int) -> None:
        self.seen.add(index)
        self._redraw()

    def show_presence(self, dormant: bool) -> None:
        self.dormant = dormant
        self._redraw()

    def toggle_spoilers(self) -> None:
        self.spoilers = not self.spoilers
        self._redraw()

    def render_text(self) -> Text:
        """One line per state (cut with an ellipsis where the panel is narrow)."""
        text = Text(no_wrap=True, overflow="ellipsis")
        view = self.view
        if view is None:
            text.append("waiting for the session…", style="dim italic")
            return text
        text.append("clock ", style="dim")
        text.append(short_time(view.clock), style="bold")
        text.append(" · user ", style="dim")
        text.append("dormant" if self.dormant else "active", style="bold italic" if self.dormant else "bold")
        phase = None
        for state in view.states:
            if state.phase != phase:
                phase = state.phase
                text.append("\n" + ("States" if phase == "initial" else "After the intention shift"), style="bold")
            upcoming = state.position in ("upcoming", "skipped")
            style = "dim" if upcoming else ("bold" if state.position == "current" else "")
            text.append(f"\n{MARK[state.position]} {short_time(state.time)[5:]} ", style=style)
            if self.spoilers:
                text.append("✓ " if state.meets_needs else "✗ ", style=style)
            if state.position == "skipped":
                text.append("(skipped by the shift)", style="dim italic")
            elif upcoming and not self.spoilers:
                text.append("not visible yet", style="dim italic")
            elif not self.spoilers and state.index not in self.seen:
                text.append("not checked yet" if state.position == "current" else "never checked", style="dim italic")
            else:
                text.append(plain("; ".join(state.listings)), style=style)
        text.append("\nReminders", style="bold")
        if not self.reminders:
            text.append("\n  none set", style="dim italic")
        for r in self.reminders:
            active = r.status == "active"
            text.append(f"\n{'●' if active else '○'} #{r.id} {r.status}: ", style="bold" if active else "dim")
            text.append(f"{r.type or 'EVENT'} {plain(r.value or '')}", style="" if active else "dim")
        if self.spoilers:
            text.append("\n✓ meets the needs  ✗ does not", style="dim italic")
        else:
            text.append("\nwhich fits is hidden: t", style="dim italic")  # short: whole at 80 columns
        return text

    def _redraw(self) -> None:
        self.border_subtitle = "f: fast-forward" if self.dormant else ""
        self.update(self.render_text())
