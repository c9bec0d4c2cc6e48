"""Blind compare shuffles which agent is A and which is B per comparison (issue 30): the order is
drawn from a seed (a stable hash of the comparison's id unless one is given), the seed and the
order are recorded with the comparison, a vote for a letter is credited to the model shown under
it, and the screen and the command say "blind: sides shuffled (seed N)"."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import Button

from family_runs import cli
from test_compare import compare, side_aware_responder
from test_ui_compare import AGENTS, plan_for, scripted_build
from ui_helpers import PE_ENV, screen_lines, settle, wait_for
from proactive_tui.services.compare import new_comparison, run_comparison, side_order, shuffle_seed_for, vote
from proactive_tui.core.writers import EDITED_BY
from proactive_tui.envs import load_default
from proactive_tui.store.db import Store
from proactive_tui.store.queries import load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.compare import CompareScreen
from proactive_tui.ui.screens.vote_modal import VoteModal


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


def test_the_order_is_drawn_from_the_seed_and_both_orders_occur() -> None:
    orders = {tuple(side_order(seed, 2)) for seed in range(20)}
    assert orders == {(0, 1), (1, 0)}  # over several seeds, each agent is A sometimes
    assert all(side_order(seed, 2) == side_order(seed, 2) for seed in range(20))
    assert sorted(side_order(5, 4)) == [0, 1, 2, 3]
    # the default seed is a stable hash of the comparison's id: the same in every process
    assert shuffle_seed_for("abc") == shuffle_seed_for("abc") == 3128432319
    assert shuffle_seed_for("abc") != shuffle_seed_for("abd")


def test_each_blind_comparison_draws_and_records_its_own_shuffle() -> None:
    plan = plan_for("http://unused", shuffle_seed=None)
    rows = [new_comparison(plan, ["s1", "s2"]) for _ in range(40)]
    assert all(r.shuffle_seed == shuffle_seed_for(r.id) and r.side_order == side_order(r.shuffle_seed, 2)
               for r in rows)
    assert {tuple(r.side_order) for r in rows} == {(0, 1), (1, 0)}
    given = new_comparison(plan_for("http://unused", shuffle_seed=2), ["s1", "s2"])
    assert (given.shuffle_seed, given.side_order) == (2, [1, 0])
    named = new_comparison(plan_for("http://unused", blind=False), ["s1", "s2"])
    assert named.shuffle_seed is None and named.side_order is None


def test_a_vote_for_a_is_credited_to_the_agent_shown_as_a(tmp_path: Path) -> None:
    env = load_default().get(PE_ENV)
    store = Store(tmp_path / "sessions.db")
    try:
        row, results = asyncio.run(run_comparison(plan_for("http://unused", shuffle_seed=2), env, store=store,
                                                  build=scripted_build))
        (kept,) = store.comparisons()
        assert (kept.shuffle_seed, kept.side_order) == (2, [1, 0])  # the seed and the order, recorded
        assert [r.agent_model for r in results] == [AGENTS[1], AGENTS[0]]  # beta is shown as A
        voted = vote(store, row.id, "A", "asks first")
        winner = load_record(store, voted.vote)
        assert winner.models["agent"]["model"] == AGENTS[1]
        assert all(m.content.startswith("Cycle") for m in winner.messages if m.role == "agent")  # beta's words
    finally:
        store.close()


async def test_the_screen_shows_the_shuffled_sides_and_says_so() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(CompareScreen(plan_for("http://unused", shuffle_seed=2), env, build=scripted_build))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.done)
        screen = app.screen
        await settle(pilot)
        shown = "\n".join(screen_lines(app))
        assert "blind: sides shuffled (seed 2)" in shown
        assert "agent-alpha" not in shown and "agent-beta" not in shown  # still blind
        a, b = screen.panes()
        assert "Cycle to work" in a.text() and "Walk to work" in b.text()  # beta's side is A
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VoteModal) and app.screen.query("#vote-A"))
        await pilot.pause()
        app.screen.query_one("#vote-A", Button).press()
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and screen.row.vote is not None)
        await settle(pilot)
        assert [str(p.border_title) for p in screen.panes()] == [f"A · {AGENTS[1]}", f"B · {AGENTS[0]}"]
        assert load_record(app.store, screen.row.vote).models["agent"]["model"] == AGENTS[1]


async def test_a_reply_a_person_wrote_is_credited_to_them_in_a_compare_pane() -> None:
    """A side whose agent reply at turn 1 is a person's edit: its pane names
    the person, and still names no model while the comparison is blind."""
    from engine_helpers import scripted_agent, scripted_judge, scripted_user
    from proactive_tui.core.participants import Reply, ScriptedParticipant
    from proactive_tui.core.spec import build_session

    class EditedOpening(ScriptedParticipant):
        """The agent's turn-1 message is a person's edit (as a fork's replayed edit gives it)."""

        async def reply(self, request):
            if request.turn != 1:
                return await super().reply(request)
            text = "A person's opening line"
            if request.on_delta is not None:
                request.on_delta(text)
            return Reply(text=text, model=EDITED_BY)

    def build(spec, env, gateway, session_id):
        agent = EditedOpening(lambda req: f"Walk to work on turn {req.turn}?", structured=scripted_agent().structured,
                              label="scripted-agent")
        seats = {"agent": agent, "user": scripted_user(), "judge": scripted_judge()}
        return build_session(spec, env, None, seats=seats, session_id=session_id)

    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(CompareScreen(plan_for("http://unused"), env, build=build))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.done)
        screen = app.screen
        await settle(pilot)
        for pane in screen.panes():
            text = pane.text()
            assert f"agent · turn 1 · {EDITED_BY}: A person's opening line" in text
            assert "agent · turn 2: " in text and "agent-alpha" not in text and "agent-beta" not in text


def test_the_command_says_the_sides_were_shuffled_and_credits_the_vote(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        done = compare(server, tmp_path / "out", "--blind", "--shuffle-seed", "2")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    said = done.stdout.decode() + done.stderr.decode()
    assert "blind: sides shuffled (seed 2)" in said and "agent-alpha" not in said
    document = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert document["comparison"]["shuffle_seed"] == 2 and document["comparison"]["side_order"] == [1, 0]
    assert [s["agent_model"] for s in document["sides"]] == [AGENTS[1], AGENTS[0]]
    voted = cli(["compare", "vote", document["comparison"]["id"], "A"])
    assert voted.returncode == 0, voted.stderr.decode(errors="replace")
    assert f"A ({AGENTS[1]})" in voted.stdout.decode() and f"B ({AGENTS[0]})" in voted.stdout.decode()
    listed = cli(["compare", "list"]).stdout.decode()
    assert "sides shuffled, seed 2" in listed
