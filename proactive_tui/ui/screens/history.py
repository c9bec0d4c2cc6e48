"""The session history: every recorded session, newest first, to replay, resume, export or delete.

Rows come from `store.queries.list_sessions` (status with dead processes shown as interrupted,
headline scores per family). Enter replays a session: families whose session screen takes
`replay_events` show the stored events in that screen; others show the run record as markdown.
`r` continues an interrupted ProactiveEval session from its last complete turn in a new session.
`g` re-grades a session with another judge (`services.regrade`), in a worker: the table stays usable
and a notification says how the scores changed.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.title_bar import TitleBar

# Two lines a row, so everything fits at 100 columns: date over time, family over the rest of the
# environment id, status over how it ended, scores and models wrapped onto a second line.
COLUMNS = (("when", "When"), ("env", "Family / environment"), ("status", "Status / ended"),
           ("scores", "Scores"), ("models", "Models"))
ROW_HEIGHT = 2
MODELS_MIN = 32
ENV_MIN = 28
"""When the models would get fewer than MODELS_MIN columns, the environment column gives up width
down to ENV_MIN, its long ids cut with an ellipsis (ProactBench's run to 65 characters and left
the models 4 columns at 140): who wrote a session's replies, a person's edit among them, stays
readable. The filter still matches the whole id."""
RESUMABLE = ("interrupted", "stopped")


def _resumable(family: str) -> bool:
    from proactive_tui.core import registry

    found = registry.find(family)
    return found is not None and found.parts.resume is not None


def when(ts: str, sep: str = " ") -> str:
    """An ISO timestamp as local `YYYY-MM-DD HH:MM` (`sep` between date and time)."""
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts[:16]
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone().strftime(f"%Y-%m-%d{sep}%H:%M")


def two_lines(parts: list[str], sep: str = " · ") -> str:
    """`parts` on two lines: as many as fit the first half on line 1, the rest on line 2."""
    if len(parts) <= 1:
        return "".join(parts)
    cut = (len(parts) + 1) // 2
    return sep.join(parts[:cut]) + "\n" + sep.join(parts[cut:])


def models_text(summary: Any) -> str:
    """One model for every seat as itself; otherwise `agent: x` per seat; people as `you`, and a
    person who wrote some of a seat's replies before its model (`agent: person (edited) + x`)."""
    from proactive_tui.core.writers import writers_text

    seats = {seat: writers_text(model, summary.writers.get(seat, []), played=seat in summary.human_seats)
             for seat, model in summary.models.items()}
    if len(set(seats.values())) <= 1:
        return next(iter(seats.values()), "-")
    first, *rest = [f"{seat}: {model}" for seat, model in seats.items()]
    return first + "\n" + " · ".join(rest)


def clip(text: str, width: int) -> str:
    """Each line of `text` at most `width` characters, an ellipsis marking what was cut."""
    width = max(width, 4)
    return "\n".join(line if len(line) <= width else line[:width - 1] + "…" for line in text.split("\n"))


def scores_text(headline: dict[str, Any], family: str = "") -> str:
    """The count in the family's unit (`exchanges 6`), then the headline scores."""
    from proactive_tui.store.queries import turns_text

    counted = turns_text(family, headline)
    parts = [counted] if counted else []
    for key, value in headline.items():
        if key in ("ended", "turns", "messages") or value is None or isinstance(value, (dict, list)):
            continue
        parts.append(f"{key} {value}")
    return two_lines(parts) or "-"


def row_cells(summary: Any) -> tuple[str, ...]:
    status = summary.status + (" (resumed)" if summary.resumed_from else "") + (" (branch)" if summary.forked_from else "")
    from proactive_tui.store.queries import ended_word

    ended = ended_word(str(summary.headline.get("ended") or "-"), summary.family)
    rest = summary.env_id.removeprefix(summary.family + "/")
    return (when(summary.created_at, "\n"), f"{summary.family}\n{rest}", f"{status}\n{ended}",
            scores_text(summary.headline, summary.family), models_text(summary))


