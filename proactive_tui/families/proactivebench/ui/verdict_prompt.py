"""The verdict prompt of a person judging as the user: the offer on the event being judged, in
full, and the three answers the protocol gives them (docs/protocols.md#human-participation).

It sits under the event timeline, in the timeline's column, rather than floating over the screen:
a floating card covered the event it asked about and, at 80x24, the bottom rows of the metrics
panel. In the column it takes only the rows it needs, the timeline shrinks above it (the screen
keeps the judged event's card in view) and the metrics panel beside it stays whole.

The prompt shows the task being judged, whole and wrapping; when it is longer than the rows the
prompt may take (40% of the screen's height) its part scrolls. It shows only the task, as the judge
model sees only the task (never Purpose, Thoughts or Response); the card above still holds the
assistant's words. Model text goes through `plain` into rich Text, so markup in it stays literal.

Buttons (mouse) and the screen's a / r / s keys both post `VerdictPrompt.Chosen` with "a", "r" or
"s", the codes `judges.parse_verdict_text` reads. The third answer is called "skip" everywhere
(button, key bar, cards, metrics, the end note), as the protocol and its judgement value
("skipped") call it: the event is not counted.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Static

from proactive_tui.textsafe import plain

CODES = {"prompt-accept": "a", "prompt-reject": "r", "prompt-skip": "s"}

TEXT_SHARE = 0.4
"""At most this share of the screen's rows shows the task; a longer one scrolls."""


class VerdictPrompt(Vertical):
    class Chosen(Message):
        def __init__(self, code: str) -> None:
            super().__init__()
            self.code = code

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index: int | None = None
        """The event being judged (None while no verdict is asked for)."""
        self.offer: str | None = None
        """The task asked about (None: no task was offered, or nothing is asked)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="prompt-scroll"):
            yield Static(Text(""), id="prompt-body")
        with Horizontal(id="prompt-buttons"):
            yield Button("Accept (a)", variant="success", id="prompt-accept", compact=True)
            yield Button("Reject (r)", variant="error", id="prompt-reject", compact=True)
            yield Button("Skip (s)", id="prompt-skip", compact=True)

    def on_mount(self) -> None:
        self.border_title = "Your verdict"
        self.border_subtitle = "skip: the event is not counted"

    def ask(self, index: int, total: int, task: str | None, candidate: int | None = None, of: int = 1) -> None:
        """Ask for the verdict on event `index` of `total` (task None: the assistant offers nothing)."""
        self.index, self.offer = index, task
        body = Text()
        if task is None:
            body.append("No offer: ", style="bold")
            body.append("the assistant thinks you need no help now.\n")
            body.append("Accept if none was needed; reject if you wanted help.", style="dim")
        else:
            body.append("Task: ", style="bold")
            body.append(plain(task))
        many = candidate is not None and of > 1
        self.border_title = f"Your verdict · event {index}/{total}" + (f" · task {candidate + 1}/{of}" if many else "")
        self.query_one("#prompt-body", Static).update(body)
        self.fit(self.screen.size.height)
        self.query_one("#prompt-scroll", VerticalScroll).scroll_home(animate=False)
        self.display = True

    def fit(self, screen_rows: int) -> None:
        """Let the task take at most TEXT_SHARE of `screen_rows` (the screen calls this on resize).

        Set in cells, not as `40vh` in the stylesheet: with `vh` the prompt's auto height was
        computed from the whole text, leaving blank rows under the buttons."""
        self.query_one("#prompt-scroll", VerticalScroll).styles.max_height = max(3, int(screen_rows * TEXT_SHARE))

    def hide(self) -> None:
        self.index = self.offer = None
        self.display = False

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        code = CODES.get(event.button.id or "")
        if code:
            event.stop()
            self.post_message(self.Chosen(code))
