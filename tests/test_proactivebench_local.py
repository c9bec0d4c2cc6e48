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


# The bound on the model's work is the event and item counts, not the clock: one event of the trace
# (the agent's proposal, then the user-judge's verdict if it proposed something) and two reward
# items (two judge calls: the report still has several results to order and group). Every call
# here is structured: its length is bounded by the grammar's string and list caps, and a
# max-tokens cap that cut the JSON short would only make the gateway re-ask (more work).
# The timeouts are only hang guards, never timing checks: each run takes ~16-18 s on an idle 2-core
# machine and up to ~200 s measured with both cores kept busy by other work; the guard sits well
# above that.
HANG_GUARD_S = 1200


def test_run_a_sample_trace_on_local_smollm2(tmp_path: Path) -> None:
    out = tmp_path / "local.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "run", "proactivebench/coding_01", "--max-events", "1", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = RunRecord.model_validate_json(out.read_text())
    assert record.models["agent"]["model"] == "local/smollm2" and record.models["user"]["model"] == "local/smollm2"
    assert record.termination.reason == "completed"
    section = record.section
    assert len(section.events) == 1  # the trace has more: --max-events stopped it
    for ev in section.events:
        assert ev.attempts and ev.attempts[0].model == "local/smollm2"
        assert ev.judgement in ("accepted", "rejected", "skipped")
    c = section.confusion
    assert c.events + c.skipped == 1 and section.metrics == metrics(c)
    assert record.totals.total_tokens > 0
    assert "Accept Rate" in proc.stdout and "[event 1/1]" in proc.stdout


def test_reward_judge_check_on_local_smollm2(tmp_path: Path) -> None:
    out = tmp_path / "rm.json"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "eval", "reward-judge", "--limit", "2", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["judge"] == "local/smollm2" and [r["index"] for r in report["results"]] == [0, 1]
    assert sum(c["items"] for c in report["categories"]) == 2
    assert "agreement with the human majority" in proc.stdout and "overall" in proc.stdout
