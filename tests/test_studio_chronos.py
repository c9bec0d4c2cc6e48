"""Chronos in the studio: the item view drawn from a real run folder (made by the real CLI against
the fake server, tests/synth_chronos_fake.py), and what the studio asks of the pipeline: a
person's edit of a draft re-made downstream on its branch only, and a person keeping an item
the pipeline rejected for a branch that ended wrong."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from synth_chronos_fake import ChronosFake, background, role_args
from ui_helpers import settle
from proactive_tui.cli.main import main
from proactive_tui.synth import engine
from proactive_tui.testing.fake_openai import FakeOpenAIServer, schema_name

FATES = {"house_hunting": "lowagent", "ticket_booking": "noconfirm"}
LOW = "house_hunting-complex-0000"
"""Kept; the agent's answer to each branch's last state scored 50 first (dropped), then 90."""
NOCONFIRM = "ticket_booking-simple-0000"
"""Rejected (critic_user): the positive branch's user never confirms the offer (a rule, no critic)."""


def synth_argv(out: Path, base_url: str, templates: tuple[str, ...], *extra: str) -> list[str]:
    return ["synth", "chronos", *[x for t in templates for x in ("--template", t)], "--n", "1", "--seed", "3",
            "--out", str(out), *role_args(base_url), "--out-only", *extra]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run folder, as `proactive-tui synth chronos` makes it (both tiers of two templates)."""
    out = tmp_path_factory.mktemp("studio") / "run"
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROACTIVE_TUI_CONFIG", str(home / "config.toml"))
        mp.setenv("PROACTIVE_TUI_DATA", str(home / "data"))
        with FakeOpenAIServer(responder=ChronosFake(FATES)) as server:
            assert main(synth_argv(out, server.base_url, tuple(FATES))) == 0
    return out


def pipeline_of(folder: Path) -> Any:
    from proactive_tui.core import registry

    return registry.get("chronos").generate.pipeline(engine.read_manifest(folder).options)


def host(folder: Path, item: str, state: engine.ItemState | None = None, live: str | None = None,
         theme: str | None = None) -> Any:
    """A tiny app holding the family's view (as the studio screen would), with a footer."""
    from textual.app import App
    from textual.widgets import Footer

    from proactive_tui.core import registry
    from proactive_tui.paths import builtin_themes_dir
    from proactive_tui.ui.themes import load_themes

    view_class = registry.get("chronos").screen("studio_view")

    class Host(App):
        def compose(self):
            yield view_class(pipeline_of(folder), id="item")
            yield Footer()

        def on_mount(self) -> None:
            for t in load_themes([builtin_themes_dir()])[0]:
                self.register_theme(t)
            self.theme = theme or "proactive-dark"
            view = self.query_one("#item")
            view.show(state or engine.read_item(folder, item), live)
            view.focus()

    return Host()


def blocks(app: Any) -> list[Any]:
    from proactive_tui.ui.studio.view import StageBlock

    return list(app.query_one("#item").query(StageBlock))


def text(block: Any) -> str:
    return block.title + "\n" + block.body.plain


def branch_blocks(app: Any, branch: str) -> list[Any]:
    return [b for b in blocks(app) if getattr(b, "branch", None) == branch]


# -- the view ------------------------------------------------------------------------------------

