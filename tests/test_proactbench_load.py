"""ProactBench environments: upstream's `final_dialogues.jsonl` loads as it is; a bad row is one
line naming the file, the line and the field, and the other rows still load."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT
from proactive_tui.envs.registry import load_paths

SAMPLE = ROOT / "sample_envs" / "proactbench" / "final_dialogues_sample.jsonl"


def test_the_shipped_sample_rows_load_with_their_trigger_points() -> None:
    result = load_paths([SAMPLE])
    assert result.problems == []
    assert len(result.environments) == 8
    env = result.environments[0]
    assert env.id == "proactbench/BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff"
    assert [(t.turn, t.evaluation_rubric.type) for t in env.triggers] == [(1, "EMERGENT"), (4, "CRITICAL"), (8, "RECOVERY")]
    assert env.domain == "professional" and env.line == 1


def test_a_bad_row_is_one_line_naming_file_line_and_field_and_the_others_load(tmp_path: Path) -> None:
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[1])
    broken["trigger_points"][0]["evaluation_rubric"]["type"] = "SIDEWAYS"
    missing = json.loads(lines[2])
    del missing["scenario_id"]
    path = tmp_path / "final_dialogues.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(broken), "{not json", json.dumps(missing), "", lines[3], "[1, 2]"]) + "\n",
                    encoding="utf-8")
    result = load_paths([path])
    assert [env.line for env in result.environments] == [1, 6]
    rendered = sorted(p.render() for p in result.problems)
    assert len(rendered) == 4, rendered
    assert any("line 2: field trigger_points[0].evaluation_rubric.type:" in r for r in rendered)
    assert any(r.endswith("line 3: invalid JSON at column 2: Expecting property name enclosed in double quotes") for r in rendered)
    assert any("line 4: field scenario_id: missing required field" in r for r in rendered)
    assert any("line 7: expected a dialogue object, got an array" in r for r in rendered)
    assert all(r.startswith(str(path)) or "final_dialogues.jsonl" in r for r in rendered)


def test_a_jsonl_file_no_family_claims_is_left_alone(tmp_path: Path) -> None:
    """A .jsonl nobody claims (a synth log beside installed environments) is neither taken nor a
    problem, while a .json nobody claims still is one."""
    (tmp_path / "notes.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (tmp_path / "stray.json").write_text('{"a": 1}\n', encoding="utf-8")
    result = load_paths([tmp_path])
    assert result.environments == []
    assert len(result.problems) == 1 and "stray.json" in result.problems[0].render()
    assert "unrecognised environment file" in result.problems[0].render()


def test_a_jsonl_in_a_folder_of_a_family_that_reads_none_is_left_alone(tmp_path: Path) -> None:
    """ProactiveBench's folders hold its reward data as .jsonl: not environments, and not a problem."""
    folder = tmp_path / "proactivebench"
    folder.mkdir()
    (folder / "reward_test.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (folder / "code_1.json").write_text('[{"observation": {"time": "1", "event": "opens a file"}}]', encoding="utf-8")
    result = load_paths([tmp_path])
    assert [env.id for env in result.environments] == ["proactivebench/code_1"] and result.problems == []


def test_two_trigger_points_at_one_turn_are_one_line_and_a_row_without_a_style_has_a_plain_title(tmp_path: Path) -> None:
    """A turn is scored once (verdicts, forks and comparisons are keyed by it): a row declaring two
    trigger points at one turn is refused, naming the field; a row with no style index (one a
    person wrote) is titled by its scenario alone, never `style None`."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    twice = json.loads(lines[0])
    twice["trigger_points"].append({**twice["trigger_points"][0], "turn": 4})
    plain = json.loads(lines[1])
    del plain["style_combination_index"]
    path = tmp_path / "final_dialogues.jsonl"
    path.write_text(json.dumps(twice) + "\n" + json.dumps(plain) + "\n", encoding="utf-8")
    result = load_paths([path])
    [problem] = [p.render() for p in result.problems]
    assert "line 1: field trigger_points: turn 4 has more than one trigger point (a turn is scored once)" in problem
    [env] = result.environments
    from proactive_tui.families.proactbench.env import describe

    assert env.title == "PROFESSIONAL_01"
    assert describe(env, True)[0][1].startswith("BP_PROFESSIONAL_01_Q · scenario PROFESSIONAL_01 · professional · 8 turns · curated with gemini-2.5-pro")
