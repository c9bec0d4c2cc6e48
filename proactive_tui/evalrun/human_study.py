"""ProactBench's human validation study: its rating files read, and its agreement figures computed
the way the study's own analysis script computes them (issue 34).

The study (ProactBench, arXiv 2605.09228, Apache-2.0) had 18 pseudonymous raters give Pass /
Partial / Fail on 60 trigger points that a GPT-5.4 judge had scored. Its analysis script reads
every `A*.jsonl` rating file (sorted by name; blank lines and lines that are not JSON skipped) and
`sample_items.json`, drops ratings of items not in the sample, and then, per trigger type
(EMERGENT, CRITICAL, RECOVERY):

- Krippendorff's alpha at the ordinal level over the annotator-by-item matrix (Fail 0, Partial 1,
  Pass 2, missing cells empty; rows every annotator seen anywhere, columns the type's rated items
  sorted by id; when one annotator rated an item twice, the later row fills the cell);
- its 95% interval: a bootstrap over items (columns drawn with replacement), 10,000 resamples,
  numpy `default_rng(2026)`, resamples giving NaN dropped, the 2.5th and 97.5th percentiles;
- the per-item consensus: the majority label over every rating row of the item, ties going to
  Partial, then Pass, then Fail;
- Cohen's kappa, unweighted, of the consensus against the item's `judge_score` (labels Fail,
  Partial, Pass), and its bootstrap interval the same way with seed 2027;
- the 3x3 confusion matrix, rows the human consensus and columns the judge.

Coverage counts and agreement levels are over all items. `analyse` does exactly that, plus one
"OVERALL" row the script does not have (every type pooled, computed the same way), and two
options the paper describes that the script does not apply, each labelled as a deviation in the
result: quadratic-weighted kappa, and the pre-registered rater exclusion (a rater with at least
5 ratings whose quadratic-weighted kappa against the judge is below 0.10 is left out).

The statistics come from maintained libraries (`krippendorff`, scikit-learn), imported inside the
functions so nothing here loads them at start-up. Two 0/0 cases follow the script's rule instead
of the library's: alpha when every rating has one value (the `krippendorff` package refuses such
a matrix; the script then falls back to its own code, which gives 1.0 with two or more items
rated twice, else NaN), and kappa when human and judge used one and the same label throughout
(scikit-learn says NaN; the script says 1.0). No UI, no store: the folder to read is a parameter.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Score = Literal["Fail", "Partial", "Pass"]
TriggerType = Literal["EMERGENT", "CRITICAL", "RECOVERY"]

SCORES: tuple[str, ...] = ("Fail", "Partial", "Pass")
"""The ordinal order (Fail < Partial < Pass); a score's index is its value in the alpha matrix."""
TRIGGER_TYPES: tuple[str, ...] = ("EMERGENT", "CRITICAL", "RECOVERY")
OVERALL = "OVERALL"
TIE_ORDER: tuple[str, ...] = ("Partial", "Pass", "Fail")
"""A tie in the majority vote goes to the first of these among the tied labels."""

RESAMPLES = 10_000
ALPHA_SEED = 2026
KAPPA_SEED = 2027
EXCLUSION_MIN_RATINGS = 5
EXCLUSION_KAPPA = 0.10

PACKAGED_STUDY = Path(__file__).resolve().parent.parent / "families" / "proactbench" / "data" / "human_eval"
"""The study's files as shipped with the package (copied unchanged from the kit; see NOTICE.md there)."""


class HumanStudyError(ValueError):
    """A study file that cannot be read; the message is one line naming the file, line and field."""


class HumanRating(BaseModel):
    """One line of a rater's `A*.jsonl` file."""

    model_config = ConfigDict(extra="ignore")

    annotator_id: str
    item_id: str
    score: Score
    rationale: str = ""
    confidence: int | None = None
    time_spent_seconds: float | None = None
    timestamp: str | None = None
    server_received_at: str | None = None
    file: str = ""
    """The rating file's name, and the line (1-based) the rating came from: where to look."""
    line: int = 0


