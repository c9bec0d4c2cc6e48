"""The model-layer preload gives way to a person and leaves the interpreter as it found it.

`proactive_tui.ui.preload` imports litellm in a thread after the first paint; while keys are
arriving it waits before each module import, and `hurry()` (a session about to start) ends the
waiting. Here the "model layer" is a throwaway module imported by an import statement
(`__import__`, which raises the audit event the preload listens to), so nothing heavy loads.
"""

from __future__ import annotations

import gc
import importlib
import sys
import time
from pathlib import Path

import pytest

from proactive_tui.ui import preload


@pytest.fixture
def fresh_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"preload_probe_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text("VALUE = 42\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return name


def test_waits_while_a_person_is_active_and_hurry_ends_it(fresh_module: str) -> None:
    loaded: list[int] = []
    loader = preload.Preloader(lambda: loaded.append(__import__(fresh_module).VALUE))
    loader.last_input = time.monotonic() + 3600  # input "now" for the next hour: stay out of the way
    switch_before, gc_before = sys.getswitchinterval(), gc.isenabled()
    loader.start("steps")
    loader._thread.join(0.5)
    assert loader._thread.is_alive() and not loaded  # parked before its first import
    assert fresh_module not in sys.modules
    loader.hurry()
    assert loader.done.wait(30)
    assert loaded == [42]
    assert loader.waited_s > 0
    assert sys.getswitchinterval() == switch_before and gc.isenabled() == gc_before


def test_runs_straight_through_when_nobody_is_typing(fresh_module: str) -> None:
    loaded: list[int] = []
    loader = preload.Preloader(lambda: loaded.append(__import__(fresh_module).VALUE))
    loader.last_input = time.monotonic() - 3600
    loader.start("steps")
    assert loader.done.wait(30)
    assert loaded == [42] and loader.waited_s == 0


def test_keys_a_reading_pause_apart_keep_it_waiting() -> None:
    """A person reading as they browse presses a key every 0.6 s or so: the preload stays parked
    in those pauses (an import step under way when the next key comes would hold it up), and
    runs once they stop for longer than `ACTIVE_S`, or as soon as a session needs it."""
    loader = preload.Preloader(lambda: None)
    loader.last_input = 100.0
    assert loader.busy(100.6)
    assert not loader.busy(100.0 + preload.ACTIVE_S + 0.01)
    loader.hurry()
    assert not loader.busy(100.6)


def test_a_failing_load_is_reported_not_raised() -> None:
    seen: list[Exception] = []

    def broken() -> None:
        raise RuntimeError("no model layer")

    loader = preload.Preloader(broken, seen.append)
    loader.start("thread")
    assert loader.done.wait(30)
    assert [str(exc) for exc in seen] == ["no model layer"]


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "steps"),
    ({"PROACTIVE_TUI_PRELOAD": "thread"}, "thread"),
    ({"PROACTIVE_TUI_PRELOAD": "OFF"}, "off"),
    ({"PROACTIVE_TUI_PRELOAD": "nonsense"}, "steps"),
    ({"PROACTIVE_TUI_NO_PRELOAD": "1", "PROACTIVE_TUI_PRELOAD": "thread"}, "off"),
])
def test_mode_from_the_environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    monkeypatch.delenv("PROACTIVE_TUI_NO_PRELOAD", raising=False)
    monkeypatch.delenv("PROACTIVE_TUI_PRELOAD", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert preload.mode() == expected


async def test_the_picker_tells_the_preload_about_keys_and_setup_hurries_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app side: every key marks the person busy (the preload waits), and opening a setup form
    ends the waiting. The model layer here is a stand-in that records it was loaded."""
    from proactive_tui.llm import gateway
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.screens.setup_base import SetupScreenBase

    loaded = []
    monkeypatch.setattr(gateway, "preload", lambda: loaded.append(True))
    monkeypatch.delenv("PROACTIVE_TUI_NO_PRELOAD", raising=False)
    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "steps")
    monkeypatch.setattr(preload, "_current", None)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        loader = preload._current
        assert loader is not None and not loader._hurry
        before = loader.last_input
        await pilot.press("down")
        assert loader.last_input > before
        app.open_setup(app.environments.environments[0])
        for _ in range(20):  # pushing the form takes a refresh or two
            await pilot.pause()
            if isinstance(app.screen, SetupScreenBase):
                break
        assert isinstance(app.screen, SetupScreenBase)
        assert loader._hurry
        assert loader.done.wait(30) and loaded == [True]
