"""Headless printing of countdown sessions: each check under the agent's number."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from proactive_tui.cli.printer import EventPrinter


class CountdownPrinter(EventPrinter):
    def show_family(self, event: Any) -> None:
        if event.type == "countdown.checked":
            mark = "✓" if event.correct else f"✗ (said {event.said})"
            self.note(Text(f"  check: expected {event.expected} {mark}", style="magenta"))
        elif event.type == "countdown.finished":
            self.note(Text(f"countdown: {event.correct}/{event.turns} correct"
                           + (", reached zero" if event.reached_zero else ""), style="bold"))
