"""The studio's hand on a running generation: step / auto / pause, as `engine.Run(gate=)`.

The engine awaits the gate before every live model call (a step read from its file passes
without it, nothing is spent). Three modes:

- "step": each call waits for one press; a press releases exactly one waiting call (a press
  while none waits is kept for the next call, so a person pressing between two calls loses
  nothing);
- "auto": every call goes at once (and the calls waiting are released);
- "paused": every call waits until the mode changes or a press comes.

A press in "auto" or "paused" switches to "step" first: the key that reads "one call" means it.
Stopping is not the gate's business: the studio cancels the run's task, and a waiting call is
cancelled with it (nothing was sent).

Everything runs on one event loop (the app's); no UI import, so the engine's tests drive it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Callable, Literal

Mode = Literal["step", "auto", "paused"]
MODES: tuple[Mode, ...] = ("step", "auto", "paused")


@dataclass
class Waiting:
    """A call held at the gate: what it is, and the future that lets it go."""

    scope: str
    stage: str
    step: str
    future: asyncio.Future[None]


class StepGate:
    """`await gate(scope, stage, step)` before a live call; `press()`, `set_mode()` from the UI.

    `on_change` is called (with no argument) whenever the mode or the waiting calls change, so
    a status line can say what the run waits for."""

    def __init__(self, mode: Mode = "step", on_change: Callable[[], None] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"gate mode {mode!r}: one of {', '.join(MODES)}")
        self._mode: Mode = mode
        self._credits = 0
        self._waiting: deque[Waiting] = deque()
        self.on_change = on_change or (lambda: None)

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def waiting(self) -> list[tuple[str, str, str]]:
        """(scope, stage, step) of each call held now, oldest first."""
        return [(w.scope, w.stage, w.step) for w in self._waiting]

    @property
    def credits(self) -> int:
        """Presses not yet spent (made while no call waited)."""
        return self._credits

    def set_mode(self, mode: Mode) -> None:
        if mode not in MODES:
            raise ValueError(f"gate mode {mode!r}: one of {', '.join(MODES)}")
        self._mode = mode
        if mode == "auto":
            while self._waiting:
                self._release(self._waiting.popleft())
        if mode != "step":
            self._credits = 0  # presses belong to stepping; auto or a pause forgets them
        self.on_change()

    def press(self) -> None:
        """One call more: the oldest waiting one goes, or the next to come will not wait."""
        if self._mode != "step":
            self._mode = "step"
        if self._waiting:
            self._release(self._waiting.popleft())
        else:
            self._credits += 1
        self.on_change()

    async def __call__(self, scope: str, stage: str, step: str) -> None:
        if self._mode == "auto":
            return
        if self._mode == "step" and self._credits > 0:
            self._credits -= 1
            self.on_change()
            return
        held = Waiting(scope, stage, step, asyncio.get_running_loop().create_future())
        self._waiting.append(held)
        self.on_change()
        try:
            await held.future
        finally:
            if held in self._waiting:  # cancelled while waiting (the studio's stop)
                self._waiting.remove(held)
                self.on_change()

    @staticmethod
    def _release(held: Waiting) -> None:
        if not held.future.done():
            held.future.set_result(None)
