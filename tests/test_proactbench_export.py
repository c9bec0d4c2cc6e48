"""The `proactbench` export: upstream's evaluation output files from run records.

Records are folded from the hand-built event logs of `proactbench_events` (the shipped sample
dialogue `BP_PROFESSIONAL_01_Q__style4__...`, its four triggers judged PASS, PARTIAL, FAIL and one
failed judge call; and a three-turn online session). What is checked: the golden files (results
rows and metrics, offline and online), the row field by field against the sample dialogue and
upstream's offline output (`evaluation_result` per trigger, `original_assistant_response`, per-type
`trigger_stats`, `token_usage` per seat), that SKIPPED is never counted in any rate, that the
export loads back with `--envs` as dialogue rows, the `export` command, and the HTML viewer.

Regenerate the golden files after a deliberate change with
`UPDATE_GOLDEN=1 pytest tests/test_proactbench_export.py` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ROOT
from proactbench_events import (
    AGENT_MODEL, ENV_ID, JUDGE_FAILURE, JUDGE_MODEL, OFFLINE_SESSION, ONLINE_SESSION, PLANNER_MODEL, SAMPLE_UID,
    USER_AGENT_MODEL, offline_events, online_events, online_plan, reply_text, user_text,
)
from proactive_tui.cli.main import main
from proactive_tui.core.events import UsageInfo, UsageRecorded
from proactive_tui.core.run_record import RunRecord, fold
from proactive_tui.envs import load_paths
from proactive_tui.export import load_formats
from proactive_tui.export.registry import ExportError, export

GOLDEN = ROOT / "tests" / "golden" / "export" / "proactbench"
SAMPLE_ROW = json.loads((ROOT / "sample_envs" / "proactbench" / "final_dialogues_sample.jsonl").read_text(encoding="utf-8").splitlines()[1])
AGENT_ID = "openai__agent-under-test"
RESULTS = f"{AGENT_ID}_proactivity_bench_results.jsonl"
METRICS = f"{AGENT_ID}_proactivity_bench_metrics.json"
ONLINE_RESULTS = f"{AGENT_ID}_proactivity_bench_online_results.jsonl"
ONLINE_METRICS = f"{AGENT_ID}_proactivity_bench_online_metrics.json"
ZERO = {"PASS": 0, "PARTIAL": 0, "FAIL": 0, "SKIPPED": 0}


def tally(**counts: int) -> dict[str, int]:
    return {**ZERO, **counts}


@pytest.fixture
def offline() -> RunRecord:
    return fold(offline_events())


@pytest.fixture
def online() -> RunRecord:
    return fold(online_events())


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check_golden(produced: Path) -> None:
    golden = GOLDEN / produced.name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(produced.read_bytes())
    assert golden.exists(), f"missing golden file {golden}; run with UPDATE_GOLDEN=1"
    assert produced.read_text(encoding="utf-8") == golden.read_text(encoding="utf-8"), f"{produced.name} differs from its golden file"


def test_the_files_match_their_golden_files(offline: RunRecord, online: RunRecord, tmp_path: Path) -> None:
    load_formats()
    written = export([offline, online], "proactbench", tmp_path / "out")
    assert sorted(p.name for p in written) == sorted([RESULTS, METRICS, ONLINE_RESULTS, ONLINE_METRICS])
    for path in written:
        check_golden(path)


def test_an_offline_row_field_by_field(offline: RunRecord, tmp_path: Path) -> None:
    load_formats()
    export([offline], "proactbench", tmp_path)
    [row] = rows(tmp_path / RESULTS)
    assert list(row) == ["blueprint_id", "scenario_id", "unique_id_eval", "uuid", "category_key", "style_combination_index",
                         "evaluated_model", "source_evaluated_model", "num_trigger_points", "trigger_stats",
                         "trigger_points", "turn_records", "token_usage", "meta"]
    for key in ("blueprint_id", "scenario_id", "uuid", "category_key", "style_combination_index"):
        assert row[key] == SAMPLE_ROW[key], key
    assert row["unique_id_eval"] == f"{SAMPLE_UID}@{OFFLINE_SESSION}"
    assert row["evaluated_model"] == AGENT_MODEL
    assert row["source_evaluated_model"] == SAMPLE_ROW["evaluated_model"] == "gemini-2.5-pro"
    assert row["num_trigger_points"] == 4
    # upstream's tally: the types the row has, in the order met; the failed judge call is SKIPPED
    assert row["trigger_stats"] == {"EMERGENT": tally(PASS=1), "CRITICAL": tally(PARTIAL=1, FAIL=1),
                                    "RECOVERY": tally(SKIPPED=1)}
    assert list(row["trigger_stats"]) == ["EMERGENT", "CRITICAL", "RECOVERY"]
    turns = [t["turn"] for t in SAMPLE_ROW["trigger_points"]]
    assert [t["turn"] for t in row["trigger_points"]] == turns == [1, 4, 6, 8]
    for point, source in zip(row["trigger_points"], SAMPLE_ROW["trigger_points"]):
        assert list(point) == ["turn", "evaluation_rubric", "evaluation_result"]
        assert point["evaluation_rubric"] == source["evaluation_rubric"]  # the Planner's rubric, unchanged
    for point, score in zip(row["trigger_points"][:3], ("PASS", "PARTIAL", "FAIL")):
        result = point["evaluation_result"]
        assert list(result) == ["status", "score", "rationale", "evidence"]
        assert result["status"] == "EVALUATED" and result["score"] == score
        assert result["rationale"].startswith(score.title()) and result["evidence"] in reply_text(point["turn"])
    assert row["trigger_points"][3]["evaluation_result"] is None  # upstream's failed judge: no result, kept
    recorded = {t["turn"]: t for t in SAMPLE_ROW["turn_records"]}
    assert [list(t) for t in row["turn_records"]] == [["turn", "user_message", "assistant_response",
                                                       "original_assistant_response"]] * 4
    for record in row["turn_records"]:
        turn = record["turn"]
        assert record["user_message"] == recorded[turn]["user_message"]
        assert record["assistant_response"] == reply_text(turn)  # the agent's reply, not the curation model's
        assert record["original_assistant_response"] == recorded[turn]["assistant_response"]
        assert record["original_assistant_response"] != record["assistant_response"]
    # 4 agent calls of 100+20 tokens; 3 judge calls of 300+40 (the failed one reported none)
    assert row["token_usage"] == {"assistant": {"prompt_tokens": 400, "completion_tokens": 80, "calls": 4},
                                  "judge": {"prompt_tokens": 900, "completion_tokens": 120, "calls": 3}}
    meta = row["meta"]
    assert meta["session_id"] == OFFLINE_SESSION and meta["env_id"] == ENV_ID and meta["protocol"] == "offline"
    assert meta["models"]["judge"]["model"] == JUDGE_MODEL
    assert [v["counted"] for v in meta["verdicts"]] == ["PASS", "PARTIAL", "FAIL", "SKIPPED"]
    assert meta["verdicts"][3]["problem"] == JUDGE_FAILURE and meta["verdicts"][0]["problem"] == ""
    assert {v["judged_by"] for v in meta["verdicts"]} == {"judge"}


def test_the_metrics_file_is_upstreams(offline: RunRecord, tmp_path: Path) -> None:
    load_formats()
    second = fold(offline_events(session_id="pbexport0003", verdicts=("PASS", "PASS", "PASS", "PASS")))
    export([offline, second], "proactbench", tmp_path)
    assert [r["unique_id_eval"] for r in rows(tmp_path / RESULTS)] == [f"{SAMPLE_UID}@{OFFLINE_SESSION}",
                                                                       f"{SAMPLE_UID}@pbexport0003"]
    data = json.loads((tmp_path / METRICS).read_text(encoding="utf-8"))
    assert list(data) == ["aggregate_trigger_stats", "metrics", "token_usage", "meta"]
    assert data["aggregate_trigger_stats"] == {"EMERGENT": tally(PASS=2), "CRITICAL": tally(PASS=2, PARTIAL=1, FAIL=1),
                                               "RECOVERY": tally(PASS=1, SKIPPED=1)}
    m = data["metrics"]
    assert list(m) == [f"eval/proactivity_{kind}_{stat}" for kind in ("emergent", "critical", "recovery")
                       for stat in ("pass_rate", "partial_rate", "weighted_score", "total")] + [
        "eval/proactivity_overall_pass_rate", "eval/proactivity_overall_weighted_score", "eval/proactivity_total_dialogues"]
    assert m["eval/proactivity_emergent_pass_rate"] == 1.0 and m["eval/proactivity_emergent_total"] == 2.0
    assert m["eval/proactivity_critical_pass_rate"] == 0.5 and m["eval/proactivity_critical_partial_rate"] == 0.25
    assert m["eval/proactivity_critical_weighted_score"] == pytest.approx((2 + 0.5) / 4)
    assert m["eval/proactivity_recovery_total"] == 1.0 and m["eval/proactivity_recovery_pass_rate"] == 1.0  # SKIPPED left out
    assert m["eval/proactivity_overall_pass_rate"] == pytest.approx(5 / 7)
    assert m["eval/proactivity_overall_weighted_score"] == pytest.approx(5.5 / 7)
    assert m["eval/proactivity_total_dialogues"] == 2.0
    assert data["token_usage"]["judge"] == {"mean_prompt_tokens_per_conversation": (900 + 1200) / 2,
                                            "mean_completion_tokens_per_conversation": (120 + 160) / 2,
                                            "mean_calls_per_conversation": 3.5, "total_prompt_tokens": 2100,
                                            "total_completion_tokens": 280}
    assert data["meta"] == {"protocol": "offline", "evaluated_model": AGENT_MODEL, "judges": [JUDGE_MODEL],
                            "deviations": [], "sessions": [OFFLINE_SESSION, "pbexport0003"]}


def test_a_deviation_from_upstreams_protocol_is_named(tmp_path: Path) -> None:
    """Numbers from a run that is not upstream's offline evaluation say so beside them."""
    load_formats()
    events = offline_events(session_id="pbdev0000001")
    events[0].settings = {**events[0].settings, "max_triggers": 2}
    export([fold(events)], "proactbench", tmp_path)
    [row] = rows(tmp_path / RESULTS)
    assert row["meta"]["deviations"] == ["first 2 trigger points only (upstream: all)"]
    data = json.loads((tmp_path / METRICS).read_text(encoding="utf-8"))
    assert data["meta"]["deviations"] == ["first 2 trigger points only (upstream: all)"]


