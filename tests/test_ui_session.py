"""The playground's session flow, driven like a person would, against the fake OpenAI server."""

from __future__ import annotations


import pytest
from textual.widgets import Input

from test_run_command import judge_aware_responder
from ui_helpers import PE_ENV, fake_spec, scripted_factory, wait_for
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen
from proactive_tui.families.proactiveeval.ui.setup import ProactiveEvalSetupScreen as SetupScreen
from proactive_tui.families.proactiveeval.ui.checklist import SubTargetChecklist
from proactive_tui.ui.widgets.compose_box import ComposeBox
from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores
from proactive_tui.ui.widgets.message_view import MessageView
from proactive_tui.families.proactiveeval.ui.plan_panel import PlanPanel
from proactive_tui.families.proactiveeval.ui.score_trend import ScoreTrend
from proactive_tui.families.proactiveeval.ui.turn_checks import TurnChecks


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def test_pick_setup_watch_to_the_end() -> None:
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("slash", *PE_ENV, "enter")  # filter to the one environment, back to the tree
            await pilot.pause()
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen))
            setup = app.screen
            for role in ("agent", "user", "judge"):
                setup.query_one(f"#model-{role}", Input).value = "openai/fake-model"
            setup.query_one("#api-base", Input).value = server.base_url
            setup.query_one("#max-turns", Input).value = "4"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ProactiveEvalSessionScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            assert screen.ended == "target_reached"
            # the panels hold exactly the judge's values, attributed to the judge model
            assert screen.query_one(PlanPanel).score == 6
            final = screen.query_one(FinalScores).score
            assert final.overall == 7 and final.judge_model == "openai/fake-model"
            checks = screen.query_one(TurnChecks)
            assert checks.row_count == 2 and checks.border_subtitle == "judge: openai/fake-model"
            assert screen.query_one(SubTargetChecklist).done == {1, 2}
            assert screen.query_one(ScoreTrend).points[-1] == 7
            messages = [v for v in screen.query(MessageView) if v.state == "done"]
            assert [m.role for m in messages] == ["agent", "user", "agent", "user"]
            assert "openai/fake-model" in app.config.recent_models


async def test_stop_mid_stream_keeps_partial_text() -> None:
    with FakeOpenAIServer(responder=judge_aware_responder, chunk_delay=0.15) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.start_session(env, fake_spec(PE_ENV, server.base_url, planning=False))
            screen = app.screen
            await wait_for(pilot, lambda: any(v.body.strip() for v in screen.query(MessageView)))
            await pilot.press("x")
            await wait_for(pilot, lambda: screen.ended is not None)
            assert screen.ended == "cancelled"
            (view,) = list(screen.query(MessageView))
            assert view.state == "partial" and view.body and "talk?" not in view.body
            assert screen.builder.record.messages[0].partial
            assert screen.query_one(FinalScores).score is None  # plain stop: nothing scored, shows "-"


async def test_play_as_user_typed_text_is_judged() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=2, planning=False)
        spec.seats["user"] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(human="user")))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        assert "Who you are" in screen.query_one("#context-card").plain_text()
        box.focus()
        await pilot.press(*"I walk a bit", "ctrl+j", *"already", "enter")
        await wait_for(pilot, lambda: screen.query_one(TurnChecks).row_count == 1)
        mine = [v for v in screen.query(MessageView) if v.role == "user"][0]
        assert mine.body == "I walk a bit\nalready" and mine.speaker == "you"
        await wait_for(pilot, lambda: not box.disabled)
        await pilot.press("ctrl+d")  # end the conversation as the user
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "user_stopped"
        assert screen.builder.record.human_seats == ["user"]


