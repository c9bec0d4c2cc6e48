"""A report folder opened for reading (the playground's results screen): its report, where the
numbers came from, and every session the folder holds, finished or failed.

Why its own module, headless: the results screen only lays this out, and a test can check what a
folder says without a terminal. Nothing here writes to the folder: the screen is a reader.

The report is `report.json` as the batch wrote it (its `timing.generated_at` is when); a folder
with run records but no (or an unreadable) `report.json` gets its report recomputed from them, as
`report show` does, and says so.
"""

from __future__ import annotations

import json
import operator
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from proactive_tui.core.run_record import Failure, failures_of
from proactive_tui.evalrun.folder import FAILED, MANIFEST, SESSIONS, finished
from proactive_tui.evalrun.plan import SessionKey
from proactive_tui.evalrun.report import BatchReport, ReportRow, ReportTable

REPORT = "report.json"
TOTAL_GROUPS = frozenset({"", "overall"})
"""Row groups that cover every session of the model (no groups, or the `consistency_table` total);
a family's own total row (ProactiveBench's "all traces") is among its sessions' `batch_groups`."""


class FolderProblem(ValueError):
    """The path is not a report folder one can open (the message says why, for a person)."""


class FailingFilter(BaseModel):
    """One step of the results screen's failing filter (`f`): which failing sessions it lists."""

    label: str
    kind: Literal["any", "judge", "seat", "unknown"]
    seat: str | None = None
    purpose: str | None = None
    model: str | None = None
    """seat, purpose and model narrow a "judge" step to one judge (None: any)."""

    def picks(self, failure: Failure) -> bool:
        if self.kind == "any":
            return True
        return failure.kind == self.kind and all(
            want is None or want == got
            for want, got in ((self.seat, failure.seat), (self.purpose, failure.purpose), (self.model, failure.model)))


def failing_filters(sessions: list["SessionEntry"]) -> list[FailingFilter]:
    """The failing filter's steps for these sessions: every failing session, the judge failures,
    each judge that failed (its purpose, seat and model), the agent/user failures, and the
    failures of an unknown seat or role when there are any."""
    failures = [f for s in sessions for f in s.failures]
    steps = [FailingFilter(label="all", kind="any"), FailingFilter(label="judge failures", kind="judge")]
    for purpose, seat, model in sorted({(f.purpose, f.seat or "", f.model) for f in failures if f.kind == "judge"}):
        who = Failure(kind="judge", seat=seat or None, purpose=purpose, model=model, message="").who
        steps.append(FailingFilter(label=f"judge failures: {who}", kind="judge", seat=seat or None, purpose=purpose,
                                   model=model))
    steps.append(FailingFilter(label="agent/user failures", kind="seat"))
    if any(f.kind == "unknown" for f in failures):
        steps.append(FailingFilter(label="unknown seat or role", kind="unknown"))
    return steps


SCORE_FILTER = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)?\s*(?P<op><=|>=|==|!=|<|>|=)\s*(?P<value>[-+]?(?:\d+\.?\d*|\.\d+))\s*$")
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq,
           "==": operator.eq, "!=": operator.ne}


class ScoreFilter(BaseModel):
    """A threshold on a session's score, as typed on the results screen: `<5`, `>=7`, `plan<=3`.

    Without a name it reads the family's headline score (`OpenedReport.headline_scores`:
    ProactiveEval's guidance overall, ProactiveBench's F1, Chronos's success), the same score for
    every session of a family, so a session whose guidance judge failed is not compared by its
    plan score instead; with a name (`plan`, `f1`, `action`), that score. A session without the
    score (not produced, undefined) never passes."""

    name: str = ""
    op: str
    value: float

    def label(self, headlines: dict[str, str] | None = None) -> str:
        """`plan <= 3`, or `headline score (proactiveeval overall) >= 7` naming what it reads."""
        which = self.name or "headline score" + (
            f" ({', '.join(f'{f} {n}' for f, n in sorted(headlines.items()))})" if headlines else "")
        return f"{which} {self.op} {self.value:g}"

    def score_of(self, record: Any, headlines: dict[str, str] | None = None) -> Any:
        if record is None:
            return None
        name = self.name or (headlines or {}).get(record.family, "")
        return next((s for s in record.scores if s.name.lower() == name.lower()), None) if name else None

    def passes(self, record: Any, headlines: dict[str, str] | None = None) -> bool:
        score = self.score_of(record, headlines)
        return score is not None and score.value is not None and COMPARE[self.op](score.value, self.value)


