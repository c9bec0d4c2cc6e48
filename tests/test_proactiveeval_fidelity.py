"""ProactiveEval against the paper's protocol (docs/protocols.md, ProactiveEval):

- with the agent's own plan, the turn checks and the guidance judge judge the dialogue against that
  plan, and the record says so;
- the plan judge gets in-context graded examples (ours, invented);
- the guidance headline is the judge's one overall score, never the mean of its dimensions;
- `eval proactiveeval...` (the batch command) runs every environment at all three agreeableness
  levels, and its report has the per-level tables.

Everything runs against scripted seats or the local fake OpenAI server; nothing reaches the internet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conftest import ROOT, SAMPLE_DIRS
from engine_helpers import collect, make_session, sample_env, scripted_judge
from proactive_tui.core.participants import ScriptedParticipant
from proactive_tui.core.run_record import RunRecord, Termination, fold
from proactive_tui.envs import load_paths
from proactive_tui.export.rich_view import family_sections, render_sections
from proactive_tui.families.proactiveeval import prompts
from proactive_tui.families.proactiveeval.events import GuidanceScore
from proactive_tui.families.proactiveeval.export import dataset_record
from proactive_tui.families.proactiveeval.judges import GuidanceJudgement, PlanJudgement, TurnVerdict
from proactive_tui.families.proactiveeval.record import PlanningRecord, ProactiveEvalSection
from proactive_tui.families.proactiveeval.report import report
from proactive_tui.store.queries import headline
from proactive_tui.testing.fake_openai import FakeOpenAIServer

ENV_ID = "proactiveeval/persuasion/fair/0"
PLAN = {"target": "OWNPLAN get the user to try one lunchtime stroll this week",
        "sub_targets": ["OWNSTEP ask how lunch breaks go", "OWNSTEP propose one short stroll"]}


def schema_name(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("json_schema", {}).get("name")


def prompt_of(request) -> str:
    return "\n".join(str(m.get("content")) for m in request.body.get("messages", []))


def responder(body: dict) -> str:
    name = schema_name(body)
    if name == "PlanDraft":
        return json.dumps(PLAN)
    if name == "PlanJudgement":
        return json.dumps({"reasoning": "fine", "score": 6})
    if name == "TurnVerdict":  # never reached; claims more steps than the plan has
        return json.dumps({"reasoning": "not yet", "target_reached": False, "covered_steps": [1, 2, 3, 4]})
    if name == "GuidanceJudgement":
        return json.dumps({"reasoning": "ok", "overall": 5, "effectiveness": 6, "personalization": 6, "tone": 6,
                           "engagement": 6, "naturalness": 6})
    return "Shall we talk about your day?"


def cli(*args: str, server: FakeOpenAIServer) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args, "--api-base", server.base_url,
                           "--agent", "openai/agent-m", "--user", "openai/user-m", "--judge", "openai/judge-m"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def as_result(record: RunRecord, level: str, repeat: int = 0):
    """A finished session as the batch report reads it (`evalrun.folder.SessionResult`)."""
    from proactive_tui.evalrun.folder import SessionResult
    from proactive_tui.evalrun.plan import SessionKey

    key = SessionKey(family="proactiveeval", env_id=record.env_id, agent="m", settings={"agreeableness": level},
                     repeat=repeat)
    return SessionResult(key=key, seed=repeat, record=record)


def batch_row(results: list, table_id: str, group: str = "") -> dict:
    """One row of ProactiveEval's batch tables (`BatchPart.tables`), agent "m"."""
    from proactive_tui.core import registry

    tables = registry.get("proactiveeval").batch.tables(results, 1)
    table = next(t for t in tables if t.id == table_id)
    return next(r for r in table.rows if r.group == group).model_dump()


def batch_report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())


def report_rows(report: dict, table_id: str) -> list[dict]:
    return next(t for t in report["families"]["proactiveeval"] if t["id"] == table_id)["rows"]


# -- 1. judged against the plan the dialogue used ------------------------------------------------