async def test_own_plan_checklist_and_scores_follow_the_plan_judged_against() -> None:
    """With --own-plan the turn checks number the plan's steps: the checklist shows those steps,
    and the final score says it was judged against the plan; the overall leads the panel."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=2, guide_with="own_plan")
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory()))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.ended is not None)
        checklist = screen.query_one(SubTargetChecklist)
        assert checklist.steps == ["ask", "compare", "suggest"]  # the scripted agent's plan, not the reference
        assert checklist.border_title == "Sub-targets (own plan)" and checklist.done == {1, 2}
        assert checklist.border_subtitle == "2/3"
        scores = screen.query_one(FinalScores)
        assert scores.score.judged_against == "own_plan" and scores.border_title == "Guidance score (vs own plan)"


async def test_palette_commands_run() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=3)
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(hold_agent_at=2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: any(v.turn == 2 and v.body for v in screen.query(MessageView)))
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"stop and score")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "cancelled"
        assert screen.query_one(FinalScores).score is not None  # stop and score asked the judge


async def test_pause_and_step_controls() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        app.push_screen(ProactiveEvalSessionScreen(env, fake_spec(PE_ENV, "http://unused", max_turns=3, planning=False), scripted_factory(delay=0.2)))
        await pilot.pause()
        screen = app.screen
        await wait_for(pilot, lambda: screen.session is not None)
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.query_one(TurnChecks).row_count >= 1)
        await pilot.pause(0.3)
        turns = {v.turn for v in screen.query(MessageView)}
        assert screen.ended is None and max(turns) <= 2
        await pilot.press("a")
        await wait_for(pilot, lambda: screen.ended is not None)
        assert screen.ended == "max_turns"


async def test_model_output_markup_and_escapes_render_literally() -> None:
    evil = "[bold]x[/] [@click=app.quit]click[/] \x1b]0;pwned\x07\x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07done"

    def responder(body):
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        return judge_aware_responder(body) if name else evil

    with FakeOpenAIServer(responder=responder) as server:
        app = ProactiveApp()
        async with app.run_test(size=(120, 40)) as pilot:
            env = app.environments.get(PE_ENV)
            app.start_session(env, fake_spec(PE_ENV, server.base_url, max_turns=1, planning=False))
            screen = app.screen
            await wait_for(pilot, lambda: screen.ended is not None)
            view = [v for v in screen.query(MessageView) if v.role == "agent"][0]
            assert view.body == "[bold]x[/] [@click=app.quit]click[/] redclick".replace("click", "click", 1).replace("redclick", "red done")
            assert "\x1b" not in view.body
            rendered = str(view.render())
            assert "[bold]x[/]" in rendered and "[@click=app.quit]" in rendered
            await pilot.click(view)
            await pilot.pause()
            assert app.is_running  # clicking the text ran no action


async def test_setup_warns_before_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        chosen = []
        app.push_screen(SetupScreen(env), chosen.append)
        await pilot.pause()
        setup = app.screen
        assert "offline 135M demo model" in str(setup.query_one("#key-agent").render())
        setup.query_one("#model-judge", Input).value = "anthropic/claude-sonnet-4-5"
        await pilot.pause()
        assert "no key: set ANTHROPIC_API_KEY" in str(setup.query_one("#key-judge").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert chosen == [] and "Press Start again" in str(setup.query_one("#setup-warning").render())
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert chosen and chosen[0].roles.judge.model == "anthropic/claude-sonnet-4-5"


# --- snapshots ---------------------------------------------------------------------------------

from ui_helpers import scripted_factory as _factory  # noqa: E402


def session_app(spec_changes: dict | None = None, human: str | None = None, hold: int | None = None):
    app = ProactiveApp()
    settings = {"max_turns": 2, "live_judging": True, **(spec_changes or {})}

    async def run_before(pilot) -> None:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", **settings)
        if human:
            spec.seats[human] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, _factory(human=human, hold_agent_at=hold)))
        await pilot.pause()
        screen = app.screen
        if hold:
            await wait_for(pilot, lambda: any(v.turn == hold and v.body for v in screen.query(MessageView))
                           and screen.query_one(TurnChecks).row_count == hold - 1 and screen.query_one(PlanPanel).score)
        elif human:
            await wait_for(pilot, lambda: not screen.query_one(ComposeBox).disabled)
        else:
            await wait_for(pilot, lambda: screen.ended is not None)
        await pilot.pause()

    return app, run_before


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The elapsed clock reads 0:00 in snapshots."""
    from proactive_tui.ui.widgets.status_line import StatusLine

    monkeypatch.setattr(StatusLine, "clock", staticmethod(lambda: 1000.0))


