"""A session stopped and scored has one status everywhere (issue 30): its screen said "stopped"
while History, `sessions list` and `show` and the markdown export said "cancelled"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from proactive_tui.cli.main import main
from proactive_tui.store import open_store
from proactive_tui.store.queries import effective_status
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.compose_box import ComposeBox
from test_ui_session import play_factory, play_screen, status_text
from ui_helpers import history_screen, screen_lines, settle_playing, wait_for


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def test_a_stopped_and_scored_session_reads_stopped_everywhere(tmp_path: Path, capsys) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        play_screen(app, "user", play_factory("user"), planning=False)
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        await pilot.press("escape", "S")  # stop, and have the judge score what was said
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        record = screen.builder.record
        assert record.section.guidance is not None  # scored
        assert "finished: stopped" in status_text(screen)
        assert "Session ended: stopped" in "\n".join(screen_lines(app))
        session_id = screen.session_id

        def stored_status() -> str | None:
            with open_store() as store:
                row = store.session(session_id)
                return None if row is None else effective_status(row)

        await wait_for(pilot, lambda: stored_status() not in (None, "running"))
        assert stored_status() == "stopped"
        history = await history_screen(app, pilot)
        assert history.current.id == session_id
        cells = "\n".join(screen_lines(app))
        assert "stopped" in cells and "cancelled" not in cells

    def commands() -> None:
        assert main(["sessions", "list"]) == 0
        assert main(["sessions", "show", session_id]) == 0
        out = tmp_path / "session.md"
        assert main(["export", session_id, "--format", "markdown", "--out", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "stopped" in text and "cancelled" not in text

    await asyncio.to_thread(commands)
    printed = capsys.readouterr().out
    assert "status: stopped" in printed and "cancelled" not in printed
