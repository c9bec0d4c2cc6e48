"""Human labels on judge verdicts, and how often the judges agree with the people (issue 18).

Every family lists the verdicts its judges gave in a session (`RecordPart.verdicts`: a turn check, a
plan or dimension score, a proposal verdict, a Chronos rule check), each under a key stable
within the session ("turn_check:2", "dimension:tone", "proposal:3:0:0"). A person labels one:
they agree, or they disagree and give the value they think right, with a note. Labels live in the
store's `labels` table (`store.db.LabelRow`), beside the session and never in its event log, so
what the judge said stays what the judge said.

`agreement(rows)` compares judge and person per (judge, kind): n, accuracy, Cohen's kappa and the
confusion matrix (judge value x human value), with the disagreements listed. No UI imports here.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from pydantic import BaseModel, Field

from proactive_tui.core.verdicts import LabelError, parse_value, value_text, verdicts_of
from proactive_tui.services.study_import import ImportSummary, study_of

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def label_verdict(store: Any, session_id: str, key: str, agree: bool, value: Any = None, note: str = "",
                  *, created_at: str | None = None) -> Any:
    """Keep a person's label on the verdict `key` of session `session_id` (replacing an earlier
    one), after checking the verdict exists and, on a disagreement, that the corrected value is of
    the kind's type and differs from the judge's. Returns the stored `LabelRow`."""
    from proactive_tui.store import StoreError, load_record
    from proactive_tui.store.db import LabelRow

    try:
        record = load_record(store, session_id)
    except StoreError as exc:
        raise LabelError(f"session {session_id}: {exc}") from None
    verdict = next((v for v in verdicts_of(record) if v.key == key), None)
    if verdict is None:
        keys = ", ".join(v.key for v in verdicts_of(record)) or "none"
        raise LabelError(f"session {session_id} has no verdict {key!r} (its verdicts: {keys})")
    where = f"session {session_id}, verdict {key}"
    if agree:
        if value is not None and parse_value(verdict.kind, value, where=where) != verdict.value:
            raise LabelError(f"{where}: agreeing keeps the judge's value ({value_text(verdict.value)}); "
                             "give a different value by disagreeing")
        if verdict.value is None:
            raise LabelError(f"{where}: the judge gave no usable verdict to agree with; disagree with a value")
        human = verdict.value
    else:
        if value is None or value == "":
            raise LabelError(f"{where}: disagreeing needs the corrected value (field 'value')")
        human = parse_value(verdict.kind, value, where=where)
        if human == verdict.value:
            raise LabelError(f"{where}: the corrected value {value_text(human)} is the judge's own; agree instead")
    row = LabelRow(session_id=session_id, verdict=key, kind=verdict.kind, judge=verdict.judge,
                   judge_value=verdict.value, agree=agree, value=human, note=note, created_at=created_at or _now())
    store.put_label(row)
    return row


def note_label(store: Any, session_id: str, key: str, note: str) -> Any:
    """Change only the note of the person's own label (rater ''; an imported rater's label is
    theirs). LabelError when the verdict is not labelled."""
    row = next((r for r in store.labels(session_id) if r.verdict == key and r.rater == ""), None)
    if row is None:
        raise LabelError(f"session {session_id}, verdict {key}: not labelled yet (agree or disagree first)")
    row = row.model_copy(update={"note": note})
    store.put_label(row)
    return row


# -- agreement ------------------------------------------------------------------------------


def cohen_kappa(pairs: list[tuple[Any, Any]]) -> float | None:
    """Cohen's kappa (unweighted) of (judge value, human value) pairs, from scikit-learn's
    `cohen_kappa_score`: statistics come from a maintained library, not a formula typed here.

    One case is ours: when both raters gave one and the same category every time, chance
    agreement is certain and the ratio is 0/0 (scikit-learn says NaN); we call it 1.0, since they
    agree every time. (A single category overall is the only way chance agreement can be certain.)
    None for no pairs. scikit-learn is imported here, when a figure is asked for, never at start-up.
    """
    if not pairs:
        return None
    left = [_cat(a) for a, _ in pairs]
    right = [_cat(b) for _, b in pairs]
    if len(set(left) | set(right)) == 1:
        return 1.0
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(left, right))


def _cat(value: Any) -> str:
    """A category name for a value (JSON values are not all hashable in the same way)."""
    return value_text(value)


class Disagreement(BaseModel):
    session_id: str
    verdict: str
    judge_value: Any = None
    value: Any = None
    note: str = ""
    rater: str = ""
    """Who labelled ('' : the person using this store; else an imported study's rater)."""


class AgreementRow(BaseModel):
    """Judge against person, for one judge and one kind of verdict."""

    judge: str
    kind: str
    n: int
    accuracy: float
    kappa: float | None
    categories: list[str] = Field(default_factory=list)
    """The confusion matrix's rows and columns, in order."""
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    """confusion[judge value][human value] = count (values as `value_text`)."""
    disagreements: list[Disagreement] = Field(default_factory=list)


def _order(values: Iterable[str]) -> list[str]:
    def key(v: str) -> tuple[int, Any]:
        if v.lstrip("-").isdigit():
            return (1, int(v))
        return (0, {"yes": 0, "no": 1, "accepted": 0, "rejected": 1, "PASS": 0, "PARTIAL": 1, "FAIL": 2}.get(v, 9), v)  # type: ignore[return-value]

    return sorted(set(values), key=key)


def agreement(rows: Iterable[Any]) -> list[AgreementRow]:
    """Per (judge, kind), sorted: accuracy (the share of labels agreeing), Cohen's kappa over the
    judge's value vs the person's, the confusion matrix, and the disagreements."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for row in rows:
        groups.setdefault((row.judge, row.kind), []).append(row)
    out = []
    for (judge, kind), group in sorted(groups.items()):
        pairs = [(r.judge_value, r.value) for r in group]
        cats = _order([_cat(a) for a, _ in pairs] + [_cat(b) for _, b in pairs])
        confusion = {a: {b: 0 for b in cats} for a in cats}
        for a, b in pairs:
            confusion[_cat(a)][_cat(b)] += 1
        agreeing = sum(1 for a, b in pairs if _cat(a) == _cat(b))
        out.append(AgreementRow(
            judge=judge, kind=kind, n=len(group), accuracy=agreeing / len(group),
            kappa=cohen_kappa([(_cat(a), _cat(b)) for a, b in pairs]), categories=cats, confusion=confusion,
            disagreements=[Disagreement(session_id=r.session_id, verdict=r.verdict, judge_value=r.judge_value,
                                        value=r.value, note=r.note, rater=r.rater)
                           for r in group if _cat(r.judge_value) != _cat(r.value)],
        ))
    return out


def labels_for_export(store: Any, session_id: str) -> list[dict[str, Any]]:
    """A session's labels as the JSON dicts exports carry under `human_labels`."""
    return [row.model_dump(mode="json") for row in store.labels(session_id)]


def with_labels(store: Any, record: Any) -> Any:
    """`record` carrying its session's labels (`RunRecord.human_labels`), for an export."""
    from proactive_tui.store import StoreError

    if store is not None and record is not None:
        try:
            record.human_labels = labels_for_export(store, record.id)
        except StoreError:  # a store that cannot be read: the export goes ahead without labels
            pass
    return record


def import_labels(store: Any, record: Any) -> int:
    """Keep the labels a run record carries (`RunRecord.human_labels`, from an export) in the
    store, for the session the record is. Returns how many."""
    from proactive_tui.store.db import LabelRow

    count = 0
    for data in record.human_labels or []:
        row = LabelRow.model_validate({**data, "session_id": record.id})
        store.put_label(row)
        count += 1
    return count


# -- a family's published rating study -------------------------------------------------------------


class StudyImport(ImportSummary):
    """What importing a rating study into the store did (`RatingStudy.import_study`)."""

    sessions_new: int = 0
    sessions_kept: int = 0
    """Items whose session was already in the store (an import run twice adds nothing)."""
    labels_new: int = 0
    labels_kept: int = 0
    """Ratings already in the store as labels (the same rater on the same verdict)."""
    notes: list[str] = Field(default_factory=list)
    """What was left out on purpose, as the study's own analysis leaves it out."""


class StudyGroupRow(BaseModel):
    """One group (a trigger type, or every type pooled) of a study's figures."""

    group: str
    n_items: int
    n_ratings: int
    alpha: float | None = None
    alpha_low: float | None = None
    alpha_high: float | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    """confusion[human consensus][judge] = items, in `StudyFigures.categories` order."""


class StudyFigures(BaseModel):
    """A study's agreement figures for one judge, computed from the labels in the store: what
    `labels agreement` prints and the agreement panel shows, whatever the family."""

    study: str
    """The study's name ("ProactBench human study")."""
    family: str
    judge: str
    kind: str
    categories: list[str]
    """The grades, worst first, as the study orders them (rows and columns of `confusion`)."""
    alpha_label: str
    kappa_label: str
    resamples: int
    groups: list[StudyGroupRow]
    deviations: list[str] = Field(default_factory=list)
    """One line per option that departs from the study's own analysis; empty for the study's."""
    excluded_raters: dict[str, float | None] = Field(default_factory=dict)
    raters: int = 0
    items: int = 0
    """Verdicts of this judge in the sessions looked at (rated or not)."""
    left_out: int = 0
    """Labels left out because the judge gave no grade there (a SKIPPED verdict)."""


class RatingStudy:
    """A family's published human rating study (`Family.rating_study`): several raters grading
    the verdicts a judge gave, and the study's own way of measuring how far they agree.

    `import_study` turns the study's files into sessions and labels in the store (the judge's
    verdicts marked as imported, each rating a label with its rater); `analyse` turns the labels
    in the store back into the study's figures, per judge, so a person's own labels on their own
    sessions are measured the same way as the published study. The CLI and the screens reach it
    through `rating_study` / `rating_studies` here, never by importing the family."""

    family: str = ""
    title: str = ""
    kind: str = ""
    """The verdict kind its raters grade."""

    def import_study(self, store: Any, source: Any = None) -> StudyImport:
        """Import the study in `source` (a folder; None: the copy the family ships)."""
        raise NotImplementedError

    def analyse(self, store: Any, *, quadratic: bool = False, exclude_raters: bool = False,
                resamples: int | None = None, overall: bool = True) -> list[StudyFigures]:
        """The figures per judge from the store's labels of `kind` (`resamples` None: the study's
        count). `quadratic` and `exclude_raters` are the paper's options, named as deviations."""
        raise NotImplementedError


def rating_studies() -> list[RatingStudy]:
    """The rating study of every installed family that has one."""
    from proactive_tui.core import registry

    out = []
    for family in registry.families().values():
        study = family.rating_study()
        if study is not None:
            out.append(study)
    return out


def rating_study(family_name: str) -> RatingStudy:
    """The rating study of `family_name`; LabelError naming the families that have one."""
    return study_of(rating_studies(), family_name, "human rating study", LabelError)
