"""ProactiveBench in the studio: the item view draws a real run folder (made by `synth
proactivebench` against the fake server, tests/synth_pb_fake.py) stage by stage, literally; a
person's edit of a step re-makes the steps after it; a person may keep a trace the pipeline
rejected after whole batches, and it installs and loads with the person named in its provenance."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from synth_pb_fake import make_responder, role_args
from ui_helpers import settle
from proactive_tui.cli.main import main
from proactive_tui.families.proactivebench.ui.proposal_card import clock_time
from proactive_tui.families.proactivebench.ui.studio_view import ProactiveBenchStudioView
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer, schema_name
from proactive_tui.ui.studio.view import StageBlock

MARKUP = "[bold red]not markup[/] <b>"


def synth_argv(out: Path, base_url: str, *extra: str, n: int = 1) -> list[str]:
    return ["synth", "proactivebench", "--n", str(n), "--seed", "3", "--out", str(out), *role_args(base_url), *extra]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run, read-only for the view tests: coding kept (three batches), daily_life rejected at
    its first batch (an empty event), writing rejected at batch 3 (events not JSON) after two
    whole batches."""
    home = tmp_path_factory.mktemp("home")
    out = home / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROACTIVE_TUI_CONFIG", str(home / "config.toml"))
        mp.setenv("PROACTIVE_TUI_DATA", str(home / "data"))
        with FakeOpenAIServer(responder=make_responder({"writing": "late"})) as server:
            assert main(synth_argv(out, server.base_url, "--out-only")) == 0
    return out


def pipeline_of(folder: Path):
    from proactive_tui.core import registry

    manifest = engine.read_manifest(folder)
    return registry.get("proactivebench").generate.pipeline(manifest.options), manifest


class Host(App):
    """The view alone, in the app's themes (the studio screen hosts it the same way)."""

    def __init__(self, folder: Path, item: str, live: str | None = None, theme: str = "proactive-dark",
                 state: engine.ItemState | None = None) -> None:
        super().__init__()
        from proactive_tui.ui.themes import load_themes

        for loaded in load_themes()[0]:
            self.register_theme(loaded)
        self.theme = theme
        self.pipeline, _manifest = pipeline_of(folder)
        self.item_state = state or engine.read_item(folder, item)
        self.live = live

    def compose(self) -> ComposeResult:
        yield ProactiveBenchStudioView(self.pipeline, id="view")

    def on_mount(self) -> None:
        self.query_one(ProactiveBenchStudioView).show(self.item_state, self.live)


def texts(app: App) -> list[tuple[str, str | None, str, str]]:
    """(title, step, state, body) of every block, as drawn."""
    return [(b.title, b.step, b.state, b.body.plain) for b in app.query(StageBlock)]


async def shown(app: Host, pilot) -> list[tuple[str, str | None, str, str]]:
    for _ in range(200):  # a hang guard in pauses, not a timing assertion
        if app.query(StageBlock):
            break
        await pilot.pause()
    await settle(pilot)
    return texts(app)


