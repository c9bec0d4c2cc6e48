"""ProactBench in a batch (`eval`) and headless (`run`): tables per model and per trigger type (pass
rate, weighted score, counts; SKIPPED shown, never counted), checked by hand; `eval` and `run`
end to end against the fake OpenAI server; two agents compared trigger by trigger."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from proactive_tui.cli.main import main
from proactive_tui.core import registry
from proactive_tui.core.run_record import RunRecord, Termination
from proactive_tui.evalrun.folder import SessionResult
from proactive_tui.evalrun.plan import SessionKey
from proactive_tui.families.proactbench.env import EvaluationResult, Rubric
from proactive_tui.families.proactbench.record import ProactBenchSection, TriggerRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from test_proactbench_fork import ENV_ID, proactbench_responder

OTHER = "proactbench/BP_PROFESSIONAL_01_Q__style4__531a542ff1714bb080d8f06f3cd2daff"


def trigger(index: int, kind: str, score: str | None) -> TriggerRecord:
    rubric = Rubric(type=kind, pass_criteria="p", partial_criteria="pa", fail_criteria="f")
    result = None if score is None else EvaluationResult(score=score, rationale="r", evidence="e")
    return TriggerRecord(index=index, turn=index, rubric=rubric, response="x", result=result, judge="j",
                         judged_by="judge", judged=True, problem="" if score else "no verdict")


def result(env_id: str, repeat: int, *scores: tuple[str, str | None], agent: str = "m") -> SessionResult:
    section = ProactBenchSection(triggers=[trigger(i, kind, score) for i, (kind, score) in enumerate(scores, 1)])
    record = RunRecord(format_version=2, id=f"{env_id}-{repeat}-{agent}", family="proactbench", env_id=env_id,
                       environment={}, mode="watch", human_seats=[], seats={}, settings={}, section=section,
                       termination=Termination(reason="completed"))
    key = SessionKey(family="proactbench", env_id=env_id, agent=agent, settings={}, repeat=repeat)
    return SessionResult(key=key, seed=repeat, record=record)


def rows(tables, table_id: str) -> dict:
    table = next(t for t in tables if t.id == table_id)
    return {(r.model, r.group): r for r in table.rows}


def test_the_per_type_table_by_hand() -> None:
    results = [
        result("a", 0, ("EMERGENT", "PASS"), ("CRITICAL", "PARTIAL"), ("RECOVERY", None)),
        result("a", 1, ("EMERGENT", "FAIL"), ("CRITICAL", "PARTIAL"), ("RECOVERY", "PASS")),
        result("b", 0, ("EMERGENT", "PASS"), ("CRITICAL", None), ("RECOVERY", "FAIL")),
        result("b", 1, ("EMERGENT", "PASS"), ("CRITICAL", "FAIL"), ("RECOVERY", "PARTIAL")),
    ]
    tables = registry.get("proactbench").batch.tables(results, 2)
    got = rows(tables, "types")
    emergent, critical, overall = got[("m", "EMERGENT")], got[("m", "CRITICAL")], got[("m", "OVERALL")]
    # EMERGENT: repeat 0 PASS, PASS -> 1.0; repeat 1 FAIL, PASS -> 0.5
    assert emergent.values["pass_rate"] == 0.75 and math.isclose(emergent.std["pass_rate"], math.sqrt(0.125))
    assert (emergent.values["pass"], emergent.values["fail"], emergent.values["skipped"]) == (3, 1, 0)
    # CRITICAL: repeat 0 PARTIAL (+1 SKIPPED) -> 0.5; repeat 1 PARTIAL, FAIL -> 0.25; never a SKIPPED in a rate
    assert critical.values["weighted"] == 0.375 and critical.values["pass_rate"] == 0.0
    assert critical.values["skipped"] == 1 and critical.values["partial"] == 2
    # OVERALL: repeat 0: PASS PARTIAL PASS FAIL -> 2.5/4; repeat 1: FAIL PARTIAL PASS PASS FAIL PARTIAL -> 3/6
    assert math.isclose(overall.values["weighted"], (2.5 / 4 + 3 / 6) / 2)
    assert overall.values["skipped"] == 2 and "interval" in overall.model_dump() and overall.interval["weighted"]
    consistency = rows(tables, "consistency")
    assert consistency[("m", "OVERALL")].values["tasks"] == 6  # (dialogue, trigger) pairs with a verdict
    assert registry.get("proactbench").batch.groups(results[0]) == ["EMERGENT", "CRITICAL", "RECOVERY", "OVERALL"]


def test_two_agents_compare_trigger_by_trigger() -> None:
    from proactive_tui.services.compare import turn_table

    a = result("a", 0, ("EMERGENT", "PASS"), ("CRITICAL", "FAIL"), agent="a1").record
    b = result("a", 0, ("EMERGENT", "PARTIAL"), ("CRITICAL", None), agent="a2").record
    table = turn_table([a, b])
    assert [(r.turn, r.values) for r in table.rows] == [(1, [1.0, 0.5]), (2, [0.0, None])]
    assert table.rows[0].differences == [-0.5] and table.rows[1].differences == [None]  # SKIPPED is no score
    assert table.finals == [0.5, 0.5] and table.unit == "turn"


def test_eval_prints_tables_per_model_and_trigger_type(tmp_path: Path, capsys) -> None:
    out = tmp_path / "batch"
    with FakeOpenAIServer(responder=proactbench_responder) as server:
        code = main(["eval", ENV_ID, OTHER, "--agent", "openai/a1", "--agent", "openai/a2", "--judge", "openai/judge-m",
                     "--api-base", server.base_url, "--max-triggers", "2", "--out", str(out), "--no-store"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "ProactBench: per trigger type" in printed and "weighted score" in printed
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    table = next(t for t in report["families"]["proactbench"] if t["id"] == "types")
    got = {(r["model"], r["group"]): r["values"] for r in table["rows"]}
    # each dialogue's first two triggers are EMERGENT and CRITICAL, judged PARTIAL by the fake judge
    for model in ("openai/a1", "openai/a2"):
        assert got[(model, "EMERGENT")]["partial"] == 2 and got[(model, "EMERGENT")]["weighted"] == 0.5
        assert got[(model, "OVERALL")]["partial"] == 4 and got[(model, "OVERALL")]["skipped"] == 0
    assert (model, "RECOVERY") not in got  # not run: no row, rather than a row of zeros


def test_headless_run_prints_triggers_verdicts_and_the_type_table(tmp_path: Path) -> None:
    out = tmp_path / "record.json"
    with FakeOpenAIServer(responder=proactbench_responder) as server:
        done = subprocess.run([sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--api-base", server.base_url,
                               "--agent", "openai/agent-m", "--judge", "openai/judge-m", "--max-triggers", "2",
                               "--out", str(out), "--no-store"], cwd=ROOT, capture_output=True, text=True, timeout=180,
                              env={**os.environ, "COLUMNS": "160"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "protocol: offline" in text
    assert "[trigger 1 · turn 1 · EMERGENT]" in text and "[trigger 2 · turn 3 · CRITICAL]" in text
    assert "[turn 2] recorded" in text and "user (recorded):" in text
    assert "reply at turn 1: check SMART first" in text
    assert "⤷ trigger 1 (turn 1): PARTIAL by judge (openai/judge-m)" in text
    assert "Per trigger type (SKIPPED not counted)" in text and "OVERALL" in text and "termination: completed" in text
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["settings"]["protocol"] == "offline" and record["models"]["judge"]["temperature"] == 0.7


def test_headless_run_rejects_a_bad_protocol_flag() -> None:
    done = subprocess.run([sys.executable, "-m", "proactive_tui", "run", ENV_ID, "--protocol", "sideways"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "--protocol" in done.stderr
