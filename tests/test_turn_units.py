"""One meaning of "turn" per family, named on every screen that counts (issue 30): one Chronos
session read `24/24` on its status line, `turn 48` in its transcript and `turns 6` in History.
Each family declares its unit once (`Family.turn_unit`), and the status line, the transcript, the
fork list, compare and History all count in it and name it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from chronos_helpers import scripted_agent_responder
from proactive_tui.cli.main import main
from proactive_tui.core import registry
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.message_view import MessageView
from test_seat_temperatures import ENV_ID, SEATS, playground_session
from ui_helpers import history_screen, screen_lines, settle, wait_for


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def test_every_family_declares_its_unit_once() -> None:
    units = {name: family.turn_unit for name, family in registry.families().items()}
    assert (units["proactiveeval"].name, units["proactivebench"].name, units["chronos"].name) == ("turn", "event", "exchange")
    assert all(unit.meaning and unit.plural for unit in units.values())


async def test_a_chronos_session_counts_exchanges_everywhere(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            _shown, session_id = await playground_session(app, pilot, server, "openai/agent-m")
            screen = app.screen
            record = screen.builder.record
            exchanges = sum(1 for t in record.section.turns if t.input_kind != "tool_call")
            # the agent answered its own check at least once: engine turns and exchanges part ways
            assert len(record.section.turns) > exchanges >= 1
            await settle(pilot, screen)
            status = screen.status.render().plain
            assert status.startswith(f"exchange {exchanges}/3"), status
            headers = [view.header().plain for view in screen.query(MessageView)]
            assert all(re.search(r"· exchange \d+ ·", h) for h in headers), headers
            assert not any(" turn " in h for h in headers), headers
            last_agent = [h for h in headers if h.startswith("agent ")][-1]
            assert f"· exchange {exchanges} ·" in last_agent, last_agent

            await pilot.press("F")  # the fork list
            from proactive_tui.ui.screens.fork_modal import ForkModal

            await wait_for(pilot, lambda: isinstance(app.screen, ForkModal))
            await settle(pilot, app.screen)
            from textual.widgets import OptionList

            steps = app.screen.query_one("#fork-steps", OptionList)
            listed = [steps.get_option_at_index(i).prompt.plain for i in range(steps.option_count)]
            assert any(step.startswith(f"exchange {exchanges} · agent reply") for step in listed), listed
            assert all(step.startswith("exchange ") for step in listed), listed
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ForkModal))

            await history_screen(app, pilot)
            shown = "\n".join(screen_lines(app))
            assert f"exchanges {exchanges}" in shown and "turns " not in shown

        def compare() -> None:
            assert main(["compare", ENV_ID, "--agent", "openai/agent-m", "--agent", "openai/agent-n", *SEATS,
                         "--api-base", server.base_url, "--out", str(tmp_path / "compare")]) == 0

        capsys.readouterr()
        await asyncio.to_thread(compare)
    printed = capsys.readouterr().out
    assert "action correct per exchange" in printed
    assert printed.count(f"exchanges {exchanges}") == 2  # both sides, in the session's count
    rows = [m.group(1) for line in printed.splitlines() if (m := re.match(r"^[│┃|\s]*(\d+)\s*[│┃|]", line))]
    assert rows == [str(n) for n in range(1, exchanges + 1)]  # one row per exchange
