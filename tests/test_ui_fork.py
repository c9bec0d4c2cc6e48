"""Forking in the playground (issue 17): `F` on a finished session opens the fork modal, the edited
reply starts a branch in a new screen of the family (the original stays as it was, esc returns to
it), the header names the branch on screen, and `b` lists the tree with score differences."""

from __future__ import annotations

import pytest

from family_runs import RUNS, run_in_process
from test_ui_call_inspector import SETTINGS, screen_class
from ui_helpers import fake_spec, history_screen, settle, wait_for
from proactive_tui.core.fork import EDITED_BY, BranchNode, ForkedFrom, ForkStep
from proactive_tui.store.queries import SessionSummary, load_events, load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.textsafe import plain
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.branches import BranchSwitcher
from proactive_tui.ui.screens.fork_modal import ForkModal
from textual.widgets import OptionList, Static, TextArea


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


EDITS = {  # family -> the step to fork at and its edit
    "proactiveeval": ((2, "agent"), "UI EDIT: what about a walk after lunch?"),
    "proactivebench": ((1, "agent"), "UI EDIT: run the tests"),
    "chronos": ((2, "agent"), "INFO_RETRIEVAL: UI EDIT which colour do you like?"),
    "proactbench": ((3, "agent"), "EDITED in the UI: copy the photos off and check them before wiping."),
}


async def open_fork_modal(pilot, app) -> ForkModal:
    await pilot.press("F")
    await wait_for(pilot, lambda: isinstance(app.screen, ForkModal))
    await settle(pilot, app.screen)
    return app.screen


def pick(modal: ForkModal, turn: int, seat: str) -> None:
    index = next(i for i, s in enumerate(modal.steps) if (s.turn, s.seat) == (turn, seat))
    modal.query_one("#fork-steps", OptionList).highlighted = index


@pytest.mark.parametrize("family", sorted(RUNS))
async def test_fork_a_finished_session_from_its_screen(family) -> None:
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
            parent_id = parent_screen.session_id
            parent_rows = app.store.event_rows(parent_id)
            modal = await open_fork_modal(pilot, app)
            pick(modal, turn, seat)
            await pilot.pause()
            box = modal.query_one("#fork-text", TextArea)
            assert box.text == plain(modal.steps[modal.selected].text)  # the reply as recorded, to edit
            assert "\x1b" not in box.text  # model text is data: no escape reaches the terminal
            box.load_text(edit)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is not modal and getattr(app.screen, "fork", None) is not None)
            branch_screen = app.screen
            assert type(branch_screen) is type(parent_screen)
            await wait_for(pilot, lambda: branch_screen.ended is not None)
            await settle(pilot)
            branch_id = branch_screen.session_id
            assert branch_id != parent_id and f"branch {branch_id} of {parent_id}" in app.sub_title
            assert f"turn {turn} {seat} · edited" in app.sub_title
            record = load_record(app.store, branch_id)
            assert record.forked_from["session_id"] == parent_id
            if family == "proactiveeval":
                assert next(m for m in record.messages if (m.role, m.turn) == (seat, turn)).content == edit
            elif family == "proactivebench":
                assert record.section.events[0].attempts[0].tasks == [edit]
            elif family == "proactbench":
                edited = next(m for m in record.messages if (m.role, m.turn) == (seat, turn))
                assert (edited.content, edited.model) == (edit, EDITED_BY)
                # trigger 1 keeps the parent's verdict; trigger 2 is the edit, judged again (PASS for an edit)
                assert [(t.turn, t.counted) for t in record.section.triggers] == [(1, "PARTIAL"), (3, "PASS")]
                assert record.section.triggers[1].response == edit
            else:
                changed = next(t for t in record.section.turns if t.turn == turn)
                assert changed.model == EDITED_BY and changed.reply.response_text == "UI EDIT which colour do you like?"
            assert app.store.event_rows(parent_id) == parent_rows  # the original as it was
            own = app.store.event_rows(branch_id)
            assert len(own) < len(load_events(app.store, branch_id))  # the prefix is read from the parent
            # the branch switcher: both sessions, this one marked, the way back to the parent
            await pilot.press("b")
            await wait_for(pilot, lambda: isinstance(app.screen, BranchSwitcher))
            switcher = app.screen
            await settle(pilot, switcher)
            assert [sid for sid, _ in switcher.rows] == [parent_id, branch_id]
            assert "on screen" in switcher.rows[1][1].plain and "edited" in switcher.rows[1][1].plain
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is branch_screen)
            parent_header = f"{run.env_id} · "
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is parent_screen)
            await pilot.pause()
            assert app.sub_title.startswith(parent_header)  # the header names the original again, not blank


