"""ProactiveBench end to end on the embedded offline model (local/smollm2): no keys, no network.

The 135M model's proposals and verdicts mean nothing; these tests prove the whole path runs
(grammar-constrained replies in the spec's JSON shape, the judge, the record, the summary).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from proactive_tui.families.proactivebench.metrics import metrics
from proactive_tui.core.run_record import RunRecord


def test_run_a_sample_trace_on_local_smollm2(tmp_path: Path) -> None:
    out = tmp_path / "local.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "run", "proactivebench/coding_01", "--max-events", "2", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = RunRecord.model_validate_json(out.read_text())
    assert record.models["agent"]["model"] == "local/smollm2" and record.models["user"]["model"] == "local/smollm2"
    assert record.termination.reason == "completed"
    section = record.section
    assert len(section.events) == 2
    for ev in section.events:
        assert ev.attempts and ev.attempts[0].model == "local/smollm2"
        assert ev.judgement in ("accepted", "rejected", "skipped")
    c = section.confusion
    assert c.events + c.skipped == 2 and section.metrics == metrics(c)
    assert record.totals.total_tokens > 0
    assert "Accept Rate" in proc.stdout and "[event 2/2]" in proc.stdout


def test_reward_judge_check_on_local_smollm2(tmp_path: Path) -> None:
    out = tmp_path / "rm.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "eval", "reward-judge", "--limit", "3", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["judge"] == "local/smollm2" and len(report["results"]) == 3
    assert sum(c["items"] for c in report["categories"]) == 3
    assert "agreement with the human majority" in proc.stdout and "overall" in proc.stdout
