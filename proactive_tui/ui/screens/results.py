"""The results screen: a batch report folder (`proactive-tui eval ... --out DIR`) opened read-only.

What it shows, all read from the folder's files (`evalrun.opened`): the line at the top says which
folder, when its report was written, whether it is partial and which seats' models ran, so a
number on screen is never mistaken for a live one. Below, one of the report's tables at a time
(`t` steps through every family's tables, `T` back) with the numbers as report.md prints them
(`evalrun.report.show_value`); a bar chart of the column under the cursor, one bar per row shown
(the cursor's row marked and kept in view; `c` or Tab focuses it to scroll through every bar);
and the sessions that make the highlighted row. Enter on a session shows it as History does
(`history.open_stored`: the family's session screen replaying the stored events when the session
store has it, else the run record from the folder as text: transcript and judges).

Outcomes: the line below counts the sessions that passed, that ran and failed the task (the
family's pass rule, `BatchPart.trials`), and that errored (a model or infrastructure error, no
verdict), apart; each session's row says which. When the shown table's rows are not their
family's protocol (`Family.deviations`), a second line says how, and the table has a "protocol"
column; headline figures carry their 95% interval "[low, high]".

Sessions with an error: `f` steps the sessions pane through every session with an error, the judge failures
(a judging call that failed: a score, a verdict, a reading of a reply), each judge that failed by
purpose, seat and model, the agent/user failures (a dialogue seat's own reply), the failures of
an unknown seat or role (records written before the run record kept who failed, a failure kept
in failed/ with no record), then off (`F` the other way); the pane's title names the step, and the
list takes the chart's half of the screen (it is not about the table's rows). Who failed is what
the record says (`evalrun.opened.Failure`), never guessed.

Sorting: a click on a column header or `s` on the cursor's column (again: the other way);
filtering: `m` steps through the models, `/` filters rows by any word of the model or group, `v`
lists only the sessions whose score passes a threshold typed as `<5`, `>=7` or `plan<=3` (the
headline score unless a score is named; empty clears, so does Escape).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from proactive_tui.evalrun.opened import FailingFilter, OpenedReport, ScoreFilter, SessionEntry, parse_score_filter
from proactive_tui.evalrun.report import PROTOCOL_COLUMN, ReportRow, ReportTable, protocol_text, show_value, status_line
from proactive_tui.textsafe import plain
from proactive_tui.ui.widgets.bar_chart import BarChart
from proactive_tui.ui.widgets.key_bar import KeyBar
from proactive_tui.ui.widgets.title_bar import TitleBar

NAME_COLUMNS = ("model", "group", PROTOCOL_COLUMN)


def source_line(opened: OpenedReport) -> Content:
    """Where the numbers came from: the folder, when the report was written, partial or not, the models."""
    report = opened.report
    written = (f"written {opened.written_at}" if opened.source == "report.json"
               else f"no readable report.json: recomputed from the run records at {opened.written_at}")
    seats = " · ".join(f"{seat} {model}" for seat, model in sorted(report.models.items())) or "no other seats"
    parts: list[tuple[str, str] | str] = [("Read from files: ", "bold $accent"), (plain(opened.folder), "bold"),
                                         " · ", written, " · "]
    parts.append((status_line(report), "bold $warning") if report.partial else status_line(report))
    parts += [" · ", f"agents {', '.join(map(plain, report.agents))} · {plain(seats)}"]
    judges = opened.judge_models()
    if judges and judges != [report.models.get("judge")]:
        parts.append(f" · judges in the records {plain(', '.join(judges))}")
    if opened.problems:
        parts.append((f" · {len(opened.problems)} file(s) unreadable, skipped", "$error"))
    return Content.assemble(*parts)


def outcomes_line(opened: OpenedReport, table: ReportTable | None) -> Content:
    """"Sessions: 3 passed · 2 failed the task · 1 errored (no verdict)": a session that ran and
    failed its task is not one an error stopped (`evalrun.opened.outcome_of`). Then, when the
    shown table's rows are not their protocol, how (`ReportRow.protocol`), so its numbers are
    never on screen without it: once for all its models when they share the labels, else per model."""
    counts = opened.outcome_counts()
    styles = {"passed": "$success", "failed the task": "bold $warning", "errored": "bold $error", "no verdict": ""}
    parts: list[tuple[str, str] | str] = [("Sessions: ", "bold $accent")]
    for i, (outcome, count) in enumerate(counts.items()):
        what = "errored (no verdict)" if outcome == "errored" else outcome
        parts += ([" · "] if i else []) + [(f"{count} {what}", styles[outcome])]
    if not counts:
        parts.append("none")
    by_model = {row.model: row.protocol for row in (table.rows if table is not None else []) if row.protocol}
    if by_model:
        shared = len({tuple(labels) for labels in by_model.values()}) == 1 and len(by_model) == len(
            {row.model for row in table.rows})
        said = ("; ".join(next(iter(by_model.values()))) if shared
                else " · ".join(f"{model}: {'; '.join(labels)}" for model, labels in by_model.items()))
        parts += ["\n", ("Not the protocol: ", "bold $warning"), (plain(said), "$warning")]
    return Content.assemble(*parts)


def session_label(entry: SessionEntry, with_family: bool = True) -> str:
    """`env r<repeat> <setting values>`, short enough for half of an 80-column screen."""
    env = entry.key.env_id if with_family else entry.key.env_id.removeprefix(entry.key.family + "/")
    settings = " ".join(v for _, v in sorted(entry.key.settings.items()))
    return f"{env} r{entry.key.repeat}" + (f" {settings}" if settings else "")


def session_outcome(entry: SessionEntry, only: FailingFilter | None = None) -> str:
    """A session that errored: why and who failed (the first failure `only` picks, when the error
    filter is on). Else its outcome ("passed", "failed the task") and headline scores, and who
    failed when an error left it a verdict all the same."""
    record = entry.record
    scores = [f"{s.label} {s.display}" for s in record.scores if s.headline] if record is not None else []
    if entry.failing and (entry.outcome == "errored" or only is not None):
        failures = [f for f in entry.failures if only is None or only.picks(f)] or entry.failures
        first = failures[0]
        more = f" (+{len(entry.failures) - 1} more)" if len(entry.failures) > 1 else ""
        return (f"{'errored' if entry.outcome == 'errored' else 'error'}, {first.who}: "
                f"{(first.message.splitlines() or [''])[0]}{more}")
    verdict = {"passed": "passed", "failed the task": "failed the task"}.get(entry.outcome)
    text = ", ".join(scores) or "-"
    if entry.failing:  # a verdict despite an error (a plan judge failed, the guidance did not)
        text += f" · error, {entry.failures[0].who}"
    return f"{verdict} · {text}" if verdict else text


class ResultsTable(DataTable):
    """The report table: Enter moves to the sessions of the highlighted row."""

    BINDINGS = [Binding("enter", "select_cursor", "Sessions", tooltip="The sessions the highlighted row is computed from")]


class SessionsTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Open", tooltip="The session's transcript and judges (read-only)")]


class ResultsScreen(Screen[None]):
    HELP_TITLE = "Results (a report folder)"
    AUTO_FOCUS = "#results-table"
    CSS_PATH = Path(__file__).with_name("results.tcss")
    BINDINGS = [
        Binding("t", "next_table(1)", "Table", tooltip="The next table of the report (every family's)"),
        Binding("T", "next_table(-1)", "Previous table", show=False, tooltip="The previous table"),
        Binding("s", "sort", "Sort", tooltip="Sort by the cursor's column (again: the other way); or click a header"),
        Binding("m", "next_model", "Model", tooltip="Show one model's rows, the next, or all"),
        Binding("f", "next_failing(1)", "Errors",
                tooltip="List the sessions with an error (not those that failed the task): all, judge failures, "
                        "each judge, agent/user failures, then off"),
        Binding("F", "next_failing(-1)", "Previous failing filter", show=False, tooltip="The failing filter's previous step"),
        Binding("v", "focus_score", "Score", tooltip="List only sessions whose score passes a threshold: <5, >=7, plan<=3"),
        Binding("slash", "focus_filter", "Filter", priority=True,  # as on the history: before the keys behind it
                tooltip="Filter rows by any word of the model or group"),
        Binding("c", "focus_chart", "Chart", tooltip="Focus the bar chart (then ↑↓, PgUp/PgDn, Home/End scroll it)"),
        Binding("escape", "back", "Back",
                tooltip="Close a filter box, clear the score filter, or back to the previous screen"),
    ]

    def __init__(self, opened: OpenedReport) -> None:
        super().__init__()
        self.opened = opened
        self.tables = opened.tables()
        self.index = 0
        self.sort_key: str | None = None
        self.sort_desc = False
        self.model: str | None = None
        self.filter_text = ""
        self.failing_steps = opened.failing_filters()
        self.failing_step: int | None = None
        """Index into `failing_steps`; None when the sessions pane lists the highlighted row's."""
        self.score_filter: ScoreFilter | None = None
        self.headlines = opened.headline_scores()
        """Each family's headline score, what an unnamed threshold reads (the folder does not change)."""
        self.rows: list[ReportRow] = []
        self.listed: list[SessionEntry] = []
        self._previous_sub_title = ""

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(source_line(self.opened), id="results-source")
        yield Static("", id="results-outcomes")
        yield Input(placeholder="/ filter rows: any word of the model or group", id="results-filter")
        yield Input(placeholder="score threshold: <5, >=7, plan<=3 (headline score unless named); empty clears",
                    id="results-score")
        yield Static("", id="results-score-problem")
        yield ResultsTable(id="results-table", cursor_type="cell", zebra_stripes=True)
        with Horizontal(id="results-lower"):
            yield BarChart(id="results-chart", scroll_hint="c then ↑↓")
            yield SessionsTable(id="results-sessions", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    @property
    def table(self) -> DataTable:
        return self.query_one("#results-table", DataTable)

    @property
    def sessions(self) -> DataTable:
        return self.query_one("#results-sessions", DataTable)

    @property
    def current(self) -> tuple[str, ReportTable] | None:
        return self.tables[self.index] if self.tables else None

    def on_screen_resume(self) -> None:
        self.app.sub_title = f"results · {plain(self.opened.folder)}"

    def on_mount(self) -> None:
        self._previous_sub_title = self.app.sub_title
        # the agent last: for a row's sessions it is the row's model; scores must show at 80 columns
        self.sessions.add_column("Session", key="session")
        self.sessions.add_column("Scores / why", key="outcome")
        self.sessions.add_column("Agent", key="agent")
        self._fill()
        self.table.focus()

    # -- the table ----------------------------------------------------------------------------

    def _columns(self, table: ReportTable) -> list[tuple[str, str]]:
        names = [("model", "model")] + ([("group", table.group_label)] if table.group_label else [])
        protocol = [(PROTOCOL_COLUMN, PROTOCOL_COLUMN)] if any(r.protocol for r in table.rows) else []
        return names + [(c.key, c.label) for c in table.columns] + protocol

    def _matches(self, row: ReportRow) -> bool:
        if self.model is not None and row.model != self.model:
            return False
        words = self.filter_text.lower().split()
        hay = f"{row.model} {row.group}".lower()
        return all(w in hay for w in words)

    def _sorted(self, table: ReportTable, rows: list[ReportRow]) -> list[ReportRow]:
        key = self.sort_key
        if key is None:
            return rows
        if key == PROTOCOL_COLUMN:
            return sorted(rows, key=protocol_text, reverse=self.sort_desc)
        if key in NAME_COLUMNS:
            return sorted(rows, key=lambda r: getattr(r, key).lower(), reverse=self.sort_desc)
        known = sorted((r for r in rows if r.values.get(key) is not None), key=lambda r: r.values[key],
                       reverse=self.sort_desc)
        return known + [r for r in rows if r.values.get(key) is None]  # n/a last either way

    def _fill(self) -> None:
        """Lay out the current table with the sort and filters, keeping the cursor's column."""
        grid = self.table
        column = grid.cursor_column
        grid.clear(columns=True)
        current = self.current
        if current is None:
            self.query_one("#results-outcomes", Static).update(outcomes_line(self.opened, None))
            grid.border_title = Content("No tables: the report has no finished session")
            self.rows = []
            self._lower()
            return
        family, table = current
        self.query_one("#results-outcomes", Static).update(outcomes_line(self.opened, table))
        for key, label in self._columns(table):
            mark = (" ▼" if self.sort_desc else " ▲") if key == self.sort_key else ""
            grid.add_column(Text(plain(label) + mark), key=key)
        units = {c.key: c.unit for c in table.columns}
        self.rows = self._sorted(table, [r for r in table.rows if self._matches(r)])
        for row in self.rows:
            cells: list[Text] = [Text(plain(row.model))] + ([Text(plain(row.group))] if table.group_label else [])
            cells += [Text(show_value(row.values.get(c.key), units[c.key], row.std.get(c.key), row.interval.get(c.key)),
                           justify="right") for c in table.columns]
            if any(r.protocol for r in table.rows):
                cells.append(Text(plain(protocol_text(row)), style="bold" if row.protocol else ""))
            grid.add_row(*cells)
        grid.border_title = Content(f"{plain(table.title)} · table {self.index + 1}/{len(self.tables)}")
        narrowed = [f"model {self.model}"] if self.model else []
        narrowed += [f"filter {self.filter_text.strip()!r}"] if self.filter_text.strip() else []
        shown = f"{len(self.rows)}/{len(table.rows)} rows" if narrowed else f"{len(table.rows)} rows"
        grid.border_subtitle = Content(plain(" · ".join([shown, *narrowed])))
        if self.rows:
            grid.move_cursor(row=0, column=min(column, len(grid.columns) - 1))
        self._lower()

    def _metric(self) -> tuple[str, str] | None:
        """(key, label) of the column the chart draws: the cursor's, or the first value column."""
        current = self.current
        if current is None or not current[1].columns:
            return None
        table = current[1]
        keys = [k for k, _ in self._columns(table)]
        at = keys[self.table.cursor_column] if 0 <= self.table.cursor_column < len(keys) else None
        chosen = next((c for c in table.columns if c.key == at), table.columns[0])
        return chosen.key, chosen.label

    def _current_row(self) -> ReportRow | None:
        row = self.table.cursor_row
        return self.rows[row] if self.rows and 0 <= row < len(self.rows) else None

    # -- chart and sessions -------------------------------------------------------------------

    def _lower(self) -> None:
        self._chart()
        self._sessions()
        self.refresh_bindings()

    def _chart(self) -> None:
        chart = self.query_one(BarChart)
        metric = self._metric()
        current = self.current
        if metric is None or current is None:
            chart.show("Chart", [])
            return
        key, label = metric
        unit = next(c.unit for c in current[1].columns if c.key == key)
        # mean ± std beside a bar; the interval is in the table (beside a bar it wraps at 80 columns)
        rows = [(plain(r.model + (f" · {r.group}" if r.group else "")), r.values.get(key),
                 show_value(r.values.get(key), unit, r.std.get(key))) for r in self.rows]
        deviates = " · not the protocol (see the table)" if any(r.protocol for r in self.rows) else ""
        chart.show(f"{plain(label)} · a bar per row{deviates}", rows, empty_text="no row matches the filters",
                   current=self.table.cursor_row if self.rows else None)

    @property
    def failing_filter(self) -> FailingFilter | None:
        return self.failing_steps[self.failing_step] if self.failing_step is not None else None

    def _sessions(self) -> None:
        grid = self.sessions
        grid.clear()
        only = self.failing_filter
        if only is not None:
            entries = [s for s in self.opened.failing(only) if self.model is None or s.key.agent == self.model]
            what = f"Errors · {only.label}"
        else:
            row, current = self._current_row(), self.current
            entries = self.opened.row_sessions(current[0], row) if row is not None and current is not None else []
            what = f"Sessions of {row.model}{' · ' + row.group if row.group else ''}" if row is not None else \
                "Sessions of no row"
        count = f"{len(entries)}"
        if self.score_filter is not None:
            headlines = self.headlines
            kept = [e for e in entries if self.score_filter.passes(e.record, headlines)]
            shown = {e.key.family for e in entries if e.key.family in headlines}
            label = self.score_filter.label({f: n for f, n in headlines.items() if f in shown})
            what, count = f"{what} · {label}", f"{len(kept)}/{len(entries)}"
            entries = kept
        grid.border_title = Content(plain(f"{what} ({count})"))
        self.listed = entries
        for entry in entries:
            grid.add_row(Text(plain(session_label(entry, only is not None))), Text(plain(session_outcome(entry, only))),
                         Text(plain(entry.key.agent)), key=entry.key_id)
        hints = (["f next error filter"] if only is not None else []) + (["enter opens"] if entries else [])
        grid.border_subtitle = " · ".join(hints)

    # -- events -------------------------------------------------------------------------------

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        if event.data_table is self.table:
            self._lower()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        if event.data_table is self.table and self.listed:
            self.sessions.focus()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        if event.data_table is self.table:
            self._sort_by(str(event.column_key.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table is self.sessions:
            self.action_open()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "results-filter":
            self.filter_text = event.value
            self._fill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "results-score":
            self._set_score_filter(event.value)
            return
        self.set_focus(self.table)

    def _score_problem(self, text: str) -> None:
        problem = self.query_one("#results-score-problem", Static)
        problem.update(Content(plain(text)))  # echoes what was typed: text, not markup
        problem.set_class(bool(text), "shown")

    def _set_score_filter(self, text: str) -> None:
        """Apply the typed threshold, or say why it cannot be (the box stays open to fix it)."""
        try:
            parsed = parse_score_filter(text)
        except ValueError as exc:
            self._score_problem(str(exc))
            return
        records = [s.record for s in self.opened.sessions if s.record is not None]
        if parsed is not None and parsed.name and not any(parsed.score_of(r) for r in records):
            names = sorted({score.name for r in records for score in r.scores})
            self._score_problem(f"no session of the folder has a score named {parsed.name!r}; "
                                f"the scores are: {', '.join(names) or 'none'}")
            return
        self.score_filter = parsed
        self._close_score_box()
        self._sessions()
        self.refresh_bindings()

    # -- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if isinstance(self.focused, Input) and action not in ("back",):
            return False
        if action in ("sort", "next_model") and not self.rows and not self.model:
            return None
        if action == "next_table":
            return len(self.tables) > 1 or None
        if action == "focus_chart":
            return self.failing_step is None or None  # hidden while the failing list is shown
        return True

    def _sort_by(self, key: str) -> None:
        if key == self.sort_key:
            self.sort_desc = not self.sort_desc
        else:
            self.sort_key, self.sort_desc = key, key not in NAME_COLUMNS  # scores: highest first
        self._fill()

    def action_sort(self) -> None:
        current = self.current
        if current is None:
            return
        keys = [k for k, _ in self._columns(current[1])]
        column = self.table.cursor_column
        if 0 <= column < len(keys):
            self._sort_by(keys[column])

    def action_next_table(self, step: int) -> None:
        if not self.tables:
            return
        self.index = (self.index + step) % len(self.tables)
        self.sort_key, self.sort_desc = None, False
        self._fill()

    def action_next_model(self) -> None:
        models = [None, *self.opened.report.agents]
        self.model = models[(models.index(self.model) + 1) % len(models)] if self.model in models else None
        self._fill()

    def action_next_failing(self, step: int) -> None:
        """Off, then every step of the failing filter in turn (`failing_filters`), then off again."""
        states: list[int | None] = [None, *range(len(self.failing_steps))]
        self.failing_step = states[(states.index(self.failing_step) + step) % len(states)]
        # the failing list is not about the table's rows: it takes the chart's half of the pane,
        # so its "why" column and the step's name fit at 80 columns
        self.query_one("#results-lower").set_class(self.failing_step is not None, "failing")
        self._sessions()
        self.refresh_bindings()
        if self.failing_step is not None and self.listed:
            self.sessions.focus()
        elif self.failing_step is None or isinstance(self.focused, BarChart):
            self.table.focus()

    def action_focus_score(self) -> None:
        box = self.query_one("#results-score", Input)
        box.add_class("shown")  # hidden until asked for, like the word filter
        box.focus()

    def _close_score_box(self) -> None:
        self.query_one("#results-score", Input).remove_class("shown")
        self._score_problem("")
        self.table.focus()

    def action_focus_chart(self) -> None:
        self.query_one(BarChart).focus()

    def action_focus_filter(self) -> None:
        box = self.query_one("#results-filter", Input)
        box.add_class("shown")  # hidden until asked for: three rows count at 80x24
        self.set_focus(box)  # at once, as in the history: the letters typed behind `/` go to the box

    def action_back(self) -> None:
        box = self.query_one("#results-filter", Input)
        if box.has_class("shown"):
            box.value = ""
            box.remove_class("shown")
            self.table.focus()
            return
        if self.query_one("#results-score", Input).has_class("shown"):
            self._close_score_box()  # the filter set before stays
            return
        if self.score_filter is not None:
            self.score_filter = None
            self.query_one("#results-score", Input).value = ""
            self._sessions()
            return
        self.app.sub_title = self._previous_sub_title
        self.app.pop_screen()

    @property
    def chosen(self) -> SessionEntry | None:
        row = self.sessions.cursor_row
        return self.listed[row] if self.listed and 0 <= row < len(self.listed) else None

    def action_open(self) -> None:
        """The highlighted session read-only, as History shows it; from the folder's file when the
        session store does not have it (a batch run with --no-store, or on another machine)."""
        entry = self.chosen
        if entry is None:
            return
        from proactive_tui.ui.screens.history import open_stored, show_record_text

        record: Any = entry.record
        if record is None:
            from proactive_tui.ui.screens.text_modal import TextModal

            self.app.push_screen(TextModal(plain(f"Failed session · {entry.key.env_id}"),
                                           [("Why it failed", plain(entry.reason)), ("File", plain(entry.path))]))
            return
        if not open_stored(self.app, record.id, quiet_if_missing=True):
            show_record_text(self.app, record, plain(f"Session {record.id[:8]} · {record.env_id} (from {entry.path})"))
