"""The guidance judge's verdict: the overall 1-10 first (the headline, the paper's one guidance
score), then the five dimensions as diagnostics, reasoning on demand. Unscored shows "-", never
0, and the judge model is named; a score judged against the agent's own plan says so.

The reasoning weighs the dialogue against the reference target, so while a person plays the user
the screen can hide it (`set_hidden(hint)`); the numbers stay.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from proactive_tui.textsafe import plain

DIMENSIONS = ("effectiveness", "personalization", "tone", "engagement", "naturalness")


class FinalScores(Vertical):
    score = None
    hidden_hint: str | None = None
    """None: the reasoning can be opened; else it is hidden and this line says how to show it."""

    def compose(self) -> ComposeResult:
        yield Static(id="scores-table")
        with Collapsible(title="judge reasoning", collapsed=True, id="scores-reasoning-box"):
            yield Static(Text("-"), id="scores-reasoning")

    def on_mount(self) -> None:
        self.border_title = "Guidance score"
        self._redraw()

    def set_hidden(self, hint: str | None) -> None:
        """None shows the judge's reasoning; a hint hides it behind that line."""
        self.hidden_hint = hint
        if self.is_mounted:
            self._redraw()

    def show(self, score) -> None:
        self.score = score
        self.query_one("#scores-reasoning", Static).update(Text(plain(score.reasoning)))
        self._redraw()

    def _redraw(self) -> None:
        table = Table.grid(padding=(0, 2))
        table.add_column()
        table.add_column(justify="right")
        def value(name: str) -> str:
            return "-" if self.score is None else f"{getattr(self.score, name)}/10"

        table.add_row(Text("overall", style="bold"), Text(value("overall"), style="bold"))
        table.add_row(Text("diagnostics:", style="dim italic"), Text(""))
        for dim in DIMENSIONS:
            table.add_row(Text(dim, style="dim"), Text(value(dim), style="dim"))
        own = self.score is not None and self.score.judged_against == "own_plan"
        self.border_title = "Guidance score (vs own plan)" if own else "Guidance score"
        self.border_subtitle = f"judge: {self.score.judge_model}" if self.score else "not scored yet"
        shown = table
        if self.hidden_hint is not None and self.score is not None:
            shown = Group(table, Text(self.hidden_hint, style="italic"))
        self.query_one("#scores-table", Static).update(shown)
        self.query_one("#scores-reasoning-box").display = self.hidden_hint is None