def test_own_plan_session_is_judged_against_the_plan(tmp_path: Path) -> None:
    reference = sample_env(ENV_ID).item
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=responder) as server:
        proc = cli("run", ENV_ID, "--own-plan", "--max-turns", "2", "--out", str(out), server=server)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    judged = [r for r in requests if schema_name(r.body) in ("TurnVerdict", "GuidanceJudgement")]
    assert {schema_name(r.body) for r in judged} == {"TurnVerdict", "GuidanceJudgement"}
    for request in judged:
        text = prompt_of(request)
        assert PLAN["target"] in text and all(step in text for step in PLAN["sub_targets"])
        assert reference.target not in text
        assert not any(step in text for step in reference.sub_target)
    # the plan itself is still scored against the reference (task A)
    plan_judge = [r for r in requests if schema_name(r.body) == "PlanJudgement"]
    assert plan_judge and reference.target in prompt_of(plan_judge[0]) and PLAN["target"] in prompt_of(plan_judge[0])

    record = RunRecord.model_validate_json(out.read_text())
    assert record.settings["guide_with"] == "own_plan"
    assert [c.judged_against for c in record.section.turn_checks] == ["own_plan", "own_plan"]
    assert record.section.guidance.judged_against == "own_plan"
    # step numbers index the plan's two steps, not the reference's four
    assert record.section.turn_checks[-1].cumulative_sub_targets == [1, 2]
    scores = next(s for s in report(record) if s.id == "proactiveeval.scores")
    rows = {row[0]: row[1] for row in scores.blocks[0].rows}
    assert rows["Sub-targets covered (own plan)"] == "2/2"
    against = [b for b in scores.blocks if getattr(b, "label", "") == "Judged against:"]
    assert against and against[0].text == f"the agent's own plan: {PLAN['target']}"
    assert dataset_record(record)["scores"]["judged_against"] == "own_plan"
    assert "against own plan" in proc.stdout and "checklist 2/2" in proc.stdout


async def test_reference_guidance_is_judged_against_the_reference() -> None:
    judge = scripted_judge()
    record = fold(await collect(make_session(max_turns=1, judge=judge)))
    reference = sample_env().item
    judged = [c.messages[0]["content"] for c in judge.calls if "monitor a conversation" in c.messages[0]["content"]
              or "guided a user" in c.messages[0]["content"]]
    assert len(judged) == 2 and all(reference.target in text for text in judged)
    assert "help pick a thing" not in "".join(judged)  # the scripted agent's own plan
    assert record.section.turn_checks[0].judged_against == "reference"
    assert record.section.guidance.judged_against == "reference"


async def test_own_plan_without_a_plan_falls_back_to_the_reference() -> None:
    judge = scripted_judge()
    record = fold(await collect(make_session(max_turns=1, planning=False, guide_with="own_plan", judge=judge)))
    assert record.section.guidance.judged_against == "reference"
    assert all(sample_env().item.target in c.messages[0]["content"] for c in judge.calls)


def test_records_from_before_the_field_read_as_judged_against_the_reference() -> None:
    legacy = json.loads((ROOT / "tests" / "golden" / "export" / "session.json").read_text())
    for check in legacy["section"]["turn_checks"]:
        check.pop("judged_against", None)
    legacy["section"]["guidance"].pop("judged_against", None)
    record = RunRecord.model_validate(legacy)
    assert record.section.guidance.judged_against == "reference"
    assert dataset_record(record)["scores"]["judged_against"] == "reference"


# -- 2. the plan judge's in-context examples ------------------------------------------------------


async def test_plan_judge_prompt_holds_the_in_context_examples() -> None:
    judge = scripted_judge()
    await collect(make_session(max_turns=1, judge=judge))
    (call,) = [c for c in judge.calls if "planned a proactive intervention" in c.messages[0]["content"]]
    text = call.messages[0]["content"]
    assert len(prompts.PLAN_JUDGE_EXAMPLES) >= 2
    for example in prompts.PLAN_JUDGE_EXAMPLES:
        for key in ("user_information", "trigger_factor", "ref_target", "target", "reasoning"):
            assert example[key] in text
        assert json.dumps({"reasoning": example["reasoning"], "score": example["score"]}, ensure_ascii=False) in text
    # the examples come before the plan being graded, and show more than one point of the scale
    assert text.index(prompts.PLAN_JUDGE_EXAMPLES[-1]["reasoning"]) < text.index("Assistant's target: help pick a thing")
    assert len({example["score"] for example in prompts.PLAN_JUDGE_EXAMPLES}) >= 2


def test_plan_judge_examples_are_invented_not_from_the_samples() -> None:
    samples = load_paths([SAMPLE_DIRS["proactiveeval"]]).filtered(family="proactiveeval")
    sample_text = " ".join(e.item.model_dump_json() for e in samples)
    for example in prompts.PLAN_JUDGE_EXAMPLES:
        name = example["user_information"].split(",")[0]
        assert name not in sample_text
        assert example["ref_target"] not in sample_text


# -- 3. the headline is the single overall ------------------------------------------------------


def judge_overall_apart_from_dimensions() -> ScriptedParticipant:
    """Dimensions averaging 9.2, an overall of 4: any averaging shows."""

    def structured(request, schema):
        if schema is PlanJudgement:
            return PlanJudgement(reasoning="ok", score=6)
        if schema is TurnVerdict:
            return TurnVerdict(reasoning="no", target_reached=False, covered_steps=[1])
        if schema is GuidanceJudgement:
            return GuidanceJudgement(reasoning="warm but never steers", overall=4, effectiveness=9, personalization=9,
                                     tone=10, engagement=9, naturalness=9)
        raise AssertionError(schema)

    return ScriptedParticipant([], structured=structured, label="judge-x")