async def test_a_kept_trace_is_drawn_stage_by_stage_on_the_pipelines_clock(folder: Path) -> None:
    app = Host(folder, "coding-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    titles = [t for t, *_ in blocks]
    assert titles[:2] == ["Scene · Coding", "User profile"]
    assert titles[2:6] == ["Batch 1 · activity", "Batch 1 · events", "Batch 1 · proposal", "Batch 1 · verdict"]
    assert titles[-2:] == ["Batch 4 · activity", "Outcome"]
    # every model call's block is bound to its step (what `e` edits); the outcome is no step
    assert [s for _t, s, *_ in blocks] == ["scene", "user", *(f"{k}-{b}" for b in (1, 2, 3) for k in (
        "activity", "events", "propose", "verdict")), "activity-4", None]
    by_step = {s: body for _t, s, _st, body in blocks}
    assert "A desk. SCENE-coding" in by_step["scene"] and "browser.open(url)" in by_step["scene"]
    assert "Ada" in by_step["user"] and "goal: fix the failing test" in by_step["user"]
    assert by_step["activity-2"].startswith("step 2") and by_step["activity-4"].startswith("finished")
    # the clock: the trace's own times (from the record), 30 s a step
    trace = json.loads((folder / "items" / "coding-0000" / "result.json").read_text())["record"]["trace"]
    for batch, pair in ((1, trace[0:2]), (3, trace[4:6])):
        lines = by_step[f"events-{batch}"].splitlines()
        for line, event in zip(lines, pair):
            assert line == f"{clock_time(event['observation']['time'])}  +30s  {event['observation']['event']}"
    assert by_step["events-1"].splitlines()[0].endswith("The user does step 1 (a).")
    assert by_step["propose-1"].startswith("proposes: Offer help with batch 1") and "“Shall I?”" in by_step["propose-1"]
    assert by_step["propose-2"].startswith("nothing (no help needed)")
    assert by_step["verdict-1"].startswith("✓ accepted by the user seat (openai/user)")
    assert by_step["verdict-2"].startswith("✗ rejected by the user seat") and "I see." in by_step["verdict-2"]
    assert blocks[-1][3].splitlines()[:2] == ["kept · scene coding", "6 events, 2 accepted proposals"]
    assert {st for _t, _s, st, _b in blocks} == {"done"}


async def test_rejections_are_drawn_with_their_reasons_and_a_keepable_trace_says_so(folder: Path) -> None:
    app = Host(folder, "daily_life-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blank = await shown(app, pilot)
    events = next(body for _t, s, _st, body in blank if s == "events-1")
    assert "(empty event)" in events.splitlines()[0] and events.splitlines()[1].endswith("The user does step 1 (b).")
    assert blank[-1][2] == "rejected" and blank[-1][3].startswith("rejected · empty\nthe environment gave no events")
    assert "a person may keep it" not in blank[-1][3]  # no whole batch: nothing to keep

    app = Host(folder, "writing-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        late = await shown(app, pilot)
    failed = next(b for b in late if b[1] == "events-3")
    assert failed[2] == "rejected" and failed[3].startswith("rejected: schema_invalid")
    assert "EventBatch" in failed[3]
    assert late[-1][3].startswith("rejected · schema_invalid")
    assert "made a whole trace (4 events): a person may keep it" in late[-1][3]


def partial(folder: Path, upto: str) -> engine.ItemState:
    """coding-0000 as it stood while its step `upto` was being called (no result yet)."""
    from proactive_tui.families.proactivebench.synth import pb_step_rank

    state = engine.read_item(folder, "coding-0000")
    return engine.ItemState(item=state.item, steps={k: v for k, v in state.steps.items()
                                                    if pb_step_rank(k) < pb_step_rank(upto)})


async def test_an_item_under_way_shows_the_live_call_and_the_clock_it_can_know(folder: Path) -> None:
    """A state with no result (as during a run). Before the first proposal the clock's start is
    unknown (the run's seed decides it), so the events count simulated seconds since the trace
    began; once the agent was shown the first batch, its input gives the trace's own times. The
    step being called is drawn live, bound to no step (there is no file to edit yet)."""
    app = Host(folder, "coding-0000", live="propose-1", state=partial(folder, "propose-1"))
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    by_step = {s: body for _t, s, _st, body in blocks}
    assert [line.split("  ")[0] for line in by_step["events-1"].splitlines()[:2]] == ["t+0:00:30", "t+0:01:00"]
    assert blocks[-1] == ("Batch 1 · proposal", None, "live", "asking the agent…")

    trace = json.loads((folder / "items" / "coding-0000" / "result.json").read_text())["record"]["trace"]
    app = Host(folder, "coding-0000", live="propose-2", state=partial(folder, "propose-2"))
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    by_step = {s: body for _t, s, _st, body in blocks}
    assert [line.split("  ")[0] for line in by_step["events-2"].splitlines()[:2]] == [
        clock_time(e["observation"]["time"]) for e in trace[2:4]]
    assert blocks[-1][:3] == ("Batch 2 · proposal", None, "live")


def _edit_and_rerun(tmp_path: Path, server: FakeOpenAIServer) -> tuple[Path, list[str], list[str]]:
    """A coding run, its events-1 rewritten by a person, then resumed headless (in a thread: the
    command runs its own event loop)."""
    out = tmp_path / "run"
    assert main(synth_argv(out, server.base_url, "--scene", "coding", "--out-only")) == 0
    pipeline, _manifest = pipeline_of(out)
    record = engine.read_item(out, "coding-0000").steps["events-1"]
    edited = {**record.output, "events": [{"event": MARKUP, "deltatime": 5}, *record.output["events"][1:]]}
    with pytest.raises(engine.EditError, match="events-1: EventBatch: events.0.deltatime"):
        engine.edit_step(out, pipeline, "coding-0000", "events-1", {**edited, "events": [{"event": "x",
                                                                                        "deltatime": "soon"}]})
    removed = engine.edit_step(out, pipeline, "coding-0000", "events-1", edited)
    sent = len(server.requests)
    assert main(["synth", "resume", str(out)]) == 0
    return out, [schema_name(r.body) for r in server.requests[sent:]], removed


async def test_an_edited_events_step_remakes_what_follows_and_is_drawn_as_a_persons(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=make_responder()) as server:
        out, resent, removed = await asyncio.to_thread(_edit_and_rerun, tmp_path, server)
    # the steps after events-1 were deleted and made again from the edit; those before were kept
    assert removed == ["activity-2", "activity-3", "activity-4", "events-2", "events-3", "propose-1", "propose-2",
                       "propose-3", "verdict-1", "verdict-2", "verdict-3"]
    assert resent[:3] == ["ProposalReply", "UserJudge", "Activity"] and len(resent) == len(removed)
    state = engine.read_item(out, "coding-0000")
    assert set(removed) <= set(state.steps) and state.outcome.edited_steps == ["events-1"]
    assert MARKUP in json.dumps(state.steps["propose-1"].input)  # the agent saw the person's event
    trace = json.loads((out / "out" / "coding-0000.json").read_text())
    assert trace[0]["observation"]["event"] == MARKUP and trace[0]["synth"]["edited_by_person"] == ["events-1"]
    assert float(trace[1]["observation"]["time"]) - float(trace[0]["observation"]["time"]) == 30.0

    app = Host(out, "coding-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    edited = next(b for b in blocks if b[1] == "events-1")
    assert edited[2] == "edited"
    assert edited[3].splitlines()[0] == f"{clock_time(trace[0]['observation']['time'])}  +5s  {MARKUP}"  # literal
    assert "steps a person rewrote: events-1" in blocks[-1][3]


async def test_a_person_keeps_a_late_rejection_and_it_installs_loads_and_names_them(tmp_path: Path) -> None:
    from proactive_tui.envs import load_default

    out = tmp_path / "run"
    with FakeOpenAIServer(responder=make_responder({"writing": "late"})) as server:
        assert await asyncio.to_thread(main, synth_argv(out, server.base_url, "--scene", "writing")) == 0
        result = engine.read_item(out, "writing-0000").outcome
        assert result.status == "rejected" and result.reason == "schema_invalid"
        assert result.tier == "writing" and len(result.record["trace"]) == 4 and result.record["accepted"] == 1
        assert not (out / "out" / "writing-0000.json").exists()
        kept = engine.decide(out, "writing-0000", "kept")
        assert kept.status == "kept" and kept.decision.pipeline_status == "rejected"
        assert await asyncio.to_thread(main, ["synth", "resume", str(out)]) == 0  # headless picks up the person's verdict
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kept"] == {"writing": 1} and summary["decided_by_person"] == {"kept": 1}
    catalog = load_default([])
    made = [e for e in catalog.environments if e.id.endswith("/writing-0000")]
    assert len(made) == 1 and len(made[0].events) == 4 and not catalog.problems
    installed = json.loads((out / "out" / "writing-0000.json").read_text())
    provenance = installed[0]["synth"]
    assert provenance["decided_by"] == "person"
    assert provenance["pipeline_verdict"] == {"pipeline_status": "rejected", "pipeline_tier": "writing",
                                              "pipeline_reason": "schema_invalid"}
    lines = (out / "out" / "agent_trainset.jsonl").read_text().splitlines()
    assert len(lines) == 1  # the one accepted proposal of the two whole batches

    app = Host(out, "writing-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    assert blocks[-1][2] == "done"
    assert "kept by a person (the pipeline: rejected, schema_invalid)" in blocks[-1][3]


async def test_a_person_fixes_the_failed_step_and_the_trace_goes_on_from_it(tmp_path: Path) -> None:
    """A rejected step (events not JSON) rewritten by a person: the run goes on from it, the
    pipeline keeps the trace, and the edit is named in the result and the trace."""
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=make_responder({"writing": "late"})) as server:
        assert await asyncio.to_thread(main, synth_argv(out, server.base_url, "--scene", "writing", "--out-only")) == 0
        pipeline, _manifest = pipeline_of(out)
        fixed = {"thoughts": "a person wrote these", "events": [{"event": "The user saves the draft.", "deltatime": 42}]}
        assert engine.edit_step(out, pipeline, "writing-0000", "events-3", fixed) == []  # nothing came after it
        assert await asyncio.to_thread(main, ["synth", "resume", str(out)]) == 0
    state = engine.read_item(out, "writing-0000")
    assert state.outcome.status == "kept" and state.outcome.edited_steps == ["events-3"]
    trace = json.loads((out / "out" / "writing-0000.json").read_text())
    assert len(trace) == 5 and trace[4]["observation"]["event"] == "The user saves the draft."
    assert float(trace[4]["observation"]["time"]) - float(trace[3]["observation"]["time"]) == 42.0
    assert trace[0]["synth"]["edited_by_person"] == ["events-3"] and "decided_by" not in trace[0]["synth"]

    app = Host(out, "writing-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    block = next(b for b in blocks if b[1] == "events-3")
    assert block[2] == "edited" and block[3].splitlines()[0] == (
        f"{clock_time(trace[4]['observation']['time'])}  +42s  The user saves the draft.")
    assert blocks[-1][3].startswith("kept · scene writing\n5 events")


async def test_the_reward_judges_verdicts_and_a_persons_rejection_are_drawn(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=make_responder()) as server:
        assert await asyncio.to_thread(main, synth_argv(out, server.base_url, "--scene", "coding", "--judge", "reward",
                                                        "--role", "judge=openai/rm", "--out-only")) == 0
    engine.decide(out, "coding-0000", "rejected")
    app = Host(out, "coding-0000")
    async with app.run_test(size=(120, 40)) as pilot:
        blocks = await shown(app, pilot)
    by_step = {s: body for _t, s, _st, body in blocks}
    assert by_step["verdict-1"] == "✓ accepted by the reward judge (openai/rm)\nAs the user, I decide."
    assert by_step["verdict-2"].startswith("✗ rejected by the reward judge")
    assert blocks[-1][2] == "rejected" and blocks[-1][3].splitlines() == [
        "rejected · person", "rejected by a person (the pipeline: kept)"]


# -- snapshots ---------------------------------------------------------------------------------

def _snapshot_app(folder: Path, theme: str) -> tuple[Host, object]:
    app = Host(folder, "coding-0000", theme=theme)

    async def run_before(pilot) -> None:
        await shown(app, pilot)
        block = next(b for b in app.query(StageBlock) if b.step == "events-1")
        block.focus()  # a person reading the first batch's events, as `e` would edit them
        await settle(pilot)

    return app, run_before


@pytest.mark.parametrize("theme", [pytest.param("proactive-dark", id="dark"),
                                   pytest.param("proactive-light", id="light")])
@pytest.mark.parametrize("size", [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")])
def test_snapshot_kept_trace(snap_compare, folder: Path, theme: str, size: tuple[int, int]) -> None:
    app, run_before = _snapshot_app(folder, theme)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", [pytest.param("proactive-dark", id="dark"),
                                   pytest.param("proactive-light", id="light")])
@pytest.mark.parametrize("size", [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")])
def test_snapshot_late_rejection(snap_compare, folder: Path, theme: str, size: tuple[int, int]) -> None:
    """The end of a rejected trace: the failed step and the outcome, which says it can be kept."""
    app = Host(folder, "writing-0000", theme=theme)

    async def run_before(pilot) -> None:
        await shown(app, pilot)
        app.query_one(ProactiveBenchStudioView).scroll_end(animate=False)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("theme", [pytest.param("proactive-dark", id="dark"),
                                   pytest.param("proactive-light", id="light")])
@pytest.mark.parametrize("size", [pytest.param((120, 40), id="120x40"), pytest.param((80, 24), id="80x24")])
def test_snapshot_under_way(snap_compare, folder: Path, theme: str, size: tuple[int, int]) -> None:
    """A trace being made: the first batch's events on the elapsed clock (no start known yet)
    and the call under way, live."""
    app = Host(folder, "coding-0000", live="propose-1", theme=theme, state=partial(folder, "propose-1"))

    async def run_before(pilot) -> None:
        await shown(app, pilot)
        app.query_one(ProactiveBenchStudioView).scroll_end(animate=False)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
