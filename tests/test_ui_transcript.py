"""The transcript follows the newest message, through resizes, unless the person scrolled up."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from ui_helpers import PE_ENV, fake_spec, scripted_factory, settle, wait_for
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.widgets.transcript import Transcript


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


class TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


def visible(transcript: Transcript, widget) -> bool:
    """Whether `widget` lies inside the transcript's visible content region."""
    inner = transcript.content_region
    return widget.region.height > 0 and inner.contains_region(widget.region)


async def add_lines(pilot, transcript: Transcript, start: int, count: int) -> None:
    for i in range(start, start + count):
        transcript.start_message(f"m{i}", "agent" if i % 2 else "user", i, "scripted")
        transcript.finish(f"m{i}", "agent" if i % 2 else "user", i, "scripted",
                          f"message {i}: " + "a fairly long line that wraps at narrow widths " * 2, False)
    await settle(pilot)


async def test_follows_the_newest_message_through_resizes() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        await add_lines(pilot, transcript, 0, 12)
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        # narrower: every message wraps to more lines, the bottom moves away; the view goes with it
        await pilot.resize_terminal(60, 20)
        await settle(pilot)
        assert transcript.scroll_y == transcript.max_scroll_y
        await add_lines(pilot, transcript, 12, 3)
        assert transcript.scroll_y == transcript.max_scroll_y
        assert visible(transcript, transcript.views["m14"])
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        transcript.note("Session ended: the target was reached", kind="end")
        await settle(pilot)
        assert visible(transcript, transcript.children[-1])
        assert not transcript.border_subtitle


async def test_scrolled_up_stays_put_and_says_more_arrived() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        await add_lines(pilot, transcript, 0, 12)
        transcript.focus()
        await pilot.press("home")
        await settle(pilot)
        assert transcript.scroll_y == 0 and not transcript.following
        await add_lines(pilot, transcript, 12, 2)
        assert transcript.scroll_y == 0  # reading is never yanked back
        assert transcript.border_subtitle == Transcript.MORE_BELOW
        await pilot.press("end")
        await settle(pilot)
        assert transcript.following and not transcript.border_subtitle
        await add_lines(pilot, transcript, 14, 2)
        assert transcript.scroll_y == transcript.max_scroll_y
        assert visible(transcript, transcript.views["m15"])


async def test_session_end_is_visible_after_a_resize_mid_session() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=6)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(delay=0.05)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.transcript.views) >= 2)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle(pilot)
        transcript = screen.transcript
        last = transcript.children[-1]
        assert "Session ended" in str(last.render())
        assert visible(transcript, last)


async def test_a_megabyte_reply_is_folded_and_opens_whole() -> None:
    """A 1 MB reply: the transcript lays out only its head, says how much is folded, and Enter
    opens the whole text in a text area (which draws only what is visible)."""
    from textual.widgets import TextArea

    from proactive_tui.ui.screens.message_modal import FullMessageScreen
    from proactive_tui.ui.widgets.message_view import SHOWN_CHARS

    huge = ("line of model output [bold]not markup[/bold] " * 20 + "\n") * 1200  # ~1 MB
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.start_message("big", "agent", 1, "scripted")
        for k in range(0, len(huge), 65536):  # streamed in chunks, as a model would
            transcript.append("big", huge[k:k + 65536])
        transcript.finish("big", "agent", 1, "scripted", huge, False)
        await settle(pilot)
        view = transcript.views["big"]
        shown = str(view.render())
        assert len(shown) < SHOWN_CHARS + 400 and "more characters" in shown and "folded" in shown
        assert view.virtual_size.height < 200  # laid out: the head, not 24,000 wrapped lines
        view.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, FullMessageScreen))
        area = app.screen.query_one(TextArea)
        assert area.text == huge and area.read_only
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, FullMessageScreen))
