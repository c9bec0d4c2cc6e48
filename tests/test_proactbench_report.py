"""The ProactBench score section says apart the two ways a verdict's evidence can fail: no quote
at all, and a quote that is not in the reply it scores (each verdict's own line already does)."""

from __future__ import annotations

from proactbench_events import offline_events, sample_env

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


def test_the_dialogues_rubric_lines_say_each_level_once() -> None:
    """The sample's trigger at turn 6 writes its FAIL criterion as "FAIL if the assistant…": the
    report prints "FAIL: if the assistant…", not "FAIL: FAIL if…"; the stored rubric keeps it."""
    record = fold(offline_events(verdicts=("PASS", "PARTIAL", "FAIL", "PASS")))
    section = next(s for s in report(record) if s.id == "proactbench.dialogue")
    levels = [(b.label, b.text) for b in section.blocks if getattr(b, "label", "") in ("PASS:", "PARTIAL:", "FAIL:")]
    assert len(levels) == 3 * len(record.section.triggers)
    assert not [(label, text) for label, text in levels if text.upper().startswith(label[:-1])]
    written = [t.rubric.fail_criteria for t in record.section.triggers if t.rubric.fail_criteria.startswith("FAIL if")]
    assert written and ("FAIL:", written[0].removeprefix("FAIL ")) in levels


def test_a_criterions_own_level_word_is_left_out_once() -> None:
    from proactive_tui.families.proactbench.env import Rubric

    rubric = Rubric(type="CRITICAL", pass_criteria="PASS if it warns", partial_criteria="Partial: hints only",
                    fail_criteria="To FAIL, it must ignore the risk")
    assert rubric.criteria() == [("PASS", "if it warns"), ("PARTIAL", "hints only"),
                                 ("FAIL", "To FAIL, it must ignore the risk")]
    passing = Rubric(type="CRITICAL", pass_criteria="PASSes nothing on: the word is not the level",
                     partial_criteria="PARTIALLY aware", fail_criteria="FAIL — silent")
    assert [text for _, text in passing.criteria()] == ["PASSes nothing on: the word is not the level",
                                                        "PARTIALLY aware", "silent"]
    assert rubric.pass_criteria == "PASS if it warns"  # the rubric itself keeps what was written


def test_the_headless_printer_says_each_level_once() -> None:
    """`run`'s printer prints a trigger's rubric as "FAIL: if the assistant…", not "FAIL: FAIL if…"."""
    import io

    from rich.console import Console

    from proactive_tui.families.proactbench.cli import ProactBenchPrinter

    events = offline_events(verdicts=("PASS", "PARTIAL", "FAIL", "PASS"))
    out = io.StringIO()
    console = Console(file=out, width=400, color_system=None)
    printer = ProactBenchPrinter(console, Console(file=io.StringIO()), spec=None, env=sample_env())
    for event in events:
        if event.type == "proactbench.trigger_opened":
            printer.show(event)
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip().split(":")[0] in ("PASS", "PARTIAL", "FAIL")]
    assert len(lines) == 3 * sum(e.type == "proactbench.trigger_opened" for e in events)
    assert not [line for line in lines if line.split(": ", 1)[1].upper().startswith(line.split(":")[0])]
    assert any(line.startswith("FAIL: if the assistant") for line in lines)