class Rubric(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str | None = None
    pass_criteria: str = ""
    partial_criteria: str = ""
    fail_criteria: str = ""


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str
    content: str


class StudyItem(BaseModel):
    """One of the rated trigger points in `sample_items.json` (the judge's score hidden from raters)."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    trigger_type: TriggerType
    judge_score: Score
    dialogue_id: str = ""
    turn_index: int | None = None
    evaluated_model: str = ""
    judge_rationale: str = ""
    judge_evidence: str = ""
    persona_category: str = ""
    communication_style: str = ""
    dialogue_history: list[Message] = Field(default_factory=list)
    user_message: str = ""
    anchors_disclosed: list[str] = Field(default_factory=list)
    model_response: str = ""
    rubric: Rubric | None = None


class Study(BaseModel):
    """What was read: the items, the ratings kept (in file order), and what was left out."""

    items: list[StudyItem]
    ratings: list[HumanRating]
    files: list[str]
    skipped_lines: int = 0
    """Blank lines and lines that are not JSON (the script skips them too)."""
    unknown_item_ratings: int = 0
    """Ratings of an item that is not in sample_items.json (the script drops them too)."""


# -- reading -------------------------------------------------------------------------------------


def _one_line_error(where: str, exc: ValidationError) -> HumanStudyError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(record)"
    got = err.get("input")
    shown = "" if err["type"] == "missing" else f", got {json.dumps(got, ensure_ascii=False, default=str)[:60]}"
    return HumanStudyError(f"{where}: field '{field}': {err['msg']}{shown}")


def _regular(path: Path) -> None:
    """Refuse what is not a regular file before opening it: a FIFO would block the read forever."""
    if path.exists() and not path.is_file():
        raise HumanStudyError(f"{path}: not a regular file")


def load_items(path: Path) -> list[StudyItem]:
    """`sample_items.json`: a JSON array of items. HumanStudyError (one line) if it is not."""
    path = Path(path)
    _regular(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HumanStudyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HumanStudyError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, list):
        raise HumanStudyError(f"{path}: expected a JSON array of items, got {type(data).__name__}")
    items: list[StudyItem] = []
    seen: set[str] = set()
    for n, raw in enumerate(data, 1):
        where = f"{path.name} item {n}"
        if not isinstance(raw, dict):
            raise HumanStudyError(f"{where}: expected an object, got {type(raw).__name__}")
        try:
            item = StudyItem.model_validate(raw)
        except ValidationError as exc:
            raise _one_line_error(where, exc) from None
        if item.item_id in seen:
            raise HumanStudyError(f"{where}: field 'item_id': {item.item_id!r} appears twice")
        seen.add(item.item_id)
        items.append(item)
    return items


def read_rating_file(path: Path) -> tuple[list[HumanRating], list[HumanStudyError], int]:
    """One rating file as the script reads it: its ratings in line order, a problem per line that
    is JSON but not a valid rating (one line naming file, line and field: the other lines still
    count), and the number of lines skipped (blank, or not JSON, as the script skips them). A file
    that cannot be read at all raises HumanStudyError."""
    path = Path(path)
    _regular(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HumanStudyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise HumanStudyError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    ratings: list[HumanRating] = []
    problems: list[HumanStudyError] = []
    skipped = 0
    # Lines as Python's text files split them (the script reads them so): at \n, \r\n or \r
    # only, not at U+2028 and the like, which may stand raw inside a JSON string.
    lines = re.split(r"\r\n|\r|\n", text)
    if lines[-1] == "":  # the end of the last line, not a line of its own
        lines.pop()
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            skipped += 1
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            skipped += 1
            continue
        where = f"{path.name} line {n}"
        if not isinstance(raw, dict):
            problems.append(HumanStudyError(f"{where}: expected a JSON object, got {type(raw).__name__}"))
            continue
        try:
            ratings.append(HumanRating.model_validate({**raw, "file": path.name, "line": n}))
        except ValidationError as exc:
            problems.append(_one_line_error(where, exc))
    return ratings, problems, skipped


def load_ratings(paths: Iterable[Path]) -> tuple[list[HumanRating], int]:
    """The ratings of the given files, in the order given and line order, and the number of
    lines skipped (blank, or not JSON, as the script skips them). A line that is JSON but not a
    valid rating is an error naming file, line and field (`read_rating_file` keeps going instead)."""
    ratings: list[HumanRating] = []
    skipped = 0
    for path in paths:
        got, problems, blank = read_rating_file(path)
        if problems:
            raise problems[0]
        ratings.extend(got)
        skipped += blank
    return ratings, skipped


def load_study(folder: Path | None = None) -> Study:
    """The study in `folder` (`sample_items.json` and `results/A*.jsonl`; default: the copy shipped
    with the package). Ratings of unknown items are dropped and counted, as the script does."""
    folder = Path(folder) if folder is not None else PACKAGED_STUDY
    items = load_items(folder / "sample_items.json")
    files = sorted((folder / "results").glob("A*.jsonl"))
    if not files:
        raise HumanStudyError(f"{folder / 'results'}: no rating files (A*.jsonl)")
    ratings, skipped = load_ratings(files)
    known = {it.item_id for it in items}
    kept = [r for r in ratings if r.item_id in known]
    return Study(items=items, ratings=kept, files=[p.name for p in files], skipped_lines=skipped,
                 unknown_item_ratings=len(ratings) - len(kept))


# -- the statistics ------------------------------------------------------------------------------


class Interval(BaseModel):
    """A point estimate and its bootstrap 95% interval (None where undefined)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    resamples_used: int = 0
    """Resamples whose figure was defined (NaN ones are dropped, as the script does)."""


class GroupFigures(BaseModel):
    """The figures of one trigger type (or every type pooled: OVERALL)."""

    group: str
    n_items: int
    """Items of this group with at least one rating."""
    n_ratings: int
    alpha: Interval
    """Krippendorff's alpha, ordinal, with its bootstrap interval (seed 2026)."""
    kappa: Interval
    """Cohen's kappa of the consensus against the judge, with its bootstrap interval (seed 2027)."""
    confusion: dict[str, dict[str, int]]
    """confusion[human consensus][judge] = items, labels in the order Fail, Partial, Pass."""
    consensus: dict[str, str]
    """item id -> the consensus label, for the items rated."""


class Coverage(BaseModel):
    total_items: int
    items_with_3_ratings: int
    items_with_2_ratings: int
    items_with_1_rating: int
    items_with_0_ratings: int
    total_ratings: int


class Analysis(BaseModel):
    """Everything `analyse` computes, with how: the options in force and their labels."""

    kappa_weights: Literal["unweighted", "quadratic"] = "unweighted"
    rater_exclusion: bool = False
    deviations: list[str] = Field(default_factory=list)
    """One line per option that departs from the study's script; empty for the default."""
    resamples: int = RESAMPLES
    excluded_raters: dict[str, float | None] = Field(default_factory=dict)
    """Raters left out by the exclusion, with their quadratic kappa against the judge."""
    rater_kappas: dict[str, float | None] = Field(default_factory=dict)
    """Quadratic kappa against the judge per rater with at least 5 ratings (exclusion only)."""
    coverage: Coverage
    agreement_levels: dict[str, int]
    ratings_per_annotator: dict[str, int]
    groups: dict[str, GroupFigures]
    """By trigger type in the order EMERGENT, CRITICAL, RECOVERY, then OVERALL."""


def majority_consensus(labels: Sequence[str]) -> str:
    """The most frequent label; a tie goes to Partial, then Pass, then Fail (the study's rule)."""
    counts = Counter(labels)
    best = max(counts.values())
    tied = [label for label, c in counts.items() if c == best]
    return min(tied, key=lambda label: TIE_ORDER.index(label) if label in TIE_ORDER else len(TIE_ORDER))


def ordinal_alpha(matrix: Any) -> float:
    """Krippendorff's alpha at the ordinal level of a raters-by-items matrix (NaN = no rating),
    from the `krippendorff` package. When every rating has the same value the package refuses
    the matrix; the study's script then gives 1.0 if at least two items have two or more
    ratings (no disagreement to observe), else NaN, and so does this. With no item rated twice
    the package refuses it too, and the script's answer is NaN."""
    import krippendorff
    import numpy as np

    matrix = np.asarray(matrix, dtype=float)
    values = np.unique(matrix[~np.isnan(matrix)])
    pairable = int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())
    if len(values) <= 1:
        return 1.0 if pairable >= 2 else float("nan")
    if pairable == 0:  # the package refuses this too; the script's fallback gives NaN
        return float("nan")
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))


