"""Per agent turn: its input, the action and status it chose, and a check or cross against the
oracle's expected action and status (the why is kept per row)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

INPUT = {"user": "user", "tool_call": "tool", "internal_trigger": "trigger"}


def mark(ok: bool) -> Text:
    return Text("✓", style="bold") if ok else Text("✗", style="bold reverse")


class TimelineTurns(DataTable):
    def on_mount(self) -> None:
        self.border_title = "Turns vs the oracle"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("#", "input", "action", "", "status", "")
        self.outcomes: dict[int, object] = {}

    def add_outcome(self, outcome) -> None:
        self.outcomes[outcome.turn] = outcome
        action = outcome.action or "(invalid)"
        status = outcome.status or "-"
        self.add_row(str(outcome.turn), INPUT.get(outcome.input_kind, outcome.input_kind), action.replace("_", " ").lower(),
                     mark(outcome.action_correct), status.replace("_", " ").lower(), mark(outcome.status_correct),
                     key=str(outcome.turn))
        self.move_cursor(row=self.row_count - 1)

    @property
    def all_correct(self) -> bool:
        return all(o.action_correct and o.status_correct for o in self.outcomes.values())
