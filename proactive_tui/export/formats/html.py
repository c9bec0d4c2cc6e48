"""`html`: the session as a standalone web page, for sharing a demo.

Rendered by Rich's console export (`Console(record=True)` ... `export_html`) from the same view
as `sessions show`, with inline styles so the single file needs nothing else. Model text goes in
as Rich `Text` and Rich escapes it for HTML, so a message can never inject markup or a script.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import write_documents
from proactive_tui.export.registry import Exporter, register


def render(record: Any) -> str:
    from proactive_tui.export.rich_view import recording_console, transcript

    console = recording_console()
    console.print(transcript(record))
    return console.export_html(inline_styles=True)


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "html", render)


EXPORTER = register(Exporter(suffix='.html', name="html", description="a standalone web page of the session (.html)", write=write))
