"""ProactiveBench scoring (docs/protocols.md#proactivebench): confusion counts and the six metrics, as pure functions.

One scoring path for everything: a live session folds its verdicts through `add_judgement`, and a
judged trace written by upstream's tools (or by our `proactivebench` export) goes through
`confusion_from_trace`, so batch evaluation, the run record and the export can never disagree
about what a number means. Both count the way upstream's `calculate_scores`
(thunlp/ProactiveAgent `eval/calculate_agent_performance.py`, Apache-2.0) counts: one cell per
(proposal, verdict) pair, so with three candidates an event gives up to three cells.

| proposal | judgement | outcome |
|----------|-----------|---------|
| task     | accepted  | TP      |
| task     | rejected  | FP      |
| null     | accepted  | TN      |
| null     | rejected  | FN      |

A ratio whose denominator is zero is 0.0, as upstream's `x / (d + eps)` gives, so our numbers and
upstream's script agree on every export. A zero that comes from an empty denominator is not a
measured zero, though: `Metrics.undefined` names the reason ("no proposals"), and every display
says it next to the number (`show`).

Accept Rate counts single tasks (accepted tasks / proposed tasks), as upstream does; since cells
are counted per task too, it equals precision (upstream's own results have the two columns equal).
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping

from pydantic import BaseModel, Field

Outcome = Literal["TP", "FP", "TN", "FN"]
Judgement = Literal["accepted", "rejected", "skipped"]


class Confusion(BaseModel):
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    skipped: int = 0
    """Events with no counted verdict (a person chose to skip, or no usable reply or verdict)."""
    proposals: int = 0
    """Single tasks proposed and judged (with three candidates an event may propose up to three)."""
    accepted_proposals: int = 0

    @property
    def judged(self) -> int:
        """Cells counted: one per (proposal, verdict) pair, so one per event with one candidate."""
        return self.tp + self.fp + self.tn + self.fn

    @property
    def events(self) -> int:
        """The cells counted (the name predates three candidates; see `judged`)."""
        return self.judged

    def __add__(self, other: "Confusion") -> "Confusion":
        return Confusion(**{k: getattr(self, k) + getattr(other, k) for k in Confusion.model_fields})

    def add(self, outcome: Outcome | None, proposed: int = 0, accepted: int = 0) -> "Confusion":
        """A copy with one more cell (`outcome` None: one more skipped event)."""
        data = self.model_dump()
        if outcome is None:
            data["skipped"] += 1
        else:
            data[outcome.lower()] += 1
        data["proposals"] += proposed
        data["accepted_proposals"] += accepted
        return Confusion(**data)


METRIC_LABELS = (
    ("recall", "Recall"), ("precision", "Precision"), ("accuracy", "Accuracy"),
    ("false_alarm", "False-Alarm"), ("f1", "F1"), ("accept_rate", "Accept Rate"),
)

NO_PROPOSALS = "no proposals"
NO_NEED = "no event needed help"
NOTHING_JUDGED = "nothing judged"


class Metrics(BaseModel):
    """Fractions in [0, 1]. A zero denominator gives 0.0 (upstream's eps) and an entry in
    `undefined` saying why; None only in records written before that rule (shown as n/a)."""

    recall: float | None = None
    precision: float | None = None
    accuracy: float | None = None
    false_alarm: float | None = None
    f1: float | None = None
    accept_rate: float | None = None
    undefined: dict[str, str] = Field(default_factory=dict)
    """metric name -> why its value is a 0 by division by nothing ("no proposals")."""

    def as_upstream(self) -> dict[str, float | None]:
        """Upstream's column names (calculate_agent_performance.py)."""
        return {"Recall": self.recall, "Precision": self.precision, "Accuracy": self.accuracy,
                "False-Alarm": self.false_alarm, "F1-Score": self.f1, "Accept Rate": self.accept_rate}


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def metrics(confusion: Confusion) -> Metrics:
    c = confusion
    undefined: dict[str, str] = {}
    if c.tp + c.fn == 0:
        undefined["recall"] = NO_NEED
    if c.tp + c.fp == 0:
        undefined["precision"] = undefined["false_alarm"] = NO_PROPOSALS
    if c.proposals == 0:
        undefined["accept_rate"] = NO_PROPOSALS
    if c.judged == 0:
        undefined["accuracy"] = NOTHING_JUDGED
    recall = _ratio(c.tp, c.tp + c.fn)
    precision = _ratio(c.tp, c.tp + c.fp)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    if f1 == 0.0 and ("precision" in undefined or "recall" in undefined):
        # 2PR/(P+R) is 0 because a factor had nothing to divide by, not because of a measured 0
        undefined["f1"] = "; ".join(dict.fromkeys(undefined[k] for k in ("precision", "recall") if k in undefined))
    return Metrics(
        recall=recall, precision=precision, accuracy=_ratio(c.tp + c.tn, c.judged),
        false_alarm=_ratio(c.fp, c.tp + c.fp), f1=f1, accept_rate=_ratio(c.accepted_proposals, c.proposals),
        undefined=undefined,
    )


def show(m: Metrics, key: str, digits: int = 2, why: bool = True) -> str:
    """One metric as a percentage; a 0 from an empty denominator says so: "0.00% (no proposals)".
    `why=False` marks it with "*" instead (narrow panels put the reason in a footnote)."""
    value = getattr(m, key)
    if value is None:
        return "n/a"
    text = f"{100 * value:.{digits}f}%"
    reason = m.undefined.get(key)
    if reason:
        text += f" ({reason})" if why else "*"
    return text


def reasons(m: Metrics) -> str:
    """The distinct reasons behind the 0s of `m` ("no proposals; no event needed help"), or ""."""
    return "; ".join(dict.fromkeys(r for part in m.undefined.values() for r in part.split("; ")))


def outcome_of(proposed: bool, accepted: bool) -> Outcome:
    if proposed:
        return "TP" if accepted else "FP"
    return "TN" if accepted else "FN"


class EventJudgement(BaseModel):
    """One event's final answer: the tasks proposed (empty = null) and the verdict on each.

    `verdicts[i]` judges `tasks[i]`; for a null proposal `verdicts` holds the single verdict on
    "no help needed". Counting is per pair (`cells`), as upstream's `calculate_scores` counts;
    the event as a whole (`judgement`, `outcome`: what an event card shows) is accepted when any
    verdict is "accepted" (three candidates: the user takes any one), rejected when none is but
    one is "rejected", skipped otherwise.
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

    def cells(self) -> list[Outcome]:
        """One cell per judged (proposal, verdict) pair; a skipped verdict gives none."""
        if not self.tasks:
            return [outcome_of(False, v == "accepted") for v in self.verdicts[:1] if v != "skipped"]
        return [outcome_of(True, v == "accepted") for v in self.verdicts[: len(self.tasks)] if v != "skipped"]

    def counted_proposals(self) -> tuple[int, int]:
        """(tasks proposed, tasks accepted), counting only tasks that got a verdict."""
        cells = self.cells() if self.tasks else []
        return len(cells), cells.count("TP")


def add_judgement(confusion: Confusion, judgement: EventJudgement) -> Confusion:
    """Add one event's cells (or one skipped event when none of its verdicts counts)."""
    cells = judgement.cells()
    if not cells:
        return confusion.add(None)
    for cell in cells:
        confusion = confusion.add(cell, int(cell in ("TP", "FP")), int(cell == "TP"))
    return confusion


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
    # upstream's `calculate_scores`: `pred is not None`, exactly ("", "none" are proposals there)
    return value is not None


def confusion_from_trace(events: Iterable[Any]) -> Confusion:
    """Count an upstream judged trace: events with `agent_response` (a list) and `judgement` ([bool]).

    Every (prediction, judgement) pair of `zip(agent_response, judgement)` is one cell, a None
    prediction being a null proposal, exactly as upstream's `calculate_scores`. An
    `agent_response` of `[]` with one judgement is read as a judged null; a list with
    `judgement: []` is an event that was run but not judged (counted as `skipped`; upstream
    ignores it); events without both lists (not run) are left out.
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
        for pred, ok in pairs:
            proposed = _is_task(pred)
            confusion = confusion.add(outcome_of(proposed, ok), int(proposed), int(proposed and ok))
    return confusion


def metrics_by_split(per_trace: Mapping[str, Confusion], splits: Mapping[str, Any]) -> dict[str, Confusion]:
    """Sum trace confusions over each named split.

    `per_trace` maps a trace's file stem (`code_11`) to its counts; `splits` is splits.json as read
    (name -> {"files": [...]} or a `Split`). A split none of whose traces were run is left out.
    """
    out: dict[str, Confusion] = {}
    for name, split in splits.items():
        stems = split_stems(split)
        present = [per_trace[s] for s in stems if s in per_trace]
        if present:
            total = Confusion()
            for c in present:
                total = total + c
            out[name] = total
    return out


def split_stems(split: Any) -> list[str]:
    """The trace stems a split lists (`code_11.json` and `code_11` both name `code_11`), each once."""
    files = split.get("files", []) if isinstance(split, Mapping) else getattr(split, "files", [])
    return list(dict.fromkeys(f[:-5] if f.endswith(".json") else f for f in files))
