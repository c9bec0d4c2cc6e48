"""The running guidance score as a sparkline, one point per turn (live judging)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static


class ScoreTrend(Vertical):
    def compose(self) -> ComposeResult:
        yield Static(Text("live guidance score: -", style="dim"), id="trend-label")
        yield Sparkline([], summary_function=max, id="trend-line")

    def on_mount(self) -> None:
        self.border_title = "Guidance trend"
        self.points: list[int] = []

    def add_point(self, overall: int, judge: str) -> None:
        self.points.append(overall)
        self.query_one(Sparkline).data = list(self.points)
        label = Text("live guidance score: ")
        label.append(" → ".join(map(str, self.points)), style="bold")
        label.append(f"  judge: {judge}", style="dim")
        self.query_one("#trend-label", Static).update(label)
