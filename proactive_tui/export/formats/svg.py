"""`svg`: the session drawn as a terminal screenshot, for a README, slides or a chat message.

Rendered by Rich's console export (`Console(record=True)` ... `export_svg`) from the same view as
`sessions show`; model text goes in as Rich `Text`, escaped for XML by Rich. A long reply shows
its first `folding.VIEW_CHARS` characters and says how many are hidden (1 MB replies made a
48.5 MB picture); the run-record export keeps every text whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import write_documents
from proactive_tui.export.registry import Exporter, register


def render(record: Any) -> str:
    from proactive_tui.export.rich_view import recording_console, transcript

    console = recording_console()
    console.print(transcript(record, folded=True))  # a long reply: its head and how much is hidden
    return console.export_svg(title=f"proactive-tui · {record.env_id}", unique_id=f"session-{record.id}")


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "svg", render)


EXPORTER = register(Exporter(suffix='.svg', name="svg", description="a terminal-style picture of the session (.svg)", write=write))