def parse_score_filter(text: str) -> ScoreFilter | None:
    """The filter `text` spells; None for empty text (no filter); ValueError saying what is wrong."""
    if not text.strip():
        return None
    match = SCORE_FILTER.match(text)
    if match is None:
        raise ValueError(f"not a score threshold: {text.strip()!r}; type a comparison and a number, "
                         "like <5, >=7 or plan<=3 (empty: no score filter)")
    return ScoreFilter(name=match["name"] or "", op=match["op"], value=float(match["value"]))


Outcome = Literal["passed", "failed the task", "errored", "no verdict"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed the task", "errored", "no verdict")


def outcome_of(status: str, failing: bool, trials: list[Any]) -> Outcome:
    """A session's outcome, telling an error apart from a failed task:

    - "errored": it did not finish (kept in failed/), or a model or infrastructure error left it
      with no verdict (a judge call that failed, no usable reply);
    - "failed the task": it has a verdict and a task failed by the family's pass rule
      (`BatchPart.trials`: ProactiveEval guidance under 7, Chronos no success, ProactiveBench
      an event judged wrong), whatever else went wrong;
    - "passed": every task with a verdict passed;
    - "no verdict": finished without error and without a verdict (a family without a pass rule)."""
    verdicts = [t.passed for t in trials if t.passed is not None]
    if status != "finished" or (failing and not verdicts):
        return "errored"
    if not verdicts:
        return "no verdict"
    return "passed" if all(verdicts) else "failed the task"


class SessionEntry(BaseModel):
    """One session of the folder as the screen lists it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    key: SessionKey
    key_id: str
    status: Literal["finished", "failed"]
    reason: str = ""
    """Why it counts as failing: the failure kept in failed/, or the first error its record holds."""
    record: Any = None
    """The run record (`core.run_record.RunRecord`); None for a failure that left no record."""
    path: str
    tags: list[str] = []
    """The groups of the report's rows it counts in, lower case (`BatchPart.groups`)."""
    outcome: Outcome = "no verdict"
    """Whether it errored or ran and failed the task (`outcome_of`)."""

    @property
    def failing(self) -> bool:
        return bool(self.reason)

    @property
    def failures(self) -> list[Failure]:
        return failures_of(self.record, self.reason) if self.failing else []


class OpenedReport(BaseModel):
    folder: str
    """The folder as it was given (shown as is)."""
    report: BatchReport
    source: Literal["report.json", "recomputed"]
    sessions: list[SessionEntry]
    problems: list[str] = []
    """Files of the folder that could not be read (skipped)."""

    @property
    def written_at(self) -> str:
        return self.report.timing.generated_at

    def tables(self) -> list[tuple[str, ReportTable]]:
        """(family, table) for every table of every family, in the report's order."""
        return [(family, table) for family, tables in self.report.families.items() for table in tables]

    def judge_models(self) -> list[str]:
        """The judge seat's models as the run records name them (what actually judged)."""
        found = {str((s.record.models.get("judge") or {}).get("model") or "") for s in self.sessions
                 if s.record is not None}
        return sorted(found - {""})

    def outcome_counts(self) -> dict[Outcome, int]:
        """How many sessions passed, failed the task, errored, or have no verdict (`outcome_of`)."""
        counts = Counter(s.outcome for s in self.sessions)
        return {o: counts[o] for o in OUTCOMES if counts[o]}

    def failing(self, only: FailingFilter | None = None) -> list[SessionEntry]:
        """The failing sessions, or those with a failure `only` picks."""
        return [s for s in self.sessions if s.failing and (only is None or any(map(only.picks, s.failures)))]

    def failing_filters(self) -> list[FailingFilter]:
        return failing_filters(self.sessions)

    def headline_scores(self) -> dict[str, str]:
        """Each family's headline score: the name most of its records put first among their
        headline scores (a family lists its headline first; a record lacking it, its judge
        failed, puts another first, hence the majority)."""
        counts: dict[str, Counter[str]] = {}
        for s in self.sessions:
            first = next((x for x in s.record.scores if x.headline), None) if s.record is not None else None
            if first is not None:
                counts.setdefault(s.record.family, Counter())[first.name] += 1
        return {family: c.most_common(1)[0][0] for family, c in sorted(counts.items())}

    def row_sessions(self, family: str, row: ReportRow) -> list[SessionEntry]:
        """The finished sessions a row's figures are computed from: the family's sessions of the
        row's model whose domain, split, tier or setting is the row's group (all of them for a
        total row)."""
        group = row.group.lower()
        return [s for s in self.sessions if s.status == "finished" and s.key.family == family
                and s.key.agent == row.model and (group in TOTAL_GROUPS or group in s.tags)]


def problem(folder: Path) -> str | None:
    """Why `folder` cannot be opened, or None when it can."""
    if not folder.exists():
        return f"{folder} does not exist"
    if not folder.is_dir():
        return f"{folder} is a file, not a report folder"
    if not (folder / REPORT).is_file() and not (folder / SESSIONS).is_dir():
        return (f"{folder} is not a report folder: it holds neither {REPORT} nor {SESSIONS}/ "
                "(`proactive-tui eval SELECTOR... --out DIR` writes one)")
    return None


def tags(key: SessionKey, seed: int, record: Any) -> list[str]:
    """The groups of the report's rows this session counts in (lower case), as its family says
    (`BatchPart.groups`)."""
    groups = _ask_family(key, seed, record, "groups")
    return sorted({g.lower() for g in groups if g})


def trials(key: SessionKey, seed: int, record: Any) -> list[Any]:
    """The session's tasks and whether each passed, as its family's pass rule says (`BatchPart.trials`)."""
    return _ask_family(key, seed, record, "trials")


def _ask_family(key: SessionKey, seed: int, record: Any, method: Literal["groups", "trials"]) -> list[Any]:
    from proactive_tui.core import registry
    from proactive_tui.evalrun.folder import SessionResult

    family = registry.find(key.family)
    batch = family.batch if family is not None else None
    if batch is None or record is None:
        return []
    result = SessionResult(key=key, seed=seed, record=record)
    try:
        return list(batch.groups(result) if method == "groups" else batch.trials(result))
    except (AttributeError, TypeError, ValueError):  # a record too old or odd to place: in the totals only
        return []


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _first_error(record: Any) -> str:
    if record is None:
        return ""
    if record.errors:
        return record.errors[0]
    if record.termination is not None and record.termination.reason == "error":
        return record.termination.detail or "ended in error"
    return ""


def read_sessions(folder: Path) -> tuple[list[SessionEntry], list[str]]:
    """Every session file of the folder (sessions/ then failed/), and the files that could not be read."""
    from proactive_tui.core.run_record import read_record

    entries: list[SessionEntry] = []
    problems: list[str] = []
    for kind in (SESSIONS, FAILED):
        base = folder / kind
        for path in sorted(base.glob("*.json")) if base.is_dir() else []:
            try:
                data = _read_json(path)
                key = SessionKey.model_validate(data["key"])
                seed = int(data.get("seed") or 0)
                record = read_record(data["record"]) if data.get("record") else None
            except (OSError, ValueError, KeyError, TypeError) as exc:
                problems.append(f"{kind}/{path.name}: {exc}")
                continue
            if kind == SESSIONS and finished(record):
                status, reason = "finished", _first_error(record)
            else:
                status = "failed"
                reason = str(data.get("reason") or "") or _first_error(record) or "did not finish"
            done = status == "finished"
            entries.append(SessionEntry(key=key, key_id=key.id, status=status, reason=reason, record=record,
                                        path=str(path), tags=tags(key, seed, record) if done else [],
                                        outcome=outcome_of(status, bool(reason),
                                                           trials(key, seed, record) if done else [])))
    return entries, problems


def open_folder(path: str | Path) -> OpenedReport:
    """The folder's report and sessions; `FolderProblem` with a reason a person can act on."""
    folder = Path(path).expanduser()
    why = problem(folder)
    if why:
        raise FolderProblem(why)
    sessions, problems = read_sessions(folder)
    report_path = folder / REPORT
    if report_path.is_file():
        try:
            report = BatchReport.model_validate_json(report_path.read_text(encoding="utf-8"))
            return OpenedReport(folder=str(path), report=report, source="report.json", sessions=sessions,
                                problems=problems)
        except (OSError, ValueError) as exc:
            problems.append(f"{REPORT}: {str(exc).splitlines()[0]} (recomputed from the run records)")
    if not (folder / MANIFEST).is_file():
        raise FolderProblem(f"{folder} has run records but no {MANIFEST} and no readable {REPORT}: "
                            "nothing says what the batch ran")
    from proactive_tui.evalrun.report import report_of_folder

    try:
        report = report_of_folder(folder)
    except (OSError, ValueError, KeyError) as exc:
        raise FolderProblem(f"{folder}: the report cannot be recomputed ({exc})") from exc
    return OpenedReport(folder=str(path), report=report, source="recomputed", sessions=sessions, problems=problems)
