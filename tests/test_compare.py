"""`compare`: agents side by side on one environment, user model, judge and seed; the blind vote.

Through the real command (subprocess, litellm to the fake server): both sides get the same
environment, seed, user and judge (in each side's stored SessionStarted and in the requests the
server received), the agents differ by model, the per-turn table is what the records say, blind
output names no model until the vote, and the vote is kept with both sessions and exported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from family_runs import RUNS, cli
from proactive_tui.services.compare import (ComparePlan, CompareError, assert_only_agent_differs, turn_table, vote,
                                        winner_of)
from proactive_tui.core.run_record import RunRecord
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from test_run_command import judge_aware_responder

ENV_ID = "proactiveeval/persuasion/fair/0"
AGENTS = ("openai/agent-alpha", "openai/agent-beta")


def side_aware_responder(body: dict) -> str:
    """The agents say who they are; the guidance judge scores what it reads: 5 for alpha's words,
    8 for beta's, so the per-turn difference is known (+3) and comes from the agent alone."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    text = json.dumps(body["messages"])
    if name == "GuidanceJudgement":
        overall = 8 if "beta speaking" in text else 5
        return json.dumps({"reasoning": "fake", "effectiveness": overall, "personalization": overall, "tone": overall,
                           "engagement": overall, "naturalness": overall, "overall": overall})
    if name is None and body["model"].endswith("agent-alpha"):
        return "alpha speaking: shall we walk?"
    if name is None and body["model"].endswith("agent-beta"):
        return "beta speaking: shall we walk?"
    return judge_aware_responder(body)


def compare(server: FakeOpenAIServer, out: Path, *extra: str, env_id: str = ENV_ID,
            args: tuple[str, ...] = ("--user", "openai/user-m", "--judge", "openai/judge-m", "--max-turns", "3",
                                     "--live")):
    agents = [token for model in AGENTS for token in ("--agent", model)]
    return cli(["compare", env_id, *agents, "--api-base", server.base_url, "--seed", "7", *args,
                "--out", str(out), *extra])


def stored_starts(session_ids: list[str]) -> list[dict]:
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_events

    with open_store() as store:
        return [next(e for e in load_events(store, sid) if e.type == "session_started").model_dump(mode="json")
                for sid in session_ids]


# -- the plan --------------------------------------------------------------------------------------


def test_plan_builds_sides_that_differ_only_in_the_agent() -> None:
    plan = ComparePlan(env_id=ENV_ID, agents=[ModelSettings(model="openai/a"), ModelSettings(model="openai/b")],
                       user=ModelSettings(model="openai/u"), judge=ModelSettings(model="openai/j"), seed=3,
                       settings={"max_turns": 2})
    a, b = plan.specs(seed_setting=True)
    assert a.roles.agent.model == "openai/a" and b.roles.agent.model == "openai/b"
    assert a.roles.user == b.roles.user and a.roles.judge == b.roles.judge and a.settings == b.settings
    assert a.settings["seed"] == 3 and {a.roles.user.seed, a.roles.judge.seed, b.roles.agent.seed} == {3}
    changed = b.model_copy(update={"settings": {"max_turns": 5}})
    with pytest.raises(CompareError, match="more than the agent"):
        assert_only_agent_differs([a, changed])
    with pytest.raises(ValueError):
        ComparePlan(env_id=ENV_ID, agents=[ModelSettings()])


# -- the command -----------------------------------------------------------------------------------


