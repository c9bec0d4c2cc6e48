"""`G` in History: a session's re-gradings, and what each judge was sent and answered.

A grading (`services.regrade`) is kept beside its session with the judge's events, its `model_called`
events included, so nothing needs recomputing to show it: one line per grading (when, which judge,
its headline scores, what differs from the session's own grading), and Enter opens the call
inspector over that grading's calls, the same view `i` gives a session.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal


def grading_calls(grading: Any) -> list[Any]:
    """The model calls a stored grading made, in order (what its judge was sent, what came back)."""
    from proactive_tui.services.regrade import parse_grading_events

    return [e for e in parse_grading_events(grading.events) if e.type == "model_called"]


def grading_line(grading: Any, own: dict[str, Any]) -> Text:
    from proactive_tui.store.queries import differences_text, headline_text, score_differences

    after = grading.summary or {}
    changed = differences_text([d for d in score_differences(own, after) if d[0] != "ended"])
    line = Text()
    line.append(grading.created_at[:16].replace("T", " ") + "  ", style="dim")
    line.append(plain(grading.judge), style="bold")
    line.append(f"  {headline_text(after) or 'no headline score'}")
    line.append(f"  · vs own grading: {changed or 'no headline score changed'}", style="yellow" if changed else "dim")
    line.append(f"  · {len(grading_calls(grading))} call(s)", style="dim")
    return line


class GradingsModal(Modal[None]):
    """The re-gradings of one session, oldest first; Enter shows a grading's model calls."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]
    DEFAULT_CSS = """
    GradingsModal { align: center middle; }
    GradingsModal > #gradings { width: 96%; height: auto; max-height: 90%; border: round $accent;
                                background: $surface; padding: 0 1; }
    GradingsModal #grading-list { height: auto; max-height: 30; border: none; }
    """

    def __init__(self, session_id: str, own: dict[str, Any], gradings: list[Any]) -> None:
        super().__init__()
        self.session_id = session_id
        self.own = own
        self.gradings = list(gradings)

    def compose(self) -> ComposeResult:
        from proactive_tui.store.queries import headline_text

        box = Vertical(id="gradings")
        box.border_title = Content(f"Re-gradings · {self.session_id} · {len(self.gradings)}")
        box.border_subtitle = "↑↓ a grading · enter shows what its judge was sent · esc closes"
        with box:
            yield Static(Text(f"The session's own grading: {headline_text(self.own) or 'no headline score'} "
                              "(it never changes)", style="dim"), id="own-grading")
            if not self.gradings:
                yield Static(Text("Not re-graded yet: g re-grades it with another judge.", style="dim"))
            yield OptionList(*[Option(grading_line(g, self.own), id=g.id) for g in self.gradings], id="grading-list")

    def on_mount(self) -> None:
        found = next(self.query("#grading-list").results(OptionList), None)
        if found is not None:  # None: the app is closing while the modal mounts
            found.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from proactive_tui.ui.screens.call_inspector import CallInspector

        grading = next(g for g in self.gradings if g.id == event.option.id)
        self.app.push_screen(CallInspector(grading_calls(grading), selected=0))