def test_snapshot_setup(snap_compare) -> None:
    assert snap_compare(ProactiveApp(), terminal_size=(100, 34), press=["enter"])


def test_snapshot_session_finished_with_scores(snap_compare, no_clock) -> None:
    app, run_before = session_app()
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_snapshot_session_finished_80x24(snap_compare, no_clock) -> None:
    app, run_before = session_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_snapshot_session_mid_stream(snap_compare, no_clock) -> None:
    app, run_before = session_app({"max_turns": 3}, hold=2)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_play_as_agent_plan_and_messages_go_through_the_engine() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        env = app.environments.get(PE_ENV)
        spec = fake_spec(PE_ENV, "http://unused", max_turns=1)
        spec.seats["agent"] = "human"
        app.push_screen(ProactiveEvalSessionScreen(env, spec, scripted_factory(human="agent")))
        await pilot.pause()
        screen = app.screen
        card = screen.query_one("#context-card")
        assert env.item.target[:30] not in card.plain_text()  # the planner is not told the reference
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)  # the plan first
        box.focus()
        await pilot.press(*"Get Kenji walking", "ctrl+j", *"ask about steps", "ctrl+j", *"suggest the station walk", "enter")
        await wait_for(pilot, lambda: screen.query_one(PlanPanel).score is not None)
        assert "Get Kenji walking" in str(screen.query_one("#plan-body").render())
        # with the plan in, the person's plan is the brief; the reference stays hidden
        assert "Get Kenji walking" in card.plain_text() and env.item.target[:30] not in card.plain_text()
        await wait_for(pilot, lambda: not box.disabled)  # then the opening message
        await pilot.press(*"Kenji, fancy a walk to the station?", "enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        record = screen.builder.record
        assert record.section.planning.target == "Get Kenji walking" and record.section.planning.sub_targets == ["ask about steps", "suggest the station walk"]
        assert record.messages[0].content == "Kenji, fancy a walk to the station?" and record.human_seats == ["agent"]
        assert record.section.turn_checks and record.section.guidance is not None


async def test_palette_starts_a_session_from_the_picker() -> None:
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"start a session")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen))


# --- playing a seat: what the person sees, and that every turn and action reaches the record --

import asyncio  # noqa: E402

from engine_helpers import scripted_agent, scripted_judge, scripted_user  # noqa: E402
from ui_helpers import screen_lines, settle_playing  # noqa: E402
from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant  # noqa: E402
from proactive_tui.core.spec import build_session  # noqa: E402
from proactive_tui.families.proactiveeval import prompts  # noqa: E402
from proactive_tui.families.proactiveeval.judges import TurnVerdict  # noqa: E402
from proactive_tui.ui.widgets.context_card import ContextCard  # noqa: E402

