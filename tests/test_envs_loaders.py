"""Loaders for the three families on good data, the real ProactiveBench set, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REAL_TRACES, SAMPLE_DIRS
from proactive_tui.envs import load_paths
from proactive_tui.families.chronos.env import ChronosEnv
from proactive_tui.families.proactivebench.env import ProactiveBenchEnv
from proactive_tui.families.proactiveeval.env import ProactiveEvalEnv

PE_ITEM = {
    "environment": {"user_information": "Mara, 41, a beekeeper in Ghent.", "trigger_factor": "She searched for hive scales."},
    "target": "Recommend a hive scale that fits her apiary",
    "sub_target": ["Ask about hive count", "Compare two scales", "Suggest one"],
    "topic": "Beekeeping",
}
PB_EVENT = {"observation": {"time": "1767225600.0", "event": "The user opens 'budget.xlsx'."}, "task_status": False}
CHRONOS = {
    "title": "Cheap city car",
    "scenario": "car_purchase",
    "branch": "positive",
    "tier": "simple",
    "persona": "Ola, 25, student.",
    "initial_need": "Find me a cheap small car.",
    "intention": "buy a used small car",
    "constraints": [{"key": "budget", "value": "under 5000", "reveal_turn": 1}],
    "start_time": "2026-01-01T09:00",
    "timeline": [
        {"time": "2026-01-03T09:00", "listings": ["Polo 2012, 6200"], "meets_needs": False},
        {"time": "2026-01-05T09:00", "listings": ["Fiesta 2011, 4800"], "meets_needs": True},
    ],
    "turn_limit": 16,
}


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def only_problem(root: Path):
    result = load_paths([root])
    assert len(result.problems) == 1, [p.render() for p in result.problems]
    return result.problems[0]


# --- good data -------------------------------------------------------------------------------


def test_proactiveeval_upstream_layout_ids_domain_tier(tmp_path: Path) -> None:
    write(tmp_path / "recommendation" / "fair.json", [PE_ITEM, PE_ITEM | {"extra_key": 1}])
    write(tmp_path / "recommendation" / "hard.json", [PE_ITEM])
    write(tmp_path / "recommendation" / "eval.json", [PE_ITEM, PE_ITEM, PE_ITEM])  # union: must not double count
    write(tmp_path / "ambiguous_instruction" / "fair.json", [PE_ITEM])  # alternate spelling
    write(tmp_path / "long-term_follow_up" / "eval.json", [PE_ITEM])  # eval alone is read
    result = load_paths([tmp_path])
    assert result.problems == []
    ids = [e.id for e in result.environments]
    assert ids == [
        "proactiveeval/ambigious_instruction/fair/0",
        "proactiveeval/long-term_follow_up/eval/0",
        "proactiveeval/recommendation/fair/0",
        "proactiveeval/recommendation/fair/1",
        "proactiveeval/recommendation/hard/0",
    ]
    env = result.get("proactiveeval/recommendation/fair/1")
    assert isinstance(env, ProactiveEvalEnv)
    assert env.domain == "recommendation" and env.tier == "fair"
    assert env.item.model_extra == {"extra_key": 1}
    assert env.title == "Beekeeping"


def test_proactiveeval_topic_object_is_tolerated(tmp_path: Path) -> None:
    write(tmp_path / "persuasion" / "fair.json", [PE_ITEM | {"topic": {"level1": "Health", "level2": "Sleep"}}])
    env = load_paths([tmp_path]).environments[0]
    assert env.title == "Health / Sleep"


def test_real_proactivebench_test_set_loads_all_233_events() -> None:
    result = load_paths([REAL_TRACES])
    assert result.problems == []
    assert len(result.environments) == 12
    assert sum(len(e.events) for e in result.environments) == 233
    code = result.get("proactivebench/code_11")
    assert isinstance(code, ProactiveBenchEnv)
    assert code.theme == "Coding" and set(code.splits) == {"real_average", "real_coding"}
    assert result.get("proactivebench/writing_16").theme == "Writing"
    # annotations are kept for export
    assert "task_status" in code.events[0].model_extra


def test_chronos_scenario_loads(tmp_path: Path) -> None:
    write(tmp_path / "chronos" / "city-car.json", CHRONOS)
    env = load_paths([tmp_path]).environments[0]
    assert isinstance(env, ChronosEnv)
    assert env.id == "chronos/city-car" and env.tier == "simple" and env.domain == "car_purchase"
    assert [c.key for c in env.scenario.constraints_revealed_by(0)] == []
    assert [c.key for c in env.scenario.constraints_revealed_by(1)] == ["budget"]


def test_sample_envs_are_valid_and_complete() -> None:
    result = load_paths(list(SAMPLE_DIRS.values()))
    assert result.problems == [], [p.render() for p in result.problems]
    by_family = {f: result.filtered(f) for f in ("proactiveeval", "proactivebench", "chronos")}
    pe = by_family["proactiveeval"]
    assert len(pe) >= 18
    assert {e.domain for e in pe} == {
        "recommendation", "persuasion", "ambigious_instruction", "long-term_follow_up", "system_operation", "glasses_assistant",
    }
    for domain in {e.domain for e in pe}:
        assert {e.tier for e in pe if e.domain == domain} == {"fair", "hard"}
        assert len([e for e in pe if e.domain == domain]) >= 3
    pb = by_family["proactivebench"]
    assert len(pb) >= 4 and all(len(e.events) >= 10 for e in pb)
    for env in pb:
        statuses = {ev.model_extra.get("task_status") for ev in env.events}
        assert statuses == {True, False}, f"{env.id} needs moments with and without help"
    assert {e.domain for e in pb} >= {"coding", "writing", "daily life"}
    ch = by_family["chronos"]
    assert len(ch) >= 8
    kinds = {(e.scenario.scenario, e.scenario.branch) for e in ch}
    for kind in ("car_purchase", "house_hunting", "ticket_booking"):
        assert {(kind, "positive"), (kind, "negative")} <= kinds
    assert len([e for e in ch if e.tier == "complex"]) >= 2


def test_mixed_folder_good_files_still_load(tmp_path: Path) -> None:
    write(tmp_path / "recommendation" / "fair.json", [PE_ITEM])
    write(tmp_path / "recommendation" / "hard.json", "[{")
    write(tmp_path / "proactivebench" / "t1.json", [PB_EVENT])
    write(tmp_path / "proactivebench" / "t2.json", [{"observation": {"time": "1"}}])
    write(tmp_path / "chronos" / "ok.json", CHRONOS)
    write(tmp_path / "chronos" / "bad.json", b"\xff\xfe")
    result = load_paths([tmp_path])
    assert sorted(e.id for e in result.environments) == ["chronos/ok", "proactivebench/t1", "proactiveeval/recommendation/fair/0"]
    assert result.files_read == 6
    assert len(result.problems) == 3


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    write(tmp_path / "persuasion" / "fair.json", b"\xef\xbb\xbf" + json.dumps([PE_ITEM]).encode())
    assert load_paths([tmp_path]).problems == []


def test_an_id_two_folders_share_stays_with_the_first_and_the_second_is_qualified(tmp_path: Path) -> None:
    a = write(tmp_path / "a" / "chronos" / "same.json", CHRONOS)
    write(tmp_path / "b" / "chronos" / "same.json", CHRONOS | {"title": "other"})
    result = load_paths([tmp_path / "a", tmp_path / "b"])
    assert [(e.id, e.title) for e in result.environments] == [("chronos/same", "Cheap city car"), ("b:chronos/same", "other")]
    assert result.problems == []
    assert [h.id for h in result.shared[0].holders] == ["chronos/same", "b:chronos/same"]
    assert str(a) in result.shared[0].render()
    assert result.get("a:chronos/same").title == "Cheap city car"  # a source's name names its own, shared or not


def test_two_files_of_one_folder_with_one_id_is_that_folders_problem(tmp_path: Path) -> None:
    # two copies of a domain in one folder: both read to proactiveeval/persuasion/fair/0
    write(tmp_path / "v1" / "persuasion" / "fair.json", [PE_ITEM])
    write(tmp_path / "v2" / "persuasion" / "fair.json", [PE_ITEM | {"target": "other"}])
    result = load_paths([tmp_path])
    assert [e.id for e in result.environments] == ["proactiveeval/persuasion/fair/0"]
    assert "duplicate id proactiveeval/persuasion/fair/0 within" in result.problems[0].render()
    assert "separate --envs paths to keep both" in result.problems[0].render()
    both = load_paths([tmp_path / "v1", tmp_path / "v2"])  # as the message says
    assert [e.id for e in both.environments] == ["proactiveeval/persuasion/fair/0", "v2:proactiveeval/persuasion/fair/0"]
    # one folder given twice, or a file inside a folder also given, is read as one source
    again = load_paths([tmp_path / "v1", tmp_path / "v1", tmp_path / "v1" / "persuasion" / "fair.json"])
    assert [e.id for e in again.environments] == ["proactiveeval/persuasion/fair/0"] and again.problems == []


# --- malformed input: each names file, record and field ----------------------------------------

BAD_PE = [
    ("invalid_json", "[\n  {\"target\": 1,,}\n]", None, None, "invalid JSON at line 2 column"),
    ("empty", "   \n", None, None, "empty file"),
    ("not_utf8", b"[{\"target\": \"caf\xe9\"}]", None, None, "not UTF-8 text: byte 0xe9"),
    ("top_not_array", {"environment": {}}, None, None, "expected a JSON array of items, got an object"),
    ("record_not_object", [PE_ITEM, "oops"], 1, None, "expected an object, got a string"),
    ("missing_trigger", [PE_ITEM, {**PE_ITEM, "environment": {"user_information": "x"}}], 1, "environment.trigger_factor", "missing required field"),
    ("sub_target_string", [{**PE_ITEM, "sub_target": "just one"}], 0, "sub_target", "valid list"),
    ("sub_target_empty", [{**PE_ITEM, "sub_target": []}], 0, "sub_target", "at least 1 item"),
    ("sub_target_item_type", [{**PE_ITEM, "sub_target": ["a", 7]}], 0, "sub_target[1]", "valid string"),
    ("target_blank", [PE_ITEM, PE_ITEM, {**PE_ITEM, "target": "  "}], 2, "target", "must not be empty"),
    ("missing_environment", [{k: v for k, v in PE_ITEM.items() if k != "environment"}], 0, "environment", "missing required field"),
]


@pytest.mark.parametrize("name,content,record,field,message", BAD_PE, ids=[c[0] for c in BAD_PE])
def test_malformed_proactiveeval(tmp_path: Path, name, content, record, field, message) -> None:
    path = write(tmp_path / "recommendation" / "fair.json", content)
    problem = only_problem(tmp_path)
    assert problem.file.endswith("recommendation/fair.json") and Path(problem.file).name == path.name
    assert problem.record == record
    assert problem.field == field
    assert message in problem.message


BAD_PB = [
    ("trace_not_array", {"observation": {}}, None, None, "expected a JSON array of events"),
    ("trace_empty", [], None, None, "trace has no events"),
    ("missing_event", [PB_EVENT, {"observation": {"time": "1"}}], 1, "observation.event", "missing required field"),
    ("time_wrong_type", [PB_EVENT, PB_EVENT, {"observation": {"time": [1], "event": "x"}}], 2, "observation.time", "valid string"),
    ("missing_observation", [{"task_status": True}], 0, "observation", "missing required field"),
]


@pytest.mark.parametrize("name,content,record,field,message", BAD_PB, ids=[c[0] for c in BAD_PB])
def test_malformed_proactivebench(tmp_path: Path, name, content, record, field, message) -> None:
    write(tmp_path / "proactivebench" / "trace_x.json", content)
    problem = only_problem(tmp_path)
    assert problem.file.endswith("proactivebench/trace_x.json")
    assert (problem.record, problem.field) == (record, field)
    assert message in problem.message


def test_malformed_splits_names_the_split(tmp_path: Path) -> None:
    write(tmp_path / "proactivebench" / "t.json", [PB_EVENT])
    write(tmp_path / "proactivebench" / "splits.json", {"mine": {"theme": "X", "files": "t.json"}})
    problem = only_problem(tmp_path)
    assert problem.file.endswith("splits.json") and problem.field == "mine.files"


def _chronos(**changes):
    return {**CHRONOS, **changes}


BAD_CHRONOS = [
    ("missing_branch", {k: v for k, v in CHRONOS.items() if k != "branch"}, "branch", "missing required field"),
    ("bad_branch", _chronos(branch="maybe"), "branch", "'positive' or 'negative'"),
    ("bad_time", _chronos(timeline=[{"time": "next tuesday", "listings": ["x"], "meets_needs": True}]), "timeline[0].time", "not an ISO 8601 time"),
    ("listings_empty", _chronos(timeline=[{"time": "2026-01-02T00:00", "listings": [], "meets_needs": True}]), "timeline[0].listings", "at least 1 item"),
    ("unknown_key", _chronos(colour="red"), "colour", "Extra inputs are not permitted"),
    ("positive_unsatisfiable", _chronos(timeline=[{"time": "2026-01-02T00:00", "listings": ["x"], "meets_needs": False}]), None, "positive branch: no state"),
    ("negative_satisfiable", _chronos(branch="negative"), None, "negative branch: a state meets the needs"),
    ("out_of_order", _chronos(timeline=list(reversed(CHRONOS["timeline"]))), None, "timeline[1].time 2026-01-03T09:00 is earlier"),
    ("complex_without_shift", _chronos(tier="complex"), None, "needs an intention_shift"),
    ("reveal_turn_negative", _chronos(constraints=[{"key": "k", "value": "v", "reveal_turn": -1}]), "constraints[0].reveal_turn", "greater than or equal to 0"),
]


@pytest.mark.parametrize("name,content,field,message", BAD_CHRONOS, ids=[c[0] for c in BAD_CHRONOS])
def test_malformed_chronos(tmp_path: Path, name, content, field, message) -> None:
    write(tmp_path / "chronos" / "scn.json", content)
    problem = only_problem(tmp_path)
    assert problem.file.endswith("chronos/scn.json")
    assert problem.record is None  # one scenario per file
    assert problem.field == field
    assert message in problem.message


def test_chronos_array_names_the_record(tmp_path: Path) -> None:
    write(tmp_path / "chronos" / "many.json", [CHRONOS, _chronos(turn_limit="lots")])
    result = load_paths([tmp_path])
    assert [e.id for e in result.environments] == ["chronos/many/0"]
    (problem,) = result.problems
    assert (problem.record, problem.field) == (1, "turn_limit")


def test_unrecognised_and_missing_paths(tmp_path: Path) -> None:
    write(tmp_path / "notes.json", {"hello": "world"})
    result = load_paths([tmp_path, tmp_path / "nope"])
    messages = sorted(p.render() for p in result.problems)
    assert any("notes.json: unrecognised environment file" in m for m in messages)
    assert any(m.endswith("nope: no such file or folder") for m in messages)


def test_problem_render_names_everything(tmp_path: Path) -> None:
    write(tmp_path / "persuasion" / "hard.json", [PE_ITEM, {**PE_ITEM, "target": 5}])
    line = only_problem(tmp_path).render()
    assert line.endswith("persuasion/hard.json: record 1: field target: Input should be a valid string (got int)")


def test_an_unrecognised_file_names_what_each_installed_family_reads(tmp_path: Path) -> None:
    """The message is built from the families' declared suffixes and file shapes: every installed
    family that reads .json files, each with its own shape (ProactBench's rows come as .json too)."""
    write(tmp_path / "notes.json", {"hello": "world"})
    (problem,) = load_paths([tmp_path]).problems
    message = problem.render()
    assert "no installed family reads it" in message
    assert "proactiveeval (.json) an array of tasks in <domain>/fair.json" in message
    assert "proactivebench (.json) an array of {observation: ...} events" in message
    assert "chronos (.json) a scenario object with a timeline" in message
    assert "proactbench (.json, .jsonl) dialogue rows with unique_id_eval and trigger_points" in message


def test_the_unrecognised_message_lists_only_families_that_read_the_suffix() -> None:
    from types import SimpleNamespace

    from proactive_tui.envs.registry import unrecognised_message

    rows = SimpleNamespace(file_suffixes=(".jsonl",), environments=SimpleNamespace(env_model=SimpleNamespace(file_shape="log rows")))
    plain_json = SimpleNamespace(file_suffixes=(".json",), environments=SimpleNamespace(env_model=SimpleNamespace(file_shape="")))
    families = {"rows": rows, "plug": plain_json}
    message = unrecognised_message(families, ".json")
    assert message.endswith("Each reads: plug (.json)") and "rows" not in message
    assert unrecognised_message(families, ".JSONL").endswith("Each reads: rows (.jsonl) log rows")
    assert unrecognised_message({"rows": rows}, ".json") == \
        "unrecognised environment file: no installed family reads .json files"
