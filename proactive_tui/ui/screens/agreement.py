"""Judge agreement: every judge against the people who labelled its verdicts (`services.labels`).

One row per (judge, kind of verdict): how many labels, the share agreeing (accuracy), and Cohen's
kappa; below, the confusion matrix of the highlighted row (judge value x person's value). Enter
lists that row's disagreements; Enter on one opens its session as History opens it.

Below that, a family's human rating study (ProactBench's, once `labels import --study` has put it
in the store) gets its own figures, computed from the store's labels the way the study computes
them (`services.labels.rating_studies`): per trigger type and pooled, ordinal alpha and the
consensus-vs-judge kappa with bootstrap intervals, the confusion matrices. The bootstrap (10,000
resamples) takes a while, so the figures are computed in a thread: the point figures first, the
intervals when they are ready. `q` switches to quadratic-weighted kappa and `x` to the paper's
rater exclusion; both are shown as deviations from the study.
"""

from __future__ import annotations

from typing import Any

from rich.columns import Columns
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from proactive_tui.textsafe import plain
from proactive_tui.ui.screens.modal import Modal


def confusion_table(row: Any) -> Group:
    """The highlighted row's confusion matrix: the judge's values down, the person's across."""
    title = Text(f"{plain(row.judge)} · {row.kind}: judge (rows) × person (columns)", style="bold")
    table = Table(show_edge=False, pad_edge=False)
    table.add_column(Text("judge \\ person", style="dim"))
    for cat in row.categories:
        table.add_column(Text(cat), justify="right")
    for a in row.categories:
        cells = []
        for b in row.categories:
            count = row.confusion[a][b]
            cells.append(Text(str(count), style=("bold green" if a == b else "bold red") if count else "dim"))
        table.add_row(Text(a), *cells)
    return Group(title, table)


def kappa_text(kappa: float | None) -> str:
    return "-" if kappa is None else f"{kappa:.3f}"


