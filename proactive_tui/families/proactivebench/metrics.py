"""ProactiveBench scoring (docs/protocols.md#proactivebench): confusion counts and the six metrics, as pure functions.

One scoring path for everything: a live session folds its verdicts through
`confusion_from_judgements`, and a judged trace written by upstream's tools (or by our
`proactivebench` export) goes through `confusion_from_trace`, so batch evaluation, the run record
and the export can never disagree about what a number means.

| proposal | judgement | outcome |
|----------|-----------|---------|
| task     | accepted  | TP      |
| task     | rejected  | FP      |
| null     | accepted  | TN      |
| null     | rejected  | FN      |

A ratio whose denominator is zero is None ("not defined"), never a fake 0: a trace on which the
agent never proposed has no precision, and saying 0% would blame it for something it did not do.
F1 is None when precision or recall is; when both are defined and zero it is a real 0.

Accept Rate counts single tasks (accepted tasks / proposed tasks), as upstream does, so with three
candidates per event it differs from precision, which counts events.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping

from pydantic import BaseModel

Outcome = Literal["TP", "FP", "TN", "FN"]
Judgement = Literal["accepted", "rejected", "skipped"]


class Confusion(BaseModel):
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    skipped: int = 0
    """Events not counted (a person chose to skip, or no usable reply or verdict)."""
    proposals: int = 0
    """Single tasks proposed (with three candidates an event may propose up to three)."""
    accepted_proposals: int = 0

    @property
    def events(self) -> int:
        """Events counted in the four cells."""
        return self.tp + self.fp + self.tn + self.fn

    def __add__(self, other: "Confusion") -> "Confusion":
        return Confusion(**{k: getattr(self, k) + getattr(other, k) for k in Confusion.model_fields})

    def add(self, outcome: Outcome | None, proposed: int = 0, accepted: int = 0) -> "Confusion":
        """A copy with one more event (`outcome` None: a skipped event)."""
        data = self.model_dump()
        if outcome is None:
            data["skipped"] += 1
        else:
            data[outcome.lower()] += 1
        data["proposals"] += proposed
        data["accepted_proposals"] += accepted
        return Confusion(**data)


class Metrics(BaseModel):
    """Fractions in [0, 1]; None where the denominator is zero."""

    recall: float | None = None
    precision: float | None = None
    accuracy: float | None = None
    false_alarm: float | None = None
    f1: float | None = None
    accept_rate: float | None = None

    def as_upstream(self) -> dict[str, float | None]:
        """Upstream's column names (calculate_agent_performance.py)."""
        return {"Recall": self.recall, "Precision": self.precision, "Accuracy": self.accuracy,
                "False-Alarm": self.false_alarm, "F1-Score": self.f1, "Accept Rate": self.accept_rate}


METRIC_LABELS = (
    ("recall", "Recall"), ("precision", "Precision"), ("accuracy", "Accuracy"),
    ("false_alarm", "False-Alarm"), ("f1", "F1"), ("accept_rate", "Accept Rate"),
)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(confusion: Confusion) -> Metrics:
    c = confusion
    recall = _ratio(c.tp, c.tp + c.fn)
    precision = _ratio(c.tp, c.tp + c.fp)
    if recall is None or precision is None:
        f1 = None
    elif precision + recall == 0:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return Metrics(
        recall=recall, precision=precision, accuracy=_ratio(c.tp + c.tn, c.events),
        false_alarm=_ratio(c.fp, c.tp + c.fp), f1=f1, accept_rate=_ratio(c.accepted_proposals, c.proposals),
    )


def outcome_of(proposed: bool, accepted: bool) -> Outcome:
    if proposed:
        return "TP" if accepted else "FP"
    return "TN" if accepted else "FN"


