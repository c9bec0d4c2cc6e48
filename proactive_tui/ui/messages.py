"""Messages the screens post upward, so the app (or a later session screen) decides what happens."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class EnvironmentChosen(Message):
    """A person pressed Enter on an environment in the picker.

    Posted by the picker and handled by the app: today it opens the full description; once the
    session screens exist they set `ProactiveApp.start_session_hook` and a session starts instead.
    `reveal_reference` carries the picker's spoiler setting so what opens next honours it.
    """

    def __init__(self, env: Any, reveal_reference: bool = True) -> None:
        super().__init__()
        self.env = env
        self.reveal_reference = reveal_reference
