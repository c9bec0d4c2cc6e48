"""The title line of a session screen: the environment and who sits in each seat, seats on one model
named together, and at 80 columns the subtitle alone (the app's name left out) rather than a line
cut after "user:"."""

from __future__ import annotations

import pytest

from test_ui_seat_keys import PB_ENV, open_live
from ui_helpers import PE_ENV
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.title_bar import TitleBar


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_PRELOAD", "off")


@pytest.mark.parametrize("family, seat, header, room_for_the_name", [
    ("proactiveeval", None, f"{PE_ENV} · agent, user, judge: openai/fake", False),
    ("proactiveeval", "user", f"{PE_ENV} · agent, judge: openai/fake · user: you", False),
    # ProactiveBench's user seat is its judge; its header is short enough for the app's name too
    ("proactivebench", None, f"{PB_ENV} · agent, judge: openai/fake", True),
    ("proactivebench", "agent", f"{PB_ENV} · agent: you · judge: openai/fake", True),
])
async def test_a_session_title_names_every_seat_and_fits_80_columns(family: str, seat: str | None, header: str,
                                                                      room_for_the_name: bool) -> None:
    app = ProactiveApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await open_live(app, pilot, family, seat)
        await pilot.pause()
        assert app.sub_title == header
        shown = app.screen.query_one(TitleBar).visual.plain
        # all of it, without the app's name when there is no room for both
        assert shown.strip() == (f"proactive-tui  —  {header}" if room_for_the_name else header)
        await pilot.resize_terminal(160, 30)
        await pilot.pause()
        shown = app.screen.query_one(TitleBar).visual.plain
        assert shown.strip() == f"proactive-tui  —  {header}"  # room for both again


def test_a_title_too_long_loses_the_middle_of_its_longest_part_not_the_seats() -> None:
    from proactive_tui.ui.widgets.title_bar import middle_cut

    header = "replay · proactbench/BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff · agent: local/smollm2"
    cut = middle_cut(header, 78)
    assert len(cut) == 78 and cut.endswith(" · agent: local/smollm2") and cut.startswith("replay · proactbench/BP_")
    assert "…" in cut and cut.split(" · ")[1].endswith("3cd2daff")  # both ends of the id stay
    assert middle_cut(header, 200) == header  # room enough: untouched
    assert middle_cut("a · b · c", 3) == "a · b · c"  # nothing worth cutting: the bar's ellipsis ends it
