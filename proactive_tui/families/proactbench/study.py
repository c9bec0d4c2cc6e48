"""ProactBench's two human studies brought into the store (issue 34), and the rating study's
figures computed back from the store's labels.

The rating study (`human_eval/`): 60 trigger points that the study's GPT-5.4 judge graded, each
graded again by up to 18 pseudonymous raters (275 ratings). `labels import --study proactbench`
makes one session per item: the dialogue before the trigger as recorded turns, the trigger's
rubric and user message, the reply under review, and the judge's grade as a `TriggerJudged` with
`judged_by="study"` (an imported verdict, never one this tool asked for: labels name its judge
"gpt-5.4 (study, imported)"). Every rating becomes a label on that verdict with `rater` = the
rater's pseudonym. Sessions and label keys are derived from the study's ids, so importing again
adds nothing.

`labels agreement` then gives the study's figures from those labels: `analyse` rebuilds the
study (`evalrun.human_study.Study`) from the store, one per judge, with the study's item ids for
imported items (so the bootstrap draws the same columns and the figures equal the published
analysis), and a session id plus verdict key for a person's own labelled verdicts.

The pairwise study (`human_eval/pairwise/`): 80 RECOVERY trigger turns, each with the original
reply (case A) and one written with the rubric in view (case B); 8 voters chose between them
blind (146 votes on 45 items). `compare import-study proactbench` stores each case as a session
(the user message and the reply, no verdict: a blind voter sees no grade) and the comparisons
(`services.compare.keep_study_pair`): one blind pair per item for the person, one per recorded vote.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from proactive_tui.services.compare import PairImport, PairwiseStudy, StudyPair, StudyVote, keep_study_pair
from proactive_tui.services.labels import RatingStudy, StudyFigures, StudyGroupRow, StudyImport

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

FAMILY = "proactbench"
STUDY_JUDGE = "gpt-5.4"
"""The study's judge: its items carry the offline GPT-5.4 judge's score (the kit's SCHEMA.md,
section 6); the files do not name it, so it is named here once."""
STUDY_TITLE = "ProactBench human study"
PAIRWISE_TITLE = "ProactBench pairwise study"
STUDY_ENV_PREFIX = f"{FAMILY}/study/"
PAIR_ENV_PREFIX = f"{FAMILY}/pairwise/"
KIND = "trigger verdict"
TITLE = {"PASS": "Pass", "PARTIAL": "Partial", "FAIL": "Fail"}
"""Our grades as the study spells them (its files say Pass / Partial / Fail)."""
CASE_B_WRITER = "case B (written with the rubric in view; model not recorded)"

HERE = Path(__file__).resolve().parent
PAIRWISE_FOLDER = HERE / "data" / "human_eval" / "pairwise"


def _id(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:12]


def _now() -> str:
    from proactive_tui.core.events import now_iso

    return now_iso()


def _write_session(store: Any, events: list[Any]) -> str:
    """Record `events` as one finished session (as a live one is recorded); '' when it was
    saved, else why not."""
    from proactive_tui.store.recorder import SessionRecorder

    recorder = SessionRecorder(store)
    ts = _now()
    for seq, event in enumerate(events, 1):
        event.seq, event.ts = seq, event.ts or ts
        recorder.handle(event)
    recorder.close(retry_s=5.0)
    return "" if recorder.saved else (recorder.unsaved_reason or "not saved")


def _started(session_id: str, env: Any, agent: str, judge: str | None, detail: str) -> Any:
    from proactive_tui.core.events import SeatInfo, SessionStarted
    from proactive_tui.families.proactbench.settings import ProactBenchSettings

    seats = {"agent": SeatInfo(kind="scripted", label=agent)}
    models: dict[str, dict[str, Any]] = {"agent": {"model": agent}}
    if judge is not None:
        seats["judge"] = SeatInfo(kind="scripted", label=judge)
        models["judge"] = {"model": judge}
    return SessionStarted(session_id=session_id, family=FAMILY, env_id=env.id, environment=env.model_dump(mode="json"),
                          mode="watch", seats=seats, settings=ProactBenchSettings().model_dump(mode="json"),
                          models=models, prompt_version=detail, app_version=_app_version())


def _app_version() -> str:
    from proactive_tui import __version__

    return __version__


def _reply(session_id: str, turn: int, text: str, model: str) -> Any:
    from proactive_tui.core.events import MessageDone, MessageRecord

    ts = _now()
    return MessageDone(message=MessageRecord(id=f"{session_id}-agent-{turn}", role="agent", content=text, turn=turn,
                                             started_at=ts, finished_at=ts, model=model))


# -- the rating study ---------------------------------------------------------------------------


def item_env(item: Any) -> Any:
    """A study item as a ProactBench environment: the dialogue up to the trigger turn, whose
    recorded reply is the one the raters graded, and the trigger with the study judge's result."""
    from proactive_tui.families.proactbench.env import (
        Dialogue, EvaluationResult, ProactBenchEnv, Rubric, TriggerPoint, TurnRecord, category_name,
    )
    from proactive_tui.envs.base import one_line

    history = item.dialogue_history
    turns = []
    for k in range(0, len(history) - 1, 2):  # user, assistant pairs before the trigger turn
        turns.append(TurnRecord(turn=k // 2 + 1, user_message=history[k].content,
                                assistant_response=history[k + 1].content))
    turn = item.turn_index or len(turns) + 1
    turns.append(TurnRecord(turn=turn, user_message=item.user_message, assistant_response=item.model_response))
    rubric = item.rubric
    parts = item.dialogue_id.split("__")
    dialogue = Dialogue(
        blueprint_id=item.dialogue_id, scenario_id=parts[1] if len(parts) > 1 else "", unique_id_eval=item.item_id,
        uuid=parts[0], category_key=item.persona_category, evaluated_model=item.evaluated_model,
        num_turns_completed=turn,
        trigger_points=[TriggerPoint(turn=turn, evaluation_rubric=Rubric(
            type=item.trigger_type, pass_criteria=rubric.pass_criteria if rubric else "",
            partial_criteria=rubric.partial_criteria if rubric else "", fail_criteria=rubric.fail_criteria if rubric else ""),
            evaluation_result=EvaluationResult(score=item.judge_score, rationale=item.judge_rationale,
                                               evidence=item.judge_evidence))],
        turn_records=turns, communication_style=item.communication_style, anchors_disclosed=item.anchors_disclosed,
        study_item_id=item.item_id)
    return ProactBenchEnv(id=STUDY_ENV_PREFIX + item.item_id,
                          title=f"study: {dialogue.scenario_id} turn {turn} {item.trigger_type} · {item.evaluated_model}",
                          summary=one_line(item.user_message), domain=category_name(item.persona_category),
                          source=f"{STUDY_TITLE}, item {item.item_id}", dialogue=dialogue)


