"""The guidance judge's verdict: five dimensions and the overall 1-10, reasoning on demand.
Unscored shows "-", never 0, and the judge model is named."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from proactive_tui.textsafe import plain

DIMENSIONS = ("effectiveness", "personalization", "tone", "engagement", "naturalness", "overall")


class FinalScores(Vertical):
    def compose(self) -> ComposeResult:
        yield Static(id="scores-table")
        with Collapsible(title="judge reasoning", collapsed=True, id="scores-reasoning-box"):
            yield Static(Text("-"), id="scores-reasoning")

    def on_mount(self) -> None:
        self.border_title = "Guidance scores"
        self.score = None
        self._redraw()

    def show(self, score) -> None:
        self.score = score
        self.query_one("#scores-reasoning", Static).update(Text(plain(score.reasoning)))
        self._redraw()

    def _redraw(self) -> None:
        table = Table.grid(padding=(0, 2))
        table.add_column()
        table.add_column(justify="right")
        for dim in DIMENSIONS:
            value = "-" if self.score is None else f"{getattr(self.score, dim)}/10"
            table.add_row(Text(dim, style="bold" if dim == "overall" else ""), Text(value, style="bold" if dim == "overall" else ""))
        self.border_subtitle = f"judge: {self.score.judge_model}" if self.score else "not scored yet"
        self.query_one("#scores-table", Static).update(table)
