"""Per-turn judge rows: target reached?, density, covered sub-targets, probes flagged."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from proactive_tui.textsafe import plain


class TurnChecks(DataTable):
    def on_mount(self) -> None:
        self.border_title = "Turn checks"
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("turn", "reached", "dens.", "covered", "probes")
        self.reasons: dict[int, str] = {}

    def add_check(self, check) -> None:
        reached = "-" if check.target_reached is None else ("yes" if check.target_reached else "no")
        covered = ",".join(map(str, check.covered_sub_targets)) or "none"
        probes = Text(plain(", ".join(check.probes)) or "-", style="bold" if check.probes else "dim")
        self.reasons[check.turn] = check.reason
        self.add_row(str(check.turn), reached, str(check.target_density), covered, probes, key=str(check.turn))
        if check.judge_model:
            self.border_subtitle = f"judge: {check.judge_model}"