def test_skipped_is_never_counted(tmp_path: Path) -> None:
    """A failed judge call adds to SKIPPED only: the rates are those of the three judged triggers,
    and a session with every judge call failed has no rate (None), never 0."""
    load_formats()
    with_skip = fold(offline_events(session_id="pbskip000001", verdicts=("PASS", "PARTIAL", "FAIL", None)))
    without = fold(offline_events(session_id="pbskip000002", verdicts=("PASS", "PARTIAL", "FAIL")))
    none_judged = fold(offline_events(session_id="pbskip000003", verdicts=(None, None, None, None)))
    got = {}
    for record in (with_skip, without, none_judged):
        export([record], "proactbench", tmp_path / record.id)
        got[record.id] = json.loads((tmp_path / record.id / METRICS).read_text(encoding="utf-8"))
    assert got["pbskip000001"]["metrics"] == got["pbskip000002"]["metrics"]
    assert got["pbskip000001"]["aggregate_trigger_stats"]["RECOVERY"] == tally(SKIPPED=1)
    assert got["pbskip000002"]["aggregate_trigger_stats"]["RECOVERY"] == ZERO
    assert got["pbskip000001"]["metrics"]["eval/proactivity_overall_weighted_score"] == pytest.approx(0.5)
    empty = got["pbskip000003"]["metrics"]
    assert empty["eval/proactivity_overall_pass_rate"] is None and empty["eval/proactivity_overall_weighted_score"] is None
    assert all(empty[f"eval/proactivity_{k}_total"] == 0.0 for k in ("emergent", "critical", "recovery"))
    [row] = rows(tmp_path / "pbskip000003" / RESULTS)
    assert [p["evaluation_result"] for p in row["trigger_points"]] == [None] * 4  # every reply kept, none scored
    assert [t["assistant_response"] for t in row["turn_records"]] == [reply_text(t) for t in (1, 4, 6, 8)]


