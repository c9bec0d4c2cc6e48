"""What every headless printer does: stream messages, hold judge lines, report retries and errors.

Model text is printed as plain text (escapes stripped by `plain`, wrapped in `Text` so Rich never
reads it as markup). Every console the command line prints with is a `SafeConsole`, which passes
each segment of text it draws through `plain` as well: a model string in a header, a reply in a
table cell or a file name in a panel cannot reach the terminal raw, whichever printer forgot.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Span, Text

from proactive_tui.textsafe import plain

def safe_text(text: Text) -> Text:
    """`text` with its characters passed through `plain`, its styles kept (run by run)."""
    if plain(text.plain) == text.plain:
        return text
    out = Text(style=text.style, justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap,
               end=text.end, tab_size=text.tab_size)
    cuts = sorted({edge for span in text.spans for edge in (span.start, span.end)} - {0, len(text)})
    for piece in text.divide(cuts):
        clean = plain(piece.plain)
        out.append_text(Text(clean, spans=[Span(0, len(clean), span.style) for span in piece.spans]))
    return out


def _clean(renderable: Any) -> Any:
    if isinstance(renderable, Text):
        return safe_text(renderable)
    if isinstance(renderable, str):
        return plain(renderable)
    return renderable


def _clean_table(table: Table) -> None:
    """A table measures its cells before drawing them: they are cleaned first, so the columns are
    as wide as what is shown (a model string with escapes no longer widens or crops its column)."""
    table.title, table.caption = _clean(table.title), _clean(table.caption)
    for column in table.columns:
        column.header, column.footer = _clean(column.header), _clean(column.footer)
        cells = getattr(column, "_cells", None)
        if isinstance(cells, list):
            cells[:] = [_clean(cell) for cell in cells]


class SafeConsole(Console):
    """A Rich console whose drawn text is made terminal-safe by `textsafe.plain`.

    Rich writes a `Text`'s characters as they are (it drops only a few C0 controls), so an escape
    sequence in a reply, a model string or an environment field would reach the terminal. The
    check sits in `render`, which every `print`, `log`, table cell and live display goes through:
    a string or `Text` is cleaned before it is laid out (so widths are those of what is shown),
    and every segment of text drawn is cleaned again (whatever renderable made it). Rich's own
    colour codes are added after rendering (from each segment's style) and its cursor moves are
    control segments, so both are kept."""

    def on_broken_pipe(self) -> None:
        """Rich's own answer to a closed pipe is `SystemExit(1)`, so `envs show ID | head -1` failed
        where `envs list | head -1` (plain writes) exited 0: raise the error instead and let
        `cli.main` end both the same way."""
        self.quiet = True
        raise BrokenPipeError

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None):  # type: ignore[override]
        if isinstance(renderable, Table):
            _clean_table(renderable)
        renderable = _clean(renderable)
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control or not text:
                yield segment
                continue
            clean = plain(text)
            yield segment if clean == text else Segment(clean, style)


SPEAKER_STYLE = {"agent": "bold cyan", "user": "bold green", "judge": "bold magenta"}


class EventPrinter:
    """Streams one session; a family's printer (its `cli.py`) overrides `show_family` and,
    rarely, `show`. The closing summary is the family's summary report sections."""

    def __init__(self, console: Console, err: Console, spec: Any, env: Any, quiet: bool = False,
                 family: Any = None) -> None:
        from proactive_tui.core import registry

        self.family = family or registry.get(env.family)
        self.console = console
        self.err = err
        self.spec = spec
        self.env = env
        self.quiet = quiet
        # Judge verdicts for turn n can arrive while turn n+1's message is streaming (the engine
        # overlaps them); they are held back until that message line is finished.
        self.streaming: str | None = None
        self.held: list[Text] = []
        # Causes already printed: a setup failure (no key, unknown provider, no API at the base)
        # reaches the printer as a warning (the plan failed), again as the fatal error and a third
        # time as the session's end detail; a person needs to read it once.
        self.reported: list[str] = []

    def _already_reported(self, message: str) -> bool:
        return bool(message) and any(message in seen for seen in self.reported)

    def note(self, text: Text) -> None:
        if self.streaming:
            self.held.append(text)
        else:
            self.console.print(text)

    def release(self) -> None:
        self.streaming = None
        for text in self.held:
            self.console.print(text)
        self.held.clear()

    def is_human(self, seat: str) -> bool:
        return self.spec.seats.get(seat) == "human"

    def show(self, event: Any) -> None:
        if self.quiet:
            if event.type == "error" and not self._already_reported(event.message):
                self.reported.append(event.message)
                self.err.print(Text(plain(event.message), style="red"))
            return
        c = self.console
        t = event.type
        if t == "phase_changed":
            c.print(Text(plain(f"— {event.phase} —"), style="dim"))
        elif t == "message_started":
            if not self.is_human(event.role):
                self.streaming = event.message_id
                c.print(Text(plain(f"\n[turn {event.turn}] {event.role} ({event.model}): "), style=SPEAKER_STYLE.get(event.role, "bold")), end="")
        elif t == "message_delta":
            if not event.message_id.startswith(tuple(s + "-" for s in self.spec.human_seats)):
                c.print(Text(plain(event.text)), end="")
        elif t == "message_done":
            if event.message.partial:
                c.print(Text(" [cut off]", style="yellow"), end="")
            if not self.is_human(event.message.role):
                c.print()
            self.release()
        elif t == "message_discarded":
            c.print()
            self.release()
            c.print(Text("  (the agent's next message, prepared ahead, was dropped: the target was reached)", style="dim"))
        elif t == "retrying":
            self.err.print(Text(plain(f"{event.seat}: Retrying ({event.attempt}/{event.max_attempts}) in {event.wait_s:.0f}s: {plain(event.reason)}"), style="yellow"))
        elif t == "error":
            if not self._already_reported(event.message):
                self.reported.append(event.message)
                self.err.print(Text(plain(f"{'error' if event.fatal else 'warning'}: {plain(event.message)}"), style="red"))
        elif t == "session_ended":
            self.release()
            detail = event.detail if event.detail and not self._already_reported(event.detail) else ""
            c.print(Text(f"\nsession ended: {event.reason}" + (f" ({plain(detail)})" if detail else ""), style="bold"))
        else:
            self.show_family(event)

    def show_family(self, event: Any) -> None:
        """Family-specific events (plans, checks, proposals, timeline...)."""

    def summary(self, record: Any) -> None:
        """The closing summary: the family's summary sections, then usage and how it ended."""
        from proactive_tui.export.rich_view import family_sections, render_sections

        for part in render_sections(family_sections(record, summary_only=True)):
            self.console.print(part)
        t = record.totals
        cost = "-" if t.cost is None else f"${t.cost:.4f}"
        ended = record.termination.reason if record.termination else "-"
        self.console.print(Text(
            f"termination: {ended} · turns: {self.family.record.complete_turns(record)} · tokens: {t.total_tokens} · cost: {cost} · "
            f"wall time: {t.wall_time_s if t.wall_time_s is not None else '-'}s"))