async def test_headline_is_the_judges_overall_not_the_dimension_mean() -> None:
    record = fold(await collect(make_session(max_turns=2, judge=judge_overall_apart_from_dimensions())))
    assert record.section.guidance.overall == 4
    # scores in the run record: the overall first and a headline; dimensions are not headlines
    first = record.scores[0]
    assert (first.name, first.value, first.display, first.headline) == ("overall", 4, "4/10", True)
    dims = [s for s in record.scores if s.name in ("effectiveness", "personalization", "tone", "engagement", "naturalness")]
    assert len(dims) == 5 and not any(s.headline for s in dims)
    assert headline(record)["overall"] == "4/10"
    # the report (and so the headless summary and every document export) leads with the overall
    scores = next(s for s in report(record) if s.id == "proactiveeval.scores")
    table = scores.blocks[0]
    assert table.rows[0][:2] == ["Guidance (overall)", "4/10"]
    assert all("(diagnostic)" in row[0] for row in table.rows if row[0].split()[0].lower() in
               ("effectiveness", "personalization", "tone", "engagement", "naturalness"))
    console = Console(width=160, record=True)
    for part in render_sections(family_sections(record, summary_only=True)):
        console.print(part)
    summary = console.export_text()
    assert "Guidance (overall)" in summary and "4/10" in summary and "9.2" not in summary
    assert dataset_record(record)["scores"]["guidance"]["overall"] == 4
    # the batch report's guidance mean is the mean of overall scores
    assert batch_row([as_result(record, "medium")], "guidance")["values"]["overall"] == 4.0


def test_guidance_judge_asks_for_one_overall_from_detailed_standards() -> None:
    text = prompts.guidance_judge_prompt("u", "t", "target", ["a"], "Assistant: hi")
    for standard, example in prompts.GUIDANCE_STANDARDS.values():
        assert standard in text and example in text
    for band, words in prompts.GUIDANCE_BANDS:
        assert band in text and words in text
    assert "ONE overall" in text and "do not average" in text
    # reasoning first, then the overall, then the diagnostics (the structured schema's order)
    assert list(GuidanceJudgement.model_fields)[:2] == ["reasoning", "overall"]


async def test_final_scores_panel_leads_with_the_overall() -> None:
    from textual.app import App

    from proactive_tui.families.proactiveeval.events import GuidanceScore
    from proactive_tui.families.proactiveeval.ui.final_scores import FinalScores

    class One(App):
        def compose(self):
            yield FinalScores(id="s")

    app = One()
    async with app.run_test(size=(60, 20)) as pilot:
        panel = app.query_one(FinalScores)
        panel.show(GuidanceScore(reasoning="r", overall=4, effectiveness=9, personalization=9, tone=10, engagement=9,
                                 naturalness=9, judge_model="judge-x", judged_against="own_plan"))
        await pilot.pause()
        console = Console(width=60, record=True)
        console.print(panel.query_one("#scores-table").content)
        lines = [line.strip() for line in console.export_text().splitlines() if line.strip()]
        assert lines[0].split() == ["overall", "4/10"] and lines[1] == "diagnostics:"
        assert panel.border_title == "Guidance score (vs own plan)"


# -- 4. every environment at every agreeableness level ---------------------------------------------


