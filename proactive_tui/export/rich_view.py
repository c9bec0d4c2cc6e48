"""A run record as Rich renderables: the shared body of the html and svg exports, `sessions show`,
the History detail and the headless summary.

The header and the problems are common; everything else is the family's report sections
(core.report), rendered here. Model text is data: it goes in as `Text` (never parsed as markup)
after `plain()` strips terminal escape sequences, so a message that says `[bold]` or carries an
escape code shows as written.
"""

from __future__ import annotations

import io
from typing import Any, Iterable

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from proactive_tui.export.formats.common import header_facts
from proactive_tui.core.run_record import failures_of
from proactive_tui.textsafe import plain

SPEAKER_STYLE = {"agent": "bold cyan", "user": "bold green", "judge": "bold magenta", "observation": "bold blue",
                 "system": "bold"}
STYLE = {"": "", "dim": "dim", "judge": "magenta", "good": "green", "bad": "bold red", "warn": "yellow", "info": "bold",
         "bold": "bold"}
EXPORT_WIDTH = 100


def _t(text: Any, style: str = "") -> Text:
    return Text(plain(str(text)), style=style)


def _header(record: Any) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for key, value in header_facts(record):
        grid.add_row(Text(key), _t(value, "yellow" if key == "Human seats" and value != "none" else ""))
    return grid


def render_block(block: Any) -> RenderableType:
    kind = block.kind
    if kind == "line":
        style = STYLE.get(block.style, "")
        pad = "  " * block.indent
        if block.label:
            return Text.assemble(pad, (plain(block.label) + " ", f"bold {style}".strip()), _t(block.text, style))
        return Text.assemble(pad, _t(block.text, style))
    if kind == "speech":
        turn = f"[turn {block.turn}] " if block.turn is not None else ""
        line = Text.assemble((f"{turn}{block.speaker}", SPEAKER_STYLE.get(block.speaker, "bold")),
                             (f" ({plain(block.who)})" if block.who else "", "dim"), ": ",
                             _t(block.text, "dim" if block.muted else ""))
        if block.partial:
            line.append(" [cut off]", style="yellow")
        return line
    if kind == "facts":
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        for key, value in block.rows:
            grid.add_row(_t(key), _t(value))
        return grid
    table = Table()
    for i, column in enumerate(block.columns):
        justify = block.align[i] if i < len(block.align) else "left"
        table.add_column(plain(column), justify=justify)
    for row in block.rows:
        table.add_row(*(_t(cell) for cell in row))
    return Group(_t(block.title, "bold"), table) if block.title else table


def render_sections(sections: Iterable[Any]) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for section in sections:
        parts.append(_t(section.title, "bold underline"))
        parts += [render_block(b) for b in section.blocks]
        parts.append(Text(""))
    return parts


def family_sections(record: Any, summary_only: bool = False) -> list[Any]:
    from proactive_tui.core import registry

    family = registry.find(record.family)
    sections = family.report.sections(record) if family is not None else []
    return [s for s in sections if s.summary] if summary_only else sections


def transcript(record: Any, folded: bool = False) -> Group:
    """The whole session as one renderable: header, the family's sections, problems. `folded`
    (a picture to share): each long text shows its head and says how much is hidden
    (`folding.fold_view`)."""
    parts: list[RenderableType] = [Text(f"proactive-tui session {record.id}", style="bold reverse"), _header(record), Text("")]
    sections = family_sections(record)
    if folded:
        from proactive_tui.folding import folded_model

        sections = [folded_model(section) for section in sections]
    parts += render_sections(sections)
    if record.errors:
        parts.append(Text("Problems", style="bold red"))
        parts += [_t(f"- {f.who}: {f.message}", "red") for f in failures_of(record)]
    return Group(*parts)


def recording_console(width: int = EXPORT_WIDTH) -> Console:
    """A console that records what is printed, independent of the terminal and environment
    (fixed width, truecolor, no COLUMNS/NO_COLOR influence), so exports are reproducible."""
    return Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor",
                   highlight=False, emoji=False, legacy_windows=False, _environ={})
