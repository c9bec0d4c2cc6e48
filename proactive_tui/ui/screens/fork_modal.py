"""Fork a session here: pick the reply to change, edit it or have it asked again, start the branch.

The list holds every reply the session can be forked at (`ForkPart.steps`: ProactiveEval's
messages, ProactiveBench's proposals and verdicts, Chronos's agent replies and user messages), the
one in focus on the session screen preselected. The box below holds the highlighted reply as it
was recorded: change it and press "Branch with my edit", or leave the box and press "Ask again"
to have the seat answer anew, optionally with another model, a temperature or an added
instruction. Either way the original session stays as it was (`core.fork`).

The modal does not start anything itself: `make_plan(request)` (the caller's) turns the request
into a `core.fork.ForkPlan` and checks it (the turn exists, the edit reads as that kind of reply);
an error is shown here with the text kept, so a bad edit costs nothing, and only a plan that
checks out is returned.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal


class ForkRequest(BaseModel):
    """What the person asked for: the reply to change and how."""

    turn: int
    seat: str
    text: str | None = None
    """The edited reply; None asks the seat again."""
    model: str = ""
    """Ask again with this model (empty: the seat's own)."""
    temperature: float | None = None
    instruction: str = ""


def step_title(step: Any) -> Text:
    flat = " ".join(plain(step.line()).split())
    # one line a step, so the list stays short on an 80x24 terminal (the box shows it whole)
    return Text.assemble((step.label, "bold"), ("  " + flat[:46] + ("…" if len(flat) > 46 else ""), "dim"))


class ForkModal(Modal[Any]):
    BINDINGS = [
        Binding("escape", "dismiss", "Cancel"),
        Binding("ctrl+s", "branch_edit", "Branch with my edit", priority=True),
        Binding("ctrl+g", "branch_again", "Ask again", priority=True),
    ]
    DEFAULT_CSS = """
    ForkModal { align: center middle; }
    ForkModal > #fork { width: 96%; height: 94%; border: round $accent; background: $surface; padding: 0 1; }
    ForkModal #fork-steps { height: auto; max-height: 30%; border: none; }
    ForkModal #fork-text { height: 1fr; min-height: 5; }
    ForkModal .fork-row { height: 1; margin-top: 1; }
    ForkModal .fork-row Input { width: 1fr; }
    ForkModal .fork-row Label { padding: 0 1 0 0; }
    ForkModal #fork-error { color: $error; height: auto; }
    ForkModal #fork-buttons { height: 1; margin-top: 1; align-horizontal: right; }
    ForkModal #fork-buttons Button { margin-left: 2; }
    """

    def __init__(self, session_id: str, steps: list[Any], make_plan: Callable[[ForkRequest], Any],
                 selected: int = 0, models: dict[str, str] | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.steps = list(steps)
        self.make_plan = make_plan
        self.selected = max(0, min(selected, len(self.steps) - 1))
        self.models = models or {}

    def compose(self) -> ComposeResult:
        box = Vertical(id="fork")
        box.border_title = Content(f"Fork session {self.session_id} · the original stays as it was")
        box.border_subtitle = "ctrl+s branch with my edit · ctrl+g ask again · esc cancel"
        with box:
            yield Static(Text("The reply to change (everything before it is kept as it was):", style="bold"))
            yield OptionList(*[Option(step_title(s), id=str(i)) for i, s in enumerate(self.steps)], id="fork-steps")
            yield Static(Text("The reply as recorded: edit it, or leave it and ask again.", style="bold"),
                         id="fork-text-label")
            yield TextArea(self._text(), id="fork-text", soft_wrap=True)
            with Horizontal(classes="fork-row"):
                yield Label("Ask again with model")
                yield Input(placeholder=self._model_hint(), id="fork-model", compact=True)
                yield Label(" temperature")
                yield Input(placeholder="as before", id="fork-temperature", compact=True)
            with Horizontal(classes="fork-row"):
                yield Label("and the instruction")
                yield Input(placeholder="added to the seat's system prompt for this reply", id="fork-instruction",
                            compact=True)
            yield Static("", id="fork-error")
            with Horizontal(id="fork-buttons"):
                yield Button("Branch with my edit", id="fork-edit", variant="primary", compact=True)
                yield Button("Ask again", id="fork-again", compact=True)
                yield Button("Cancel", id="fork-cancel", compact=True)

    def _text(self) -> str:
        """The recorded reply as the box shows it: escape sequences and control characters
        removed (model text is data: a TextArea would hand them to the terminal)."""
        return plain(self.steps[self.selected].text) if self.steps else ""

    def _model_hint(self) -> str:
        seat = self.steps[self.selected].seat if self.steps else "agent"
        model = self.models.get(seat, "")
        return f"{model} (the seat's own)" if model else "the seat's own"

    def on_mount(self) -> None:
        options = next(self.query("#fork-steps").results(OptionList), None)
        if options is None:  # the app is closing while the screen mounts
            return
        if self.steps:
            options.highlighted = self.selected
        options.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is None or event.option_index == self.selected:
            return
        self.selected = event.option_index
        self.query_one("#fork-text", TextArea).load_text(self._text())
        self.query_one("#fork-model", Input).placeholder = self._model_hint()
        self._say("")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#fork-text", TextArea).focus()

    def _say(self, message: str) -> None:
        self.query_one("#fork-error", Static).update(Text(message))

    def _request(self, edit: bool) -> ForkRequest | None:
        step = self.steps[self.selected]
        text = self.query_one("#fork-text", TextArea).text
        model = self.query_one("#fork-model", Input).value.strip()
        temperature_text = self.query_one("#fork-temperature", Input).value.strip()
        instruction = self.query_one("#fork-instruction", Input).value.strip()
        if edit:
            if model or temperature_text or instruction:
                self._say("An edited reply is not asked again: clear the model, temperature and instruction, "
                          "or press Ask again.")
                return None
            if text == self._text():
                self._say("The reply is unchanged: edit it first, or press Ask again to have it asked anew.")
                return None
            return ForkRequest(turn=step.turn, seat=step.seat, text=text)
        temperature = None
        if temperature_text:
            try:
                temperature = float(temperature_text)
            except ValueError:
                self._say(f"temperature: {temperature_text!r} is not a number")
                return None
        return ForkRequest(turn=step.turn, seat=step.seat, model=model, temperature=temperature,
                           instruction=instruction)

    def _submit(self, edit: bool) -> None:
        if not self.steps:
            self._say("This session has no reply to fork from yet.")
            return
        request = self._request(edit)
        if request is None:
            return
        try:
            plan = self.make_plan(request)
        except Exception as exc:  # ForkError, StoreError, a bad model setting: said here, text kept
            self._say(plain(str(exc)))
            return
        self.dismiss(plan)

    def action_branch_edit(self) -> None:
        self._submit(edit=True)

    def action_branch_again(self) -> None:
        self._submit(edit=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "fork-edit":
            self._submit(edit=True)
        elif event.button.id == "fork-again":
            self._submit(edit=False)
        else:
            self.dismiss(None)

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(result)