def item_session_id(item_id: str) -> str:
    return _id("proactbench study item", item_id)


def item_events(item: Any) -> list[Any]:
    """The session of one study item (see the module docstring)."""
    from proactive_tui.core.events import SessionEnded
    from proactive_tui.families.proactbench.events import RecordedTurn, TriggerJudged, TriggerOpened

    env = item_env(item)
    sid = item_session_id(item.item_id)
    (trigger,) = env.dialogue.trigger_points
    events: list[Any] = [_started(sid, env, item.evaluated_model, STUDY_JUDGE, "imported: ProactBench human study")]
    for record in env.dialogue.turn_records:
        if record.turn != trigger.turn:
            events.append(RecordedTurn(turn=record.turn, user_message=record.user_message,
                                       assistant_response=record.assistant_response))
    events.append(TriggerOpened(index=1, turn=trigger.turn, rubric=trigger.evaluation_rubric, user_message=item.user_message))
    events.append(_reply(sid, trigger.turn, item.model_response, item.evaluated_model))
    events.append(TriggerJudged(index=1, turn=trigger.turn, response=item.model_response,
                                result=trigger.evaluation_result, judge=STUDY_JUDGE, judged_by="study"))
    events.append(SessionEnded(reason="imported", detail=f"imported from the {STUDY_TITLE} (item {item.item_id}); "
                               "the verdict is the study's judge's, as the study recorded it"))
    return events


def _folder(source: Any, default: Path, marker: str) -> Path:
    folder = Path(source) if source is not None else default
    return folder.parent if folder.name == marker else folder


