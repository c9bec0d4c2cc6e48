"""A run folder's summary (`t` in the studio, "Summary" on a folder in the studio setup): kept
per tier, rejected per reason, what a person decided and rewrote, calls, tokens, cost, calls per
stage, and a bar chart of the items' fates.

Counted from the files (`engine.summarize`), so a folder made headless, in the studio, stopped
or resumed, shows the same numbers `synth` prints; nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from proactive_tui.synth import engine
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.bar_chart import BarChart


def folder_summary(folder: Path, manifest: engine.Manifest | None = None) -> engine.Summary:
    """The folder's summary as its files say now (the outputs as DIR/out holds them)."""
    manifest = manifest or engine.read_manifest(folder)
    out = folder / engine.OUT
    outputs = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) if out.is_dir() else []
    return engine.summarize(folder, manifest, outputs)


def summary_table(summary: engine.Summary) -> Table:
    table = Table(show_header=False, box=None, padding=(0, 1), expand=False)
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value")
    table.add_row("items", f"{summary.tried} of {summary.planned} tried, {summary.unfinished} unfinished")
    table.add_row("kept", Text(", ".join(f"{k} {v}" for k, v in summary.kept.items()) or "0"))
    table.add_row("rejected", Text(", ".join(f"{k} {v}" for k, v in summary.rejected.items()) or "0"))
    decided = ", ".join(f"{k} {v}" for k, v in summary.decided_by_person.items()) or "none"
    table.add_row("decided by a person", decided)
    table.add_row("edited by a person", f"{summary.edited_by_person} item(s)")
    table.add_row("calls", str(summary.calls))
    table.add_row("tokens", f"{summary.prompt_tokens + summary.completion_tokens:,} "
                            f"({summary.prompt_tokens:,} in, {summary.completion_tokens:,} out)")
    table.add_row("cost", "unknown (no price for these models)" if summary.cost is None else f"${summary.cost:.4f}")
    table.add_row("calls per stage", Text(", ".join(f"{k} {v}" for k, v in summary.calls_per_stage.items()) or "none"))
    table.add_row("models", Text(", ".join(f"{k}={v}" for k, v in summary.models.items())))
    return table


def fate_rows(summary: engine.Summary) -> list[tuple[str, float | None, str]]:
    """One bar per fate: kept per tier, then rejected per reason, then unfinished."""
    rows: list[tuple[str, float | None, str]] = [(f"kept {k}", float(v), str(v)) for k, v in summary.kept.items()]
    rows += [(f"rejected {k}", float(v), str(v)) for k, v in summary.rejected.items()]
    if summary.unfinished:
        rows.append(("unfinished", float(summary.unfinished), str(summary.unfinished)))
    return rows


class StudioSummaryScreen(Modal[None]):
    """The summary of one run folder; Escape closes."""

    HELP_TITLE = "Run summary"
    BINDINGS = [Binding("escape", "close", "Close", tooltip="Back to where you were")]
    DEFAULT_CSS = """
    StudioSummaryScreen { align: center middle; }
    #summary-box { width: 95%; height: 95%; border: round $accent; background: $panel; padding: 0 1; }
    #summary-body { height: 1fr; }
    #summary-table { width: 1fr; height: auto; }
    #summary-chart { width: 1fr; height: 1fr; min-height: 4; border: round $primary; }
    #summary-stages { width: 1fr; height: 1fr; min-height: 4; border: round $primary; }
    #summary-charts { height: 1fr; }
    """

    def __init__(self, folder: Path, manifest: engine.Manifest | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.manifest = manifest
        self.summary = folder_summary(folder, manifest)

    def compose(self) -> ComposeResult:
        s = self.summary
        with Vertical(id="summary-box") as box:
            box.border_title = Content(f"summary: {s.family} ({s.generator}) · {self.folder.name}")
            box.border_subtitle = "esc closes"
            with VerticalScroll(id="summary-body"):
                yield Static(summary_table(s), id="summary-table")
            with Horizontal(id="summary-charts"):
                yield BarChart(id="summary-chart")
                yield BarChart(id="summary-stages")

    def on_mount(self) -> None:
        self.query_one("#summary-chart", BarChart).show("items by fate", fate_rows(self.summary),
                                                        empty_text="no item finished yet")
        stages = [(k, float(v), str(v)) for k, v in self.summary.calls_per_stage.items()]
        self.query_one("#summary-stages", BarChart).show("calls per stage", stages, empty_text="no call yet")

    def action_close(self) -> None:
        self.dismiss(None)
