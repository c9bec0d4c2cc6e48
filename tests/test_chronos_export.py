"""The `chronos` export: golden sample, shape, and what a format failure leaves behind.

Regenerate the golden file after a deliberate change with `UPDATE_GOLDEN=1 pytest tests/test_chronos_export.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chronos_helpers import make_session, play
from conftest import ROOT
from proactive_tui.families.chronos.testing import OracleAgent
from proactive_tui.families.chronos.env import ChronosScenario
from proactive_tui.export import load_formats
from proactive_tui.export.registry import ExportError, export
from proactive_tui.llm.errors import ModelError

GOLDEN = ROOT / "tests" / "golden" / "export" / "chronos-shift-positive.json"


def normalised(line: str) -> dict:
    data = json.loads(line)
    data["meta"]["date"] = "<date>"
    data["meta"]["versions"]["app"] = "<app>"
    return data


async def test_golden_sample(tmp_path: Path) -> None:
    load_formats()
    _, record = await play(make_session("car-purchase-shift/positive", session_id="golden000001"))
    [path] = export([record], "chronos", tmp_path / "out.jsonl")
    got = normalised(path.read_text(encoding="utf-8").strip())
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(GOLDEN.read_text(encoding="utf-8"))


async def test_sample_shape(tmp_path: Path) -> None:
    load_formats()
    _, a = await play(make_session("ticket-booking/positive"))
    _, b = await play(make_session("house-hunting-bungalow/negative"))
    [path] = export([a, b], "chronos", tmp_path)
    assert path == tmp_path / "chronos.jsonl"
    samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(samples) == 2
    for s in samples:
        msgs = s["messages"]
        assert msgs[0]["role"] == "system" and "proactive_action" in msgs[0]["content"]
        assert msgs[1]["role"] == "user"
        roles = [m["role"] for m in msgs[1:]]
        # every assistant reply answers exactly one input (a user message or an observation)
        assert all((x == "assistant") != (y == "assistant") for x, y in zip(roles, roles[1:]))
        assert roles[-1] == "assistant"
        for m in msgs:
            if m["role"] == "assistant":
                assert json.loads(m["content"])["task_description"]["status"]
            if m["role"] == "observation":
                assert m["source"] in ("tool_call", "internal_trigger") and m["content"].startswith("<observation")
        replies = [json.loads(m["content"])["proactive_action"] for m in msgs if m["role"] == "assistant"]
        assert replies == [t["action"] for t in s["turns"]] == [t["expected_action"] for t in s["turns"]]
        ChronosScenario.model_validate(s["scenario"])
        assert s["outcome"]["success"] is True and s["meta"]["seats"] == {"agent": "scripted", "user": "scripted"}
    assert [m["source"] for m in samples[1]["messages"] if m["role"] == "observation"] == \
        ["tool_call"] + ["internal_trigger"] * 3


async def test_format_failure_and_other_families(tmp_path: Path) -> None:
    load_formats()

    def broken(session, reply):
        if session.state.user_replies == 1:
            raise ModelError("m: no valid AgentReply after 3 replies", "structured", "m")
        return None

    _, record = await play(make_session("car-purchase/positive", agent=OracleAgent(override=broken)))
    [path] = export([record], "chronos", tmp_path / "f.jsonl")
    s = json.loads(path.read_text(encoding="utf-8"))
    assert s["turns"][-1]["format_failure"] and s["turns"][-1]["action"] is None
    assert s["messages"][-1]["role"] == "user" and s["outcome"]["reason"] == "format_failure"
    record.family = "proactiveeval"
    with pytest.raises(ExportError):
        export([record], "chronos", tmp_path / "g.jsonl")
