"""The per-type scores: for EMERGENT, CRITICAL, RECOVERY and OVERALL, the tallies, the pass rate
and the weighted score (PASS 1, PARTIAL 0.5, FAIL 0), as upstream's metrics compute them
(`metrics.type_summary` over the record's `stats()`; nothing is recomputed here).

SKIPPED triggers are shown in their own column and left out of every rate, as upstream leaves
them out of the denominator; a type with no evaluated trigger shows "-" (no rate), never 0. The
border names who scored: the judge (offline), the user agent (online) or you.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from proactive_tui.families.proactbench.metrics import COUNTS, type_summary
from proactive_tui.textsafe import plain


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


class TypeScorePanel(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stats: dict[str, dict[str, int]] = {}
        self.scorer = ""

    def on_mount(self) -> None:
        self.border_title = "Scores per trigger type"
        self._redraw()

    def show(self, stats: dict[str, dict[str, int]], scorer: str = "") -> None:
        self.stats = stats
        if scorer:
            self.scorer = scorer
        self._redraw()

    def rows(self) -> list[tuple[str, ...]]:
        """(type, PASS, PARTIAL, FAIL, SKIPPED, pass rate, weighted) as shown (the tests read it)."""
        return [(kind, *(str(tally.get(c, 0)) for c in COUNTS), pct(rate), score(weighted))
                for kind, tally, rate, weighted in type_summary(self.stats)]

    def _redraw(self) -> None:
        self.border_subtitle = f"scored by {plain(self.scorer)}" if self.scorer else ""
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True, min_width=8)
        for _ in range(6):
            table.add_column(justify="right")
        table.add_row(*(Text(h, style="bold") for h in ("type", "P", "½", "F", "S", "pass", "score")))
        for row in self.rows():
            style = "bold" if row[0] == "OVERALL" else ""
            table.add_row(Text(row[0].lower() if row[0] != "OVERALL" else "overall", style=style),
                          *(Text(cell, style=style) for cell in row[1:]))
        grid = Table.grid()
        grid.add_row(table)
        grid.add_row(Text("P pass · ½ partial · F fail · S skipped, not counted", style="dim"))
        self.update(grid)
