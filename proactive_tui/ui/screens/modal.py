"""The app's modal screen: one that is dismissed once.

Keys typed faster than the app handles them reach a modal together: two Enters on a chooser's
list, or an Enter and an Escape. Textual's `dismiss` would then run for each: the second time the
screen is already off the stack, so it hands a second result to the caller (which opens what the
first one opened again) and pops whatever screen is on top now, the one the first result opened,
or, with none left above the base, fails with ScreenStackError and ends the app. Every modal of
the app derives from `Modal`, whose dismiss of a screen no longer on the stack does nothing.
"""

from __future__ import annotations

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen, ScreenResultType


class Modal(ModalScreen[ScreenResultType]):
    """A ModalScreen whose `dismiss` acts once per push (see the module docstring)."""

    def dismiss(self, result: ScreenResultType | None = None) -> AwaitComplete:
        if self not in self.app.screen_stack:
            return AwaitComplete()
        return super().dismiss(result)
