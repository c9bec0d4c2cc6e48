"""Agents side by side: one pane per side (its live transcript and headline scores), the per-turn
score differences under them, and the vote (`v`) once every side has ended.

The sides run at once through `services.compare` (each recorded in the history like any session).
In a blind comparison which agent is A and which is B is shuffled per comparison (seeded, the
seed and the order recorded with it; the title says "blind: sides shuffled (seed N)"), the panes
are titled A and B, and no model name is shown (messages are labelled by seat, not model; a reply
a person wrote names the person, who is no model), until the person votes; the vote then reveals
the models. Model text is shown as Rich Text built from plain strings (escapes stripped): never
parsed as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from proactive_tui.services.compare import ComparePlan, letter, shown_agents, shuffle_notice, turn_table, vote, vote_text
from proactive_tui.core.writers import by_person, speaker
from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.key_bar import KeyBar


class SidePane(Vertical):
    """One side: its transcript as it arrives, and its headline scores."""

    DEFAULT_CSS = """
    SidePane { width: 1fr; border: round $pane-border; }
    SidePane .side-log { height: 1fr; }
    SidePane .side-log Static { height: auto; }
    SidePane .side-scores { height: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        # One Static per message, not a RichLog: a Static rewraps when the pane is resized,
        # where a RichLog keeps the width it was written at.
        yield VerticalScroll(classes="side-log")
        yield Static("waiting…", classes="side-scores", markup=False)

    def _write(self, line: Text) -> None:
        log = self.query_one(".side-log", VerticalScroll)
        log.mount(Static(line))
        log.scroll_end(animate=False)

    def add_message(self, role: str, where: str, content: str, writer: str = "") -> None:
        """One finished message; `where`: its place in its family's unit (`exchange 3`); `writer`
        (its record's) is named when a person wrote it."""
        who = f" · {speaker(writer)}" if by_person(writer) else ""
        line = Text(f"{role} · {where}{who}: ", style="bold")
        line.append(plain(content))
        self._write(line)

    def add_note(self, text: str) -> None:
        self._write(Text(plain(text), style="italic"))

    def text(self) -> str:
        """What the pane's transcript says, as plain text (tests)."""
        return "\n".join(str(w.render()) for w in self.query(".side-log Static"))

    def set_scores(self, text: str) -> None:
        self.query_one(".side-scores", Static).update(text)


class CompareScreen(Screen[None]):
    HELP_TITLE = "Compare"
    BINDINGS = [
        Binding("v", "vote", "Vote", tooltip="Which side was better, and why (after every side has ended)"),
        Binding("escape", "back", "Back", tooltip="Back to the environments (the sides are stopped if running)"),
    ]
    DEFAULT_CSS = """
    CompareScreen #compare-panes { height: 1fr; }
    CompareScreen #compare-diffs { height: auto; max-height: 8; padding: 0 1; border-top: solid $pane-border; }
    CompareScreen #compare-title { height: auto; padding: 0 1; text-style: bold; }
    """

    def __init__(self, plan: ComparePlan, env: Any, build: Any = None) -> None:
        """`build` replaces how each side's session is made (`services.compare.Build`; tests seat
        scripted participants)."""
        super().__init__()
        self.plan = plan
        self.env = env
        self.build = build
        self.row: Any = None
        """The ComparisonRow, once the sides started."""
        self.records: list[Any] = [None] * len(plan.agents)
        self.ended = [False] * len(plan.agents)
        self._builders: list[Any] = []

    @property
    def revealed(self) -> bool:
        return not self.plan.blind or (self.row is not None and self.row.vote is not None)

    @property
    def done(self) -> bool:
        return all(self.ended)

    @property
    def agents(self) -> list[Any]:
        """The agents in the order shown (A, B, ...): a blind comparison's shuffle, once it started."""
        return shown_agents(self.plan, self.row)

    def side_title(self, index: int) -> str:
        name = letter(index)
        return f"{name} · {self.agents[index].model}" if self.revealed else name

    def title_text(self) -> str:
        """The title line: the environment, blind or named (a blind one's shuffle and its seed
        once drawn), and the user and judge every side shares."""
        mode = (shuffle_notice(self.row) if self.row is not None else "") or ("blind" if self.plan.blind else "named")
        return f"Compare on {self.env.id} ({mode}; user {self.plan.user.model}, judge {self.plan.judge.model})"

    def compose(self) -> ComposeResult:
        yield Static(Content(self.title_text()), id="compare-title")
        with Horizontal(id="compare-panes"):
            for index in range(len(self.plan.agents)):
                yield SidePane(id=f"side-{letter(index)}")
        yield Static("per-turn differences appear as the sides score", id="compare-diffs", markup=False)
        yield KeyBar()

    def panes(self) -> list[SidePane]:
        return list(self.query(SidePane))

    def on_mount(self) -> None:
        from proactive_tui.core.run_record import RunRecordBuilder

        self._builders = [RunRecordBuilder() for _ in self.plan.agents]
        self._retitle()
        self.run_worker(self._run(), exclusive=True, group="compare")

    def _retitle(self) -> None:
        for index, pane in enumerate(self.panes()):
            pane.border_title = Content(self.side_title(index))  # model names are data, not markup

    async def _run(self) -> None:
        from proactive_tui.services.compare import run_comparison

        def started(row: Any) -> None:
            self.row = row
            self.query_one("#compare-title", Static).update(Content(self.title_text()))

        await run_comparison(self.plan, self.env, store=self.app.store, on_event=self._on_event, build=self.build,
                             on_start=started)
        self.ended = [True] * len(self.plan.agents)
        self._show_differences()
        self.refresh_bindings()

    def _on_event(self, index: int, event: Any) -> None:
        from proactive_tui.store.queries import headline, headline_text, turns_text

        builder = self._builders[index]
        builder.apply(event)
        self.records[index] = builder.record
        pane = self.panes()[index]
        if event.type == "message_done":
            pane.add_message(event.message.role, self._unit_label(builder.record, event.message.turn),
                             event.message.content, event.message.model)
        elif event.type == "session_ended":
            from proactive_tui.store.queries import reason_word

            self.ended[index] = True
            pane.add_note(f"ended: {reason_word(event.reason)}")
            self.refresh_bindings()
        if builder.record is not None:
            values = headline(builder.record)
            counted = turns_text(builder.record.family, values)
            pane.set_scores(f"{counted} · {headline_text(values)}" if counted else headline_text(values))
        self._show_differences()

    def _unit_label(self, record: Any, turn: int) -> str:
        """Where engine turn `turn` is, in the family's unit (`exchange 3`), as the session screen says it."""
        from proactive_tui.core import registry
        from proactive_tui.store.queries import turn_unit

        family = registry.find(self.env.family)
        number = family.record.unit_number(record, turn) if family is not None and record is not None else turn
        return f"{turn_unit(self.env.family).name} {number}"

    def _show_differences(self) -> None:
        records = self.records
        if any(r is None for r in records):
            return
        table = turn_table(records)
        lines = []
        for i in range(1, len(records)):
            turns = " · ".join(f"{table.unit} {row.turn} {_signed(row.differences[i - 1])}" for row in table.rows) or "none yet"
            lines.append(f"{letter(i)} − A, {table.label}: {turns}")
            lines.append(f"{letter(i)} − A, {table.final_label} at the end: {_signed(table.final_differences[i - 1])}")
        if self.done and self.row is not None and self.row.vote is None:
            lines.append("every side has ended: press v to vote")
        if self.row is not None and self.row.vote is not None:
            reason = f": {self.row.reason}" if self.row.reason else ""
            lines.append(f"vote: {vote_text(self.row).split(' (session')[0]}{reason}")
        self.query_one("#compare-diffs", Static).update("\n".join(lines))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "vote":
            return self.done and self.row is not None and self.app.store is not None
        return True

    def action_vote(self) -> None:
        from proactive_tui.ui.screens.vote_modal import VoteModal

        if not self.done or self.row is None:
            return
        self.app.push_screen(VoteModal(len(self.plan.agents)), self._voted)

    def _voted(self, choice: Any) -> None:
        if choice is None or self.row is None or self.app.store is None:
            return
        self.row = vote(self.app.store, self.row.id, choice.winner, choice.reason)
        self._retitle()
        self._show_differences()
        names = ", ".join(f"{letter(i)} = {a.model}" for i, a in enumerate(self.agents))
        self.notify(f"Vote saved. {names}", markup=False)

    def action_back(self) -> None:
        self.workers.cancel_group(self, "compare")
        self.app.pop_screen()


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+g}"