def test_a_trigger_the_agent_never_answered_is_left_out(offline: RunRecord, tmp_path: Path) -> None:
    """Cut off after the second trigger opened: upstream leaves out a trigger with no reply; a
    reply given but never judged is kept as SKIPPED."""
    load_formats()
    events = offline_events()
    opened = [i for i, e in enumerate(events) if e.type == "proactbench.trigger_opened"]
    answered = next(i for i, e in enumerate(events) if i > opened[2] and e.type == "message_done")
    cut = fold(events[:answered + 1])  # third trigger: opened and answered, not judged
    export([cut], "proactbench", tmp_path / "a")
    [row] = rows(tmp_path / "a" / RESULTS)
    assert [p["turn"] for p in row["trigger_points"]] == [1, 4, 6]
    assert row["trigger_points"][2]["evaluation_result"] is None
    assert row["turn_records"][2]["assistant_response"] == reply_text(6)
    assert row["meta"]["verdicts"][2]["problem"] == "the session ended before this reply was judged"
    assert row["trigger_stats"] == {"EMERGENT": tally(PASS=1), "CRITICAL": tally(PARTIAL=1, SKIPPED=1)}
    unanswered = fold(events[:opened[2] + 1])  # third trigger opened, no reply yet
    export([unanswered], "proactbench", tmp_path / "b")
    [row] = rows(tmp_path / "b" / RESULTS)
    assert [p["turn"] for p in row["trigger_points"]] == [1, 4] and row["num_trigger_points"] == 2


