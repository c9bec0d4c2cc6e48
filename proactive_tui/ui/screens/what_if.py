""""What if…": edit this session's environment as JSON before starting (issue 17).

Opened from the setup modal (`w`). The editor shows the environment as its family's model dumps it
(`env.model_dump(mode="json")`, the same JSON the run record keeps), so whatever the family has
(ProactiveEval's persona, trigger and targets, a ProactiveBench trace's observations, a Chronos
scenario's persona and timeline) can be changed, and plugin families work without code of their
own. Apply checks the text with the family's `validate_env` (`envs.what_if.parse_edit`); a bad edit
keeps the editor open with the text as typed and says, per field, what is wrong.

The result is a `WhatIfResult`: the environment the session is to use, marked `~whatif` for this
session only (nothing written), or, after "Save as new environment", the saved environment as
loading reads it back, with the file's path. Environment text is data: the editor and every
message here show it literally, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static, TextArea

from proactive_tui.envs import what_if
from proactive_tui.ui.messages import EnvironmentSaved
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.key_bar import KeyBar


@dataclass(frozen=True)
class WhatIfResult:
    """What the editor hands back to the setup modal."""

    env: Any
    """The environment the session uses: an edited one (id `<id>~whatif`), the original (an edit
    that changed nothing), or the saved one."""
    saved: Path | None = None
    """The file written by "Save as new environment", else None (nothing was written)."""

    @property
    def edited(self) -> bool:
        return self.saved is None and what_if.is_what_if(self.env)


class WhatIfScreen(Modal[WhatIfResult | None]):
    """The editor. `original`: the environment as loaded (edits are checked against it: same id and
    family); `current`: what the setup uses now (an earlier edit), shown in the editor."""

    HELP_TITLE = "What if: edit the environment"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "apply", "Apply", priority=True),
    ]

    def __init__(self, original: Any, current: Any = None, taken: set[str] | None = None) -> None:
        """`taken`: ids already loaded, which a saved environment must not reuse."""
        super().__init__()
        self.original = original
        self.current = current if current is not None else original
        self.taken = taken or set()
        self.save_note = what_if.save_note(original)

    def compose(self) -> ComposeResult:
        with Vertical(id="what-if"):
            yield Static(Text.assemble(("What if  ", "bold"), (self.original.id, ""), "\n",
                                       ("This session only: nothing is written unless you save it as a new environment.",
                                        "dim")), id="what-if-title")
            editor = TextArea(what_if.editable_json(self.current), id="what-if-editor", soft_wrap=True,
                              show_line_numbers=True)
            if "json" in editor.available_languages:
                editor.language = "json"
            yield editor
            yield Static("", id="what-if-error")
            if self.save_note:
                yield Static(Text(f"Save as new environment: {self.save_note}", style="italic"), id="what-if-save-note")
            with Horizontal(id="what-if-buttons"):
                yield Button("Apply", variant="primary", id="what-if-apply")
                yield Button("Save as new environment", id="what-if-save", disabled=self.save_note is not None,
                             tooltip=self.save_note)
                yield Button("Cancel", id="what-if-cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        box = self.query_one("#what-if")
        box.border_title = Content("What if…")
        box.border_subtitle = "ctrl+s applies · esc cancels"
        self.query_one("#what-if-editor", TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one("#what-if-editor", TextArea).text

    def _show_problem(self, lines: list[str]) -> None:
        """Said under the editor; the editor keeps the text and the focus, to fix it there."""
        self.query_one("#what-if-error", Static).update(Text("\n".join(lines), style="bold"))
        self.query_one("#what-if-editor", TextArea).focus()

    def _parsed(self) -> Any | None:
        try:
            return what_if.parse_edit(self.original, self.text)
        except what_if.EditProblem as exc:
            self._show_problem(exc.lines)
            return None

    @on(Button.Pressed, "#what-if-apply")
    def action_apply(self) -> None:
        env = self._parsed()
        if env is not None:
            self.dismiss(WhatIfResult(env))

    @on(Button.Pressed, "#what-if-save")
    def action_save(self) -> None:
        if self.save_note:
            self._show_problem([self.save_note])
            return
        env = self._parsed()
        if env is None:
            return
        if env is self.original:  # unchanged: saving would only copy a file that exists
            self._show_problem(["nothing changed: edit the environment first, or Cancel"])
            return
        try:
            saved = what_if.save_as_new(env, taken=self.taken)
        except what_if.EditProblem as exc:
            self._show_problem(exc.lines)
            return
        except OSError as exc:
            self._show_problem([f"could not write the file: {exc}"])
            return
        self.app.notify(f"Saved as a new environment {saved.env.id}: {saved.path}", title="What if",
                        timeout=12, markup=False)
        self.app.post_message(EnvironmentSaved(saved.env, saved.path))
        self.dismiss(WhatIfResult(saved.env, saved=saved.path))

    @on(Button.Pressed, "#what-if-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