async def test_the_card_both_branches_scores_and_the_verdict_of_a_kept_item(folder: Path) -> None:
    app = host(folder, LOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = blocks(app)
        card = shown[0]
        assert card.step == "background" and card.state == "done"
        body = card.body.plain
        assert "Sam, 30, teacher. FATE-lowagent complex" in body and "colour = blue" in body
        assert "revealed at turn 1" in body and "Intention shift" in body and "bigger one now" in body
        assert "small blue one, 99" in body and "blue one, 95 ENDING MATCH" in body  # the shift's state, an ending
        for branch in ("positive", "negative"):
            mine = branch_blocks(app, branch)
            assert mine[0].title == f"{branch.capitalize()} branch" and mine[1].title == "User · opening"
            utterances = [b for b in mine if b.step is not None]
            steps = [b.step for b in utterances]
            # the dialogue grows in the order the session played it, each utterance its kept draft
            from proactive_tui.families.chronos.synth import chronos_step_rank

            assert steps == sorted(steps, key=chronos_step_rank) and f"{branch}-t01-agent-a1" == steps[0]
            assert all("critic 90/100" in b.title for b in utterances if b.step.split("-")[2] == "agent")
            assert all("critic 90/100" in b.title for b in utterances if b.step.split("-")[2] == "user")
            # the answer to the branch's last state was drafted twice: the kept draft is the second, the
            # first is one key away
            redrafted = [b for b in utterances if "dropped" in b.body.plain]
            assert [b.step.split("-", 2)[2] for b in redrafted] == ["agent-a2"]
            assert "draft 2" in redrafted[0].title and "(1 dropped draft: r shows)" in redrafted[0].body.plain
            assert "ENDING" in text(mine[mine.index(redrafted[0]) - 1])  # it answers the scan of the ending state
            assert any(b.title.startswith("Monitor scan") and "-observation" in b.classes for b in mine)
            assert mine[-1].title == f"{branch.capitalize()} ending · as it must" and mine[-1].state == "done"
        assert any("FOLLOW_UP / IN_PROGRESS" in text(b) for b in branch_blocks(app, "positive"))
        assert any("Thank you" in text(b) for b in branch_blocks(app, "positive"))
        assert shown[-1].title == "Verdict" and "kept as complex" in shown[-1].body.plain
        # wide: the branches sit side by side
        columns = list(app.query(".-branch-column"))
        assert len(columns) == 2 and columns[0].region.x < columns[1].region.x
        assert columns[0].region.y == columns[1].region.y


async def test_r_shows_the_dropped_drafts_with_their_score(folder: Path) -> None:
    app = host(folder, LOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not [b for b in blocks(app) if b.state == "rejected"]
        # narrow: the branches stack
        assert not list(app.query(".-branch-column"))
        positive_end = [b.region.y for b in branch_blocks(app, "positive")]
        negative = [b.region.y for b in branch_blocks(app, "negative")]
        assert max(positive_end) < min(negative)
        assert "r" in app.screen.active_bindings  # offered in the footer while the view has the focus
        await pilot.press("r")
        await settle(pilot)
        dropped = [b for b in blocks(app) if b.state == "rejected"]
        assert [b.branch for b in dropped] == ["positive", "negative"]
        for b in dropped:
            assert b.step.endswith("-agent-a1") and "score 50/100 (below 75)" in b.body.plain
            assert b.title.startswith("Dropped agent draft")
        # the dropped draft stands just before the one that was kept in its place
        positive = branch_blocks(app, "positive")
        at = positive.index(dropped[0])
        assert positive[at + 1].step == dropped[0].step.replace("-a1", "-a2")
        dropped[0].focus()
        await pilot.press("r")
        await settle(pilot)
        assert not [b for b in blocks(app) if b.state == "rejected"] and app.focused is not None
        await pilot.press("r")  # the focus stayed in the view: the key works again
        await settle(pilot)
        assert len([b for b in blocks(app) if b.state == "rejected"]) == 2
        # widened, the branches move side by side, the dropped drafts still shown
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert len(app.query(".-branch-column")) == 2 and len([b for b in blocks(app) if b.state == "rejected"]) == 2


async def test_a_rejected_item_names_the_rule_of_each_dropped_draft_and_the_reason(folder: Path) -> None:
    app = host(folder, NOCONFIRM)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        positive = branch_blocks(app, "positive")
        stuck = [b for b in positive if b.state == "rejected" and b.step]
        assert len(stuck) == 1 and "no user draft kept: 3 dropped" in stuck[0].body.plain
        assert "not_a_confirmation" in stuck[0].body.plain and stuck[0].step.endswith("-user-a3")
        assert positive[-1].title == "Positive ending · not as it must" and "stopped" in positive[-1].body.plain
        assert branch_blocks(app, "negative")[-1].title == "Negative ending · as it must"
        verdict = blocks(app)[-1]
        assert verdict.state == "rejected" and "rejected: critic_user" in verdict.body.plain
        await pilot.press("r")
        await settle(pilot)
        dropped = [b for b in branch_blocks(app, "positive") if b.state == "rejected" and b.step]
        assert [b.step.rsplit("-", 1)[1] for b in dropped] == ["a1", "a2", "a3"]
        assert all("not_a_confirmation (reads as" in b.body.plain and "Hmm, let me think" in b.body.plain
                   for b in dropped)


async def test_a_run_under_way_draws_the_live_step_and_what_the_files_say(folder: Path) -> None:
    """No result yet: the items's steps up to the user's second draft of the offer's reply; the
    first draft has no critic and a later draft exists, so a rule refused it."""
    whole = engine.read_item(folder, NOCONFIRM)
    refused = sorted(s for s in whole.steps if s.startswith("positive-") and "-user-a1" in s and "critic" not in s)[-1]
    turn = refused.split("-")[1]
    second = f"positive-{turn}-user-a2"
    cut = {k: v for k, v in whole.steps.items() if not k.startswith("positive-") or k <= second}
    cut.pop(f"positive-{turn}-user-a3", None)
    state = engine.ItemState(item=NOCONFIRM, steps={k: v for k, v in cut.items() if k != second})
    app = host(folder, NOCONFIRM, state=state, live=second)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        live = [b for b in blocks(app) if b.state == "live"]
        assert [(b.step, b.title) for b in live] == [(second, f"User · turn {int(turn[1:])} · draft 2")]
        assert not [b for b in blocks(app) if b.title.startswith("Verdict") or "ending" in b.title]
        await pilot.press("r")
        await settle(pilot)
        dropped = [b for b in blocks(app) if b.state == "rejected"]
        assert [b.step for b in dropped] == [refused] and "refused by the protocol's rule" in dropped[0].body.plain
        # a draft on disk whose critic is being called: the utterance is live, its score to come
        drafted = engine.ItemState(item=NOCONFIRM, steps={k: v for k, v in whole.steps.items()
                                                          if k != "positive-t01-agent-a1-critic" and
                                                          (not k.startswith("positive-") or k <= "positive-t01-agent-a1")})
        app.query_one("#item").show(drafted, "positive-t01-agent-a1-critic")
        await settle(pilot)
        live = [b for b in blocks(app) if b.state == "live"]
        assert [(b.step, b.title) for b in live] == [("positive-t01-agent-a1", "Agent · turn 1 · critic scoring…")]
        # the background being called: the card is the live block, bound to its step
        app.query_one("#item").show(engine.ItemState(item=NOCONFIRM, steps={}), "background")
        await settle(pilot)
        assert [(b.step, b.state) for b in blocks(app)] == [("background", "live")]


@pytest.fixture
def decided(tmp_path: Path) -> Path:
    """The rejected item, a user message of its negative branch rewritten by a person and the
    item run again (headless: `synth resume`), then kept by a person."""
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake({"ticket_booking": "noconfirm"})) as server:
        assert main(synth_argv(out, server.base_url, ("ticket_booking",), "--tier", "simple")) == 0
        engine.edit_step(out, pipeline_of(out), NOCONFIRM, "negative-t03-user-a1", {"text": "It must be blue."})
        assert main(["synth", "resume", str(out)]) == 0
    engine.decide(out, NOCONFIRM, "kept")
    return out


@pytest.fixture
def assumed(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake({"car_purchase": "assumption_ii"})) as server:
        assert main(synth_argv(out, server.base_url, ("car_purchase",), "--tier", "simple")) == 0
    return out


async def test_a_persons_decision_is_shown_as_theirs(decided: Path) -> None:
    app = host(decided, NOCONFIRM)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        verdict = blocks(app)[-1]
        assert verdict.title == "Verdict · decided by a person" and verdict.state == "edited"
        assert "The pipeline: rejected — critic_user" in verdict.body.plain
        assert "A person decided: kept (simple)" in verdict.body.plain
        assert "rewritten by a person: negative-t03-user-a1" in verdict.body.plain
        edited = [b for b in blocks(app) if b.state == "edited" and b.step]
        assert [(b.step, b.body.plain) for b in edited] == [("negative-t03-user-a1", "It must be blue.")]
        assert "(edited by a person)" in str(edited[0].render().renderables[0])


async def test_a_scenario_refused_by_an_assumption_shows_no_branch(assumed: Path) -> None:
    app = host(assumed, "car_purchase-simple-0000")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        shown = blocks(app)
        assert [b.title for b in shown] == ["Scenario card · simple", "Verdict"]
        assert shown[0].state == "rejected" and shown[0].step == "background"
        assert "rejected: assumption_ii" in shown[1].body.plain and "already meets the needs" in shown[1].body.plain


async def test_a_live_step_of_one_branch_leaves_the_other_branch_awaiting_its_critic(folder: Path) -> None:
    """Both branches are played at once: the negative's last draft, its critic not yet called
    while the positive's step is live, is not taken for a draft a rule refused."""
    whole = engine.read_item(folder, LOW)
    steps = {k: v for k, v in whole.steps.items() if k != "negative-t02-agent-a1-critic"
             and (not k.startswith("negative-") or k <= "negative-t02-agent-a1")
             and (not k.startswith("positive-") or k < "positive-t03")}
    app = host(folder, LOW, state=engine.ItemState(item=LOW, steps=steps), live="positive-t03-user-a1")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        negative = branch_blocks(app, "negative")
        assert negative[-1].step == "negative-t02-agent-a1" and negative[-1].state == "pending"
        assert "awaiting its critic" in negative[-1].title
        assert branch_blocks(app, "positive")[-1].state == "live"


# -- the pipeline under the studio ----------------------------------------------------------------

def prepared(out: Path, base_url: str, templates: tuple[str, ...]) -> Any:
    from proactive_tui.cli.main import build_parser
    from proactive_tui.synth.setup import prepare

    args = build_parser().parse_args(synth_argv(out, base_url, templates, "--tier", "simple"))
    return prepare(args)


def run_items(prep: Any, items: list[str] | None = None, on_event: Any = None) -> None:
    from proactive_tui.llm.gateway import Gateway

    run = engine.Run(prep.folder, prep.roles, Gateway(stream_replies=False), prep.manifest.seed, 4, on_event=on_event)
    asyncio.run(engine.run_pipeline(prep.pipeline, prep.manifest, run, items))
    engine.finish(prep.folder, prep.pipeline, prep.manifest)


def test_an_edited_draft_remakes_its_branch_after_it_and_leaves_the_other(tmp_path: Path) -> None:
    item = "car_purchase-simple-0000"
    with FakeOpenAIServer(responder=ChronosFake()) as server:
        prep = prepared(tmp_path / "run", server.base_url, ("car_purchase",))
        asked: list[str] = []
        run_items(prep, on_event=lambda e: asked.append(e.step) if e.kind == "call_start" else None)
        from proactive_tui.families.chronos.synth import chronos_step_rank

        # the order the sessions asked for each branch's steps is the order their names rank
        # (what `downstream` relies on): the user's message of turn t before the agent's turn t
        for branch in ("positive", "negative"):
            mine = [s for s in asked if s.startswith(branch)]
            assert mine == sorted(mine, key=chronos_step_rank) and len(mine) > 10
            users = [s for s in mine if "-user-" in s and "critic" not in s]
            assert users and all(mine.index(u) < mine.index(u.replace("-user-", "-agent-")) for u in users)
        base = engine.item_dir(prep.folder, item)
        before = {p.name: p.read_bytes() for p in base.glob("*.json")}
        user = sorted(n for n in before if n.startswith("positive-") and "-user-a1.json" in n)[0].removesuffix(".json")
        turn = int(user.split("-")[1][1:])
        removed = engine.edit_step(prep.folder, prep.pipeline, item, user, {"text": "Oh, and it must be blue, please."})

        # what the session made after the edited utterance on its branch, its critic included: nothing else
        assert f"{user}-critic" in removed and f"positive-t{turn:02d}-agent-a1" in removed
        assert all(n.startswith("positive-") and chronos_step_rank(n) > chronos_step_rank(user) for n in removed)
        assert sorted(removed) == sorted(n[:-5] for n in before if n.startswith("positive-") and n != "result.json"
                                         and chronos_step_rank(n[:-5]) > chronos_step_rank(user))
        sent = len(server.requests)
        run_items(prep, [item])
        again = server.requests[sent:]
    assert len(again) == len(removed)  # only the removed steps were asked again
    assert {schema_name(r.body) for r in again} <= {"UserCritique", "AgentReply", "AgentCritique", "UserUtterance"}
    after = {p.name: p.read_bytes() for p in base.glob("*.json")}
    assert {n: b for n, b in after.items() if n.startswith(("negative-", "background"))} == {
        n: b for n, b in before.items() if n.startswith(("negative-", "background"))}
    edited = json.loads(after[f"{user}.json"])
    assert edited["edited"]["by"] == "person" and edited["output"]["text"] == "Oh, and it must be blue, please."
    assert edited["edited"]["original"]["text"] == "Also, it has to be blue."
    answer = json.loads(after[f"positive-t{turn:02d}-agent-a1.json"])
    assert answer["input"][-1]["content"] == "Oh, and it must be blue, please."  # the agent read the person's words
    result = json.loads(after["result.json"])
    assert result["status"] == "kept" and result["edited_steps"] == [user]
    scenario = json.loads((prep.folder / "out" / "car_purchase" / f"{item}.json").read_text())
    assert scenario["synth"]["edited_by_person"] == [user] and "decided_by" not in scenario["synth"]


class LongFake(ChronosFake):
    """Twenty-two monitored states: more scans than the turn limit (20) allows, so each branch
    is cut by it: played well, utterance by utterance, but not to the ending its branch must have."""

    def __call__(self, request: dict[str, Any]) -> str:
        if schema_name(request) == "SimpleBackground":
            draft = background("ok", "simple")
            start = datetime.fromisoformat("2026-03-02T09:00")
            draft["timeline"] = [{"time": "2026-03-02T10:00", "listings": ["red one, 90"], "meets_needs": False,
                                  "note": ""}] + [
                {"time": (start + timedelta(days=7 * k)).isoformat(timespec="minutes"),
                 "listings": [f"grey one no. {k}"], "meets_needs": False, "note": ""} for k in range(1, 22)]
            end = (start + timedelta(days=7 * 22)).isoformat(timespec="minutes")
            draft["positive_ending"]["time"] = draft["negative_ending"]["time"] = end
            return json.dumps(draft)
        return super().__call__(request)


def test_keeping_a_branch_rejection_installs_a_loadable_scenario_naming_the_person(tmp_path: Path) -> None:
    from proactive_tui.envs import load_default
    from proactive_tui.paths import user_envs_dir

    item = "car_purchase-simple-0000"
    with FakeOpenAIServer(responder=LongFake()) as server:
        prep = prepared(tmp_path / "run", server.base_url, ("car_purchase",))
        run_items(prep)
    rejected = engine.read_outcomes(prep.folder)[0]
    assert rejected.status == "rejected" and rejected.reason == "branch_positive" and "turn_limit" in rejected.detail
    record = rejected.record
    assert rejected.tier == "simple" and rejected.group == "car_purchase"
    assert set(record["dialogues"]) == {"positive", "negative"}
    assert record["endings"]["positive"]["reason"] == "turn_limit"
    assert record["scenario"]["branches"] and record["drafts"]
    assert not engine.install(prep.folder, prep.manifest, user_envs_dir())  # nothing kept, nothing installed
    kept = engine.decide(prep.folder, item, "kept")
    assert kept.status == "kept" and kept.tier == "simple" and kept.decision.pipeline_reason == "branch_positive"
    summary = engine.finish(prep.folder, prep.pipeline, prep.manifest)
    assert summary.kept == {"simple": 1} and summary.decided_by_person == {"kept": 1}
    assert engine.install(prep.folder, prep.manifest, user_envs_dir()) is not None
    catalog = load_default([])
    made = sorted(e.id for e in catalog.environments if "/synth-" in e.id)
    assert not catalog.problems and [i.rsplit("/", 1)[1] for i in made] == ["negative", "positive"]
    env = catalog.get(made[1])
    assert env.scenario.synth["decided_by"] == "person"
    assert env.scenario.synth["pipeline_verdict"] == {"pipeline_status": "rejected", "pipeline_tier": "simple",
                                                      "pipeline_reason": "branch_positive"}
    assert made[1] == prep.pipeline.installed_id(kept, prep.manifest.run_name)
    lines = [json.loads(x) for x in (prep.folder / "out" / "chronos-dialogues.jsonl").read_text().splitlines()]
    assert [x["branch"] for x in lines] == ["positive", "negative"]
    assert all(x["synth"]["decided_by"] == "person" for x in lines)


def test_a_critic_failure_after_the_background_carries_the_scenario(tmp_path: Path) -> None:
    """badagent: no agent draft passes at turn 1 on either branch; the scenario was checked, so the
    rejection carries it (no dialogue reached an ending), and a person may keep it."""
    with FakeOpenAIServer(responder=ChronosFake({"job_search": "badagent"})) as server:
        prep = prepared(tmp_path / "run", server.base_url, ("job_search",))
        run_items(prep)
    outcome = engine.read_outcomes(prep.folder)[0]
    assert outcome.reason == "critic_agent" and outcome.record is not None
    assert outcome.record["dialogues"] == {} and outcome.record["endings"] == {}
    assert outcome.record["scenario"]["synth"]["drafts"] == 6  # three per branch, each scored 50
    engine.decide(prep.folder, outcome.item, "kept")
    engine.finish(prep.folder, prep.pipeline, prep.manifest)
    assert (prep.folder / "out" / "job_search" / f"{outcome.item}.json").is_file()
    assert not (prep.folder / "out" / "chronos-dialogues.jsonl").exists()  # no cut dialogue as training data


# -- snapshots ------------------------------------------------------------------------------------

@pytest.mark.parametrize("theme", ["proactive-dark", "proactive-light"])
@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
@pytest.mark.parametrize("scene", ["card", "dropped"])
def test_snapshot_chronos_studio_view(snap_compare, folder: Path, size, theme, scene) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot)
        if scene == "dropped":
            await pilot.press("r")
            await settle(pilot)
            dropped = [b for b in blocks(pilot.app) if b.state == "rejected"]
            dropped[0].focus()
            await settle(pilot)
            pilot.app.query_one("#item").scroll_to_widget(dropped[0], animate=False, top=True)
            await settle(pilot)

    assert snap_compare(host(folder, LOW, theme=theme), terminal_size=size, run_before=run_before)