def test_an_online_row_keeps_its_generated_turns_and_plans(online: RunRecord, tmp_path: Path) -> None:
    load_formats()
    export([online], "proactbench", tmp_path)
    assert not (tmp_path / RESULTS).exists()
    [row] = rows(tmp_path / ONLINE_RESULTS)
    assert list(row) == ["blueprint_id", "scenario_id", "unique_id_eval", "uuid", "category_key", "style_combination_index",
                         "evaluated_model", "num_turns_completed", "trigger_stats", "trigger_points", "turn_records",
                         "token_usage", "meta"]
    assert row["unique_id_eval"] == f"{SAMPLE_UID}@{ONLINE_SESSION}" and row["evaluated_model"] == AGENT_MODEL
    assert row["num_turns_completed"] == 3
    assert row["turn_records"] == [{"turn": t, "planner": online_plan(t).model_dump(mode="json"), "user_message": user_text(t),
                                    "assistant_response": reply_text(t)} for t in (1, 2, 3)]
    assert [(p["turn"], p["evaluation_rubric"]["type"]) for p in row["trigger_points"]] == [(1, "EMERGENT"), (3, "RECOVERY")]
    assert row["trigger_points"][0]["evaluation_rubric"] == online_plan(1).evaluation_rubric.model_dump(mode="json")
    assert row["trigger_points"][0]["evaluation_result"]["score"] == "PARTIAL"
    assert row["trigger_points"][1]["evaluation_result"] is None  # the score-only call failed
    assert row["trigger_stats"] == {"EMERGENT": tally(PARTIAL=1), "RECOVERY": tally(SKIPPED=1)}
    assert row["token_usage"] == {"planner": {"prompt_tokens": 1500, "completion_tokens": 180, "calls": 3},
                                  "user_agent": {"prompt_tokens": 600, "completion_tokens": 90, "calls": 3},
                                  "assistant": {"prompt_tokens": 300, "completion_tokens": 60, "calls": 3}}
    assert {v["judged_by"] for v in row["meta"]["verdicts"]} == {"user_agent"}
    assert row["meta"]["models"]["judge"]["model"] == PLANNER_MODEL and row["meta"]["protocol"] == "online"
    assert row["meta"]["deviations"][0].startswith("online protocol")
    data = json.loads((tmp_path / ONLINE_METRICS).read_text(encoding="utf-8"))
    assert list(data["token_usage"]) == ["planner", "user_agent", "assistant"]
    assert data["meta"]["judges"] == [USER_AGENT_MODEL]
    assert data["metrics"]["eval/proactivity_overall_weighted_score"] == 0.5  # the one PARTIAL; SKIPPED left out


