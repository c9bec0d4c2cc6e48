"""Which setup and session screens serve each family in the playground.

Paths, not classes, so the picker's start-up does not import every session screen. A family
becomes playable by adding its line here.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

FAMILY_SCREENS: dict[str, tuple[str, str]] = {
    "proactiveeval": ("proactive_tui.ui.screens.setup:SetupScreen", "proactive_tui.ui.screens.session:SessionScreen"),
    "proactivebench": ("proactive_tui.ui.screens.proposals_setup:ProposalSetupScreen", "proactive_tui.ui.screens.proposals_session:ProposalSessionScreen"),
    "chronos": ("proactive_tui.ui.screens.timeline_setup:TimelineSetupScreen", "proactive_tui.ui.screens.timeline_session:TimelineSessionScreen"),
}


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


def playable(family: str) -> bool:
    return family in FAMILY_SCREENS


def setup_screen_class(family: str) -> Any:
    return _load(FAMILY_SCREENS[family][0])


def session_screen_class(family: str) -> Any:
    return _load(FAMILY_SCREENS[family][1])
