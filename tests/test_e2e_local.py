"""End to end on the embedded offline model: no keys, no network, every seat local/smollm2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from proactive_tui.core.run_record import RunRecord


# The bound on the model's work is the turn and token caps, not the clock. One turn is the fewest
# the assertions need: the plan and its score, one agent and one user message, one turn check and
# the final guidance score, 6 calls of the embedded model (live judging stays off, as by default).
# The user seat only writes free text, so its replies are capped short; the agent seat keeps the
# gateway's defaults because its plan is structured (a cap that cut the JSON short would make the
# gateway re-ask, more work, and fail the plan). The judge's replies are bounded by the grammar's
# string and list caps.
MODEL_WORK = ["--max-turns", "1"]
MODEL_ENV = {"PROACTIVE_TUI_USER_MAX_TOKENS": "24"}
# Only a hang guard, never a timing check: ~30 s on an idle 2-core machine, up to ~400 s measured
# with both cores kept busy by other work (llama.cpp slows down far more than 2x when it has to
# share the cores); the guard sits well above that.
HANG_GUARD_S = 1800


def test_run_on_local_smollm2_every_seat(tmp_path: Path) -> None:
    out = tmp_path / "local.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "run", "proactiveeval/system_operation/fair/0", *MODEL_WORK,
         "--out", str(out)],
        cwd=ROOT, env={**os.environ, **MODEL_ENV}, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "135M-parameter offline demo model" in proc.stderr
    record = RunRecord.model_validate_json(out.read_text())
    assert {info["model"] for info in record.models.values()} == {"local/smollm2"}
    assert record.termination.reason in ("max_turns", "target_reached")
    agent_turns = [m for m in record.messages if m.role == "agent"]
    assert agent_turns and all(m.content.strip() and m.model == "local/smollm2" for m in record.messages)
    assert len(record.section.turn_checks) == len(agent_turns)
    # the grammar-constrained judge always yields scores in range, attributed to the model
    assert record.section.planning.score is not None and 1 <= record.section.planning.score <= 10
    g = record.section.guidance
    assert g is not None and g.judge_model == "local/smollm2"
    for dim in ("effectiveness", "personalization", "tone", "engagement", "naturalness", "overall"):
        assert 1 <= getattr(g, dim) <= 10
    assert record.totals.total_tokens > 0 and record.totals.cost is None
    assert record.versions["prompts"].startswith("guidance-")


PROACTBENCH_SAMPLE = "proactbench/BP_PROFESSIONAL_01_EVA__style21__531a542ff1714bb080d8f06f3cd2daff"


def test_proactbench_both_protocols_on_local_smollm2(tmp_path: Path) -> None:
    """Offline (one trigger) and online (two turns) on the embedded model end as sessions, not as a
    dead process: the online Planner's first call once aborted Python inside llama.cpp (the no-copy
    processor left every token the grammar allowed at -inf, "Unexpected empty grammar stack")."""
    for protocol, bound in (("offline", ["--max-triggers", "1"]), ("online", ["--max-turns", "2"])):
        out = tmp_path / f"{protocol}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "run", PROACTBENCH_SAMPLE, "--protocol", protocol, *bound,
             "--out", str(out)],
            cwd=ROOT, env={**os.environ, **MODEL_ENV}, capture_output=True, text=True, timeout=HANG_GUARD_S,
        )
        assert proc.returncode == 0, (protocol, proc.stderr[-2000:])
        record = RunRecord.model_validate_json(out.read_text())
        assert record.termination.reason == "completed", protocol
        assert {info["model"] for info in record.models.values()} == {"local/smollm2"}
        if protocol == "offline":  # the one trigger answered by the local agent and judged (or SKIPPED, never lost)
            [trigger] = record.section.triggers
            assert trigger.judged and trigger.response and trigger.response.strip()
        else:
            assert record.section.plans, "the Planner's first plan is recorded"
