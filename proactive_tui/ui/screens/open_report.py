""""Open a report folder…": a path, checked before anything opens.

Why a modal that reads the folder itself: a mistyped path or a folder that is not a batch's (no
`report.json`, no `sessions/`) gets its reason shown right under the input, and the person fixes
the path there, instead of a results screen opening empty or a toast that disappears.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal


class OpenReportModal(Modal[object]):
    """Dismissed with the `OpenedReport`, or None on Escape."""

    HELP_TITLE = "Open a report folder"
    CSS_PATH = Path(__file__).with_name("results.tcss")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, value: str = "") -> None:
        super().__init__()
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="open-report-box") as box:
            box.border_title = "Open a report folder"
            box.border_subtitle = "enter opens · esc cancels"
            yield Static("The folder `proactive-tui eval ... --out DIR` wrote (report.json, sessions/):",
                         classes="open-report-label", markup=False)
            yield Input(self.value, placeholder="path to the folder", id="open-report-path")
            yield Static("", id="open-report-error", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from proactive_tui.evalrun.opened import FolderProblem, open_folder

        error = self.query_one("#open-report-error", Static)
        path = event.value.strip()
        if not path:
            error.update("Type the path of a report folder.")
            return
        try:
            opened = open_folder(path)
        except (FolderProblem, OSError) as exc:
            error.update(plain(str(exc)))
            return
        self.dismiss(opened)

    def action_cancel(self) -> None:
        self.dismiss(None)
