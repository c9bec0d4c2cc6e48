"""Terminal printers for headless sessions: one per family over a shared base.

`printer_for(family)` picks the printer; families register theirs in PRINTERS.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.cli.printers.base import EventPrinter
from proactive_tui.cli.printers.guidance import GuidancePrinter

PRINTERS: dict[str, type[EventPrinter]] = {"proactiveeval": GuidancePrinter}


def printer_for(family: str, **kwargs: Any) -> EventPrinter:
    return PRINTERS[family](**kwargs)
