"""`proactive-tui synth chronos`: the paper's data pipeline (section 3.3) on the synth engine,
against the fake OpenAI-compatible server (tests/synth_chronos_fake.py scripts each template's
fate and plays the simulators the way the oracle does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from synth_chronos_fake import ChronosFake, role_args
from synth_helpers import files, run_and_kill
from proactive_tui.cli.main import main
from proactive_tui.testing.fake_openai import FakeOpenAIServer, schema_name

HANG_GUARD_S = 300
MIXED = {"car_purchase": "ok", "house_hunting": "lowagent", "ticket_booking": "noconfirm", "job_search": "badagent",
         "flight_booking": "invalid", "product_recommendation": "schema"}


def synth_argv(out: Path, base_url: str, *extra: str, templates: tuple[str, ...] = tuple(MIXED), n: int = 1,
               seed: int = 3) -> list[str]:
    return ["synth", "chronos", *[x for t in templates for x in ("--template", t)], "--n", str(n), "--seed", str(seed),
            "--out", str(out), *role_args(base_url), *extra]


def results(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((out / "items").glob("*/result.json"))}


def test_the_pipeline_keeps_both_branches_and_rejects_with_reasons(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake(MIXED)) as server:
        assert main(synth_argv(out, server.base_url, "--out-only")) == 0
        requests = len(server.requests)
    got = results(out)
    assert len(got) == 12  # six templates, two tiers
    status = {k: (r["status"], r["tier"] if r["status"] == "kept" else r["reason"]) for k, r in got.items()}
    for tier in ("simple", "complex"):
        assert status[f"car_purchase-{tier}-0000"] == ("kept", tier)
        assert status[f"house_hunting-{tier}-0000"] == ("kept", tier)
        assert status[f"ticket_booking-{tier}-0000"] == ("rejected", "critic_user")
        assert status[f"job_search-{tier}-0000"] == ("rejected", "critic_agent")
        assert status[f"flight_booking-{tier}-0000"] == ("rejected", "invalid_scenario")
        assert status[f"product_recommendation-{tier}-0000"] == ("rejected", "schema_invalid")
    assert "negative branch: a state meets the needs" in got["flight_booking-simple-0000"]["detail"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kept"] == {"complex": 2, "simple": 2} and summary["calls"] == requests
    assert summary["rejected"] == {"critic_agent": 2, "critic_user": 2, "invalid_scenario": 2, "schema_invalid": 2}
    assert set(summary["calls_per_stage"]) == {"background", "user", "user_critic", "agent", "agent_critic"}
    # the kept scenario: the family's branching format, with its provenance
    scenario = json.loads((out / "out" / "car_purchase" / "car_purchase-complex-0000.json").read_text())
    assert set(scenario["branches"]) == {"positive", "negative"} and scenario["tier"] == "complex"
    assert scenario["intention_shift"]["constraints"] == {"budget": "at most 120", "size": "big"}
    synth = scenario["synth"]
    assert synth["item_id"] == "car_purchase-complex-0000" and synth["run"].startswith("synth-")
    assert synth["models"] == {"generator": "openai/gen", "user": "openai/user", "agent": "openai/agent",
                               "user_critic": "openai/ucritic", "agent_critic": "openai/acritic"}
    assert synth["generator"].startswith("chronos-synth-") and isinstance(synth["seed"], int)
    # the dialogues: one JSONL line per branch, the agent's structured replies as assistant turns
    lines = [json.loads(x) for x in (out / "out" / "chronos-dialogues.jsonl").read_text().splitlines()]
    assert len(lines) == 8 and [x["branch"] for x in lines] == ["positive", "negative"] * 4
    for line in lines:
        messages = line["messages"]
        assert messages[0]["role"] == "system" and messages[1]["content"].startswith("I want a blue one")
        replies = [json.loads(m["content"]) for m in messages if m["role"] == "assistant"]
        assert replies[0]["proactive_action"] == "INFO_RETRIEVAL"
        last = replies[-1]
        # the double branches: completed after the thanks, or silent at the end
        if line["branch"] == "positive":
            assert last["proactive_action"] == "COMPLETE_TASK" and last["task_description"]["status"] == "COMPLETED"
            assert "Thank you" in messages[-2]["content"]
        else:
            assert last["proactive_action"] == "KEEP_SILENT" and last["task_description"]["status"] == "IN_PROGRESS"
            assert "ENDING" in messages[-2]["content"]
    complex_lines = [x for x in lines if x["tier"] == "complex"]
    assert all(any("bigger one" in m["content"] for m in x["messages"] if m["role"] == "user") for x in complex_lines)


def test_each_assumption_rejects_the_item_with_its_name(tmp_path: Path) -> None:
    fates = {"car_purchase": "assumption_i", "house_hunting": "assumption_ii", "ticket_booking": "assumption_iii",
             "job_search": "assumption_iv", "flight_booking": "assumption_v"}
    with FakeOpenAIServer(responder=ChronosFake(fates)) as server:
        assert main(synth_argv(tmp_path / "run", server.base_url, "--out-only", "--tier", "complex",
                               templates=tuple(fates))) == 0
        assert main(synth_argv(tmp_path / "simple", server.base_url, "--out-only", "--tier", "simple",
                               templates=("car_purchase", "house_hunting", "ticket_booking"))) == 0
    got = results(tmp_path / "run")
    assert {k.split("-")[0]: r["reason"] for k, r in got.items()} == fates
    assert "every reveal_turn is 0" in got["car_purchase-complex-0000"]["detail"]
    assert "fixed frequency" in got["ticket_booking-complex-0000"]["detail"]
    # a rejection by rule costs the background call only: no dialogue was played
    assert all(sorted(p.name for p in (tmp_path / "run" / "items" / k).iterdir()) == ["background.json", "result.json"]
               for k in got)
    simple = results(tmp_path / "simple")
    assert [r["reason"] for r in simple.values()] == ["assumption_i", "assumption_ii", "assumption_iii"]


def test_assumption_checks_are_rules_on_each_branch() -> None:
    from proactive_tui.families.chronos.synth import assumption_violation

    base = {"tier": "simple", "start_time": "2026-03-02T09:00",
            "constraints": [{"key": "a", "value": "x", "reveal_turn": 0}, {"key": "b", "value": "y", "reveal_turn": 1}],
            "timeline": [{"time": "2026-03-02T10:00", "meets_needs": False}, {"time": "2026-03-09T09:00", "meets_needs": False},
                         {"time": "2026-03-16T09:00", "meets_needs": False}, {"time": "2026-03-23T09:00", "meets_needs": True}]}
    assert assumption_violation(base) is None
    late = json.loads(json.dumps(base))
    late["timeline"][3]["time"] = "2026-03-24T09:00"  # the last scan a day late
    assert assumption_violation(late)[0] == "assumption_iii"
    backwards = json.loads(json.dumps(base))
    backwards["timeline"][0]["time"] = "2026-03-01T09:00"
    assert assumption_violation(backwards)[0] == "assumption_iii"
    bad_time = json.loads(json.dumps(base))
    bad_time["timeline"][1]["time"] = "next week"
    assert assumption_violation(bad_time)[0] == "invalid_scenario"
    shifted = {**json.loads(json.dumps(base)), "tier": "complex",
               "intention_shift": {"timeline": [{"time": "2026-03-30T09:00", "meets_needs": False}]}}
    assert assumption_violation(shifted) is None
    shifted["intention_shift"]["timeline"][0]["meets_needs"] = True
    assert assumption_violation(shifted)[0] == "assumption_v"
    early = json.loads(json.dumps(shifted))
    early["timeline"][2]["meets_needs"] = True  # met a scan before the last one: the user would shift there
    assert assumption_violation(early)[0] == "assumption_iv"
    progressive = json.loads(json.dumps(base))
    progressive["constraints"][1]["reveal_turn"] = 0
    assert assumption_violation(progressive)[0] == "assumption_i"
    opened = json.loads(json.dumps(base))
    opened["timeline"][0]["meets_needs"] = True
    assert assumption_violation(opened)[0] == "assumption_ii"


def test_a_low_scored_draft_is_regenerated_bounded_and_every_draft_kept(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake({"house_hunting": "lowagent", "job_search": "badagent"})) as server:
        assert main(synth_argv(out, server.base_url, "--out-only", "--tier", "simple",
                               templates=("house_hunting", "job_search"))) == 0
    item = out / "items" / "house_hunting-simple-0000"
    # the agent's answer to each branch's last state: scored 50 (below the paper's 75), drafted again, kept at 90
    for branch in ("positive", "negative"):
        turn = max(int(p.name.split("-")[1][1:]) for p in item.glob(f"{branch}-t*-agent-a2.json"))
        low = json.loads((item / f"{branch}-t{turn:02d}-agent-a1-critic.json").read_text())
        high = json.loads((item / f"{branch}-t{turn:02d}-agent-a2-critic.json").read_text())
        assert sum(low["output"]["scores"].values()) == 50 and sum(high["output"]["scores"].values()) == 90
        assert (item / f"{branch}-t{turn:02d}-agent-a1.json").is_file()  # the dropped draft is kept
        assert not (item / f"{branch}-t{turn:02d}-agent-a3.json").exists()
    record = json.loads((item / "result.json").read_text())["record"]
    assert record["scenario"]["synth"]["regenerated"] == 2
    dropped = [d for d in record["drafts"] if not d["kept"]]
    assert [(d["branch"], d["score"], d["attempt"]) for d in dropped] == [("negative", 50, 1), ("positive", 50, 1)]
    # never above the bound: three drafts, three scores, then the item is rejected
    bad = out / "items" / "job_search-simple-0000"
    assert sorted(p.name for p in bad.glob("positive-t01-agent-a*.json")) == [
        "positive-t01-agent-a1-critic.json", "positive-t01-agent-a1.json", "positive-t01-agent-a2-critic.json",
        "positive-t01-agent-a2.json", "positive-t01-agent-a3-critic.json", "positive-t01-agent-a3.json"]
    result = json.loads((bad / "result.json").read_text())
    assert result["reason"] == "critic_agent" and "draft 3: 50" in result["detail"]
    # the threshold is a setting: at 95 nothing the fake writes is good enough
    with FakeOpenAIServer(responder=ChronosFake()) as server:
        assert main(synth_argv(tmp_path / "strict", server.base_url, "--out-only", "--tier", "simple",
                               "--threshold", "95", "--max-attempts", "2", templates=("car_purchase",))) == 0
    strict = results(tmp_path / "strict")["car_purchase-simple-0000"]
    assert strict["reason"] == "critic_agent" and "reached 95 in 2" in strict["detail"]


def test_a_user_reply_the_rule_refuses_is_redrafted_without_asking_the_critic(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake({"ticket_booking": "noconfirm"})) as server:
        assert main(synth_argv(out, server.base_url, "--out-only", "--tier", "simple",
                               templates=("ticket_booking",))) == 0
    item = out / "items" / "ticket_booking-simple-0000"
    drafts = sorted(p.name for p in item.glob("positive-t*-user-a*.json") if "critic" not in p.name)
    last_turn = drafts[-1].split("-")[1]
    assert [d for d in drafts if last_turn in d] == [f"positive-{last_turn}-user-a{k}.json" for k in (1, 2, 3)]
    assert not list(item.glob(f"positive-{last_turn}-user-a*-critic.json"))
    assert "not_a_confirmation" in json.loads((item / "result.json").read_text())["detail"]


def test_an_agent_draft_the_protocol_refuses_fails_by_rule_without_a_critic(tmp_path: Path) -> None:
    fates = {"car_purchase": "offagent", "house_hunting": "wrongstatus", "job_search": "mute"}
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=ChronosFake(fates)) as server:
        assert main(synth_argv(out, server.base_url, "--out-only", "--tier", "simple", templates=tuple(fates))) == 0
    got = results(out)
    for item, why in (("car_purchase-simple-0000", "off_protocol (KEEP_SILENT; the protocol expects INFO_RETRIEVAL)"),
                      ("house_hunting-simple-0000", "wrong_status (COMPLETED; should be PENDING)"),
                      ("job_search-simple-0000", "empty_response")):
        assert got[item]["reason"] == "critic_agent" and why in got[item]["detail"]
        assert len(list((out / "items" / item).glob("positive-t01-agent-a*.json"))) == 3
        assert not list((out / "items" / item).glob("*critic.json"))  # a rule decided: no critic asked


def test_same_seed_and_replies_give_byte_identical_folders(tmp_path: Path) -> None:
    for name, concurrency, seed in (("a", "8", 3), ("b", "2", 3), ("c", "4", 4)):
        with FakeOpenAIServer(responder=ChronosFake(MIXED)) as server:
            assert main(synth_argv(tmp_path / name, server.base_url, "--out-only", "--concurrency", concurrency,
                                   seed=seed)) == 0
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert a == b and "out/chronos-dialogues.jsonl" in a
    seeds = {json.loads(a["items/car_purchase-simple-0000/background.json"])["seed"],
             json.loads(files(tmp_path / "c")["items/car_purchase-simple-0000/background.json"])["seed"]}
    assert len(seeds) == 2


STABLE = {"car_purchase": "ok", "ticket_booking": "noconfirm", "house_hunting": "ok", "flight_booking": "invalid"}
"""Fates without the lowagent count, whose first-seen history a resume would see again."""


def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path: Path) -> None:
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    with FakeOpenAIServer(responder=ChronosFake(STABLE), latency=0.05) as server:
        argv = synth_argv(killed, server.base_url, "--out-only", templates=tuple(STABLE))
        run_and_kill(argv, tmp_path, killed, 40, server, HANG_GUARD_S)
        assert not (killed / "summary.json").exists()
        # a kill in the middle of a write may leave its temporary file (with worker processes the
        # parent does little but write, so it often does); the resume removes it: `files` below
        # lists every file, dot files too, and the whole run has none
        sent = len(server.requests)
        assert main(["synth", "resume", str(killed)]) == 0
        resumed = len(server.requests) - sent
        assert main(synth_argv(whole, server.base_url, "--out-only", templates=tuple(STABLE))) == 0
        full = len(server.requests) - sent - resumed
    assert files(killed) == files(whole) and not list(killed.rglob("*.tmp"))
    assert resumed < full  # what was on disk was not asked again


def test_cancelled_mid_run_then_resumed_calls_only_what_is_missing(tmp_path: Path) -> None:
    from synth_helpers import cancel_then_resume

    with FakeOpenAIServer(responder=ChronosFake(STABLE), latency=0.01) as server:
        before = cancel_then_resume("chronos", {"templates": ["car_purchase", "ticket_booking"], "n": 1}, role_args(server.base_url)[3::2], server,
                                    tmp_path / "cut", tmp_path / "whole", cancel_after=30)
    assert 30 <= len(before) and not [p for p in before if p.name == "result.json"]


def test_a_failed_call_leaves_the_item_unfinished_and_writes_nothing_half_made(tmp_path: Path) -> None:
    from proactive_tui.testing.fake_openai import Reply

    broken = {"on": True}
    fake = ChronosFake()

    def flaky(request: dict) -> str | Reply:
        if broken["on"] and schema_name(request) == "UserCritique":
            return Reply.error(400, "the server refuses this request")
        return fake(request)

    out = tmp_path / "run"
    with FakeOpenAIServer(responder=flaky) as server:
        assert main(synth_argv(out, server.base_url, "--tier", "simple", templates=("car_purchase",))) == 1
        assert not list((out / "items").rglob("result.json")) and not list((out / "out").rglob("*"))
        broken["on"] = False
        sent = len(server.requests)
        assert main(["synth", "resume", str(out)]) == 0
        assert "SimpleBackground" not in [schema_name(r.body) for r in server.requests[sent:]]
    assert json.loads((out / "summary.json").read_text())["kept"] == {"simple": 1}


def test_shards_merged_equal_the_whole_run(tmp_path: Path) -> None:
    templates = tuple(STABLE)
    with FakeOpenAIServer(responder=ChronosFake(STABLE)) as server:
        for i in range(3):
            assert main(synth_argv(tmp_path / f"s{i}", server.base_url, "--shard", f"{i}/3", templates=templates)) == 0
        assert not (Path(os.environ["PROACTIVE_TUI_DATA"]) / "envs").exists()  # a shard installs nothing
        assert main(["synth", "merge", "--out", str(tmp_path / "merged"), "--out-only",
                     *(str(tmp_path / f"s{i}") for i in range(3))]) == 0
        assert main(synth_argv(tmp_path / "whole", server.base_url, "--out-only", templates=templates)) == 0
    merged, whole = files(tmp_path / "merged"), files(tmp_path / "whole")
    assert {k: v for k, v in merged.items() if k.startswith(("items/", "out/"))} == {
        k: v for k, v in whole.items() if k.startswith(("items/", "out/"))}
    assert merged["summary.json"] == whole["summary.json"] and "out/chronos-dialogues.jsonl" in merged


def test_kept_scenarios_load_with_the_family_loader_and_play_a_session(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.envs import load_default

    with FakeOpenAIServer(responder=ChronosFake()) as server:
        assert main(synth_argv(tmp_path / "run", server.base_url, templates=("car_purchase",))) == 0
    assert "chronos/synth-" in capsys.readouterr().err
    catalog = load_default([])
    made = sorted((e for e in catalog.environments if "/synth-" in e.id), key=lambda e: e.id)
    assert not catalog.problems
    assert [e.id.rsplit("/", 2)[1:] for e in made] == [["car_purchase-complex-0000", "negative"],
                                                       ["car_purchase-complex-0000", "positive"],
                                                       ["car_purchase-simple-0000", "negative"],
                                                       ["car_purchase-simple-0000", "positive"]]
    positive = next(e for e in made if e.id.endswith("simple-0000/positive"))
    assert positive.scenario.synth["item_id"] == "car_purchase-simple-0000"
    assert positive.sample_id == positive.id.removesuffix("/positive")
    for env in (positive, next(e for e in made if e.id.endswith("simple-0000/negative"))):
        record_file = tmp_path / f"{env.scenario.branch}.json"
        with FakeOpenAIServer(responder=ChronosFake()) as server:
            assert main(["run", env.id, "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                         "--api-base", server.base_url, "--confirmation-reader", "keywords",
                         "--out", str(record_file)]) == 0
        record = RunRecord.model_validate_json(record_file.read_text())
        outcome = record.section.outcome
        assert record.env_id == env.id and outcome.success is True
        assert outcome.reason == ("completed" if env.scenario.branch == "positive" else "kept_silent")


def test_unnamed_roles_take_the_seat_they_are_most_like(monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.cli.synth_cmd import resolve_roles
    from proactive_tui.core import registry

    names = [r.name for r in registry.get("chronos").generate.pipeline({"templates": ["car_purchase"], "n": 1}).roles]
    monkeypatch.setenv("PROACTIVE_TUI_AGENT_MODEL", "openai/agent-seat")
    monkeypatch.setenv("PROACTIVE_TUI_USER_MODEL", "openai/user-seat")
    monkeypatch.setenv("PROACTIVE_TUI_JUDGE_MODEL", "openai/judge-seat")
    roles = resolve_roles(names, ["agent_critic=openai/named"], None, None)
    assert {n: s.model for n, s in roles.items()} == {
        "generator": "openai/agent-seat", "user": "openai/user-seat", "agent": "openai/agent-seat",
        "user_critic": "openai/judge-seat", "agent_critic": "openai/named"}


def test_options_out_of_range_and_unknown_templates_are_refused(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "chronos", "--template", "pony_rides", "--n", "1", "--out", str(tmp_path / "x")]) == 2
    assert "unknown template pony_rides" in capsys.readouterr().err
    assert main(["synth", "chronos", "--n", "1", "--threshold", "101", "--out", str(tmp_path / "x")]) == 2
    assert "--threshold" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_one_item_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    """Every role on local/smollm2, one simple item with one draft per utterance: the background
    call, then (if its reply makes a scenario the rules keep, unlikely from a 135M model) the
    dialogue, each call capped by the seat's token cap and the scenario's turn limit. What is
    checked is that the stages ran on the embedded model and the run ended with an outcome."""
    out = tmp_path / "local"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "synth", "chronos", "--template", "car_purchase", "--tier", "simple",
         "--n", "1", "--max-attempts", "1", "--out", str(out), "--out-only"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "135M-parameter offline demo model" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tried"] == 1 and summary["unfinished"] == 0 and summary["calls"] >= 1
    assert set(summary["models"].values()) == {"local/smollm2"}
    steps = [json.loads(p.read_text()) for p in (out / "items").rglob("*.json") if p.name != "result.json"]
    assert steps and {s["model"] for s in steps} == {"local/smollm2"} and all(s["calls"] >= 1 for s in steps)
    result = json.loads((out / "items" / "car_purchase-simple-0000" / "result.json").read_text())
    assert (result["status"] == "kept") == bool(summary["kept"]) and (result["status"] == "kept" or result["reason"])