def interval_text(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if low is None or high is None else f"{value:.3f} [{low:.3f}, {high:.3f}]"


def study_view(figures: list[Any], computing: bool) -> Group:
    """Each study's figures for each judge (`services.labels.StudyFigures`): a table per judge, then
    one confusion matrix per group (human consensus down, judge across)."""
    parts: list[Any] = []
    for fig in figures:
        parts.append(Text(f"{fig.study} · judge {plain(fig.judge)} · {fig.raters} raters, {fig.items} verdicts",
                          style="bold"))
        for line in fig.deviations:
            parts.append(Text(line, style="yellow"))
        if fig.left_out:
            parts.append(Text(f"{fig.left_out} label(s) left out: the judge gave no grade there (SKIPPED)", style="dim"))
        ci = (f"95% bootstrap interval, {fig.resamples:,} resamples" if fig.resamples
              else "intervals: computing…" if computing else "no intervals")
        parts.append(Text(f"alpha: {fig.alpha_label} · kappa: {fig.kappa_label} · {ci}", style="dim"))
        table = Table(show_edge=False, pad_edge=False)
        for name, justify in (("group", "left"), ("items", "right"), ("ratings", "right"), ("alpha", "left"),
                              ("kappa", "left")):
            table.add_column(Text(name), justify=justify)  # type: ignore[arg-type]
        for g in fig.groups:
            table.add_row(Text(g.group), Text(str(g.n_items)), Text(str(g.n_ratings)),
                          Text(interval_text(g.alpha, g.alpha_low, g.alpha_high)),
                          Text(interval_text(g.kappa, g.kappa_low, g.kappa_high)))
        parts.append(table)
        if any(g.group == "OVERALL" for g in fig.groups):
            parts.append(Text("OVERALL pools every type, computed the same way (the study reports per type only)",
                              style="dim"))
        matrices = []
        for g in fig.groups:
            m = Table(title=Text(f"{g.group}: consensus × judge"), show_edge=False, pad_edge=False)
            m.add_column(Text(""))
            for c in fig.categories:
                m.add_column(Text(c), justify="right")
            for h in fig.categories:
                m.add_row(Text(h), *[Text(str(g.confusion.get(h, {}).get(j, 0)), style="bold" if h == j else "")
                                     for j in fig.categories])
            matrices.append(m)
        parts.append(Columns(matrices, padding=(0, 3)))
    return Group(*parts)


class DisagreementsModal(Modal[str | None]):
    """The disagreements of one (judge, kind); dismisses with the session to open (None: stay)."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]
    DEFAULT_CSS = """
    DisagreementsModal { align: center middle; }
    DisagreementsModal > #disagreements { width: 96%; height: auto; max-height: 90%; border: round $accent;
                                         background: $surface; padding: 0 1; }
    DisagreementsModal #disagreement-list { height: auto; max-height: 30; border: none; }
    """

    def __init__(self, row: Any) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        from proactive_tui.core.verdicts import value_text

        box = Vertical(id="disagreements")
        count = len(self.row.disagreements)
        box.border_title = Content(f"Disagreements · {self.row.judge} · {self.row.kind} · {count} of {self.row.n}")
        box.border_subtitle = "↑↓ a disagreement · enter opens its session · esc closes"
        with box:
            if not count:
                yield Static(Text("The people agreed with this judge every time.", style="dim"))
            options = []
            for i, d in enumerate(self.row.disagreements):
                line = Text()
                line.append(f"{d.session_id} ", style="bold")
                line.append(f"{d.verdict} ")
                line.append(f"judge {value_text(d.judge_value)} → person {value_text(d.value)}", style="yellow")
                if d.note:
                    line.append(" · " + plain(d.note), style="italic")
                options.append(Option(line, id=str(i)))
            yield OptionList(*options, id="disagreement-list")

    def on_mount(self) -> None:
        options = next(self.query("#disagreement-list").results(OptionList), None)
        if options is not None:
            options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.row.disagreements[int(event.option.id)].session_id)

    async def action_dismiss(self, result: str | None = None) -> None:
        self.dismiss(result)


class AgreementScreen(Screen[None]):
    """`rows` (`services.labels.AgreementRow`), else the agreement over every label in the app's store."""

    HELP_TITLE = "Judge agreement"
    BINDINGS = [
        Binding("enter", "drill", "Disagreements", tooltip="The highlighted row's disagreements"),
        Binding("escape", "back", "Back"),
        Binding("q", "toggle_quadratic", "Quadratic kappa", show=False),
        Binding("x", "toggle_exclusion", "Rater exclusion", show=False),
    ]
    DEFAULT_CSS = """
    AgreementScreen #agreement-intro { height: auto; padding: 0 1; color: $text-muted; }
    AgreementScreen #agreement-table { height: auto; max-height: 50%; }
    AgreementScreen #agreement-confusion { height: auto; padding: 1 1; }
    AgreementScreen #agreement-study { height: auto; padding: 0 1; }
    AgreementScreen #agreement-body { height: 1fr; }
    """

    def __init__(self, rows: list[Any] | None = None, *, resamples: int | None = None) -> None:
        """`resamples`: the studies' bootstrap count (None: each study's own)."""
        super().__init__()
        self.rows = rows
        self.resamples = resamples
        self.quadratic = False
        self.exclude_raters = False
        self.studies: list[Any] = []
        self.studies_final = False
        self._generation = 0
        """Bumped on each recomputation: a thread still finishing an older one (its bootstrap
        cannot be interrupted) shows nothing."""

    def compose(self) -> ComposeResult:
        from textual.containers import VerticalScroll

        yield Static(Text(""), id="agreement-intro")
        table: DataTable = DataTable(id="agreement-table", cursor_type="row", zebra_stripes=True)
        yield table
        with VerticalScroll(id="agreement-body"):
            yield Static(Text(""), id="agreement-confusion")
            study = Static(Text(""), id="agreement-study")
            study.display = False
            yield study
        yield Footer()

    def on_mount(self) -> None:
        if self.rows is None:
            self.rows = self._load()
        table = self.query_one("#agreement-table", DataTable)
        table.add_column("judge", key="judge")
        table.add_column("kind", key="kind")
        table.add_column("n", key="n")
        table.add_column("accuracy", key="accuracy")
        table.add_column("kappa", key="kappa")
        table.add_column("disagree", key="disagree")
        for i, row in enumerate(self.rows):
            table.add_row(Text(plain(row.judge)), Text(row.kind), Text(str(row.n), justify="right"),
                          Text(f"{100 * row.accuracy:.1f}%", justify="right"), Text(kappa_text(row.kappa), justify="right"),
                          Text(str(len(row.disagreements)), justify="right"), key=str(i))
        labels = sum(r.n for r in self.rows)
        intro = (f"Judges against people: {labels} labelled verdict{'s' * (labels != 1)}, per judge and kind "
                 "(accuracy = share agreeing; Cohen's kappa corrects it for chance). Enter: the row's disagreements.")
        if not self.rows:
            intro = "No labels yet: open a session's Verdicts (L) and agree (a) or disagree (d) with its judges."
        self.query_one("#agreement-intro", Static).update(Text(intro))
        table.focus()
        self._show_confusion()
        self._compute_studies()

    # -- the studies' figures ------------------------------------------------------------------

    def _compute_studies(self) -> None:
        store = getattr(self.app, "store", None)
        if store is None:
            return
        options = dict(quadratic=self.quadratic, exclude_raters=self.exclude_raters)
        resamples = self.resamples
        self._generation += 1
        generation = self._generation

        def work() -> None:
            from proactive_tui.services.labels import rating_studies
            from proactive_tui.store import StoreError

            try:
                studies = rating_studies()
                quick = [f for s in studies for f in s.analyse(store, resamples=0, **options)]
                if not quick:
                    return
                self.app.call_from_thread(self._show_studies, quick, resamples == 0, generation)
                if resamples == 0:
                    return
                full = [f for s in studies for f in s.analyse(store, resamples=resamples, **options)]
                if generation == self._generation:
                    self.app.call_from_thread(self._show_studies, full, True, generation)
            except StoreError as exc:
                self.app.call_from_thread(self.notify, plain(str(exc)), severity="error", timeout=8, markup=False)

        self.run_worker(work, thread=True, exclusive=True, group="study-figures")

    def _show_studies(self, figures: list[Any], final: bool, generation: int) -> None:
        if generation != self._generation or not self.is_attached:
            return
        self.studies, self.studies_final = figures, final
        panel = self.query_one("#agreement-study", Static)
        panel.display = bool(figures)
        keys = Text("q: quadratic kappa " + ("on" if self.quadratic else "off") + " · x: rater exclusion "
                    + ("on" if self.exclude_raters else "off") + " (each a deviation from the study)", style="dim")
        panel.update(Group(keys, study_view(figures, computing=not final)))

    def palette_commands(self) -> list[tuple[str, str, Any]]:
        """What the palette offers here (the app lists a screen's `palette_commands`)."""
        if not self.studies:
            return []
        return [("Study figures: quadratic kappa on/off", "Quadratic-weighted kappa (a deviation from the study)",
                 self.action_toggle_quadratic),
                ("Study figures: rater exclusion on/off", "The paper's pre-registered rater exclusion (a deviation)",
                 self.action_toggle_exclusion)]

    def action_toggle_quadratic(self) -> None:
        if self.studies:
            self.quadratic = not self.quadratic
            self._compute_studies()

    def action_toggle_exclusion(self) -> None:
        if self.studies:
            self.exclude_raters = not self.exclude_raters
            self._compute_studies()

    def _load(self) -> list[Any]:
        from proactive_tui.services.labels import agreement
        from proactive_tui.store import StoreError

        store = getattr(self.app, "store", None)
        if store is None:
            return []
        try:
            return agreement(store.labels())
        except StoreError as exc:
            self.notify(plain(str(exc)), severity="error", timeout=8, markup=False)
            return []

    @property
    def current(self) -> Any:
        table = self.query_one("#agreement-table", DataTable)
        index = table.cursor_row
        return self.rows[index] if self.rows and 0 <= index < len(self.rows) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_confusion()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_drill()

    def _show_confusion(self) -> None:
        row = self.current
        self.query_one("#agreement-confusion", Static).update(confusion_table(row) if row is not None else Text(""))

    def action_drill(self) -> None:
        row = self.current
        if row is None:
            return

        def chosen(session_id: str | None) -> None:
            if session_id:
                from proactive_tui.ui.screens.history import open_stored

                open_stored(self.app, session_id)

        self.app.push_screen(DisagreementsModal(row), chosen)

    def action_back(self) -> None:
        self.app.pop_screen()