async def test_a_bad_edit_is_refused_in_the_modal_with_the_text_kept() -> None:
    run = RUNS["chronos"]
    with FakeOpenAIServer(responder=run.responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            env = app.environments.get(run.env_id)
            app.push_screen(screen_class("chronos")(env, fake_spec(env.id, server.base_url, **SETTINGS["chronos"])))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            modal = await open_fork_modal(pilot, app)
            pick(modal, 2, "agent")
            await pilot.pause()
            modal.query_one("#fork-text", TextArea).load_text("just some words")
            await pilot.press("ctrl+s")
            await pilot.pause()
            error = str(modal.query_one("#fork-error", Static).render())
            assert app.screen is modal and "cannot be read" in error
            assert modal.query_one("#fork-text", TextArea).text == "just some words"
            # unchanged text is not an edit; an edit with an instruction is refused too
            pick(modal, 2, "agent")
            modal.query_one("#fork-text", TextArea).load_text(plain(modal.steps[modal.selected].text))
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "unchanged" in str(modal.query_one("#fork-error", Static).render()) and app.screen is modal
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            assert len(app.store.sessions()) == 1  # nothing was started


async def test_fork_waits_for_the_session_to_end() -> None:
    from ui_helpers import PE_ENV, scripted_factory

    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(screen_class("proactiveeval")(env, fake_spec(env.id, "http://127.0.0.1:9"),
                                                       scripted_factory(hold_agent_at=1)))
        screen = app.screen
        await wait_for(pilot, lambda: screen.running)
        assert not screen.check_action("fork", ())
        screen.action_fork()
        await pilot.pause()
        assert not isinstance(app.screen, ForkModal)


STEPS = [ForkStep(turn=1, seat="agent", label="turn 1 · agent message", text="Have you tried walking after lunch?"),
         ForkStep(turn=1, seat="user", label="turn 1 · user message", text="I never have the time. [b]Really[/b]."),
         ForkStep(turn=2, seat="agent", label="turn 2 · agent message", text="Ten minutes is enough to start.")]


def fixed_tree() -> BranchNode:
    def summary(sid: str, headline: dict, forked: str | None = None) -> SessionSummary:
        return SessionSummary(id=sid, env_id="proactiveeval/persuasion/fair/0", family="proactiveeval", title="",
                              status="finished", created_at="2026-12-02T10:00:00", updated_at="2026-12-02T10:01:00",
                              models={"agent": "openai/agent-m"}, human_seats=[], headline=headline, forked_from=forked)

    edited = ForkedFrom(session_id="aaaa11112222", turn=2, seat="agent", change="edited")
    again = ForkedFrom(session_id="aaaa11112222", turn=1, seat="agent", change="regenerated", instruction="be brief",
                       temperature=0.9, changed_seats={"agent": "openai/other-m"})
    deeper = ForkedFrom(session_id="bbbb33334444", turn=2, seat="user", change="edited")
    return BranchNode(id="aaaa11112222", summary=summary("aaaa11112222", {"turns": 3, "overall": "7/10", "plan": "6/10"}),
                      children=[
                          BranchNode(id="bbbb33334444", forked_from=edited, summary=summary(
                              "bbbb33334444", {"turns": 3, "overall": "4/10", "plan": "6/10"}, "aaaa11112222"),
                              children=[BranchNode(id="cccc55556666", forked_from=deeper, summary=summary(
                                  "cccc55556666", {"turns": 2, "overall": "4/10", "plan": "6/10"}, "bbbb33334444"))]),
                          BranchNode(id="dddd77778888", forked_from=again, summary=summary(
                              "dddd77778888", {"turns": 3, "overall": "8/10", "plan": "6/10"}, "aaaa11112222")),
                      ])


def test_branch_rows_say_what_changed_and_how_scores_differ() -> None:
    from proactive_tui.ui.screens.branches import branch_rows

    rows = dict(branch_rows(fixed_tree(), current="bbbb33334444"))
    assert "the original" in rows["aaaa11112222"].plain
    assert "turn 2 agent · edited" in rows["bbbb33334444"].plain and "overall 7/10 → 4/10" in rows["bbbb33334444"].plain
    assert "on screen" in rows["bbbb33334444"].plain and "on screen" not in rows["aaaa11112222"].plain
    assert "same scores as its parent" in rows["cccc55556666"].plain
    assert "regenerated ('be brief') at temperature 0.9 · agent openai/other-m" in rows["dddd77778888"].plain


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_branch_switcher(snap_compare, size) -> None:
    from textual.app import App

    class Switching(App):
        def on_mount(self) -> None:
            self.push_screen(BranchSwitcher(fixed_tree(), current="bbbb33334444"))

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(Switching(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_snapshot_fork_modal(snap_compare, size) -> None:
    from textual.app import App

    class Forking(App):
        def on_mount(self) -> None:
            self.push_screen(ForkModal("aaaa11112222", STEPS, lambda request: None, selected=2,
                                       models={"agent": "openai/agent-m", "user": "openai/user-m"}))

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(Forking(), terminal_size=size, run_before=run_before)


async def test_fork_from_history_for_a_family_history_shows_as_text(tmp_path) -> None:
    """ProactiveBench sessions do not replay in their screen; History forks them all the same
    (F on the row), and b lists the tree there too."""
    import asyncio

    from proactive_tui.families.proactivebench.ui.session import ProactiveBenchSessionScreen

    with FakeOpenAIServer(responder=RUNS["proactivebench"].responder) as server:
        parent_id = await asyncio.to_thread(run_in_process, "proactivebench", server.base_url, tmp_path / "r.json")
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            history = await history_screen(app, pilot)
            assert history.check_action("fork", ())
            modal = await open_fork_modal(pilot, app)
            pick(modal, 2, "user")  # event 2's verdict, asked again of the judge model with an instruction
            await pilot.pause()
            modal.query_one("#fork-instruction").value = "be strict"
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveBenchSessionScreen))
            branch_screen = app.screen
            await wait_for(pilot, lambda: branch_screen.ended is not None)
            await settle(pilot)
            record = load_record(app.store, branch_screen.session_id)
            assert record.forked_from == {**record.forked_from, "session_id": parent_id, "turn": 2, "seat": "user",
                                          "change": "regenerated", "instruction": "be strict"}
            asked = [e for e in load_events(app.store, branch_screen.session_id)
                     if e.type == "model_called" and e.seat == "user" and e.turn == 2]
            assert asked and asked[0].call.request["messages"][0]["content"].endswith("be strict")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is history)
            await settle(pilot, history)
            history.action_branches()
            await wait_for(pilot, lambda: isinstance(app.screen, BranchSwitcher))
            await settle(pilot, app.screen)
            assert [sid for sid, _ in app.screen.rows] == [parent_id, branch_screen.session_id]


