"""Messages the screens post upward, so the app (or a later session screen) decides what happens."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class EnvironmentChosen(Message):
    """A person pressed Enter on an environment in the picker.

    Posted by the picker (Enter, a second click, the palette) and handled by the app: session
    setup for a playable family, the full description otherwise (`ProactiveApp.start_session_hook`
    overrides both). `reveal_reference` carries the picker's spoiler setting.
    """

    def __init__(self, env: Any, reveal_reference: bool = True) -> None:
        super().__init__()
        self.env = env
        self.reveal_reference = reveal_reference


class EnvironmentSaved(Message):
    """A new environment file was written while the app runs ("What if…" → Save as new
    environment): the app lists it in the picker at once, rather than from the next start."""

    def __init__(self, env: Any, path: Any) -> None:
        super().__init__()
        self.env = env
        self.path = path
