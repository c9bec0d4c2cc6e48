"""The ProactBench score section says apart the two ways a verdict's evidence can fail: no quote
at all, and a quote that is not in the reply it scores (each verdict's own line already does)."""

from __future__ import annotations

from proactbench_events import offline_events

from proactive_tui.core.run_record import fold
from proactive_tui.families.proactbench.events import TriggerJudged
from proactive_tui.families.proactbench.report import report


def _lines(record) -> list[str]:
    section = next(s for s in report(record) if s.id == "proactbench.scores")
    return [f"{getattr(b, 'label', '')} {getattr(b, 'text', '')}" for b in section.blocks]


def test_no_quote_and_a_wrong_quote_are_counted_apart() -> None:
    events = offline_events(verdicts=("PASS", "PARTIAL", "FAIL", "PASS"))
    judged = [e for e in events if isinstance(e, TriggerJudged)]
    judged[0].result.evidence = ""  # no quote
    judged[1].result.evidence = "words the agent never wrote"
    judged[1].evidence_in_reply = False
    lines = _lines(fold(events))
    assert f"Evidence: 1 verdict(s) give no evidence quote (trigger {judged[0].index})" in lines
    assert f"Evidence: 1 verdict(s) quote text that is not in the reply (trigger {judged[1].index})" in lines


def test_good_quotes_give_no_evidence_line() -> None:
    assert not [line for line in _lines(fold(offline_events(verdicts=("PASS", "PARTIAL", "FAIL", "PASS"))))
                if line.startswith("Evidence:")]