def kappa(human: Sequence[str], judge: Sequence[str], weights: str | None = None) -> float:
    """Cohen's kappa of two label lists over Fail/Partial/Pass from scikit-learn (`weights`
    None for unweighted, "quadratic" for quadratic-weighted). NaN for no pairs; 1.0 when both
    used one and the same label throughout (scikit-learn's 0/0, the script's rule)."""
    if not human:
        return float("nan")
    if len(set(human) | set(judge)) == 1:
        return 1.0
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(list(human), list(judge), labels=list(SCORES), weights=weights))


def _interval(point: float, samples: list[float]) -> Interval:
    import numpy as np

    value = None if math.isnan(point) else point
    if not samples:
        return Interval(value=value)
    return Interval(value=value, low=float(np.percentile(samples, 2.5)), high=float(np.percentile(samples, 97.5)),
                    resamples_used=len(samples))


def _alpha_interval(matrix: Any, resamples: int, seed: int) -> Interval:
    import numpy as np

    point = ordinal_alpha(matrix)
    n = matrix.shape[1]
    if n < 2:
        return Interval(value=None if math.isnan(point) else point)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        a = ordinal_alpha(matrix[:, rng.integers(0, n, size=n)])
        if not math.isnan(a):
            samples.append(a)
    return _interval(point, samples)


