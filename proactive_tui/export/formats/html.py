"""`html`: the session as one self-contained web page (the static viewer), for sharing a demo.

The page is `export.viewer`'s: inline CSS and JavaScript, no external resources, the session's
run record and its view embedded as escaped JSON and drawn with `textContent`, so a message can
never inject markup or a script. The same viewer shows a whole report folder
(`proactive-tui report html DIR`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import write_documents
from proactive_tui.export.registry import Exporter, register


def render(record: Any) -> str:
    from proactive_tui.export.viewer import session_page

    return session_page(record)


def write(records: list[Any], out: Path) -> list[Path]:
    return write_documents(records, out, "html", render)


EXPORTER = register(Exporter(suffix='.html', name="html",
                             description="a self-contained web page viewing the session (.html)", write=write))
