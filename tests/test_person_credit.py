"""A reply a person edited or wrote is labelled as theirs in every view (issue 30): the branch
screen's transcript, History's Models column and the call inspector all name `person (edited)`
for a fork's edited reply, read from the record, never the seat's model (compare panes:
tests/test_compare_shuffle.py)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, OptionList, TextArea

from family_runs import RUNS
from test_ui_call_inspector import SETTINGS, screen_class
from test_ui_fork import EDITS, open_fork_modal, pick
from ui_helpers import fake_spec, history_screen, settle, wait_for
from proactive_tui.core.writers import EDITED_BY, PersonReply, seat_writers, writers_text
from proactive_tui.store.queries import list_sessions, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.call_inspector import CallInspector
from proactive_tui.ui.screens.history import models_text


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def edited_label(screen, family: str, turn: int, seat: str) -> str:
    """What the branch screen shows as the writer of the edited reply."""
    if family == "proactivebench":
        card = screen.timeline.card(turn)
        return " ".join(str(s.render()) for s in card.query(".proposal"))
    view = next(v for v in screen.transcript.views.values() if (v.role, v.turn) == (seat, turn))
    return view.header().plain


@pytest.mark.parametrize("family", sorted(RUNS))
async def test_an_edited_reply_is_credited_to_the_person_in_every_view(family) -> None:
    run = RUNS[family]
    (turn, seat), edit = EDITS[family]
    with FakeOpenAIServer(responder=run.responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(run.env_id)
            app.push_screen(screen_class(family)(env, fake_spec(env.id, server.base_url, **SETTINGS[family])))
            parent_screen = app.screen
            await wait_for(pilot, lambda: parent_screen.ended is not None)
            await settle(pilot)
            model = parent_screen.spec.roles.for_role(seat).model
            modal = await open_fork_modal(pilot, app)
            pick(modal, turn, seat)
            await pilot.pause()
            modal.query_one("#fork-text", TextArea).load_text(edit)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is not modal and getattr(app.screen, "fork", None) is not None)
            branch = app.screen
            await wait_for(pilot, lambda: branch.ended is not None)
            await settle(pilot)

            # the branch screen's transcript (or proposal card) names the person, not the model
            label = edited_label(branch, family, turn, seat)
            assert EDITED_BY in label and model not in label, label

            # the call inspector: the edited reply is an entry written by the person, with no call
            if family != "proactivebench":
                view = next(v for v in branch.transcript.views.values() if (v.role, v.turn) == (seat, turn))
                view.focus()
                await pilot.pause()
            await pilot.press("i")
            await wait_for(pilot, lambda: isinstance(app.screen, CallInspector))
            inspector = app.screen
            await settle(pilot, inspector)
            written = [e for e in inspector.entries if isinstance(e, PersonReply)]
            assert [(w.seat, w.turn, w.writer) for w in written] == [(seat, turn, EDITED_BY)]
            options = inspector.query_one("#call-list", OptionList)
            titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert any(f"written by {EDITED_BY}" in t for t in titles)
            if family != "proactivebench":  # the focused message opens its own entry, not a model's call
                assert inspector.entries[inspector.selected] is written[0]
                assert all(c.message_id != view.message_id for c in inspector.calls)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is branch)

            # History's Models column: the branch's seat names the person beside its model
            record = load_record(app.store, branch.session_id)
            assert EDITED_BY in seat_writers(record)[seat]
            summary = next(s for s in list_sessions(app.store) if s.id == branch.session_id)
            assert f"{EDITED_BY} + {model}" in models_text(summary)
            parent = next(s for s in list_sessions(app.store) if s.id == parent_screen.session_id)
            assert EDITED_BY not in models_text(parent)
            history = await history_screen(app, pilot)
            cells = [str(c) for key in history.query_one(DataTable).rows
                     for c in history.query_one(DataTable).get_row(key)]
            assert any(EDITED_BY in c for c in cells)


def test_writers_text_names_every_person_beside_the_model() -> None:
    assert writers_text("m", ["m"]) == "m"
    assert writers_text("m", ["m", EDITED_BY]) == f"{EDITED_BY} + m"
    assert writers_text("person", ["person"], played=True) == "you"
    assert writers_text("person", ["person", EDITED_BY], played=True) == f"{EDITED_BY} + you"
