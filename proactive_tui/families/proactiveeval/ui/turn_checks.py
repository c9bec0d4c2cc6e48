"""Per-turn judge rows: target reached?, density, covered sub-targets, probes flagged.

Enter on a row opens the judge's reasoning for that turn (and what it was judged against), so
"why did it say the target was reached?" is answered from the verdict itself; `i` shows the call.
"""

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
        self.checks: dict[int, object] = {}

    def add_check(self, check) -> None:
        reached = "-" if check.target_reached is None else ("yes" if check.target_reached else "no")
        covered = ",".join(map(str, check.covered_sub_targets)) or "none"
        probes = Text(plain(", ".join(check.probes)) or "-", style="bold" if check.probes else "dim")
        self.reasons[check.turn] = check.reason
        self.checks[check.turn] = check
        self.add_row(str(check.turn), reached, str(check.target_density), covered, probes, key=str(check.turn))
        if check.judge_model:
            self.border_subtitle = f"judge: {check.judge_model}"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """The judge's reasoning for the selected turn, in a modal (text shown literally)."""
        try:
            turn = int(str(event.row_key.value))
        except (TypeError, ValueError):
            return
        check = self.checks.get(turn)
        if check is None:
            return
        from proactive_tui.ui.screens.text_modal import TextModal

        reached = "not given (the judge failed)" if check.target_reached is None else (
            "yes" if check.target_reached else "no")
        verdict = [f"target reached: {reached}",
                   f"sub-targets covered this turn: {', '.join(map(str, check.covered_sub_targets)) or 'none'}",
                   f"covered so far: {', '.join(map(str, check.cumulative_sub_targets)) or 'none'}",
                   "judged against: " + ("the agent's own plan" if check.judged_against == "own_plan"
                                         else "the reference target"),
                   f"judge: {check.judge_model or 'unknown'}"]
        sections = [("Reasoning", plain(check.reason) or "(the judge gave none)"), ("Verdict", "\n".join(verdict))]
        if check.probes:
            sections.append(("Probes flagged", plain(", ".join(check.probes))))
        self.app.push_screen(TextModal(f"Turn {turn} check", sections))
        event.stop()
