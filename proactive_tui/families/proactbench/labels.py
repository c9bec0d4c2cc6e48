"""ProactBench's verdicts as labels see them (`services.labels`), and who gave each.

One verdict per judged trigger point, keyed `trigger:<index>` (the trigger's 1-based place in the
dialogue, stable within the session), of the kind "trigger verdict": PASS, PARTIAL or FAIL, or
None when the trigger was SKIPPED (the judging call failed or gave nothing usable: a person can
still say what the grade should have been, but the judge's None never counts as a grade).

Who the judge is depends on the protocol: offline the judge seat's model; online the User Agent,
which grades the previous reply with the user's next message (named "<model> (user agent)", so
its figures are never pooled with an offline judge's of the same model); for a session imported
from the ProactBench human study, the study's judge as the study recorded it, marked as imported.
A verdict a person gave (a person in the user seat) is theirs already, not a judge's: not listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proactive_tui.core.verdicts import Verdict
    from proactive_tui.core.run_record import RunRecord

STUDY_NAME = "ProactBench human study"
"""How an imported study verdict says where it comes from (`Verdict.imported_from`)."""


def judge_name(judge: str | None, judged_by: str | None) -> str:
    """The judge a label compares a person with: the model, marked with its role when the role
    changes what the verdict is (online User Agent, an imported study's judge)."""
    name = judge or "-"
    if judged_by == "user_agent":
        return f"{name} (user agent)"
    if judged_by == "study":
        return f"{name} (study, imported)"
    return name


def verdicts(record: RunRecord) -> list[Verdict]:
    """The trigger verdicts of a record a person can label, in trigger order."""
    from proactive_tui.core.verdicts import Verdict

    out: list[Verdict] = []
    for trigger in sorted(record.section.triggers, key=lambda t: t.index):
        if not trigger.judged or trigger.judged_by == "person":
            continue
        counted = trigger.counted
        value = None if counted == "SKIPPED" else counted
        result = trigger.result
        if result is not None and (result.rationale or result.evidence):
            detail = result.rationale + (f'\nevidence: "{result.evidence}"' if result.evidence else "")
        else:
            detail = trigger.problem or ("SKIPPED" if value is None else "")
        out.append(Verdict(
            key=f"trigger:{trigger.index}", kind="trigger verdict",
            judge=judge_name(trigger.judge, trigger.judged_by), value=value,
            label=f"trigger {trigger.index}, turn {trigger.turn} ({trigger.type}): PASS, PARTIAL or FAIL?",
            detail=detail, imported_from=STUDY_NAME if trigger.judged_by == "study" else "",
        ))
    return out
