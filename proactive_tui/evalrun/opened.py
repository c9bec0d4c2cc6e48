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
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from proactive_tui.evalrun.folder import FAILED, MANIFEST, SESSIONS, finished
from proactive_tui.evalrun.plan import SessionKey
from proactive_tui.evalrun.report import BatchReport, ReportRow, ReportTable

REPORT = "report.json"
TOTAL_GROUPS = frozenset({"", "overall"})
"""Row groups that cover every session of the model (no groups, or the `consistency_table` total);
a family's own total row (ProactiveBench's "all traces") is among its sessions' `batch_groups`."""


class FolderProblem(ValueError):
    """The path is not a report folder one can open (the message says why, for a person)."""


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
    """The groups of the report's rows it counts in, lower case (`Family.batch_groups`)."""

    @property
    def failing(self) -> bool:
        return bool(self.reason)


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

    def failing(self) -> list[SessionEntry]:
        return [s for s in self.sessions if s.failing]

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
    (`Family.batch_groups`)."""
    from proactive_tui.core import registry
    from proactive_tui.evalrun.folder import SessionResult

    family = registry.find(key.family)
    if family is None or record is None:
        return []
    try:
        groups = family.batch_groups(SessionResult(key=key, seed=seed, record=record))
    except (AttributeError, TypeError, ValueError):  # a record too old or odd to place: in the totals only
        return []
    return sorted({g.lower() for g in groups if g})


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
            entries.append(SessionEntry(key=key, key_id=key.id, status=status, reason=reason, record=record,
                                        path=str(path), tags=tags(key, seed, record) if status == "finished" else []))
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
