"""The countdown session screen: the transcript, each turn's check, and the result with its scores.

The worker, the run-record builder, the controls and the events every family shares (messages,
the end, usage, errors) are SessionScreenBase's; this screen only lays out and shows its own
events (`apply_own`). With `replay_events` it shows a recorded session instead (`replay`).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from proactive_tui.core.spec import SessionSpec
from proactive_tui.ui.screens.session_base import SessionScreenBase
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.status_line import StatusLine
from proactive_tui.ui.widgets.title_bar import TitleBar
from proactive_tui.ui.widgets.transcript import Transcript


class CountdownSessionScreen(SessionScreenBase):
    HELP_TITLE = "Countdown session"
    ENDED_TEXT = {"reached_zero": "the agent reached zero", "max_turns": "the turn limit was reached",
                  "cancelled": "stopped", "error": "stopped by an error"}
    CSS = "CountdownSessionScreen #countdown-side { width: 40; height: 1fr; }"
    BINDINGS = [
        Binding("a", "autoplay", "Auto"), Binding("s", "step", "Step"), Binding("p", "pause", "Pause"),
        Binding("x", "stop", "Stop"), Binding("R", "restart", "Restart"),
        Binding("j", "toggle_panel", "Panel", show=False), Binding("escape", "back", "Back"),
    ]
    PANEL_ID = "#countdown-side"
    PALETTE = (("autoplay", "Session: auto-play", "Run turns without stopping"),
               ("stop", "Session: stop", "Stop now"))

    def __init__(self, env: Any, spec: SessionSpec, session_factory: Any = None, *,
                 replay_events: list[Any] | None = None) -> None:
        super().__init__(env, spec, session_factory, replay_events=replay_events)
        self.check_lines: list[str] = []

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="session-body"):
            with Vertical(id="session-main"):
                yield Transcript(id="transcript")
            with VerticalScroll(id="countdown-side"):
                yield Static("no checks yet", id="countdown-checks", classes="panel")
                yield Static("", id="countdown-result", classes="panel")
        yield StatusLine(self.spec.settings.get("max_turns") or self.env.countdown.start + 1, id="status")
        yield KeyBar()

    def on_mount(self) -> None:
        self.app.sub_title = ("replay · " if self.replaying else "") + self.env.id
        if self.replaying:
            self.replay()
            return
        self.run_session()

    def message_begun(self, event: Any, speaker: str) -> None:
        super().message_begun(event, speaker)
        self.status.set(activity=f"{event.role} is typing…")

    def apply_own(self, event: Any) -> None:
        t = event.type
        if t == "countdown.checked":
            mark = "✓" if event.correct else f"✗ said {event.said}"
            self.check_lines.append(f"turn {event.turn}: expected {event.expected} {mark}")
            self.query_one("#countdown-checks", Static).update(Text("\n".join(self.check_lines)))
        elif t == "countdown.finished":
            rec = self.builder.record
            rows = [f"{s.label}: {s.display}" for s in (rec.scores if rec else [])]
            self.query_one("#countdown-result", Static).update(Text("\n".join(["Result"] + rows)))

    def result_text(self) -> str:
        return str(self.query_one("#countdown-result", Static).render())

    def checks_text(self) -> str:
        return "\n".join(self.check_lines)

    def transcript_text(self) -> str:
        return f"{self.env.id}\n\n" + self.transcript.plain_text()