class ProactBenchRatingStudy(RatingStudy):
    family = FAMILY
    title = STUDY_TITLE
    kind = KIND

    def import_study(self, store: Any, source: Any = None) -> StudyImport:
        from proactive_tui.evalrun import human_study as hs
        from proactive_tui.families.proactbench.labels import judge_name
        from proactive_tui.store.db import LabelRow

        folder = _folder(source, hs.PACKAGED_STUDY, "sample_items.json")
        report = StudyImport(source=str(folder))
        try:
            items = hs.load_items(folder / "sample_items.json")
        except hs.HumanStudyError as exc:
            report.problems.append(str(exc))
            return report
        by_id = {item.item_id: item for item in items}
        for item in items:
            sid = item_session_id(item.item_id)
            if store.session(sid) is not None:
                report.sessions_kept += 1
                continue
            problem = _write_session(store, item_events(item))
            if problem:
                report.problems.append(f"item {item.item_id}: its session was not saved: {problem}")
                continue
            report.sessions_new += 1
        sids = {item_session_id(i) for i in by_id}
        existing = {(r.session_id, r.verdict, r.rater): r for r in store.labels() if r.session_id in sids}
        files = sorted((folder / "results").glob("A*.jsonl"))
        if not files:
            report.problems.append(f"{folder / 'results'}: no rating files (A*.jsonl)")
        unknown = 0
        for path in files:
            try:
                ratings, problems, _ = hs.read_rating_file(path)
            except hs.HumanStudyError as exc:
                report.problems.append(str(exc))
                continue
            report.files += 1
            report.problems.extend(str(p) for p in problems)
            for rating in ratings:
                item = by_id.get(rating.item_id)
                if item is None:
                    unknown += 1
                    continue
                judge_value, value = item.judge_score.upper(), rating.score.upper()
                row = LabelRow(session_id=item_session_id(item.item_id), verdict="trigger:1", kind=KIND,
                               judge=judge_name(STUDY_JUDGE, "study"), judge_value=judge_value,
                               agree=value == judge_value, value=value, note=rating.rationale,
                               created_at=rating.server_received_at or rating.timestamp or _now(),
                               rater=rating.annotator_id)
                if existing.get((row.session_id, row.verdict, row.rater)) == row:
                    report.labels_kept += 1
                    continue
                store.put_label(row)
                existing[(row.session_id, row.verdict, row.rater)] = row
                report.labels_new += 1
        if unknown:
            report.notes.append(f"{unknown} rating(s) of items not in sample_items.json left out, as the study's "
                                "analysis leaves them out")
        return report

    def analyse(self, store: Any, *, quadratic: bool = False, exclude_raters: bool = False,
                resamples: int | None = None, overall: bool = True) -> list[StudyFigures]:
        from proactive_tui.evalrun import human_study as hs
        from proactive_tui.families.proactbench.labels import verdicts
        from proactive_tui.store import StoreError, load_record

        rows = [r for r in store.labels() if r.kind == KIND]
        judges = sorted({r.judge for r in rows})
        records: dict[str, Any] = {}

        def record(session_id: str) -> Any:
            if session_id not in records:
                try:
                    rec = load_record(store, session_id)
                except StoreError:
                    rec = None
                records[session_id] = rec if rec is not None and rec.family == FAMILY else None
            return records[session_id]

        study_sessions = [s.id for s in store.sessions(env_id=STUDY_ENV_PREFIX.rstrip("/"), family=FAMILY)]
        out = []
        for judge in judges:
            mine = [r for r in rows if r.judge == judge]
            sessions = sorted({r.session_id for r in mine} | set(study_sessions))
            items: dict[tuple[str, str], hs.StudyItem] = {}
            ungraded: set[tuple[str, str]] = set()
            for sid in sessions:
                rec = record(sid)
                if rec is None:
                    continue
                for v in verdicts(rec):
                    if v.judge != judge:
                        continue
                    if v.value is None:
                        ungraded.add((sid, v.key))
                        continue
                    trigger = rec.section.trigger(int(v.key.split(":")[1]))
                    study_id = rec.env_id.removeprefix(STUDY_ENV_PREFIX) if rec.env_id.startswith(STUDY_ENV_PREFIX) else None
                    items[(sid, v.key)] = hs.StudyItem(item_id=study_id or f"{sid}/{v.key}", trigger_type=trigger.type,
                                                       judge_score=TITLE[v.value])
            ratings = []
            left_out = 0
            for r in mine:
                item = items.get((r.session_id, r.verdict))
                if item is None or r.value not in TITLE:
                    left_out += 1
                    continue
                ratings.append(hs.HumanRating(annotator_id=r.rater or "you", item_id=item.item_id, score=TITLE[r.value]))
            if not ratings:
                continue
            study = hs.Study(items=list(items.values()), ratings=ratings, files=[])
            analysis = hs.analyse(study, kappa_weights="quadratic" if quadratic else "unweighted",
                                  rater_exclusion=exclude_raters,
                                  resamples=hs.RESAMPLES if resamples is None else resamples, overall=overall)
            fig = figures(analysis, judge, len(items) + len(ungraded), left_out)
            own = sum(1 for r in ratings if r.annotator_id == "you")
            if own and study_sessions and fig.study == STUDY_TITLE:
                fig.deviations.append(f"deviation: {own} rating(s) of yours (rater 'you') counted beside the study's "
                                      "raters")
            out.append(fig)
        return out


