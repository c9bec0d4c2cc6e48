"""ProactiveBench's live scores: the confusion matrix and the six metrics (docs/protocols.md#proactivebench),
updated after every event from the engine's ProposalMetricsUpdated (never recomputed here).

The numbers are upstream's: one cell per judged task, and 0 where a denominator is empty (its
eps). Such a 0 is marked "*" with the reason under the table ("* 0: no proposals"), so it never
reads as a measured 0; "-" is shown only before anything is scored. The border names the judge,
and a run that is not upstream's protocol (verdict feedback on, three candidates, retries) says
so in the panel. Under the matrix, "N judged · M skipped" uses the words of the cards, the prompt
and the end note: a skipped event (a person's skip, or no usable reply or verdict) is not counted.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, Confusion, Metrics, reasons, show
from proactive_tui.textsafe import plain


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


class MetricsPanel(Static):
    def __init__(self, judge: str = "", protocol: str = "", per_task: bool = False, **kwargs) -> None:
        """`protocol`: how the run differs from upstream's evaluation ("" when it does not);
        `per_task`: three candidates, so the matrix counts tasks, not events."""
        super().__init__(**kwargs)
        self.confusion = Confusion()
        self.metrics = Metrics()
        self.judge = judge
        self.protocol = protocol
        self.per_task = per_task

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
        if not self.confusion.judged and not self.confusion.skipped:
            return {label: "-" for _, label in METRIC_LABELS}
        return {label: show(self.metrics, key, why=False) for key, label in METRIC_LABELS}

    def footnote(self) -> str:
        """Why a starred 0 is 0, or "" when none is."""
        why = reasons(self.metrics) if self.confusion.judged or self.confusion.skipped else ""
        return f"* 0: {why}" if why else ""

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
        counted = f"{c.judged} tasks judged · {c.skipped} skipped" if self.per_task else f"{c.judged} judged · {c.skipped} skipped"
        grid = Table.grid()
        if self.protocol:
            grid.add_row(Text(f"not upstream's protocol: {self.protocol}", style="bold yellow"))
        grid.add_row(matrix)
        grid.add_row(Text(counted, style="dim"))
        grid.add_row(Text(""))
        grid.add_row(scores)
        note = self.footnote()
        if note:
            grid.add_row(Text(note, style="dim"))
        return grid
