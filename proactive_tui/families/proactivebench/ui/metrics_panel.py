"""ProactiveBench's live scores: the confusion matrix and the six metrics (docs/protocols.md#proactivebench),
updated after every event from the engine's ProposalMetricsUpdated (never recomputed here).

An undefined metric (zero denominator) shows "-", never 0; the border names the judge. Under the
matrix, "N judged · M skipped" uses the words of the cards, the prompt and the end note: a
skipped event (a person's skip, or no usable reply or verdict) is not counted.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, Confusion, Metrics
from proactive_tui.textsafe import plain


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


class MetricsPanel(Static):
    def __init__(self, judge: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.confusion = Confusion()
        self.metrics = Metrics()
        self.judge = judge

    def on_mount(self) -> None:
        self.border_title = "Metrics"
        self._redraw()

    def show(self, confusion: Confusion, metrics: Metrics) -> None:
        self.confusion, self.metrics = confusion, metrics
        self._redraw()

    def set_judge(self, judge: str) -> None:
        if judge and judge != self.judge:
            self.judge = judge
            self._redraw()

    def values(self) -> dict[str, str]:
        """What the panel shows per metric label (the tests read it)."""
        return {label: pct(getattr(self.metrics, key)) for key, label in METRIC_LABELS}

    def _redraw(self) -> None:
        self.border_subtitle = f"judge: {plain(self.judge)}" if self.judge else ""
        self.update(self.table())

    def table(self) -> Table:
        c = self.confusion
        matrix = Table.grid(padding=(0, 1))
        matrix.add_column()
        matrix.add_column(justify="right")
        matrix.add_column(justify="right")
        matrix.add_row(Text(""), Text("accepted", style="bold"), Text("rejected", style="bold"))
        matrix.add_row(Text("task", style="bold"), Text(f"TP {c.tp}", style="green"), Text(f"FP {c.fp}", style="red"))
        matrix.add_row(Text("no help", style="bold"), Text(f"TN {c.tn}", style="green"), Text(f"FN {c.fn}", style="red"))
        scores = Table.grid(padding=(0, 2))
        scores.add_column()
        scores.add_column(justify="right")
        for label, value in self.values().items():
            scores.add_row(Text(label), Text(value, style="bold"))
        scores.add_row(Text("tasks accepted", style="dim"), Text(f"{c.accepted_proposals}/{c.proposals}", style="dim"))
        counted = Text(f"{c.events} judged · {c.skipped} skipped", style="dim")
        grid = Table.grid()
        grid.add_row(matrix)
        grid.add_row(counted)
        grid.add_row(Text(""))
        grid.add_row(scores)
        return grid
