"""`proactive-tui synth proactivebench`: the paper's environment gym on the synth engine, against
the fake OpenAI-compatible server (tests/synth_pb_fake.py scripts every stage by the scene)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from synth_pb_fake import make_responder, role_args
from synth_helpers import files, run_and_kill
from proactive_tui.cli.main import main
from proactive_tui.testing.fake_openai import FakeOpenAIServer, schema_name

HANG_GUARD_S = 300


def synth_argv(out: Path, base_url: str, *extra: str, n: int = 1, seed: int = 3, judge: bool = False) -> list[str]:
    return ["synth", "proactivebench", "--n", str(n), "--seed", str(seed), "--out", str(out),
            *role_args(base_url, judge=judge), *extra]


def test_the_gym_makes_a_trace_splits_and_trainset_and_rejects_bad_output(tmp_path: Path) -> None:
    from proactive_tui.families.proactivebench.prompts import STEP_INSTRUCTION

    out = tmp_path / "run"
    with FakeOpenAIServer(responder=make_responder()) as server:
        assert main(synth_argv(out, server.base_url, "--out-only")) == 0
        requests = len(server.requests)
    results = {p.parent.name: json.loads(p.read_text()) for p in (out / "items").glob("*/result.json")}
    # bad model output is a rejection with its reason, never a crash
    assert results["writing-0000"]["reason"] == "schema_invalid" and "EventBatch" in results["writing-0000"]["detail"]
    assert results["daily_life-0000"]["reason"] == "empty" and "batch 1" in results["daily_life-0000"]["detail"]
    assert results["coding-0000"]["status"] == "kept"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kept"] == {"coding": 1} and summary["rejected"] == {"empty": 1, "schema_invalid": 1}
    assert summary["calls"] == requests and summary["calls_per_stage"]["propose"] == 3
    assert summary["outputs"] == ["agent_trainset.jsonl", "coding-0000.json", "splits.json"]
    # the trace: upstream's test-data format, three batches of two events on a clock 30 s a step
    trace = json.loads((out / "out" / "coding-0000.json").read_text())
    assert len(trace) == 6 and [e["observation"]["event"][-4:] for e in trace[:2]] == ["(a).", "(b)."]
    times = [float(e["observation"]["time"]) for e in trace]
    assert [b - a for a, b in zip(times, times[1:])] == [30.0] * 5 and isinstance(trace[0]["observation"]["time"], str)
    answered = [e for e in trace if "agent_response" in e]
    assert [trace.index(e) for e in answered] == [1, 3, 5]  # the last event of each batch
    # a task accepted: a candidate, help welcome; a null rejected: help was wanted, no candidate
    assert [(e["agent_response"]["candidate_task"], e["task_status"]) for e in answered] == [
        (["Offer help with batch 1"], True), ([], True), (["Offer help with batch 5"[:-1] + "3"], True)]
    assert answered[1]["synth_verdict"]["judgement"] == "rejected"
    provenance = trace[0]["synth"]
    assert provenance["models"] == {"environment": "openai/env", "user": "openai/user", "agent": "openai/agent"}
    assert provenance["item_id"] == "coding-0000" and provenance["run"].startswith("synth-")
    assert provenance["generator"].startswith("proactivebench-synth-") and isinstance(provenance["seed"], int)
    splits = json.loads((out / "out" / "splits.json").read_text())
    assert splits == {"synth_all": {"files": ["coding-0000.json"], "theme": "All"},
                      "synth_coding": {"files": ["coding-0000.json"], "theme": "Coding"}}
    # the trainset: one {"conversations": [...]} per accepted proposal, upstream's agent-trainset record
    lines = (out / "out" / "agent_trainset.jsonl").read_text().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line)["conversations"] for line in lines)
    assert [list(m) for m in second] == [["role", "content"]] * len(second)
    assert [m["role"] for m in first] == ["system", "user", "assistant"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    step = json.loads(second[-2]["content"])
    assert list(step) == ["Instructions", "Observations"] and step["Instructions"] == STEP_INSTRUCTION
    assert [o["Event"] for o in step["Observations"]] == ["The user does step 3 (a).", "The user does step 3 (b)."]
    assert json.loads(second[1]["content"])[0] == {"Time": trace[0]["observation"]["time"],
                                                   "Event": trace[0]["observation"]["event"]}
    reply = json.loads(second[-1]["content"])
    assert list(reply) == ["Purpose", "Thoughts", "Proactive Task", "Response"]
    assert reply["Proactive Task"] == "Offer help with batch 3" and json.loads(second[4]["content"])["Proactive Task"] is None


def test_the_reward_judge_seat_gets_upstreams_reward_model_input(tmp_path: Path) -> None:
    from proactive_tui.families.proactivebench.prompts import REWARD_SYSTEM

    out = tmp_path / "run"
    with FakeOpenAIServer(responder=make_responder()) as server:
        assert main(synth_argv(out, server.base_url, "--out-only", "--scene", "coding", "--judge", "reward",
                               judge=True)) == 0
        judged = [r.body for r in server.requests if schema_name(r.body) == "JudgeVerdict"]
    assert len(judged) == 3 and {r["model"] for r in judged} == {"rm"}
    assert judged[0]["messages"][0]["content"] == REWARD_SYSTEM
    # upstream's user message first (the gateway adds its JSON instruction after it, as in a session)
    shown, _end = json.JSONDecoder().raw_decode(judged[1]["messages"][1]["content"])
    assert list(shown) == ["Observations (Time Ascending)", "Proposed Task", "Instruction"]
    assert len(shown["Observations (Time Ascending)"]) == 4 and shown["Proposed Task"] is None
    trace = json.loads((out / "out" / "coding-0000.json").read_text())
    assert trace[0]["synth"]["models"]["judge"] == "openai/rm" and trace[0]["synth"]["judge"] == "reward"
    assert [e["synth_verdict"]["judgement"] for e in trace if "synth_verdict" in e] == ["accepted", "rejected", "accepted"]


def test_same_seed_and_replies_give_byte_identical_folders(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=make_responder({"writing": "ok"})) as server:
        assert main(synth_argv(tmp_path / "a", server.base_url, "--concurrency", "8", "--out-only", n=2)) == 0
        assert main(synth_argv(tmp_path / "b", server.base_url, "--concurrency", "1", "--out-only", n=2)) == 0
        assert main(synth_argv(tmp_path / "c", server.base_url, "--out-only", n=2, seed=4)) == 0
    a, b, c = files(tmp_path / "a"), files(tmp_path / "b"), files(tmp_path / "c")
    assert a == b and "out/writing-0001.json" in a and "out/agent_trainset.jsonl" in a
    assert a["out/coding-0000.json"] != c["out/coding-0000.json"]  # another seed: another clock and call seeds


def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path: Path) -> None:
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    with FakeOpenAIServer(responder=make_responder(), latency=0.05) as server:
        argv = synth_argv(killed, server.base_url, "--out-only", "--scene", "coding", n=4)
        run_and_kill(argv, tmp_path, killed, 20, server, HANG_GUARD_S)  # well into the run (60 calls)
        assert not (killed / "summary.json").exists()
        before = {p for p in (killed / "items").rglob("*.json")}
        sent = len(server.requests)
        assert main(["synth", "resume", str(killed)]) == 0
        resumed = len(server.requests) - sent
        assert main(["synth", "proactivebench", "--n", "4", "--seed", "3", "--out", str(whole), "--out-only",
                     "--scene", "coding", *role_args(server.base_url)]) == 0
    new_steps = [p for p in (killed / "items").rglob("*.json") if p not in before and p.name != "result.json"]
    assert resumed == sum(json.loads(p.read_text())["calls"] for p in new_steps)  # only the missing steps
    assert files(killed) == files(whole)


def test_cancelled_mid_run_then_resumed_calls_only_what_is_missing(tmp_path: Path) -> None:
    from synth_helpers import cancel_then_resume

    with FakeOpenAIServer(responder=make_responder({"writing": "ok"}), latency=0.01) as server:
        before = cancel_then_resume("proactivebench", {"scenes": ["coding", "writing"], "n": 2, "batches": 7, "judge": "user"}, role_args(server.base_url)[3::2], server,
                                    tmp_path / "cut", tmp_path / "whole", cancel_after=25)
    assert 25 <= len(before) < 60 and not [p for p in before if p.name == "result.json"]  # no trace is half-made


def test_a_failed_call_leaves_the_trace_unwritten_and_resume_finishes_it(tmp_path: Path) -> None:
    from proactive_tui.testing.fake_openai import Reply

    out = tmp_path / "run"
    broken = {"on": True}
    respond = make_responder()

    def flaky(request: dict) -> object:
        if broken["on"] and schema_name(request) == "UserJudge" and "step 2" in json.dumps(request["messages"]):
            return Reply.error(400, "the server refuses this request")
        return respond(request)

    with FakeOpenAIServer(responder=flaky) as server:
        assert main(synth_argv(out, server.base_url, "--scene", "coding")) == 1
        assert not list((out / "items").rglob("result.json")) and not (out / "out").exists()
        broken["on"] = False
        sent = len(server.requests)
        assert main(["synth", "resume", str(out)]) == 0
        resumed = [schema_name(r.body) for r in server.requests[sent:]]
    # the second verdict and what follows it: the scene, the user and batch 1 were on disk
    assert resumed == ["UserJudge", "Activity", "EventBatch", "ProposalReply", "UserJudge", "Activity"]
    assert json.loads((out / "summary.json").read_text())["kept"] == {"coding": 1}


def test_a_kept_trace_is_installed_loads_and_plays_a_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.envs import load_default

    with FakeOpenAIServer(responder=make_responder({"writing": "ok"})) as server:
        assert main(synth_argv(tmp_path / "run", server.base_url, "--scene", "coding", "--scene", "writing")) == 0
    assert "proactivebench/synth-" in capsys.readouterr().err
    catalog = load_default([])
    made = sorted((e for e in catalog.environments if "/synth-" in e.id), key=lambda e: e.id)
    assert [e.id.rsplit("/", 1)[1] for e in made] == ["coding-0000", "writing-0000"] and not catalog.problems
    coding = made[0]
    assert coding.theme == "Coding" and "synth_coding" in coding.splits and len(coding.events) == 6
    record_file = tmp_path / "session.json"
    with FakeOpenAIServer(responder=make_responder()) as server:
        assert main(["run", coding.id, "--agent", "openai/a", "--user", "openai/u", "--api-base", server.base_url,
                     "--out", str(record_file)]) == 0
    record = RunRecord.model_validate_json(record_file.read_text())
    judged = [e for e in record.section.events if e.judgement is not None]
    assert record.env_id == coding.id and len(judged) == 6  # every event proposed on and judged


def test_shards_merged_equal_the_whole_run_and_another_config_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(responder=make_responder({"writing": "ok"})) as server:
        for i in range(2):
            assert main(synth_argv(tmp_path / f"s{i}", server.base_url, "--shard", f"{i}/2", n=2)) == 0
        assert main(["synth", "merge", "--out", str(tmp_path / "merged"), str(tmp_path / "s0"), str(tmp_path / "s1")]) == 0
        assert main(synth_argv(tmp_path / "whole", server.base_url, "--out-only", n=2)) == 0
        capsys.readouterr()
        assert main(synth_argv(tmp_path / "whole", server.base_url, "--resume", "--judge", "reward", n=2,
                               judge=True)) == 1
    assert "another config (it differs in config, models)" in capsys.readouterr().err
    merged, whole = files(tmp_path / "merged"), files(tmp_path / "whole")
    assert {k: v for k, v in merged.items() if k.startswith(("items/", "out/"))} == {
        k: v for k, v in whole.items() if k.startswith(("items/", "out/"))}
    assert "out/splits.json" in merged and "out/agent_trainset.jsonl" in merged
    assert merged["summary.json"] == whole["summary.json"]


def test_an_unknown_scene_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synth", "proactivebench", "--n", "1", "--out", str(tmp_path / "x"), "--scene", "space"]) == 2
    assert "unknown scene space" in capsys.readouterr().err


def test_one_trace_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    """Every role on local/smollm2, one batch (6 calls at most, each capped by the seat's token
    cap). Its replies are junk, so the trace may be kept or rejected; what is checked is that every
    stage that ran was on the embedded model and the run ended with an outcome and its summary."""
    out = tmp_path / "local"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "synth", "proactivebench", "--scene", "coding", "--n", "1",
         "--batches", "1", "--out", str(out), "--out-only"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "135M-parameter offline demo model" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tried"] == 1 and summary["unfinished"] == 0 and 1 <= summary["calls"] <= 6 * 3
    assert set(summary["models"].values()) == {"local/smollm2"}
    steps = [json.loads(p.read_text()) for p in (out / "items").rglob("*.json") if p.name != "result.json"]
    assert steps and {s["model"] for s in steps} == {"local/smollm2"} and all(s["calls"] >= 1 for s in steps)
    result = json.loads((out / "items" / "coding-0000" / "result.json").read_text())
    assert (result["status"] == "kept") == bool(summary["kept"]) and (result["status"] == "kept" or result["reason"])
