"""ProactiveEval's planning in a batch, and the paper's "without target" ablation (issue 30).

The paper judges target planning once per environment and guidance once per agreeableness level
(Table 4: 328 planning against 984 guidance judgements). In `eval proactiveeval` the three level
sessions of one environment, agent and repeat share one plan and its score, recorded as reused
with the session it came from, through resume and shards alike. Sessions run with scripted seats
(no model), counted per call purpose.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from engine_helpers import collect, make_session, scripted_agent, scripted_judge, scripted_user
from proactive_tui.core.run_record import fold
from proactive_tui.evalrun.folder import read_results
from proactive_tui.evalrun.plan import Shard, grid_points, plan_keys, select, shard_keys
from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings
from test_eval_batch import ENVS, Seats, plan_of, report_json, run

ONE_ENV = "proactiveeval/persuasion/fair/0"


class CountingSeats(Seats):
    """Scripted ProactiveEval seats whose calls are counted by purpose ("planning", "plan score",
    "guidance score", ...) over every session the batch builds."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__(stop_at)
        self.seated: list[dict] = []

    def __call__(self, spec, env, gateway):
        from proactive_tui.core.spec import build_session
        import os
        import signal

        self.started.append((spec.env_id, spec.roles.agent.seed))
        if self.stop_at is not None and len(self.started) == self.stop_at:
            os.kill(os.getpid(), signal.SIGTERM)
        seats = {"agent": scripted_agent(), "user": scripted_user(), "judge": scripted_judge()}
        self.seated.append(seats)
        return build_session(spec, env, gateway, seats=seats)

    def purposes(self) -> Counter:
        return Counter(call.purpose for seats in self.seated for seat in seats.values() for call in seat.calls)


def by_repeat(folder) -> dict[int, list]:
    out: dict[int, list] = {}
    for result in read_results(folder, transcripts=False):
        out.setdefault(result.key.repeat, []).append(result)
    return out


def test_a_batch_plans_once_per_environment_agent_and_repeat(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    seats = CountingSeats()
    assert run([ONE_ENV, "--agent", "m1", "--repeats", "2", "--max-turns", "1", "--no-store", "--concurrency", "3",
                "--out", str(out)], seats) == 0
    calls = seats.purposes()
    assert (calls["planning"], calls["plan score"], calls["guidance score"]) == (2, 2, 6)
    for repeat, results in by_repeat(out).items():
        assert sorted(r.key.settings["agreeableness"] for r in results) == ["high", "low", "medium"]
        planners = [r for r in results if r.record.section.planning.reused_from is None]
        assert len(planners) == 1, repeat
        source = planners[0].record
        assert source.section.planning.score_reused_from is None
        for r in results:
            planning = r.record.section.planning
            assert (planning.target, planning.sub_targets, planning.score) == (
                source.section.planning.target, source.section.planning.sub_targets, source.section.planning.score)
            if r.record.id != source.id:  # recorded as reused, with the session it came from
                assert planning.reused_from == source.id and planning.score_reused_from == source.id
                assert r.record.section.guidance is not None  # each level's guidance is its own
    note = "planning judged 2 times (4 sessions reused a plan's score), guidance 6"
    printed = capsys.readouterr().out
    assert note in printed
    planning = next(t for t in report_json(out)["families"]["proactiveeval"] if t["id"] == "planning")
    assert any(n.startswith(note) for n in planning["notes"])


def test_resume_reuses_the_plan_a_finished_session_made(tmp_path) -> None:
    out = tmp_path / "out"
    argv = [ONE_ENV, "--agent", "m1", "--max-turns", "1", "--no-store", "--concurrency", "1", "--out", str(out)]
    first = CountingSeats(stop_at=2)  # SIGTERM as the second level's session starts
    assert run(argv, first) == 143
    (done,) = read_results(out, transcripts=False)
    assert done.record.section.planning.reused_from is None and done.record.section.planning.score is not None
    again = CountingSeats()
    assert run([*argv, "--resume"], again) == 0
    calls = again.purposes()
    assert len(again.started) == 2 and calls["planning"] == 0 and calls["plan score"] == 0
    assert calls["guidance score"] == 2
    for result in read_results(out, transcripts=False):
        if result.record.id != done.record.id:
            assert result.record.section.planning.reused_from == done.record.id
            assert result.record.section.planning.score == done.record.section.planning.score


def test_a_shard_holds_every_level_of_an_environment_agent_and_repeat() -> None:
    envs = select(ENVS, ["proactiveeval/persuasion", "chronos/car-purchase"]).environments
    keys = plan_keys(envs, ["a", "b"], {"proactiveeval": grid_points({"agreeableness": ["low", "medium", "high"]})}, 2)
    for n in (2, 3, 7):
        slices = [shard_keys(keys, Shard(index=i, count=n)) for i in range(n)]
        for i, part in enumerate(slices):
            groups = {k.group for k in part}
            others = {k.group for j, s in enumerate(slices) if j != i for k in s}
            assert not groups & others
        sizes = [len(s) for s in slices]
        assert max(sizes) - min(sizes) <= 3  # within one group (three levels)


async def test_planning_alone_is_not_shared() -> None:
    """`run` and the playground: a session with no batch group plans on its own."""
    session = make_session(max_turns=1)
    record = fold(await collect(session))
    assert record.section.planning.reused_from is None and record.section.planning.score == 7


# -- the paper's "without target" ablation ---------------------------------------------------------


async def test_without_target_the_agent_guides_with_no_target_and_the_judges_keep_the_reference() -> None:
    agent, judge = scripted_agent(), scripted_judge()
    session = make_session(max_turns=2, agent=agent, judge=judge, without_target=True, planning=False)
    record = fold(await collect(session))
    target, steps = session.item.target, session.item.sub_target
    openings = [call for call in agent.calls if call.purpose == "agent message"]
    assert openings and all(target not in call.system and steps[0] not in call.system for call in openings)
    assert all(session.item.environment.trigger_factor in call.system for call in openings)
    judged = [call.messages[0]["content"] for call in judge.calls if call.purpose in ("guidance score", "turn 1 check")]
    assert judged and all(target in prompt for prompt in judged)
    assert record.settings["without_target"] is True
    from proactive_tui.families.proactiveeval.report import report

    scores = next(s for s in report(record) if s.id == "proactiveeval.scores")
    assert any(getattr(b, "label", "") == "Protocol:" and "without target" in b.text for b in scores.blocks)
    # with the target (the default), the agent's prompt holds it
    agent = scripted_agent()
    await collect(make_session(max_turns=1, agent=agent, planning=False))
    assert all(target in call.system for call in agent.calls if call.purpose == "agent message")


def test_without_target_is_an_off_by_default_setting_with_a_flag() -> None:
    assert ProactiveEvalSettings().without_target is False
    field = ProactiveEvalSettings.model_fields["without_target"]
    assert "without target" in (field.description or "") and "ablation" in field.description
    with pytest.raises(ValueError, match="own plan"):
        ProactiveEvalSettings(without_target=True, guide_with="own_plan")
    manifest, planned = plan_of([ONE_ENV, "--no-target", "--agreeableness", "low"])
    assert manifest.settings["proactiveeval"]["without_target"] is True
    assert planned[0].spec.settings["without_target"] is True
    _, planned = plan_of([ONE_ENV, "--agreeableness", "low"])
    assert planned[0].spec.settings["without_target"] is False
    assert json.dumps(planned[0].spec.settings)  # recorded as plain JSON
