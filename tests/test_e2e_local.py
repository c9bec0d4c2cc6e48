"""End to end on the embedded offline model: no keys, no network, every seat local/smollm2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from proactive_tui.core.run_record import RunRecord


def test_run_on_local_smollm2_every_seat(tmp_path: Path) -> None:
    out = tmp_path / "local.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "run", "proactiveeval/system_operation/fair/0", "--max-turns", "2",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
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