class EventJudgement(BaseModel):
    """One event's final answer: the tasks proposed (empty = null) and the verdict on each.

    `verdicts[i]` judges `tasks[i]`; for a null proposal `verdicts` holds the single verdict on
    "no help needed". The event is accepted when any verdict is "accepted" (three candidates: the
    user takes any one), rejected when none is but one is "rejected", skipped otherwise.
    """

    tasks: list[str] = []
    verdicts: list[Judgement] = []

    @property
    def judgement(self) -> Judgement:
        if "accepted" in self.verdicts:
            return "accepted"
        if "rejected" in self.verdicts:
            return "rejected"
        return "skipped"

    @property
    def outcome(self) -> Outcome | None:
        j = self.judgement
        return None if j == "skipped" else outcome_of(bool(self.tasks), j == "accepted")

    def counted_proposals(self) -> tuple[int, int]:
        """(tasks proposed, tasks accepted), counting only tasks that got a verdict."""
        if not self.tasks:
            return 0, 0
        judged = [v for v in self.verdicts[: len(self.tasks)] if v != "skipped"]
        return len(judged), judged.count("accepted")


def add_judgement(confusion: Confusion, judgement: EventJudgement) -> Confusion:
    proposed, accepted = judgement.counted_proposals()
    return confusion.add(judgement.outcome, proposed, accepted)


def confusion_from_judgements(judgements: Iterable[EventJudgement | Mapping[str, Any]]) -> Confusion:
    """Count events (each an EventJudgement or a dict with `tasks` and `verdicts`)."""
    confusion = Confusion()
    for item in judgements:
        j = item if isinstance(item, EventJudgement) else EventJudgement.model_validate(item)
        confusion = add_judgement(confusion, j)
    return confusion


def _as_dict(event: Any) -> dict[str, Any]:
    if isinstance(event, BaseModel):
        return event.model_dump()
    return dict(event)


def _is_task(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and value.strip().lower() in ("", "null", "none"))


def confusion_from_trace(events: Iterable[Any], per: Literal["candidate", "event"] = "candidate") -> Confusion:
    """Count an upstream judged trace: events with `agent_response` (a list) and `judgement` ([bool]).

    `per="candidate"` reproduces upstream's counting exactly: every (prediction, judgement) pair is
    one cell, a None prediction being a null proposal. `per="event"` counts each event once (accepted
    if any candidate was), which is how a three-candidate session scores. With one candidate per
    event the two agree. An `agent_response` of `[]` with one judgement is read as a judged null; a
    list with `judgement: []` is an event that was run but not judged (counted as `skipped`;
    upstream ignores it); events without both lists (not run) are left out.
    """
    confusion = Confusion()
    for raw in events:
        event = _as_dict(raw)
        response = event.get("agent_response")
        verdicts = event.get("judgement")
        if not isinstance(response, list) or not isinstance(verdicts, list):
            continue
        preds = response if response else [None]
        pairs = [(p, v) for p, v in zip(preds, verdicts) if isinstance(v, bool)]
        if not pairs:
            confusion = confusion.add(None)  # run but not judged (our export's skipped events)
            continue
        if per == "candidate":
            for pred, ok in pairs:
                proposed = _is_task(pred)
                confusion = confusion.add(outcome_of(proposed, ok), int(proposed), int(proposed and ok))
        else:
            tasks = [p for p, _ in pairs if _is_task(p)]
            judgement = EventJudgement(
                tasks=[str(t) for t in tasks],
                verdicts=["accepted" if ok else "rejected" for p, ok in pairs if _is_task(p) or not tasks],
            )
            confusion = add_judgement(confusion, judgement)
    return confusion


def metrics_by_split(per_trace: Mapping[str, Confusion], splits: Mapping[str, Any]) -> dict[str, Confusion]:
    """Sum trace confusions over each named split.

    `per_trace` maps a trace's file stem (`code_11`) to its counts; `splits` is splits.json as read
    (name -> {"files": [...]} or a `Split`). A split none of whose traces were run is left out.
    """
    out: dict[str, Confusion] = {}
    for name, split in splits.items():
        files = split.get("files", []) if isinstance(split, Mapping) else getattr(split, "files", [])
        stems = [f[:-5] if f.endswith(".json") else f for f in files]
        present = [per_trace[s] for s in stems if s in per_trace]
        if present:
            total = Confusion()
            for c in present:
                total = total + c
            out[name] = total
    return out