SIZES = [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")]
STALE = ("waiting for you", "typing…", "your turn", "judging", "planning…")
"""What the screen must not say once the session is over."""


class Gate:
    """Holds the judge's (or the planner's) calls until the test opens it, so the screen can be
    seen while they run; once open it stays open."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()

    async def wait(self) -> None:
        await self.opened.wait()

    def open(self) -> None:
        self.opened.set()


def play_factory(human: str, check_gate: Gate | None = None, plan_gate: Gate | None = None):
    """Scripted seats (as `scripted_factory`), a person in `human`; the model agent's planning
    waits for `plan_gate` and every turn check for `check_gate`."""

    async def factory(spec, env, resume_from=None):
        judge_base, agent_base = scripted_judge(), scripted_agent()

        async def judge(request, schema):
            if schema is TurnVerdict and check_gate is not None:
                await check_gate.wait()
            return judge_base.structured(request, schema)

        async def plan(request, schema):
            if plan_gate is not None:
                await plan_gate.wait()
            return agent_base.structured(request, schema)

        seats = {"agent": ScriptedParticipant(lambda r: f"agent says turn {r.turn}", structured=plan, label="scripted-agent"),
                 "user": scripted_user(), "judge": ScriptedParticipant([], structured=judge, label="scripted-judge")}
        seats[human] = HumanParticipant()
        return build_session(spec, env, gateway=None, seats=seats, resume_from=resume_from), seats

    return factory


def norm(text: str) -> str:
    return " ".join(text.split())


def fragments(text: str, n: int = 4) -> set[str]:
    """Every run of `n` words of `text` (all of it when shorter): a rendered piece of the text
    longer than a few words contains one of them, however the screen wraps it."""
    words = text.split()
    return {" ".join(words[i:i + n]) for i in range(max(1, len(words) - n + 1))}


def reference_fragments(item) -> set[str]:
    """Word runs of the hidden reference (target and sub-targets) that nothing the person is
    allowed to see also contains."""
    allowed = " ".join([item.environment.user_information, item.environment.trigger_factor])
    refs = set().union(*(fragments(t) for t in [item.target, *item.sub_target]))
    return {f for f in refs if f not in norm(allowed)}


def shown(wanted: set[str], lines: list[str]) -> set[str]:
    rows = [norm(line) for line in lines]
    return {f for f in wanted if any(f in row for row in rows)}


def region_text(lines: list[str], widget) -> str:
    """The rows of `lines` inside `widget`'s content region, as one line."""
    region = widget.scrollable_content_region
    return norm(" ".join(line[region.x:region.right] for line in lines[region.y:region.bottom]))


def status_text(screen) -> str:
    return screen.status.render().plain


async def read_card(pilot, card: ContextCard) -> str:
    """Everything the card shows, read as a person would: click it, Home, then Down until its
    end, keeping each row as it scrolls into view. Returns the rows in order, as one line."""
    await pilot.click(card)
    await pilot.press("home")
    await wait_for(pilot, lambda: card.scroll_y == 0)
    rows: dict[int, str] = {}
    while True:
        await settle_playing(pilot)
        region = card.scrollable_content_region
        lines = screen_lines(pilot.app)
        top = round(card.scroll_y)
        for i in range(region.height):
            rows[top + i] = lines[region.y + i][region.x:region.right]  # each content row, once
        if card.scroll_y >= card.max_scroll_y:
            return norm(" ".join(rows[k] for k in sorted(rows)))
        before = card.scroll_y
        await pilot.press("down")
        await wait_for(pilot, lambda before=before: card.scroll_y != before)


def told(prompt: str) -> list[str]:
    """What a system prompt tells its model, paragraph by paragraph, without the headings that
    introduce the data ("Who you are:\\n…") and without the JSON format a person does not type."""
    parts = []
    for paragraph in prompt.split("\n\n"):
        body = paragraph.split(":\n", 1)[1] if ":\n" in paragraph else paragraph
        parts.append(norm(body.split(" Return JSON", 1)[0]))
    return parts


async def type_text(pilot, text: str) -> None:
    """Type like a person: each character, ctrl+j for a new line."""
    keys = []
    for ch in text:
        keys.append({"\n": "ctrl+j", " ": "space"}.get(ch, ch))
    await pilot.press(*keys)


def play_screen(app, seat: str, factory, **settings):
    env = app.environments.get(PE_ENV)
    spec = fake_spec(PE_ENV, "http://unused", **{"max_turns": 2, "live_judging": True, **settings})
    spec.seats[seat] = "human"
    app.push_screen(ProactiveEvalSessionScreen(env, spec, factory))
    return env.item


def assert_nothing_stale(screen, lines: list[str]) -> None:
    text = "\n".join(lines)
    for stale in STALE:
        assert stale not in text, stale
    assert "finished:" in status_text(screen)


@pytest.mark.parametrize("size", SIZES)
async def test_play_user_sees_the_persona_never_the_reference(size) -> None:
    """The person in the user seat: the planning and the judging are said as they run, every turn
    is theirs to answer, the persona card holds every word the user model is told (reachable at
    this size), the reference stays off the whole screen until t, and their replies are recorded."""
    plan_gate, check_gate = Gate(), Gate()
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        item = play_screen(app, "user", play_factory("user", check_gate=check_gate, plan_gate=plan_gate))
        await pilot.pause()
        screen = app.screen
        hidden = reference_fragments(item)
        assert hidden
        await wait_for(pilot, lambda: "the agent is planning…" in status_text(screen))
        assert "loading the model layer" not in status_text(screen)
        plan_gate.open()
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled and screen.query_one(PlanPanel).score is not None)
        await settle_playing(pilot)
        lines = screen_lines(app)
        assert not shown(hidden, lines)
        assert "Reply as the user…" in region_text(lines, screen.query_one(ComposeBox))  # what to type
        assert "your turn: reply as the user" in status_text(screen)

        # the persona card: what the user model is told, all of it reachable by scrolling
        card = screen.query_one(ContextCard)
        card_text = await read_card(pilot, card)
        user_prompt = prompts.user_system_prompt(item.environment.user_information, item.environment.trigger_factor, "medium")
        for part in told(user_prompt)[1:]:  # all but the role-play opener the card's title stands for
            assert part in card_text, part
        assert prompts.AGREEABLENESS["medium"] in card_text
        lines = screen_lines(app)
        assert not shown(hidden, lines)
        assert "hidden target: t shows it" in "\n".join(lines)
        assert "hidden while you play the user: t shows them" in region_text(lines, screen.query_one(SubTargetChecklist))

        # turn 1: the reply goes out; the judges' turn check is said while it runs, then who is next
        await pilot.click(box)
        await type_text(pilot, "I walk a bit\nalready")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "judging turn 1…" in status_text(screen))
        await wait_for(pilot, lambda: any(v.role == "agent" and v.turn == 2 and v.state == "done" for v in screen.query(MessageView)))
        assert "judging turn 1…, then your reply" in status_text(screen)
        assert box.disabled
        assert not shown(hidden, screen_lines(app))
        check_gate.open()

        # turn 2 is the person's too
        await wait_for(pilot, lambda: not box.disabled)
        assert "your turn: reply as the user" in status_text(screen)

        # t (after esc leaves the reply box) shows the reference, and says how to hide it again
        await pilot.press("escape", "t")
        await settle_playing(pilot)
        lines = screen_lines(app)
        assert shown(fragments(item.target), lines), "the target shows after t"
        assert shown(fragments(item.sub_target[0]), lines), "the sub-targets show after t"
        assert "t hides the target" in "\n".join(lines)
        await pilot.press("t")
        await settle_playing(pilot)
        assert not shown(hidden, screen_lines(app))

        await pilot.press("enter")  # back to the box (it is the person's turn)
        assert screen.focused is box
        await type_text(pilot, "Fine, I will walk to the station")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        assert screen.ended == "max_turns"
        assert_nothing_stale(screen, screen_lines(app))
        record = screen.builder.record
        assert [m.content for m in record.messages if m.role == "user"] == ["I walk a bit\nalready", "Fine, I will walk to the station"]
        assert all(m.model == "person" for m in record.messages if m.role == "user")
        assert record.human_seats == ["user"] and record.termination.reason == "max_turns"
        assert [c.turn for c in record.section.turn_checks] == [1, 2] and record.section.guidance is not None


