"""Terminal printers for headless sessions: one per family over a shared base.

`printer_for(family)` picks the printer; families register theirs in PRINTERS.
"""

from __future__ import annotations

from typing import Any

from proactive_tui.cli.printers.base import EventPrinter
from proactive_tui.cli.printers.guidance import GuidancePrinter
from proactive_tui.cli.printers.proposals import ProposalPrinter
from proactive_tui.cli.printers.timeline import TimelinePrinter

PRINTERS: dict[str, type[EventPrinter]] = {"proactiveeval": GuidancePrinter}
PRINTERS["proactivebench"] = ProposalPrinter
PRINTERS["chronos"] = TimelinePrinter


def printer_for(family: str, **kwargs: Any) -> EventPrinter:
    return PRINTERS[family](**kwargs)
