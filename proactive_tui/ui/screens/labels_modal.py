"""Verdicts: every verdict of a session's judges (and Chronos's rule checks) with a person's label
beside it. `a` agrees, `d` disagrees (a small form asks the corrected value and a note), `n`
changes the note, `x` clears the label. The engine is `services.labels`; labels are kept in the
store beside the session (never in its event log).

Model and environment text (the judge's reasoning, a proposed task) is shown literally: Rich
`Text`, never markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal

VALUE_HINTS = {"bool": "yes or no", "score": "a score 1-10", "proposal": "accepted or rejected",
               "reading": "confirm, refuse, shift or reply", "grade": "PASS, PARTIAL or FAIL"}


def verdict_text(verdict: Any, label: Any) -> Text:
    """One row: the verdict, the judge's value, and the person's label beside it."""
    from proactive_tui.core.verdicts import value_text

    line = Text()
    line.append(f"{verdict.key} ", style="bold")
    line.append(f"{verdict.kind} ", style="dim")
    line.append("· judge " + plain(verdict.judge) + ": ")
    line.append(value_text(verdict.value) + " ", style="bold")
    if verdict.imported_from:
        line.append("· imported from " + plain(verdict.imported_from) + " ", style="italic")
    if label is None:
        line.append("· unlabelled", style="dim")
    elif label.agree:
        line.append("· ✓ agree", style="green")
    else:
        line.append(f"· ✗ disagree: {value_text(label.value)}", style="red")
    if label is not None and label.note:
        line.append(" · " + plain(label.note), style="italic")
    line.append("\n  " + plain(verdict.label), style="dim")
    return line


class LabelForm(Modal[tuple[str, str] | None]):
    """The corrected value (when disagreeing) and a note; dismisses with (value, note), None: cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    LabelForm { align: center middle; }
    LabelForm > #label-form { width: 72; max-width: 96%; height: auto; border: round $accent;
                              background: $surface; padding: 0 1; }
    LabelForm Input { margin: 0 0 1 0; }
    """

    def __init__(self, verdict: Any, *, ask_value: bool, note: str = "") -> None:
        super().__init__()
        self.verdict = verdict
        self.ask_value = ask_value
        self.note = note

    def compose(self) -> ComposeResult:
        from proactive_tui.core.verdicts import value_text

        box = Vertical(id="label-form")
        box.border_title = Content(("Disagree: " if self.ask_value else "Note: ") + self.verdict.key)
        box.border_subtitle = "enter saves · esc cancels"
        with box:
            yield Static(Text(f"judge {plain(self.verdict.judge)} said {value_text(self.verdict.value)}"))
            if self.ask_value:
                yield Label(f"Corrected value ({VALUE_HINTS[self.verdict.value_type]})", markup=False)
                yield Input(placeholder=VALUE_HINTS[self.verdict.value_type], id="label-value")
            yield Label("Note", markup=False)
            yield Input(value=self.note, placeholder="why (optional)", id="label-note")

    def on_mount(self) -> None:
        self.query_one("#label-value" if self.ask_value else "#label-note", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "label-value":
            self.query_one("#label-note", Input).focus()
            return
        value = self.query_one("#label-value", Input).value if self.ask_value else ""
        self.dismiss((value, self.query_one("#label-note", Input).value))

    def action_cancel(self) -> None:
        self.dismiss(None)


class LabelsModal(Modal[None]):
    """A session's verdicts and the person's labels on them."""

    BINDINGS = [
        Binding("a", "agree", "Agree", tooltip="The judge was right"),
        Binding("d", "disagree", "Disagree", tooltip="The judge was wrong: give the corrected value and a note"),
        Binding("n", "note", "Note", tooltip="Change the note of this label"),
        Binding("x", "clear", "Clear", tooltip="Remove the label"),
        Binding("escape", "dismiss", "Close"),
    ]
    DEFAULT_CSS = """
    LabelsModal { align: center middle; }
    LabelsModal > #labels { width: 96%; height: auto; max-height: 90%; border: round $accent;
                            background: $surface; padding: 0 1; }
    LabelsModal #verdict-list { height: auto; max-height: 24; border: none; }
    LabelsModal #verdict-detail { height: auto; max-height: 6; color: $text-muted; }
    """

    def __init__(self, store: Any, session_id: str) -> None:
        super().__init__()
        self.store = store
        self.session_id = session_id
        self.verdicts: list[Any] = []
        self.labels: dict[str, Any] = {}
        self.problem = ""
        self._load()

    def _load(self) -> None:
        from proactive_tui.core.verdicts import verdicts_of
        from proactive_tui.store import StoreError, load_record

        try:
            self.verdicts = verdicts_of(load_record(self.store, self.session_id))
            # the person's own labels (an imported study's raters label the same verdicts too)
            self.labels = {row.verdict: row for row in self.store.labels(self.session_id) if row.rater == ""}
        except StoreError as exc:
            self.problem = str(exc)

    def compose(self) -> ComposeResult:
        box = Vertical(id="labels")
        labelled = sum(1 for v in self.verdicts if v.key in self.labels)
        box.border_title = Content(f"Verdicts · {self.session_id} · {labelled} of {len(self.verdicts)} labelled")
        box.border_subtitle = "a agree · d disagree · n note · x clear · esc closes"
        with box:
            if self.problem:
                yield Static(Text(plain(self.problem), style="red"))
            elif not self.verdicts:
                yield Static(Text("This session has no judge verdicts to label (yet).", style="dim"))
            yield OptionList(*self._options(), id="verdict-list")
            yield Static(Text(""), id="verdict-detail")

    def _options(self) -> list[Option]:
        return [Option(verdict_text(v, self.labels.get(v.key)), id=v.key) for v in self.verdicts]

    def on_mount(self) -> None:
        options = next(self.query("#verdict-list").results(OptionList), None)
        if options is None:
            return
        if self.verdicts:
            options.highlighted = 0
        options.focus()
        self._show_detail()

    @property
    def current(self) -> Any:
        options = self.query_one("#verdict-list", OptionList)
        index = options.highlighted
        return self.verdicts[index] if index is not None and 0 <= index < len(self.verdicts) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        verdict = self.current
        detail = self.query_one("#verdict-detail", Static)
        detail.update(Text(plain(verdict.detail)) if verdict is not None and verdict.detail else Text(""))

    def _refresh(self) -> None:
        options = self.query_one("#verdict-list", OptionList)
        index = options.highlighted
        self._load()
        options.clear_options()
        options.add_options(self._options())
        if index is not None and self.verdicts:
            options.highlighted = min(index, len(self.verdicts) - 1)
        labelled = sum(1 for v in self.verdicts if v.key in self.labels)
        self.query_one("#labels").border_title = Content(
            f"Verdicts · {self.session_id} · {labelled} of {len(self.verdicts)} labelled")
        self._show_detail()

    def _save(self, agree: bool, value: Any = None, note: str | None = None) -> None:
        from proactive_tui.core.verdicts import LabelError
        from proactive_tui.services.labels import label_verdict
        from proactive_tui.store import StoreError

        verdict = self.current
        if verdict is None:
            return
        old = self.labels.get(verdict.key)
        try:
            label_verdict(self.store, self.session_id, verdict.key, agree=agree, value=value,
                          note=note if note is not None else (old.note if old else ""))
        except (LabelError, StoreError) as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return
        self._refresh()

    def action_agree(self) -> None:
        self._save(True)

    def action_disagree(self) -> None:
        verdict = self.current
        if verdict is None:
            return
        old = self.labels.get(verdict.key)

        def done(result: tuple[str, str] | None) -> None:
            if result is not None:
                self._save(False, result[0], result[1])

        self.app.push_screen(LabelForm(verdict, ask_value=True, note=old.note if old else ""), done)

    def action_note(self) -> None:
        from proactive_tui.core.verdicts import LabelError
        from proactive_tui.services.labels import note_label

        verdict = self.current
        if verdict is None:
            return
        old = self.labels.get(verdict.key)
        if old is None:
            self.notify("Agree (a) or disagree (d) first; the note goes with the label", timeout=5)
            return

        def done(result: tuple[str, str] | None) -> None:
            if result is None:
                return
            try:
                note_label(self.store, self.session_id, verdict.key, result[1])
            except LabelError as exc:
                self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
                return
            self._refresh()

        self.app.push_screen(LabelForm(verdict, ask_value=False, note=old.note), done)

    def action_clear(self) -> None:
        verdict = self.current
        if verdict is None or verdict.key not in self.labels:
            return
        self.store.delete_label(self.session_id, verdict.key)
        self._refresh()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