def figures(analysis: Any, judge: str, items: int, left_out: int) -> StudyFigures:
    """`evalrun.human_study.Analysis` as the generic figures the CLI and the screens show."""
    from proactive_tui.evalrun import human_study as hs

    groups = []
    for name, g in analysis.groups.items():
        groups.append(StudyGroupRow(group=name, n_items=g.n_items, n_ratings=g.n_ratings,
                                    alpha=g.alpha.value, alpha_low=g.alpha.low, alpha_high=g.alpha.high,
                                    kappa=g.kappa.value, kappa_low=g.kappa.low, kappa_high=g.kappa.high,
                                    confusion=g.confusion))
    kappa = "Cohen's kappa, quadratic-weighted" if analysis.kappa_weights == "quadratic" else "Cohen's kappa (unweighted)"
    return StudyFigures(
        study=STUDY_TITLE if judge.endswith("(study, imported)") else f"{STUDY_TITLE}'s analysis", family=FAMILY,
        judge=judge, kind=KIND, categories=list(hs.SCORES),
        alpha_label="Krippendorff's alpha (ordinal), all raters",
        kappa_label=f"{kappa}, majority consensus vs judge", resamples=analysis.resamples, groups=groups,
        deviations=list(analysis.deviations), excluded_raters=dict(analysis.excluded_raters),
        raters=len(analysis.ratings_per_annotator), items=items, left_out=left_out)


# -- the pairwise study -------------------------------------------------------------------------


class PairItem(BaseModel):
    """One item of the pairwise `sample_items.json` (fields as the kit's SCHEMA.md 5c lists them)."""

    model_config = ConfigDict(extra="ignore")

    item_id: str
    uuid: str = ""
    scenario_id: str = ""
    style_combination_index: int | None = None
    category_key: str = ""
    blueprint_id: str = ""
    evaluated_model: str = ""
    recovery_turn: int
    judge_score_case_a: str = ""
    judge_rationale_case_a: str = ""
    user_message: str
    case_a_response: str
    case_b_response: str
    rubric: dict[str, Any]

    @field_validator("case_a_response", "case_b_response")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an empty reply cannot be compared")
        return value


class PairRating(BaseModel):
    """One line of a voter's `P*.jsonl` file."""

    model_config = ConfigDict(extra="ignore")

    annotator_id: str
    item_id: str
    ab_swap: bool
    chosen_case: str
    rationale: str = ""
    timestamp: str = ""
    server_received_at: str = ""

    @field_validator("chosen_case")
    @classmethod
    def _case(cls, value: str) -> str:
        text = value.strip()
        if text.lower() == "tie":
            return "tie"
        if text.upper() not in ("A", "B"):
            raise ValueError("must be A, B or tie")
        return text.upper()


def _error(where: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "(record)"
    return f"{where}: field '{field}': {err['msg']}"


def read_pair_items(path: Path) -> tuple[list[PairItem], list[str]]:
    """The pairwise items, and a line per bad item (file, item number, field)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [], [f"{path}: cannot read: {exc.strerror or exc}"]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [], [f"{path}: not JSON: {exc}"]
    if not isinstance(data, list):
        return [], [f"{path}: expected a JSON array of pairs, got {type(data).__name__}"]
    items, problems = [], []
    for n, raw in enumerate(data, 1):
        try:
            items.append(PairItem.model_validate(raw))
        except ValidationError as exc:
            problems.append(_error(f"{path.name} item {n}", exc))
    return items, problems


def read_pair_votes(path: Path) -> tuple[list[PairRating], list[str]]:
    """A voter's file: its votes, and a line per bad row (file, line, field). Blank lines skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path}: cannot read: {exc}"]
    votes, problems = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name} line {n}: not JSON ({exc.msg})")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{path.name} line {n}: expected a JSON object, got {type(raw).__name__}")
            continue
        try:
            votes.append(PairRating.model_validate(raw))
        except ValidationError as exc:
            problems.append(_error(f"{path.name} line {n}", exc))
    return votes, problems


def pair_session_id(item_id: str, case: str) -> str:
    return _id("proactbench pairwise item", item_id, case)


