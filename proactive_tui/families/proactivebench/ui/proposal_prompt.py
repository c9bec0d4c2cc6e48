"""The proposal prompt of a person playing the agent: after each event they offer a task or stay
quiet, as a model agent does (docs/protocols.md#human-participation).

It sits under the event timeline, in the timeline's column, as the verdict prompt does when a
person judges (`verdict_prompt.py`): the event asked about stays in view above it and the metrics
panel beside it stays whole.

What the person types is what a model's reply would carry in `Proactive Task`: the task on one
line (with three candidates, up to three separated by |), `null` (or `-`) for none, or the whole
JSON reply; the screen checks it with the engine's own reader (`protocol.parse_agent_text`) before
it is sent, so a reply the engine could not use stays in the box to fix. "Stay quiet" (the button,
or ctrl+n from the screen) sends `null`: no proposal, as a model's null is. The judge seat then
rates what was sent exactly as it rates a model's reply.

The prompt shows upstream's instruction sentence (`prompts.STEP_INSTRUCTION`), which is what a
model agent is told with each new event. Text is rich `Text`, never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Static

from proactive_tui.families.proactivebench.prompts import STEP_INSTRUCTION

QUIET = "null"
"""What "stay quiet" sends: the reply a model gives when it offers nothing."""


class ProposalPrompt(Vertical):
    class Proposed(Message):
        """The person's reply for the event asked about: a task, the JSON reply, or `QUIET`."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: int | None = None
        """The event asked about (None while no proposal is asked for)."""

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="proposal-body")
        yield Input(id="proposal-input", placeholder="the task you offer, then enter", compact=True)
        with Horizontal(id="proposal-buttons"):
            yield Button("Propose (enter)", variant="primary", id="proposal-send", compact=True)
            yield Button("Stay quiet (ctrl+n)", id="proposal-quiet", compact=True)

    def on_mount(self) -> None:
        self.border_title = "Your proposal"
        self.border_subtitle = "the judge rates it as a model's"

    def ask(self, index: int, total: int, candidates: int = 1, again: bool = False) -> None:
        """Ask for the reply to event `index` of `total`; `again`: the same event after a rejection."""
        self.index = index
        body = Text()
        body.append("Instruction: ", style="bold")
        body.append(STEP_INSTRUCTION + "\n")
        tasks = "up to three tasks, separated by |," if candidates > 1 else "the task you offer,"
        body.append(f"Type {tasks} or stay quiet if no help is needed.", style="dim")
        self.border_title = f"Your proposal · event {index}/{total}" + (" · again, after a rejection" if again else "")
        self.query_one("#proposal-body", Static).update(body)
        box = self.query_one("#proposal-input", Input)
        box.value = ""
        box.disabled = False
        self.display = True
        box.focus()

    def hide(self) -> None:
        self.index = None
        self.query_one("#proposal-input", Input).disabled = True
        self.display = False

    @on(Input.Submitted, "#proposal-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Proposed(event.value))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "proposal-send":
            self.post_message(self.Proposed(self.query_one("#proposal-input", Input).value))
        elif event.button.id == "proposal-quiet":
            self.post_message(self.Proposed(QUIET))