def open_stored(app: Any, session_id: str, *, quiet_if_missing: bool = False, replay_screen: Any = None) -> bool:
    """Show a recorded session read-only: families whose session screen takes `replay_events`
    replay the stored events in that screen (transcript, judges, panels as they were); others, or
    a record this version cannot lay out, show the run record as text. False when the store has
    no such session (the caller may have the record from a file: `show_record_text`)."""
    from proactive_tui.store import StoreError, load_events
    from proactive_tui.store.queries import session_environment, fold

    if app.store is None:
        return False
    try:
        events = load_events(app.store, session_id)
        record = fold(events)
    except (StoreError, ValueError) as exc:
        if not quiet_if_missing:
            app.notify(plain(f"cannot show session {session_id}: {exc}"), severity="error", timeout=8, markup=False)
        return False
    screen_class = (replay_screen or _replay_screen)(record.family)
    if screen_class is not None:
        try:
            env = session_environment(record)
            spec = _spec(app.store, session_id, record)
            app.push_screen(screen_class(env, spec, replay_events=events))
            return True
        except Exception as exc:  # an old record this version cannot lay out: fall back to text
            app.notify(plain(f"replay not possible ({exc}); showing the record as text"), severity="warning",
                       timeout=8, markup=False)
    show_record_text(app, record)
    return True


def _forkable(family: str) -> bool:
    from proactive_tui.core import registry

    found = registry.find(family)
    return found is not None and found.parts.fork is not None


def _regradable(family: str) -> bool:
    from proactive_tui.core import registry

    found = registry.find(family)
    return found is not None and found.parts.regrade is not None


def _replay_screen(family: str) -> Any:
    from proactive_tui.core import registry

    found = registry.find(family)
    if found is None or not found.replayable:
        return None
    return found.screen("session_screen")


def _spec(store: Any, session_id: str, record: Any) -> Any:
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.store.queries import spec_from_record

    row = store.session(session_id)
    if row is not None and row.spec:
        try:
            return SessionSpec.model_validate(row.spec)
        except ValueError:
            pass
    return spec_from_record(record)


def show_record_text(app: Any, record: Any, title: str | None = None) -> None:
    """A run record as the markdown export renders it (transcript, judges, scores), in a modal."""
    from proactive_tui.export.formats.common import scrub
    from proactive_tui.export.formats.markdown import render
    from proactive_tui.ui.screens.text_modal import TextModal

    app.push_screen(TextModal(title or f"Session {record.id[:8]} · {record.env_id}", [("", render(scrub(record)))]))


class HistoryTable(DataTable):
    """The sessions table: Enter (select a row) replays, and the key bar says so."""

    BINDINGS = [Binding("enter", "select_cursor", "Replay", tooltip="Show the highlighted session: transcript and panels")]