async def test_rerun_from_history_with_the_user_frozen(tmp_path) -> None:
    """History's `n`: the highlighted session again against a new agent, the user's recorded
    turns sent verbatim; the screen's header says what it is."""
    import asyncio

    from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
    from proactive_tui.ui.screens.rerun_modal import RerunModal
    from textual.widgets import Input

    with FakeOpenAIServer(responder=RUNS["proactiveeval"].responder) as server:
        original_id = await asyncio.to_thread(run_in_process, "proactiveeval", server.base_url, tmp_path / "r.json")
        app = ProactiveApp()
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await history_screen(app, pilot)
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, RerunModal))
            modal = app.screen
            await settle(pilot, modal)
            box = modal.query_one("#rerun-model", Input)
            assert box.value == "openai/agent-m"  # the session's own agent, to change
            box.value = "openai/new-agent"
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            await settle(pilot)
            assert f"re-run of {original_id} against openai/new-agent" in app.sub_title
            record = load_record(app.store, screen.session_id)
            original = load_record(app.store, original_id)
            assert record.rerun_of["user"] == "frozen" and record.rerun_of["session_id"] == original_id
            said = [m.content for m in sorted(original.messages, key=lambda m: m.turn) if m.role == "user"]
            heard = [m.content for m in sorted(record.messages, key=lambda m: m.turn) if m.role == "user"]
            assert heard and heard == said[:len(heard)]
