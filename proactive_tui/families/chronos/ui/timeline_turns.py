"""Per agent reply: the exchange it belongs to (the family's unit, as the status line and the
transcript number it), its input, the action and status it chose, each with a check or cross
against the oracle's expected action and status.

The columns have fixed widths (the longest value each can hold), so rows added later never shift
the columns of the rows above. The mark ends the cell of the value it judges, in a column of its
own within the cell: a separate, unlabelled mark column read as belonging to the next column, and a
font that draws ✓/✗ wider than one cell only spills into the gap, never over the next value.
Where the full table does not fit (the side panel at 80 columns), the input column goes and the
status is written short, so the table fits without scrolling sideways.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

INPUT = {"user": "user", "tool_call": "tool", "internal_trigger": "trigger"}
ACTION_W, STATUS_W = len("info retrieval"), len("in progress")
SHORT_STATUS = {"PENDING": "pending", "IN_PROGRESS": "in prog", "COMPLETED": "done", "FAILED": "failed"}
SHORT_W = max(len(v) for v in SHORT_STATUS.values())
WIDE = (("#", 3), ("input", 8), ("action", ACTION_W + 3), ("status", STATUS_W + 2))
NARROW = (("#", 3), ("action", ACTION_W + 3), ("status", SHORT_W + 2))
"""(header, width): the longest value, a space, the mark, and one space between columns (the
table's own cell padding is 0)."""


def mark(ok: bool) -> Text:
    return Text("✓") if ok else Text("✗", style="bold")


def judged(value: str, ok: bool, width: int) -> Text:
    """`value ✓` or `value ✗`, the value as a person reads it (no_action -> no action) and padded
    so the marks line up. No italics for a wrong one: where italic glyphs come from another font
    (screenshots, some terminals) they are drawn wider and the row looks shifted."""
    shown = value.replace("_", " ").lower()[:width]
    return Text.assemble(shown.ljust(width) + " ", mark(ok))


class TimelineTurns(DataTable):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcomes: dict[int, Any] = {}
        self.narrow = False

    def on_mount(self) -> None:
        self.border_title = "Replies vs the oracle"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.cell_padding = 0
        self._build()

    def on_resize(self) -> None:
        narrow = self.scrollable_content_region.width < sum(w for _, w in WIDE)
        if narrow != self.narrow:
            self.narrow = narrow
            self._build()

    def _build(self) -> None:
        self.clear(columns=True)
        for header, width in NARROW if self.narrow else WIDE:
            self.add_column(header, width=width)
        for outcome in self.outcomes.values():
            self._add_row(outcome)
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)

    def exchange(self, outcome: Any) -> int:
        """The exchange `outcome`'s reply is in: a reply answering its own check continues one."""
        return sum(1 for o in self.outcomes.values() if o.turn <= outcome.turn and o.input_kind != "tool_call")

    def _add_row(self, outcome: Any) -> None:
        number = Text(f"{self.exchange(outcome):>2}")
        action = judged(outcome.action or "(invalid)", outcome.action_correct, ACTION_W)
        if self.narrow:
            status = judged(SHORT_STATUS.get(outcome.status or "", outcome.status or "-"), outcome.status_correct, SHORT_W)
            self.add_row(number, action, status, key=str(outcome.turn))
        else:
            status = judged(outcome.status or "-", outcome.status_correct, STATUS_W)
            self.add_row(number, INPUT.get(outcome.input_kind, outcome.input_kind), action, status,
                         key=str(outcome.turn))

    def add_outcome(self, outcome: Any) -> None:
        self.outcomes[outcome.turn] = outcome
        self._add_row(outcome)
        self.move_cursor(row=self.row_count - 1)

    @property
    def all_correct(self) -> bool:
        return all(o.action_correct and o.status_correct for o in self.outcomes.values())
