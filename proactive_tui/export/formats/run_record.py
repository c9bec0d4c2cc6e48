"""`run-record`: the full run record as JSON, exactly what the engine folded from the event log.

The lossless format: every message with the context its model saw, every check and score,
usage and versions. One file for one session, or a folder of `<session id>.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import write_documents
from proactive_tui.export.registry import Exporter, register
from proactive_tui.textsafe import json_text


def render(record: Any) -> str:
    return json_text(record, indent=2) + "\n"


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "json", render)


EXPORTER = register(Exporter(suffix='.json', name="run-record", description="the full run record (JSON, lossless)", write=write))