class HistoryScreen(Screen[None]):
    HELP_TITLE = "Session history"
    CSS_PATH = Path(__file__).with_name("history.tcss")
    BINDINGS = [
        Binding("r", "resume", "Resume", tooltip="Continue an interrupted session from its last complete turn"),
        Binding("x", "export", "Export", tooltip="Write the session as a run record, markdown, a dataset…"),
        Binding("F", "fork", "Fork", tooltip="Branch the session at a reply: edit it or ask again, then run on"),
        Binding("n", "rerun", "Re-run", show=False, tooltip="Run the session again against a new agent, the user's "
                "turns frozen (sent again verbatim) or simulated"),
        Binding("g", "regrade", "Re-grade", show=False, tooltip="Judge the session again with another judge model; "
                "its own grading stays as it is"),
        Binding("G", "gradings", "Gradings", show=False, tooltip="The session's re-gradings: which judge, when, what "
                "changed, and what each judge was sent"),
        Binding("b", "branches", "Branches", show=False, tooltip="The session's branches and how their scores differ"),
        Binding("L", "labels", "Verdicts", show=False, tooltip="The session's judge verdicts: agree, disagree, note"),
        Binding("A", "agreement", "Agreement", show=False, tooltip="Judges against people over every label: accuracy, kappa"),
        Binding("p", "demo", "Demo", show=False, tooltip="Play the session as a demo at its recorded pace "
                "(a/s/p there pause, step, resume); nothing is recorded"),
        Binding("d", "delete", "Delete", tooltip="Delete the highlighted session (asks first)"),
        # Priority, as on the picker: taken as the key arrives, before the keys behind it are
        # forwarded to the table; `check_action` lets a `/` typed in the filter through.
        Binding("slash", "focus_filter", "Filter", priority=True,
                tooltip="Filter by any word: environment, model, status, id"),
        Binding("escape", "back", "Back", tooltip="Clear the filter, or back to the previous screen"),
    ]

    def __init__(self, session_factory: Any = None) -> None:
        """`session_factory` is handed to resumed sessions (tests seat scripted participants)."""
        super().__init__()
        self.session_factory = session_factory
        self.summaries: list[Any] = []
        self.shown: list[Any] = []
        self.filter_text = ""
        self._previous_sub_title = ""

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Input(placeholder="/ filter: any word (environment, model, status, id)", id="history-filter")
        table = HistoryTable(id="history-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Sessions"
        yield table
        yield Static("", id="history-empty")
        yield KeyBar()

    @property
    def table(self) -> DataTable:
        return self.query_one("#history-table", DataTable)

    def on_mount(self) -> None:
        self._previous_sub_title = self.app.sub_title
        self.app.sub_title = "session history"
        for key, label in COLUMNS:
            self.table.add_column(label, key=key)
        self.reload()
        self.table.focus()

    def on_screen_resume(self) -> None:
        self.app.sub_title = "session history"
        if self.is_mounted and self.table.columns:
            self.reload()

    # -- rows -------------------------------------------------------------------------------

    def reload(self) -> None:
        from proactive_tui.store import StoreError, list_sessions

        store = self.app.store
        if store is None:
            self.summaries = []
            self._fill("The session database could not be opened (see the notification); nothing to show.")
            return
        try:
            self.summaries = list_sessions(store)
        except StoreError as exc:
            self.summaries = []
            self._fill(plain(str(exc)))
            return
        self._fill()

    def _matches(self, summary: Any) -> bool:
        words = self.filter_text.lower().split()
        if not words:
            return True
        hay = " ".join((summary.id, summary.title, summary.env_id, *row_cells(summary))).lower()
        return all(w in hay for w in words)

    def _fill(self, problem: str | None = None) -> None:
        table = self.table
        keep = self.current.id if self.current is not None else None
        table.clear()
        self.shown = [s for s in self.summaries if self._matches(s)]
        rows = self._fit_env([row_cells(summary) for summary in self.shown])
        room = self._models_room(rows)
        for summary, cells in zip(self.shown, rows):
            table.add_row(*cells[:-1], clip(cells[-1], room), key=summary.id, height=ROW_HEIGHT)
        total = len(self.summaries)
        table.border_title = f"Sessions {len(self.shown)}/{total}" if self.filter_text.strip() else f"Sessions ({total})"
        empty = self.query_one("#history-empty", Static)
        if problem:
            empty.update(problem)
        elif not self.summaries:
            empty.update("No sessions recorded yet. Sessions you run in the playground or with "
                         "`proactive-tui run` are saved here as they happen.")
        elif not self.shown:
            empty.update(f"No session matches {self.filter_text.strip()!r}. Escape clears the filter.")
        else:
            empty.update("")
        empty.display = bool(problem or not self.shown)
        if keep is not None and keep in [s.id for s in self.shown]:
            table.move_cursor(row=[s.id for s in self.shown].index(keep))
        self.refresh_bindings()

    def _fit_env(self, rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """`rows` with the environment cells cut so the models get MODELS_MIN columns (or what
        they need, if less), the environment column keeping at least ENV_MIN."""
        room = self._models_room(rows)
        want = min(MODELS_MIN, max((len(line) for cells in rows for line in cells[-1].split("\n")), default=0))
        env_width = max((len(line) for cells in rows for line in cells[1].split("\n")), default=0)
        cut = min(want - room, env_width - ENV_MIN)
        if cut <= 0:
            return rows
        return [(cells[0], clip(cells[1], env_width - cut), *cells[2:]) for cells in rows]

    def _models_room(self, rows: list[tuple[str, ...]]) -> int:
        """Columns left for the models (the last column) so that a row fits the screen's width."""
        widths = [max([len(label)] + [len(line) for cells in rows for line in cells[k].split("\n")])
                  for k, (_, label) in enumerate(COLUMNS[:-1])]
        padding = 2 * self.table.cell_padding
        frame = 2 + 1  # border and vertical scrollbar
        return (self.size.width or self.app.size.width) - frame - sum(w + padding for w in widths) - padding

    def on_resize(self) -> None:
        if self.table.columns:
            self._fill()

    @property
    def current(self) -> Any:
        if not self.shown or not self.is_mounted:
            return None
        row = self.table.cursor_row
        return self.shown[row] if 0 <= row < len(self.shown) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.refresh_bindings()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    # -- filter -----------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.set_focus(self.table)

    def action_focus_filter(self) -> None:
        """To the filter at once (`Screen.set_focus`, from a priority binding), not after the keys
        already queued (`Widget.focus` defers it): keys typed faster than the app handles them are
        routed by the focus of the moment, so the letters right behind `/` went to the table,
        where `d`, `e`, `f` and `r` delete, export, fork and resume."""
        self.set_focus(self.query_one("#history-filter", Input))

    def action_back(self) -> None:
        box = self.query_one("#history-filter", Input)
        if box.value:
            box.value = ""
            self.table.focus()
            return
        self.app.sub_title = self._previous_sub_title
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        typing = isinstance(self.focused, Input)
        if action in ("resume", "export", "delete", "focus_filter", "fork", "branches", "regrade", "rerun", "labels",
                      "agreement", "demo", "gradings") and typing:
            return False
        if action == "rerun":  # dimmed for a session still running
            return (self.current is not None and self.current.status != "running") or None
        if action == "labels":
            return self.current is not None
        if action == "regrade":  # dimmed for a session still running or of a family graded by rules
            current = self.current
            return (current is not None and current.status != "running" and _regradable(current.family)) or None
        if action == "fork":  # dimmed for a session still running or of a family that cannot fork
            current = self.current
            return (current is not None and current.status != "running" and _forkable(current.family)) or None
        if action in ("branches", "gradings"):
            return self.current is not None
        if action == "export":
            return self.current is not None
        if action == "demo":  # dimmed for a session still being recorded (its events are not all in)
            return (self.current is not None and self.current.status != "running") or None
        if action == "delete":  # not a session that is being recorded right now (shown dimmed)
            return None if self.current is not None and self.current.status == "running" else self.current is not None
        if action == "resume":  # shown dimmed for a session that cannot be continued
            current = self.current
            return (current is not None and current.status in RESUMABLE and _resumable(current.family)
                    and bool(current.headline.get("turns"))) or None
        return True

    # -- actions ----------------------------------------------------------------------------

    def _record(self, session_id: str) -> Any:
        from proactive_tui.store import StoreError, load_record

        try:
            return load_record(self.app.store, session_id)
        except StoreError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return None

    def action_open(self) -> None:
        summary = self.current
        if summary is not None:
            open_stored(self.app, summary.id, replay_screen=self._replay_screen)

    @staticmethod
    def _replay_screen(family: str) -> Any:
        """The family's session screen when it replays stored events (a hook tests replace)."""
        return _replay_screen(family)

    def action_resume(self) -> None:
        summary = self.current
        if summary is None or not self.check_action("resume", ()):
            return
        from proactive_tui.core import registry
        from proactive_tui.store import StoreError, resume_spec

        try:
            plan = resume_spec(self.app.store, summary.id)
        except StoreError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return
        self.notify(f"Resuming after {plan.turns} complete turn{'s' * (plan.turns != 1)} as a new session",
                    timeout=5, markup=False)
        screen = registry.get(plan.env.family).screen("session_screen")
        self.app.push_screen(screen(plan.env, plan.spec, self.session_factory, resume_from=plan.record,
                                    branch=plan.branch))

    def action_demo(self) -> None:
        """Play the highlighted session as a paced demo (`services.demo`), in its family's screen."""
        summary = self.current
        if summary is None or not self.check_action("demo", ()):
            return
        from proactive_tui.ui.demo import open_demo

        open_demo(self.app, summary.id, speed=1.0)

    def action_fork(self) -> None:
        """Branch the highlighted session (`ForkModal`); the branch runs in its family's screen."""
        summary = self.current
        if summary is None or not self.check_action("fork", ()):
            return
        record = self._record(summary.id)
        if record is not None:
            from proactive_tui.ui.forking import open_fork_modal

            open_fork_modal(self.app, record, self.session_factory)

    def action_rerun(self) -> None:
        """The highlighted session again against a new agent (`RerunModal`, `core.rerun`), in its
        family's session screen; the original stays as it was."""
        summary = self.current
        if summary is None or not self.check_action("rerun", ()):
            return
        from proactive_tui.core import registry
        from proactive_tui.core.fork import branch_spec
        from proactive_tui.core.rerun import RerunError, RerunPlan, check_rerun
        from proactive_tui.store import StoreError
        from proactive_tui.store.queries import session_environment, stored_spec
        from proactive_tui.ui.screens.rerun_modal import RerunChoice, RerunModal

        record = self._record(summary.id)
        if record is None:
            return
        family = registry.get(record.family)
        agent = record.seats.get("agent")
        store, session_id = self.app.store, summary.id

        def chosen(choice: RerunChoice | None) -> None:
            if choice is None:
                return
            try:
                spec, _changed = branch_spec(stored_spec(store, session_id), {"agent": choice.model})
                plan = RerunPlan(original_id=session_id, original=record, spec=spec, env=session_environment(record),
                                 user="frozen" if choice.frozen else "simulated")
                check_rerun(plan)
            except (RerunError, StoreError) as exc:
                self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
                return
            screen = family.screen("session_screen")
            self.app.push_screen(screen(plan.env, plan.spec, self.session_factory, rerun=plan))

        self.app.push_screen(RerunModal(session_id, agent.label if agent is not None and agent.kind == "llm" else "",
                                        can_freeze=family.parts.rerun is not None), chosen)

    def action_regrade(self) -> None:
        """Ask which judge (prefilled with the session's), then re-grade in a worker."""
        summary = self.current
        if summary is None or not self.check_action("regrade", ()):
            return
        from proactive_tui.core import registry
        from proactive_tui.services.regrade import recorded_judge
        from proactive_tui.ui.screens.regrade_modal import RegradeChoice, RegradeModal

        record = self._record(summary.id)
        if record is None:
            return
        family = registry.get(record.family)
        seat = family.regrade.seat if family.regrade is not None else "judge"
        api_base = (record.models.get(seat) or {}).get("api_base")
        what = (f"{family.title} · {record.env_id}: the dialogue is judged again as recorded; "
                f"the session's own grading stays as it is.")

        def chosen(choice: RegradeChoice | None) -> None:
            if choice is not None:
                self.run_worker(self._regrade(summary.id, choice), group="regrade", exit_on_error=False)

        self.app.push_screen(RegradeModal(summary.id, recorded_judge(record), api_base, what), chosen)

    async def _regrade(self, session_id: str, choice: Any) -> None:
        from proactive_tui.services.regrade import RegradeError, regrade_many

        self.notify(plain(f"Re-grading {session_id[:8]} with {choice.model}…"), timeout=4, markup=False)
        (result,) = await regrade_many(self.app.store, [session_id], choice.model, choice.api_base)
        if isinstance(result, RegradeError):
            self.notify(plain(str(result)), severity="error", timeout=10, markup=False)
            return
        self.notify(plain(f"{session_id[:8]} re-graded by {result.grading.judge}: {result.changes_text()}"),
                    title="Re-graded", timeout=10, markup=False)

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        """Command-palette entries (the app lists them beside its own)."""
        out = []
        if self.check_action("labels", ()):
            out.append(("Verdicts and labels…", "The highlighted session's judge verdicts, with your label beside each",
                        self.action_labels))
        out.append(("Judge agreement", "Judges against people over every label: accuracy, Cohen's kappa, confusion",
                    self.action_agreement))
        return out

    def action_labels(self) -> None:
        summary = self.current
        if summary is None:
            return
        from proactive_tui.ui.screens.labels_modal import LabelsModal

        self.app.push_screen(LabelsModal(self.app.store, summary.id))

    def action_gradings(self) -> None:
        summary = self.current
        if summary is None:
            return
        from proactive_tui.store import StoreError
        from proactive_tui.ui.screens.gradings_modal import GradingsModal

        try:
            gradings = self.app.store.gradings(summary.id)
        except StoreError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return
        self.app.push_screen(GradingsModal(summary.id, dict(summary.headline or {}), gradings))

    def action_agreement(self) -> None:
        from proactive_tui.ui.screens.agreement import AgreementScreen

        self.app.push_screen(AgreementScreen())

    def action_branches(self) -> None:
        summary = self.current
        if summary is not None:
            from proactive_tui.ui.forking import open_branches

            open_branches(self.app, summary.id, replay_screen=self._replay_screen)

    def action_export(self) -> None:
        summary = self.current
        if summary is None:
            return
        record = self._record(summary.id)
        if record is not None:
            from proactive_tui.services.labels import with_labels
            from proactive_tui.ui.screens.export_modal import ExportModal

            self.app.push_screen(ExportModal(with_labels(self.app.store, record)))

    def action_delete(self) -> None:
        summary = self.current
        if summary is None:
            return
        from proactive_tui.ui.screens.confirm import ConfirmModal

        def answered(yes: bool | None) -> None:
            if yes:
                self._delete(summary.id)

        question = (f"Delete session {summary.id[:8]} ({summary.env_id}, {when(summary.created_at)}, {summary.status})?\n"
                    "Its events are removed from the history; exports already written stay.")
        self.app.push_screen(ConfirmModal("Delete session", question, yes="Delete"), answered)

    def _delete(self, session_id: str) -> None:
        from proactive_tui.store import StoreError, delete_session

        try:
            delete_session(self.app.store, session_id)
        except StoreError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return
        self.notify(f"Deleted session {session_id[:8]}", timeout=4, markup=False)
        self.reload()
