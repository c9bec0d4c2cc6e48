"""The Chronos verdict: success or failure and why, with the action and status accuracy."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from proactive_tui.textsafe import plain


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


class TimelineVerdict(Static):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome: Any = None

    def on_mount(self) -> None:
        self.border_title = "Verdict"
        self.update(Text("the session is still running", style="dim italic"))

    def show(self, outcome: Any, read: Any = None) -> None:
        """`read`: the last turn whose input was read (confirm / refuse / shift), to name its reader."""
        self.outcome = outcome
        verdict = "n/a" if outcome.success is None else ("SUCCESS" if outcome.success else "FAILURE")
        text = Text()
        text.append(verdict, style="bold reverse" if outcome.success is False else "bold")
        reason = "exchange limit" if outcome.reason == "turn_limit" else outcome.reason.replace('_', ' ')
        text.append(f" · {reason} · action {pct(outcome.action_accuracy)}"
                    f" · status {pct(outcome.status_accuracy)}")
        if outcome.detail:
            text.append("\n" + plain(outcome.detail), style="italic")
        if read is not None:
            from proactive_tui.families.chronos.report import READ_BY

            who = READ_BY[read.user_read_by] + (f" {read.user_read_model}" if read.user_read_model else "")
            text.append(f"\nthe user's last decisive message was read as {read.user_read_as} {plain(who)}", style="dim")
        # the accuracies are over agent replies (the paper's turns), which an exchange may hold several of
        self.border_subtitle = f"{outcome.turns} agent replies · {outcome.branch} · {outcome.tier}"
        self.update(text)