def _kappa_interval(human: list[str], judge: list[str], weights: str | None, resamples: int, seed: int) -> Interval:
    import numpy as np

    point = kappa(human, judge, weights)
    n = len(human)
    if n < 2:
        return Interval(value=None if math.isnan(point) else point)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        k = kappa([human[i] for i in idx], [judge[i] for i in idx], weights)
        if not math.isnan(k):
            samples.append(k)
    return _interval(point, samples)


def _group(name: str, ratings: list[HumanRating], annotators: list[str], items: dict[str, StudyItem],
           weights: str | None, resamples: int) -> GroupFigures:
    import numpy as np

    item_ids = sorted({r.item_id for r in ratings})
    col = {iid: j for j, iid in enumerate(item_ids)}
    row = {aid: i for i, aid in enumerate(annotators)}
    matrix = np.full((len(annotators), len(item_ids)), np.nan)
    for r in ratings:  # in file order: a later duplicate overwrites the earlier one
        matrix[row[r.annotator_id], col[r.item_id]] = SCORES.index(r.score)
    by_item: dict[str, list[str]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, []).append(r.score)
    consensus = {iid: majority_consensus(by_item[iid]) for iid in item_ids}
    human = [consensus[iid] for iid in item_ids]
    judge = [items[iid].judge_score for iid in item_ids]
    from sklearn.metrics import confusion_matrix

    cm = confusion_matrix(human, judge, labels=list(SCORES)) if human else np.zeros((3, 3), dtype=int)
    return GroupFigures(
        group=name, n_items=len(item_ids), n_ratings=len(ratings),
        alpha=_alpha_interval(matrix, resamples, ALPHA_SEED) if item_ids else Interval(value=None),
        kappa=_kappa_interval(human, judge, weights, resamples, KAPPA_SEED),
        confusion={h: {j: int(cm[a, b]) for b, j in enumerate(SCORES)} for a, h in enumerate(SCORES)},
        consensus=consensus,
    )