def pair_env(item: PairItem) -> Any:
    """A pair item as an environment: the trigger turn only (the study shows no earlier turns),
    with its rubric; no reply and no grade in it (either would tell a blind voter which case is which)."""
    from proactive_tui.envs.base import one_line
    from proactive_tui.families.proactbench.env import (
        Dialogue, ProactBenchEnv, Rubric, TriggerPoint, TurnRecord, category_name,
    )

    rubric = Rubric.model_validate({"type": "RECOVERY", **item.rubric})
    dialogue = Dialogue(blueprint_id=item.blueprint_id or item.item_id, scenario_id=item.scenario_id,
                        unique_id_eval=item.item_id, uuid=item.uuid, category_key=item.category_key,
                        style_combination_index=item.style_combination_index, num_turns_completed=item.recovery_turn,
                        trigger_points=[TriggerPoint(turn=item.recovery_turn, evaluation_rubric=rubric)],
                        turn_records=[TurnRecord(turn=item.recovery_turn, user_message=item.user_message)],
                        pairwise_item_id=item.item_id)
    return ProactBenchEnv(id=PAIR_ENV_PREFIX + item.item_id,
                          title=f"pair: {item.scenario_id} style {item.style_combination_index} turn {item.recovery_turn}",
                          summary=one_line(item.user_message), domain=category_name(item.category_key),
                          source=f"{PAIRWISE_TITLE}, item {item.item_id}", dialogue=dialogue)


def pair_events(item: PairItem, case: str) -> list[Any]:
    from proactive_tui.core.events import SessionEnded
    from proactive_tui.families.proactbench.events import TriggerOpened

    env = pair_env(item)
    sid = pair_session_id(item.item_id, case)
    writer = f"{item.evaluated_model or 'original'} (case A, the original reply)" if case == "A" else CASE_B_WRITER
    text = item.case_a_response if case == "A" else item.case_b_response
    (trigger,) = env.dialogue.trigger_points
    return [
        _started(sid, env, writer, None, "imported: ProactBench pairwise study"),
        TriggerOpened(index=1, turn=item.recovery_turn, rubric=trigger.evaluation_rubric, user_message=item.user_message),
        _reply(sid, item.recovery_turn, text, writer),
        SessionEnded(reason="imported", detail=f"imported from the {PAIRWISE_TITLE} (item {item.item_id}, case {case})"),
    ]


class ProactBenchPairwiseStudy(PairwiseStudy):
    family = FAMILY
    title = PAIRWISE_TITLE

    def owns(self, comparison: Any) -> bool:
        return comparison.env_id.startswith(PAIR_ENV_PREFIX)

    def shown(self, record: RunRecord) -> tuple[str, str]:
        """The user's closing message and the side's reply to it (no grade, no writer)."""
        trigger = record.section.trigger(1)
        replies = [m.content for m in record.messages if m.role == "agent" and not m.partial]
        prompt = (trigger.user_message or "") if trigger is not None else ""
        return prompt, (replies[-1] if replies else "")

    def import_study(self, store: Any, source: Any = None) -> PairImport:
        folder = _folder(source, PAIRWISE_FOLDER, "sample_items.json")
        report = PairImport(source=str(folder))
        items, problems = read_pair_items(folder / "sample_items.json")
        report.problems.extend(problems)
        votes: dict[str, list[StudyVote]] = {}
        files = sorted((folder / "results").glob("P*.jsonl"))
        known = {item.item_id for item in items}
        for path in files:
            rows, problems = read_pair_votes(path)
            report.files += 1
            report.problems.extend(problems)
            for row in rows:
                if row.item_id not in known:
                    report.problems.append(f"{path.name}: a vote on item {row.item_id}, which is not in "
                                           "sample_items.json; left out")
                    continue
                votes.setdefault(row.item_id, []).append(StudyVote(
                    item_id=row.item_id, voter=row.annotator_id, chosen=row.chosen_case, swapped=row.ab_swap,
                    reason=row.rationale, at=row.server_received_at or row.timestamp))
        for item in items:
            sessions = [pair_session_id(item.item_id, case) for case in ("A", "B")]
            saved = True
            for case, sid in zip(("A", "B"), sessions):
                if store.session(sid) is None:
                    problem = _write_session(store, pair_events(item, case))
                    if problem:
                        report.problems.append(f"pair {item.item_id}, case {case}: its session was not saved: {problem}")
                        saved = False
            if not saved:
                continue
            new_pair, new, kept = keep_study_pair(store, StudyPair(item_id=item.item_id, env_id=PAIR_ENV_PREFIX + item.item_id,
                                                                   sessions=sessions), votes.get(item.item_id, []), _now())
            report.pairs_new += int(new_pair)
            report.pairs_kept += int(not new_pair)
            report.votes_new += new
            report.votes_kept += kept
        return report
