"""The branch switcher: a session's fork tree, each branch with what it changed and how its scores
differ from its parent's, the one on screen marked; Enter opens another.

The tree comes from the store (`store.queries.session_tree`), from its root down, whichever of
its sessions is on screen. A row says where the branch forks (turn, seat, edited or asked again,
with which model or instruction), its status and headline scores, and the headline values that
differ from its parent's ("overall 7/10 → 4/10"): the question a fork answers is what changed
downstream of one reply. Scores shown are the stored sessions' own, each from its judges.
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

from proactive_tui.store.queries import differences_text, headline_text, score_differences
from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal


def branch_rows(root: Any, current: str) -> list[tuple[str, Text]]:
    """(session id, the row's text) for every session of the tree, depth first."""
    from proactive_tui.core.fork import describe_fork

    parents = root.parents()
    rows: list[tuple[str, Text]] = []
    for depth, node in root.walk():
        summary = node.summary
        indent = "  " * depth
        # Every span starts with a visible character: OptionList's wrapping drops a space that
        # begins a span after another (seen at 80 columns), so separators end the span before.
        line = Text(indent)
        line.append("▶ " if node.id == current else "  ", style="bold")
        line.append(node.id + " ", style="bold")
        line.append(summary.status + " ", style="dim")
        line.append("· " + plain(headline_text(summary.headline)) + (" · " if node.id == current else ""))
        if node.id == current:
            line.append("on screen", style="bold")
        line.append("\n" + indent + "  ")
        if node.forked_from is not None:
            line.append("└ " + describe_fork(node.forked_from) + " ", style="cyan")
        else:
            line.append("the original ", style="dim")
        parent = parents.get(node.id)
        if parent is not None:
            diffs = score_differences(parent.summary.headline, summary.headline)
            line.append("· ")
            if diffs:
                line.append("vs parent: " + differences_text(diffs), style="yellow")
            else:
                line.append("same scores as its parent", style="dim")
        rows.append((node.id, line))
    return rows


class BranchSwitcher(Modal[str | None]):
    """Dismisses with the id of the session to open (None: stay)."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]
    DEFAULT_CSS = """
    BranchSwitcher { align: center middle; }
    BranchSwitcher > #branches { width: 96%; height: auto; max-height: 90%; border: round $accent;
                                 background: $surface; padding: 0 1; }
    BranchSwitcher #branch-list { height: auto; max-height: 30; border: none; }
    """

    def __init__(self, root: Any, current: str) -> None:
        super().__init__()
        self.root = root
        self.current = current
        self.rows = branch_rows(root, current)

    def compose(self) -> ComposeResult:
        box = Vertical(id="branches")
        count = len(self.rows) - 1
        box.border_title = Content(f"Branches · {count} branch{'es' * (count != 1)} of {self.root.id}")
        box.border_subtitle = "↑↓ a session · enter opens it · esc closes"
        with box:
            if count == 0:
                yield Static(Text("No branches yet: fork this session at any reply (F) to make one.", style="dim"))
            yield OptionList(*[Option(text, id=session_id) for session_id, text in self.rows], id="branch-list")

    def on_mount(self) -> None:
        options = next(self.query("#branch-list").results(OptionList), None)
        if options is None:  # the app is closing while the screen mounts
            return
        options.highlighted = next((i for i, (sid, _t) in enumerate(self.rows) if sid == self.current), 0)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id
        self.dismiss(None if chosen == self.current else chosen)

    async def action_dismiss(self, result: str | None = None) -> None:
        self.dismiss(result)
