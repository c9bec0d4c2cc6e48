"""Warming the model layer (litellm) while the first screen stays responsive.

Why this exists: importing litellm costs seconds of pure Python work (thousands of modules,
pydantic models by the hundred, some 400,000 objects). Done in a plain background thread right
after the first paint it competed with the UI thread for the interpreter lock: each time the
event loop released the lock (each select, each hand-off to Textual's writer thread) it waited
up to the 5 ms switch interval to get it back, one key press crosses that point many times, and
the import's garbage collections (full ones of up to 0.3 s each here) hold the lock outright.
The picker froze for up to 3 s just after it appeared. Not preloading at all moves the whole
cost to the first session start instead.

So the import runs in a thread, but politely:

- it gives way to a person: an audit hook sees every module the preload thread is about to
  import (the "import" event, raised before any import lock is taken, so waiting there never
  blocks another thread's imports), and while there has been key or mouse input within the
  last `ACTIVE_S` the thread waits there; when the person pauses it runs at full speed;
- while it runs, the switch interval is 0.5 ms instead of 5 ms, so the UI thread gets the lock
  back quickly when it does need it;
- automatic garbage collection is off during the import, and what the import created is then
  frozen (`gc.freeze`), so neither the import nor later full collections walk those objects;
- `hurry()` ends the waiting: called when the setup form opens (a session is near, and the
  import then runs while the form is filled in) and when a session starts (from the history,
  say), so the first session waits no longer than the rest of the import.

`PROACTIVE_TUI_PRELOAD` chooses the mode: `steps` (the default, above), `thread` (the old plain
thread, kept for the benchmark's comparison) or `off` (import on first use);
`PROACTIVE_TUI_NO_PRELOAD=1` also means `off`. `benchmarks/responsiveness.py` measures them.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from typing import Callable

ACTIVE_S = 1.0
"""Input within this many seconds means a person is using the screen: the preload waits.

Longer than the pause between keys of a person reading as they browse (0.6 s, which
`benchmarks/responsiveness.py` measures): at 0.5 s the preload woke in each such pause, and an
import step under way when the next key came held that key up."""
POLL_S = 0.05
"""How often a waiting preload looks again."""
SWITCH_INTERVAL_S = 0.0005
MODES = ("steps", "thread", "off")


def mode() -> str:
    """The preload mode from the environment (see the module docstring)."""
    if os.environ.get("PROACTIVE_TUI_NO_PRELOAD") == "1":
        return "off"
    wanted = os.environ.get("PROACTIVE_TUI_PRELOAD", "steps").strip().lower()
    return wanted if wanted in MODES else "steps"


class Preloader:
    """One background import of the model layer; `touch()` on input, `hurry()` before a session."""

    def __init__(self, load: Callable[[], object], on_error: Callable[[Exception], None] | None = None) -> None:
        self.load = load
        self.on_error = on_error
        self.last_input = time.monotonic()
        self.done = threading.Event()
        self._hurry = False
        self._thread: threading.Thread | None = None
        self.waited_s = 0.0
        """How long the preload gave way to input (tests and benchmarks read it)."""

    def touch(self) -> None:
        """A key or mouse event arrived (cheap: called for every one)."""
        self.last_input = time.monotonic()

    def hurry(self) -> None:
        """Someone needs the model layer now: stop resting."""
        self._hurry = True

    def start(self, how: str = "steps") -> None:
        if how == "off" or self._thread is not None:
            return
        target = self._run_in_steps if how == "steps" else self._run
        self._thread = threading.Thread(target=target, name="proactive-tui-preload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.load()
        except Exception as exc:  # a broken model layer must not take the screen down
            if self.on_error is not None:
                self.on_error(exc)
        finally:
            self.done.set()

    def _run_in_steps(self) -> None:
        previous = sys.getswitchinterval()
        collecting = gc.isenabled()
        sys.setswitchinterval(min(previous, SWITCH_INTERVAL_S))
        gc.disable()
        # Audit hooks cannot be removed; once the import is done this one returns at once.
        sys.addaudithook(self._audit)
        try:
            self._run()
        finally:
            gc.freeze()  # the model layer lives as long as the process: never walk it again
            if collecting:
                gc.enable()
            sys.setswitchinterval(previous)

    def _audit(self, event: str, args: tuple) -> None:
        if event == "import" and not self.done.is_set():
            self._step()

    def _step(self) -> None:
        """Before an import of the preload thread: wait while a person is active."""
        if threading.current_thread() is not self._thread:
            return
        while self.busy(time.monotonic()):
            time.sleep(POLL_S)
            self.waited_s += POLL_S

    def busy(self, now: float) -> bool:
        """Whether the preload waits at `now` (monotonic seconds): a person's input within
        `ACTIVE_S`, and nobody has asked it to hurry."""
        return not self._hurry and now - self.last_input < ACTIVE_S


_current: Preloader | None = None


def start(load: Callable[[], object], on_error: Callable[[Exception], None] | None = None) -> Preloader | None:
    """Start the process's preload (if the mode allows it and none is under way); returns it, or
    None when off. A finished one is replaced (cheap: the model layer imports only once)."""
    global _current
    how = mode()
    if how == "off":
        return None
    if _current is None or _current.done.is_set():
        _current = Preloader(load, on_error)
        _current.start(how)
    return _current


def touch() -> None:
    if _current is not None:
        _current.touch()


def hurry() -> None:
    """Called before the first session needs the model layer."""
    if _current is not None:
        _current.hurry()