def test_eval_runs_every_environment_at_all_three_levels(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    envs = [ENV_ID, "proactiveeval/recommendation/fair/0"]
    with FakeOpenAIServer(responder=responder) as server:
        proc = cli("eval", *envs, "--agreeableness", "all", "--max-turns", "1", "--out", str(out), server=server)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    from proactive_tui.evalrun.folder import read_results

    results = read_results(out, transcripts=False)
    pairs = sorted((r.key.env_id, r.key.settings["agreeableness"]) for r in results)
    assert pairs == sorted((e, level) for e in envs for level in ("low", "medium", "high"))
    assert all(r.record.section.guidance.overall == 5 and r.record.section.planning.score == 6 for r in results)
    # each level reached the simulated user's prompt, once per environment
    user_systems = [m["content"] for r in requests if schema_name(r.body) is None
                    for m in r.body.get("messages", []) if m.get("role") == "system" and "role-playing" in m["content"]]
    for level in ("low", "medium", "high"):
        assert sum(prompts.AGREEABLENESS[level] in s for s in user_systems) == len(envs)
    # the level is the sweep's: a row per level, with a column per domain, and per level over all domains
    report = batch_report(out)
    assert report["sweeps"]["proactiveeval"] == {"agreeableness": ["low", "medium", "high"]}
    for table_id in ("guidance_by_level", "planning_by_level"):
        rows = report_rows(report, table_id)
        assert [r["group"] for r in rows] == ["low", "medium", "high"]
        assert all(set(r["values"]) == {"persuasion", "recommendation", "overall"} for r in rows)
    assert all(r["values"]["persuasion"] == 5.0 for r in report_rows(report, "guidance_by_level"))
    assert [(r["group"], r["values"]["sessions"]) for r in report_rows(report, "agreeableness")] == [
        ("low", 2), ("medium", 2), ("high", 2)]
    for title in ("by agreeableness level", "dialogue guidance per agreeableness level",
                  "target planning per agreeableness level"):
        assert f"ProactiveEval: {title}" in proc.stdout
    # each session is stored like any other, at its level
    from proactive_tui.store import load_record, open_store

    with open_store() as store:
        for r in results:
            record = load_record(store, r.record.id)
            assert record.settings["agreeableness"] == r.key.settings["agreeableness"] and record.env_id == r.key.env_id


def test_eval_one_level_and_bad_selection(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        proc = cli("eval", ENV_ID, "--agreeableness", "low", "--max-turns", "1", "--no-planning",
                   "--no-store", "--out", str(tmp_path / "o"), server=server)
        missing = cli("eval", "proactiveeval/nowhere", "--out", str(tmp_path / "m"), server=server)
    assert proc.returncode == 0, proc.stderr
    report = batch_report(tmp_path / "o")
    assert report["sweeps"]["proactiveeval"] == {"agreeableness": ["low"]}
    [low] = report_rows(report, "agreeableness")
    assert low["group"] == "low" and low["values"]["plan"] is None and low["values"]["plan_n"] == 0
    assert [r["group"] for r in report_rows(report, "guidance_by_level")] == ["low"]
    assert missing.returncode == 1 and "no environment matches proactiveeval/nowhere" in missing.stderr


def test_the_earlier_command_runs_through_the_batch(tmp_path: Path) -> None:
    """`eval proactiveeval --agent M --agreeableness low` (the earlier per-family command's
    spelling) is the batch of the whole family at that level, with per-model limits and a folder."""
    from proactive_tui.cli.main import build_parser

    args = build_parser().parse_args(["eval", "proactiveeval", "--agent", "openai/x", "--api-base", "http://h/v1",
                                      "--max-turns", "1", "--agreeableness", "low", "--out", str(tmp_path / "p")])
    assert args.selectors == ["proactiveeval"] and args.agreeableness == "low" and args.max_turns == 1


@pytest.mark.parametrize("scored", [True, False])
def test_tables_mean_only_scored_sessions(scored: bool) -> None:
    def session(level: str, domain: str, guidance: int | None, repeat: int = 0):
        g = None if guidance is None else GuidanceScore(reasoning="r", overall=guidance, effectiveness=1,
                                                        personalization=1, tone=1, engagement=1, naturalness=1,
                                                        judge_model="j")
        record = RunRecord(format_version=2, id=f"s-{level}-{repeat}-{guidance}", family="proactiveeval",
                           env_id=f"proactiveeval/{domain}/fair/{repeat}", environment={"domain": domain},
                           mode="watch", human_seats=[], seats={}, settings={"agreeableness": level},
                           section=ProactiveEvalSection(planning=PlanningRecord(score=None), guidance=g),
                           termination=Termination(reason="max_turns"))
        return as_result(record, level)

    results = [session("low", "persuasion", 4), session("low", "persuasion", 8 if scored else None, repeat=1),
               session("high", "persuasion", 6)]
    assert [r["group"] for r in [batch_row(results, "agreeableness", lv) for lv in ("low", "high")]] == ["low", "high"]
    low = batch_row(results, "agreeableness", "low")["values"]
    assert low["sessions"] == 2 and low["guidance"] == (6.0 if scored else 4.0) and low["guidance_n"] == (2 if scored else 1)
    assert low["plan"] is None and low["plan_n"] == 0
    assert batch_row(results, "guidance_by_level", "low")["values"]["persuasion"] == (6.0 if scored else 4.0)
    assert batch_row(results, "guidance", "")["values"]["overall"] == (6.0 if scored else 5.0)


# -- --seed reaches every model call ------------------------------------------------------------


def test_seed_reaches_every_model_call(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        proc = cli("run", ENV_ID, "--seed", "7", "--max-turns", "1", "--out", str(tmp_path / "a.json"), server=server)
        seeded = [r.body for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert seeded and all(body.get("seed") == 7 for body in seeded), [b.get("seed") for b in seeded]
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["settings"]["seed"] == 7
    with FakeOpenAIServer(responder=responder) as server:
        proc = cli("run", ENV_ID, "--max-turns", "1", "--out", str(tmp_path / "b.json"), server=server)
        unseeded = [r.body for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert unseeded and not any("seed" in body for body in unseeded)