def _agreement_levels(by_item: dict[str, list[str]]) -> dict[str, int]:
    """The script's per-item buckets (items with 4+ ratings that disagree fall in none)."""
    out: Counter[str] = Counter()
    for scores in by_item.values():
        counts = Counter(scores)
        if len(counts) == 1 and len(scores) >= 3:
            out["all_3_agree"] += 1
        elif len(scores) == 3:
            out["2_agree_1_differ" if max(counts.values()) == 2 else "all_differ"] += 1
        elif len(scores) == 2:
            out["2_agree_only_2_ratings" if len(counts) == 1 else "2_differ_only_2_ratings"] += 1
        elif len(scores) == 1:
            out["only_1_rating"] += 1
    return dict(out)


def rater_kappas(study: Study) -> dict[str, float | None]:
    """Each rater's quadratic-weighted kappa of their own ratings against the judge's scores of
    the same items, for the raters with at least 5 ratings (the exclusion's test)."""
    items = {it.item_id: it for it in study.items}
    per: dict[str, list[HumanRating]] = {}
    for r in study.ratings:
        per.setdefault(r.annotator_id, []).append(r)
    out: dict[str, float | None] = {}
    for aid in sorted(per):
        rs = per[aid]
        if len(rs) < EXCLUSION_MIN_RATINGS:
            continue
        k = kappa([r.score for r in rs], [items[r.item_id].judge_score for r in rs], "quadratic")
        out[aid] = None if math.isnan(k) else k
    return out


def analyse(study: Study, *, kappa_weights: Literal["unweighted", "quadratic"] = "unweighted",
            rater_exclusion: bool = False, resamples: int = RESAMPLES, overall: bool = True) -> Analysis:
    """The study's figures (see the module docstring). The default is the script's analysis; the
    options are the paper's, each named in `deviations`. `resamples` other than 10,000 is a
    deviation too (and named so; 0 gives the point figures only); `overall=False` leaves out the
    pooled row. Cost: scikit-learn checks its input on every call, so a kappa interval takes some
    seconds (about 8 s per group at 10,000 resamples on a 2-core machine; alpha's about 0.7 s):
    run it off the UI thread."""
    weights = None if kappa_weights == "unweighted" else "quadratic"
    deviations: list[str] = []
    if kappa_weights == "quadratic":
        deviations.append("deviation: Cohen's kappa quadratic-weighted (the study's script: unweighted)")
    ratings = list(study.ratings)
    excluded: dict[str, float | None] = {}
    per_rater: dict[str, float | None] = {}
    if rater_exclusion:
        per_rater = rater_kappas(study)
        excluded = {aid: k for aid, k in per_rater.items() if k is None or k < EXCLUSION_KAPPA}
        ratings = [r for r in ratings if r.annotator_id not in excluded]
        deviations.append(
            f"deviation: raters with at least {EXCLUSION_MIN_RATINGS} ratings whose quadratic kappa against the "
            f"judge is below {EXCLUSION_KAPPA:.2f} left out ({', '.join(excluded) or 'none'}); the script keeps every rater")
    if resamples != RESAMPLES:
        deviations.append(f"deviation: {resamples} bootstrap resamples (the study's script: {RESAMPLES})")
    items = {it.item_id: it for it in study.items}
    annotators = sorted({r.annotator_id for r in ratings})
    by_item: dict[str, list[str]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, []).append(r.score)
    sizes = Counter(len(v) for v in by_item.values())
    coverage = Coverage(total_items=len(study.items), items_with_3_ratings=sizes[3], items_with_2_ratings=sizes[2],
                        items_with_1_rating=sizes[1], items_with_0_ratings=len(study.items) - len(by_item),
                        total_ratings=len(ratings))
    groups = {t: _group(t, [r for r in ratings if items[r.item_id].trigger_type == t], annotators, items, weights,
                        resamples) for t in TRIGGER_TYPES}
    if overall:
        groups[OVERALL] = _group(OVERALL, ratings, annotators, items, weights, resamples)
    return Analysis(
        kappa_weights=kappa_weights, rater_exclusion=rater_exclusion, deviations=deviations, resamples=resamples,
        excluded_raters=excluded, rater_kappas=per_rater, coverage=coverage,
        agreement_levels=_agreement_levels(by_item), ratings_per_annotator=dict(sorted(Counter(r.annotator_id for r in ratings).items())),
        groups=groups,
    )
