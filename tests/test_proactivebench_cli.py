"""`proactive-tui run proactivebench/...` and `eval reward-judge` through the real litellm path to a fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REWARD_DATA, ROOT
from proactive_tui.families.proactivebench.metrics import confusion_from_trace
from proactive_tui.core.run_record import RunRecord
from proactive_tui.testing.fake_openai import FakeOpenAIServer


def bench_responder(body: dict) -> str:
    """Agent: proposes when the user opens something, else null. Judge: accepts every task, rejects null."""
    name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    last = body["messages"][-1]["content"]
    if name in ("ProposalReply", "CandidatesReply"):
        if not last.startswith('{"Instructions": '):  # a retry after a rejection: stay quiet
            return json.dumps({"Purpose": "p", "Thoughts": "t", "Proactive Task": "null", "Response": "null"})
        event = json.loads(last.split('"Observation": "', 1)[1][:-2])["Event"]
        task = "Offer to review the file" if "opens" in event else "null"
        return json.dumps({"Purpose": "[bold]p[/bold]", "Thoughts": "t \x1b[31mred\x1b[0m", "Proactive Task": task,
                           "Response": "Shall I?"})
    if name == "JudgeVerdict":  # upstream's reward-model input: {"Observations ...", "Proposed Task", ...}
        accepted = json.loads(last)["Proposed Task"] is not None
        return json.dumps({"thought": "fair enough", "judgement": "accepted" if accepted else "rejected"})
    return "?"


def run_cli(args: list[str], server: FakeOpenAIServer, **kw) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "160"}
    cmd = [sys.executable, "-m", "proactive_tui", "run", "proactivebench/coding_01", "--api-base", server.base_url,
           "--agent", "openai/agent-m", *args]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_run_writes_a_record_with_confusion_counts(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    with FakeOpenAIServer(responder=bench_responder) as server:
        proc = run_cli(["--user", "openai/judge-m", "--max-events", "4", "--retries", "1", "--no-feedback", "--out", str(out)], server)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.family == "proactivebench" and record.termination.reason == "completed"
    assert record.settings == {"retries": 1, "candidates": 1, "feedback": False, "max_events": 4,
                               "agent_temperature": 0.5}  # upstream's, as no temperature was chosen
    assert record.models["agent"]["temperature"] == 0.5 and record.models["user"]["temperature"] == 0.0
    assert record.models["agent"]["model"] == "openai/agent-m" and record.models["user"]["model"] == "openai/judge-m"
    section = record.section
    # the user opens something in events 1 and 2, not in 3 and 4
    assert [ev.outcome for ev in section.events] == ["TP", "TP", "FN", "FN"]
    assert [len(ev.attempts) for ev in section.events] == [1, 1, 2, 2]  # a rejected null is retried once
    c = section.confusion
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 0, 0, 2)
    assert section.metrics.recall == 0.5 and section.metrics.precision == 1.0
    assert "[event 1/4]" in stdout and "agent (openai/agent-m): proposes Offer to review the file" in stdout
    assert "agent (openai/agent-m) retry 1: stays quiet (null)" in stdout
    assert "TP 2" in stdout and "F1" in stdout and "66.67%" in stdout
    assert "[bold]p[/bold]" in stdout and "\x1b[31m" not in stdout  # model text is data


def test_run_with_a_person_judging_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "human.json"
    with FakeOpenAIServer(responder=bench_responder) as server:
        proc = run_cli(["--user", "human", "--max-events", "3", "--candidates", "3", "--out", str(out)], server, stdin=subprocess.PIPE)
        stdout, stderr = proc.communicate("a\nwhat\nr not now\ns\n", timeout=120)
    assert proc.returncode == 0, stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert record.human_seats == ["user"] and record.mode == "play" and record.models["user"]["model"] == "person"
    assert [ev.judgement for ev in record.section.events] == ["accepted", "rejected", "skipped"]
    assert record.section.confusion.skipped == 1
    assert "you (user)>" in stdout and "not a verdict" in stdout


def test_run_rejects_bad_family_settings() -> None:
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "run", "proactivebench/coding_01", "--retries", "9"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and "invalid settings" in proc.stderr and "retries" in proc.stderr


def test_export_of_a_cli_record_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    with FakeOpenAIServer(responder=bench_responder) as server:
        proc = run_cli(["--user", "openai/judge-m", "--max-events", "5", "--quiet", "--out", str(out)], server)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "[event" not in stdout and "F1" in stdout  # quiet: only the summary
    record = RunRecord.model_validate_json(out.read_text())
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "export", record.id, "--format", "proactivebench",
                           "--out", str(tmp_path / "traces")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "traces" / "coding_01.json").read_text())
    assert len(data) == 5 and all("judgement" in e and "other_infomation" in e for e in data)
    assert confusion_from_trace(data) == record.section.confusion


def expected_reward_numbers() -> dict:
    """What a judge that accepts every task and rejects every null scores, from the data itself."""
    rows = [json.loads(line) for line in REWARD_DATA.read_text().splitlines() if line.strip()]
    per_cat: dict[str, list[int]] = {}
    tp = fp = tn = fn = 0
    for row in rows:
        human = sum(row["annotation"]) * 2 > len(row["annotation"])
        judge = row["pred_task"] is not None
        per_cat.setdefault(row["category"], [0, 0])
        per_cat[row["category"]][0] += 1
        per_cat[row["category"]][1] += int(human == judge)
        tp += judge and human
        fp += judge and not human
        fn += (not judge) and human
        tn += (not judge) and not human
    return {"cats": per_cat, "cells": (tp, fp, tn, fn), "n": len(rows)}


def test_eval_reward_judge_through_the_fake_server(tmp_path: Path) -> None:
    expected = expected_reward_numbers()
    assert expected["n"] == 120
    out = tmp_path / "rm.json"
    with FakeOpenAIServer(responder=bench_responder) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "eval", "reward-judge", "--judge", "openai/rm", "--api-base", server.base_url,
             "--concurrency", "8", "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "160"},
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    cats = {c["category"]: (c["items"], c["agreed"]) for c in report["categories"]}
    assert cats == {k: tuple(v) for k, v in expected["cats"].items()}
    # accept-every-task: right on Correct-Detection and Missed-Need, wrong on the other two
    assert cats == {"Missed-Need (MN)": (30, 30), "Correct-Rejection (CR)": (30, 0),
                    "Correct-Detection (CD)": (30, 30), "False-Alarm (FA)": (30, 0)}
    c = report["confusion"]
    assert (c["tp"], c["fp"], c["tn"], c["fn"]) == expected["cells"] == (30, 30, 30, 30)
    assert report["metrics"]["f1"] == 0.5 and report["agreement"] == 0.5 and report["failed"] == 0
    assert "Correct-Detection (CD)" in proc.stdout and "100.00%" in proc.stdout and "F1 50.00%" in proc.stdout


def test_eval_reward_judge_limit_and_bad_data(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=bench_responder) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "eval", "reward-judge", "--judge", "openai/rm", "--api-base", server.base_url,
             "--limit", "5"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert len([r for r in server.requests if r.method == "POST"]) == 5
    proc = subprocess.run([sys.executable, "-m", "proactive_tui", "eval", "reward-judge", "--data", str(tmp_path / "none.jsonl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "no reward data" in proc.stderr and "Traceback" not in proc.stderr
