"""Vote on study pairs: a family's published pairwise study (ProactBench's, after `compare
import-study`), one pair at a time, blind.

Each pair shows the message both replies answer and the two replies as sides A and B, in the
comparison's shuffled order, with no model, case, grade or the study's votes in view. `v` opens
the vote modal (the same as the compare screen's: A, B or a tie, and why); the vote is kept with
`services.compare.vote` and the next pair comes. `n` skips to the next pair. Text from the study is
data: shown with Rich `Text`, never as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from proactive_tui.textsafe import plain


class StudyPairsScreen(Screen[None]):
    """The store's study pairs still waiting for this person's vote."""

    HELP_TITLE = "Vote on study pairs"
    BINDINGS = [
        Binding("v", "vote", "Vote", tooltip="Which side is better: A, B or a tie, and why"),
        Binding("n", "next", "Skip", tooltip="The next pair (this one stays unvoted)"),
        Binding("escape", "back", "Back"),
    ]
    DEFAULT_CSS = """
    StudyPairsScreen #pair-title { height: auto; padding: 0 1; text-style: bold; }
    StudyPairsScreen #pair-prompt { height: auto; max-height: 12; padding: 0 1; border: round $secondary; }
    StudyPairsScreen #pair-sides { height: 1fr; }
    StudyPairsScreen .pair-side { width: 1fr; border: round $accent; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.pairs: list[tuple[Any, Any]] = []
        self.index = 0
        self.voted = 0

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="pair-title")
        with VerticalScroll(id="pair-prompt"):
            yield Static(Text(""), id="pair-prompt-text")
        with Horizontal(id="pair-sides"):
            for letter in "AB":
                with VerticalScroll(classes="pair-side", id=f"pair-side-{letter}") as side:
                    side.border_title = f"Side {letter}"
                    yield Static(Text(""), id=f"pair-text-{letter}")
        yield Footer()

    def on_mount(self) -> None:
        from proactive_tui.services.compare import pairs_to_vote
        from proactive_tui.store import StoreError

        store = getattr(self.app, "store", None)
        if store is not None:
            try:
                self.pairs = pairs_to_vote(store)
            except StoreError as exc:
                self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
        self._show()

    @property
    def current(self) -> tuple[Any, Any] | None:
        return self.pairs[self.index] if 0 <= self.index < len(self.pairs) else None

    def _show(self) -> None:
        from proactive_tui.store import StoreError, load_record

        title = self.query_one("#pair-title", Static)
        pair = self.current
        if pair is None:
            title.update(Text(f"No study pairs left to vote on ({self.voted} voted here). Import one with "
                              "`proactive-tui compare import-study proactbench`."))
            for letter in "AB":
                self.query_one(f"#pair-text-{letter}", Static).update(Text(""))
            self.query_one("#pair-prompt-text", Static).update(Text(""))
            return
        study, comparison = pair
        title.update(Text(f"{study.title} · pair {self.index + 1} of {len(self.pairs)} waiting · {comparison.id} "
                          "· blind: which reply is better? (v vote · n skip)"))
        prompt = ""
        for letter, session_id in zip("AB", comparison.sessions):
            try:
                said, reply = study.shown(load_record(self.app.store, session_id))
            except StoreError as exc:
                said, reply = "", f"(cannot read this side: {exc})"
            prompt = prompt or said
            self.query_one(f"#pair-text-{letter}", Static).update(Text(reply))
        self.query_one("#pair-prompt-text", Static).update(Text("The user said:\n", style="bold") + Text(prompt))

    def action_vote(self) -> None:
        from proactive_tui.ui.screens.vote_modal import VoteModal

        if self.current is None:
            return
        self.app.push_screen(VoteModal(2), self._voted)

    def _voted(self, choice: Any) -> None:
        from proactive_tui.services.compare import CompareError, vote
        from proactive_tui.store import StoreError

        pair = self.current
        if choice is None or pair is None:
            return
        try:
            row = vote(self.app.store, pair[1].id, choice.winner, choice.reason)
        except (CompareError, StoreError) as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return
        self.voted += 1
        self.notify(f"vote saved for {row.id}", timeout=3)
        self.pairs.pop(self.index)
        if self.index >= len(self.pairs):
            self.index = 0
        self._show()

    def action_next(self) -> None:
        if self.pairs:
            self.index = (self.index + 1) % len(self.pairs)
            self._show()

    def action_back(self) -> None:
        self.app.pop_screen()