@pytest.mark.parametrize("size", SIZES)
async def test_play_agent_plans_blind_then_guides_with_its_brief(size) -> None:
    """The person in the agent seat: they plan seeing only what a model planner is told (no
    reference anywhere on screen), a plan the engine could not parse stays in the box, then their
    own plan's target and steps are their brief in a model agent's prompt (on the card, all
    reachable; the reference still nowhere on screen), every message turn is theirs, and the plan
    and messages are recorded."""
    check_gate = Gate()
    app = ProactiveApp()
    async with app.run_test(size=size) as pilot:
        item = play_screen(app, "agent", play_factory("agent", check_gate=check_gate))
        await pilot.pause()
        screen = app.screen
        env = item.environment
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        await settle_playing(pilot)
        hidden = reference_fragments(item)
        lines = screen_lines(app)
        assert not shown(hidden, lines)
        assert "Write the plan: target on the first line, one sub-target per line" in region_text(lines, box)
        assert "your turn: write the plan" in status_text(screen)
        card = screen.query_one(ContextCard)
        card_text = await read_card(pilot, card)
        for part in told(prompts.planning_prompt(env.user_information, env.trigger_factor))[1:]:
            assert part in card_text, part
        assert not shown(hidden, screen_lines(app))

        # one line is no plan: the engine would not take it, so it stays in the box to fix
        await pilot.click(box)
        await type_text(pilot, "Get Kenji walking")
        await pilot.press("enter")
        await settle_playing(pilot)
        assert not box.disabled and box.text == "Get Kenji walking"
        assert screen.builder.record.section.planning.target is None
        await type_text(pilot, "\nask about his steps\nsuggest the station walk")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not box.disabled and screen.query_one(PlanPanel).score is not None)
        await settle_playing(pilot)
        assert "your turn: open the conversation" in status_text(screen)
        lines = screen_lines(app)
        assert "Write your opening message: the user has not said anything yet" in region_text(lines, box)
        assert "Get Kenji walking" in region_text(lines, card), "their target heads the brief, in view as the dialogue starts"
        assert not shown(hidden, lines)
        card_text = await read_card(pilot, card)
        plan = ["ask about his steps", "suggest the station walk"]
        agent_prompt = prompts.agent_system_prompt(env.user_information, env.trigger_factor, "Get Kenji walking", plan)
        for part in told(agent_prompt):  # the opener, the user, the trigger, their steps, the rules
            assert part in card_text, part
        assert "the reference target and steps, not your plan" in card_text  # what the judges compare with
        assert not shown(hidden, [card_text]) and not shown(hidden, screen_lines(app))

        await pilot.click(box)
        await type_text(pilot, "Kenji, fancy a walk to the station?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "judging turn 1…" in status_text(screen)
                       and any(v.role == "user" and v.state == "done" for v in screen.query(MessageView)))
        assert "judging turn 1…, then your message (turn 2)" in status_text(screen)
        check_gate.open()
        await wait_for(pilot, lambda: not box.disabled)
        assert "your turn: write your next message" in status_text(screen)
        await type_text(pilot, "Shall we say three days this week?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        assert_nothing_stale(screen, screen_lines(app))
        record = screen.builder.record
        assert record.section.planning.target == "Get Kenji walking"
        assert record.section.planning.sub_targets == ["ask about his steps", "suggest the station walk"]
        assert [m.content for m in record.messages if m.role == "agent"] == ["Kenji, fancy a walk to the station?", "Shall we say three days this week?"]
        assert record.human_seats == ["agent"] and record.termination.reason == "max_turns"
        assert record.section.planning.score is not None and record.section.guidance is not None


@pytest.mark.parametrize("guide_with", ["reference", "own_plan"])
async def test_play_agent_brief_is_the_players_plan_never_the_reference(guide_with) -> None:
    """Issue 30: once the person playing the agent has written a plan, the brief shows their plan
    and never the reference, whatever they guide with (the default, guide_with = reference, only
    changes what the judges compare with, and the brief says so); the card's border says the
    reference is hidden, and it is: t shows it (card and checklist), t again hides it."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        item = play_screen(app, "agent", play_factory("agent"), guide_with=guide_with)
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        await type_text(pilot, "Get Kenji walking\nask about his steps\nsuggest the station walk")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not box.disabled and screen.query_one(PlanPanel).score is not None)
        await settle_playing(pilot)
        card = screen.query_one(ContextCard)
        brief = norm(card.plain_text())
        assert "Get Kenji walking" in brief and "1. ask about his steps 2. suggest the station walk" in brief
        hidden = reference_fragments(item)
        assert norm(item.target) not in brief and not shown(hidden, [brief])
        assert card.border_subtitle == "hidden reference plan: t shows it"
        assert not shown(hidden, screen_lines(app))  # nowhere on screen: not the card, not the checklist
        judged = ("the reference target and steps, not your plan" if guide_with == "reference"
                  else "your plan: its target and steps")
        assert judged in brief

        await pilot.click(card)  # out of the box: the screen's keys work
        await pilot.press("t")
        await settle_playing(pilot)
        assert norm(item.target) in norm(card.plain_text()) and card.border_subtitle == "t hides the reference plan"
        await pilot.press("t")
        await settle_playing(pilot)
        assert norm(item.target) not in norm(card.plain_text()) and not shown(hidden, screen_lines(app))


@pytest.mark.parametrize("keys, reason", [
    pytest.param(["ctrl+d"], "user_stopped", id="ctrl+d"),
    pytest.param(["escape", "x"], "cancelled", id="x"),
    pytest.param(["escape", "S"], "cancelled", id="S"),
])
async def test_play_user_stopping_leaves_nothing_stale(keys, reason) -> None:
    """Ending the chat (ctrl+d), stopping (x) or stopping and scoring (S) while it is the person's
    turn: the end is recorded, and nothing still says it is their turn, or typing, or judging."""
    app = ProactiveApp()
    async with app.run_test(size=(120, 40)) as pilot:
        play_screen(app, "user", play_factory("user"), planning=False)
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        await pilot.press(*keys)
        await wait_for(pilot, lambda: screen.ended is not None)
        await settle_playing(pilot)
        assert screen.ended == reason
        lines = screen_lines(app)
        assert_nothing_stale(screen, lines)
        assert box.disabled and "The session has ended" in region_text(lines, box)
        record = screen.builder.record
        assert record.termination.reason == reason
        assert not [m for m in record.messages if m.role == "user"]  # nothing was typed, nothing recorded
        assert (record.section.guidance is not None) == (keys[-1] in ("S", "ctrl+d"))


def play_app(seat: str, theme: str | None):
    """A play screen at the person's first message turn (the agent seat after its plan)."""
    app = ProactiveApp()

    async def run_before(pilot) -> None:
        if theme:
            app.theme = theme
        play_screen(app, seat, play_factory(seat))
        await pilot.pause()
        screen = app.screen
        box = screen.query_one(ComposeBox)
        await wait_for(pilot, lambda: not box.disabled)
        if seat == "agent":
            await type_text(pilot, "Get Kenji walking\nask about his steps\nsuggest the station walk")
            await pilot.press("enter")
        await wait_for(pilot, lambda: not box.disabled and screen.query_one(PlanPanel).score is not None
                       and screen.status.turn == 1)
        await settle_playing(pilot)

    return app, run_before


@pytest.mark.parametrize("theme", [pytest.param(None, id="dark"), pytest.param("proactive-light", id="light")])
@pytest.mark.parametrize("seat", ["user", "agent"])
def test_snapshot_play_seat(snap_compare, no_clock, seat, theme) -> None:
    app, run_before = play_app(seat, theme)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


@pytest.mark.parametrize("seat", ["user", "agent"])
def test_snapshot_play_seat_80x24(snap_compare, no_clock, seat) -> None:
    app, run_before = play_app(seat, None)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