def test_compare_gives_both_sides_the_same_environment_seed_user_and_judge(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        done = compare(server, tmp_path / "out")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    document = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    ids = document["comparison"]["sessions"]
    assert len(ids) == 2 and ids[0] != ids[1]
    starts = stored_starts(ids)
    assert starts[0]["env_id"] == starts[1]["env_id"] == ENV_ID
    assert starts[0]["environment"] == starts[1]["environment"]
    for key in ("user", "judge"):
        assert starts[0]["models"][key] == starts[1]["models"][key]
    assert starts[0]["models"]["user"]["model"] == "openai/user-m"
    assert starts[0]["settings"] == starts[1]["settings"] and starts[0]["settings"]["seed"] == 7
    assert [s["models"]["agent"]["model"] for s in starts] == list(AGENTS)
    # what the server received: every call seeded alike; the user seat's calls by the same model
    by_model: dict[str, list[dict]] = {}
    for request in server.requests:
        by_model.setdefault(request.body["model"], []).append(request.body)
    assert {"agent-alpha", "agent-beta", "user-m", "judge-m"} <= set(by_model)
    assert {body.get("seed") for bodies in by_model.values() for body in bodies} == {7}
    user_calls = by_model["user-m"]
    assert len(user_calls) >= 2 and {body["model"] for body in user_calls} == {"user-m"}
    assert not (set(by_model) - {"agent-alpha", "agent-beta", "user-m", "judge-m"})


def test_per_turn_table_is_what_the_records_say(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        done = compare(server, tmp_path / "out")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out = tmp_path / "out"
    document = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    a = RunRecord.model_validate_json((out / "A.json").read_text(encoding="utf-8"))
    b = RunRecord.model_validate_json((out / "B.json").read_text(encoding="utf-8"))
    assert a.models["agent"]["model"] == AGENTS[0] and b.models["agent"]["model"] == AGENTS[1]
    # by hand: the live guidance overall of each turn, and B minus A
    live_a = [s.overall for s in a.section.live_scores]
    live_b = [s.overall for s in b.section.live_scores]
    assert live_a and set(live_a) == {5} and set(live_b) == {8}
    table = document["table"]
    assert table["label"] == "guidance overall (live)"
    expected = [{"turn": i + 1, "values": [x, y], "differences": [y - x]} for i, (x, y) in enumerate(zip(live_a, live_b))]
    assert table["rows"] == expected
    assert table["finals"] == [a.section.guidance.overall, b.section.guidance.overall] == [5, 8]
    assert table["final_differences"] == [3]
    assert ["overall", "5/10", "8/10"] in table["headline_differences"][0]
    assert turn_table([a, b]).model_dump(mode="json") == table
    stdout = done.stdout.decode()
    assert "+3" in stdout and "overall" in stdout


def test_blind_output_names_no_agent_until_the_vote_then_the_vote_is_kept_and_exported(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        done = compare(server, tmp_path / "out", "--blind", "--shuffle-seed", "1")  # seed 1 keeps alpha as A
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    shown = done.stdout.decode() + done.stderr.decode()
    assert "agent-alpha" not in shown and "agent-beta" not in shown
    document = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    comparison_id, (side_a, side_b) = document["comparison"]["id"], document["comparison"]["sessions"]
    assert document["comparison"]["blind"] is True and document["comparison"]["vote"] is None
    listed = cli(["compare", "list"]).stdout.decode()
    assert comparison_id in listed and "no vote yet" in listed and "agent-alpha" not in listed

    voted = cli(["compare", "vote", comparison_id[:6], "B", "--reason", "asks before it suggests"])
    assert voted.returncode == 0, voted.stderr.decode(errors="replace")
    said = voted.stdout.decode()
    assert f"B (session {side_b})" in said and "A (openai/agent-alpha)" in said and "B (openai/agent-beta)" in said

    from proactive_tui.store import open_store

    with open_store() as store:
        (row,) = store.comparisons()
    assert row.vote == side_b and row.reason == "asks before it suggests" and row.voted_at
    show_a = cli(["sessions", "show", side_a]).stdout.decode()
    show_b = cli(["sessions", "show", side_b]).stdout.decode()
    assert f"comparison {comparison_id}: side A" in show_a and "the other side voted better" in show_a
    assert "side B" in show_b and "voted better: asks before it suggests" in show_b

    exported = cli(["export", side_b, "--format", "run-record", "--out", str(tmp_path / "b.json")])
    assert exported.returncode == 0, exported.stderr.decode(errors="replace")
    (facts,) = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["comparisons"]
    assert facts == {"id": comparison_id, "side": "B", "sessions": [side_a, side_b], "blind": True, "vote": side_b,
                     "verdict": "won", "reason": "asks before it suggests", "voted_at": row.voted_at}
    dataset = cli(["export", side_a, "--format", "proactiveeval", "--out", str(tmp_path / "ds")])
    assert dataset.returncode == 0, dataset.stderr.decode(errors="replace")
    (item,) = json.loads(next((tmp_path / "ds").rglob("*.json")).read_text(encoding="utf-8"))
    assert item["meta"]["comparisons"][0]["verdict"] == "lost"


def test_not_blind_names_the_agents_and_a_tie_or_bad_side_is_understood(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=side_aware_responder) as server:
        done = compare(server, tmp_path / "out")
    assert "A (openai/agent-alpha)" in done.stdout.decode()
    comparison_id = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))["comparison"]["id"]
    bad = cli(["compare", "vote", comparison_id, "C"])
    assert bad.returncode == 1 and "no side C" in bad.stderr.decode()
    from proactive_tui.store import open_store

    with open_store() as store:
        row = vote(store, comparison_id, "tie", "both fine")
        assert store.comparisons()[0].vote == "tie" and row.reason == "both fine"
        assert winner_of(row, row.sessions[1][:5]) == row.sessions[1]


def test_compare_needs_two_agents_and_one_simulated_user(tmp_path: Path) -> None:
    one = cli(["compare", ENV_ID, "--agent", "openai/a"])
    assert one.returncode == 2 and "two or more --agent" in one.stderr.decode()
    human = cli(["compare", ENV_ID, "--agent", "openai/a", "--agent", "openai/b", "--user", "human"])
    assert human.returncode == 2 and "same simulated user" in human.stderr.decode()


@pytest.mark.parametrize("family, label, final_label", [("proactivebench", "running F1", "F1"),
                                                         ("chronos", "action correct", "success"),
                                                         ("proactbench", "trigger verdict (1 / 0.5 / 0)", "weighted score")])
def test_other_families_compare_by_their_own_per_turn_score(tmp_path: Path, family: str, label: str,
                                                            final_label: str) -> None:
    run = RUNS[family]
    args = tuple(token for token in run.args if token not in ("--agent", "openai/agent-m"))
    with FakeOpenAIServer(responder=run.responder) as server:
        done = compare(server, tmp_path / "out", env_id=run.env_id, args=args)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out = tmp_path / "out"
    table = json.loads((out / "comparison.json").read_text(encoding="utf-8"))["table"]
    assert table["label"] == label and table["final_label"] == final_label and table["rows"]
    records = [RunRecord.model_validate_json((out / f"{x}.json").read_text(encoding="utf-8")) for x in "AB"]
    assert turn_table(records).model_dump(mode="json") == table
    if family == "chronos":
        assert table["rows"][0]["values"][0] == float(records[0].section.turns[0].action_correct)
    if family == "proactbench":  # trigger turns 1 and 3 line up, both PARTIAL; turn 2 is no trigger
        assert [row["values"] for row in table["rows"]] == [[0.5, 0.5], [None, None], [0.5, 0.5]]


def test_compare_without_run_is_compare_run_only_as_the_command() -> None:
    from proactive_tui.cli.compare_cmd import insert_run

    assert insert_run(["compare", ENV_ID, "--agent", "a"]) == ["compare", "run", ENV_ID, "--agent", "a"]
    assert insert_run(["--envs", "x", "compare", ENV_ID]) == ["--envs", "x", "compare", "run", ENV_ID]
    for left in (["compare", "vote", "abc", "A"], ["compare", "list"], ["compare", "-h"],
                 ["run", ENV_ID, "--agent", "compare", "x"]):
        assert insert_run(left) == left