def test_the_export_loads_back_as_dialogue_rows(offline: RunRecord, online: RunRecord, tmp_path: Path, capsys) -> None:
    """`--envs <folder>` reads the results rows as dialogues (new ids beside the sample's), and
    the metrics files beside them are not taken for environment files."""
    load_formats()
    out = tmp_path / "exported"
    export([offline, online], "proactbench", out)
    loaded = load_paths([out])
    assert loaded.problems == []
    by_id = {env.id: env for env in loaded.environments}
    assert sorted(by_id) == [f"{ENV_ID}@{OFFLINE_SESSION}", f"{ENV_ID}@{ONLINE_SESSION}"]
    back = by_id[f"{ENV_ID}@{OFFLINE_SESSION}"].dialogue
    assert [t.evaluation_result.counted if t.evaluation_result else "SKIPPED" for t in back.trigger_points] == \
        ["PASS", "PARTIAL", "FAIL", "SKIPPED"]
    assert back.model_extra["source_evaluated_model"] == "gemini-2.5-pro"
    assert back.turn(8).assistant_response == reply_text(8)
    assert back.turn(8).model_extra["original_assistant_response"] == SAMPLE_ROW["turn_records"][7]["assistant_response"]
    online_back = by_id[f"{ENV_ID}@{ONLINE_SESSION}"].dialogue
    assert online_back.turn(2).planner.tactical_order.intent == "intent of turn 2"
    assert online_back.num_turns_completed == 3
    # and beside the shipped samples, as `--envs` adds it to them
    both = load_paths([ROOT / "sample_envs" / "proactbench", out])
    assert both.problems == [] and {ENV_ID, f"{ENV_ID}@{OFFLINE_SESSION}"} <= {e.id for e in both.environments}
    assert main(["envs", "validate", str(out)]) == 0
    capsys.readouterr()
    assert main(["envs", "show", f"{ENV_ID}@{OFFLINE_SESSION}", "--envs", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["dialogue"]["unique_id_eval"] == f"{SAMPLE_UID}@{OFFLINE_SESSION}"


def test_the_format_takes_only_proactbench_and_writes_a_folder(offline: RunRecord, tmp_path: Path) -> None:
    formats = load_formats()
    assert formats["proactbench"].out_is_dir and formats["proactbench"].families == ("proactbench",)
    other = offline.model_copy(update={"family": "chronos", "id": "chronos00001"})
    with pytest.raises(ExportError, match="takes proactbench sessions; not: chronos00001"):
        export([other], "proactbench", tmp_path / "x")
    a_file = tmp_path / "file.jsonl"
    a_file.write_text("", encoding="utf-8")
    with pytest.raises(ExportError, match="is a file; the proactbench format writes a folder"):
        export([offline], "proactbench", a_file)
    broken = offline.model_copy(update={"environment": {"dialogue": {"blueprint_id": "x"}}})
    with pytest.raises(ExportError, match=f"session {OFFLINE_SESSION}: environment.dialogue.scenario_id"):
        export([broken], "proactbench", tmp_path / "y")


def test_usage_per_seat_counts_only_calls_that_reported_tokens() -> None:
    """`Totals.by_seat`: a call with no tokens (a person's turn, a provider that reports none)
    adds no call, as upstream counts its `token_usage`; the overall totals are unchanged by it."""
    events = offline_events()
    record = fold(events)
    silent = UsageRecorded(seat="judge", model=JUDGE_MODEL, purpose="trigger verdict", usage=UsageInfo())
    again = fold(events[:-1] + [silent, events[-1]])
    assert again.totals.by_seat == record.totals.by_seat
    assert record.totals.by_seat["judge"].calls == 3 and record.totals.by_seat["agent"].calls == 4
    assert record.totals.prompt_tokens == sum(s.prompt_tokens for s in record.totals.by_seat.values())
    assert "user" not in record.totals.by_seat  # offline: the user's messages are the recorded ones
    assert RunRecord.model_validate_json(record.model_dump_json()).totals.by_seat == record.totals.by_seat


def test_the_export_command_writes_the_files(isolated_dirs: Path, tmp_path: Path, capsys) -> None:
    from proactive_tui.store import SessionRecorder, Store
    from proactive_tui.store.db import default_path

    with Store(default_path()) as store:
        recorder = SessionRecorder(store)
        for event in offline_events():
            recorder.handle(event)
        recorder.close()
    assert main(["export", OFFLINE_SESSION, "--format", "proactbench", "--out", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "cli" / RESULTS), str(tmp_path / "cli" / METRICS)]
    [row] = rows(tmp_path / "cli" / RESULTS)
    assert row["trigger_stats"]["RECOVERY"] == tally(SKIPPED=1) and row["token_usage"]["judge"]["calls"] == 3


def test_a_session_is_viewable_in_the_html_viewer(offline: RunRecord, tmp_path: Path) -> None:
    """The `html` export (the viewer) takes a ProactBench session like the others: its page embeds
    the run record, the triggers with their verdicts and the agent's replies, as data."""
    from proactive_tui.export.viewer import read_payload

    load_formats()
    [page] = export([offline], "html", tmp_path / "s.html")
    payload = read_payload(page.read_text(encoding="utf-8"))
    session = payload["session"]
    assert session["view"]["family"] == "proactbench" and session["view"]["id"] == OFFLINE_SESSION
    triggers = session["record"]["section"]["triggers"]
    assert [(t["turn"], (t["result"] or {}).get("score")) for t in triggers] == [(1, "PASS"), (4, "PARTIAL"), (6, "FAIL"),
                                                                                 (8, None)]
    assert [m["content"] for m in session["record"]["messages"]] == [reply_text(t) for t in (1, 4, 6, 8)]
    assert "<b>[not markup]</b>" not in page.read_text(encoding="utf-8")  # escaped inside the data, never markup
    assert any(JUDGE_FAILURE in f["message"] for f in session["view"]["failures"])
