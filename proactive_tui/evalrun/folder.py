"""A batch folder on disk: `manifest.json`, `sessions/<key>.json` (one per finished session),
`failed/<key>.json` (the last failure of a session that did not finish) and the report files.

A session's file is written once it has finished, to a temporary name then renamed, so a folder
never holds half a record: whatever stops a run (Ctrl-C, SIGTERM, a killed job), the records there
are whole, `--resume` runs exactly the keys without one, and the report can be recomputed from them.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from proactive_tui.core.run_record import RunRecord
from proactive_tui.evalrun.plan import Manifest, SessionKey
from proactive_tui.textsafe import json_text

MANIFEST = "manifest.json"
COMMAND = "command.json"
"""The batch command's options as given (`eval resume DIR` runs it again with `--resume`). Kept
apart from the manifest: the manifest is what the sweep is (shards of one sweep share it), the
command also says how this machine reached its models (`--api-base`, `--envs`, the working
folder), which may differ per shard and never decides what a session is."""
SESSIONS = "sessions"
FAILED = "failed"
UNFINISHED_REASONS = frozenset({"error", "cancelled", "user_stopped"})
"""Terminations that do not count as a finished session: it is run again on `--resume`."""


class SessionResult(BaseModel):
    """One finished session as the folder keeps it: its key, the seed it ran with, its run record."""

    key: SessionKey
    seed: int
    record: RunRecord

    def dump(self) -> dict[str, Any]:
        return {"key": self.key.model_dump(), "key_id": self.key.id, "seed": self.seed,
                "record": self.record.model_dump(mode="json")}


def finished(record: Any) -> bool:
    """The session played to an end that scores (not cut off, not failed)."""
    return record is not None and record.termination is not None and record.termination.reason not in UNFINISHED_REASONS


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (temporary file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_manifest(folder: Path, manifest: Manifest) -> None:
    write_atomic(folder / MANIFEST, json_text(manifest, indent=2))


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{folder} holds no {MANIFEST} (not a batch folder)")
    return Manifest.model_validate_json(path.read_text(encoding="utf-8"))


class BatchCommand(BaseModel):
    """What `eval resume` needs to give the command that started a folder: its options and the
    folder it ran in (relative selectors and `--envs` paths are read from there)."""

    format: int = 1
    cwd: str
    options: dict[str, Any]


def write_command(folder: Path, command: BatchCommand) -> None:
    write_atomic(folder / COMMAND, json_text(command, indent=2))


def read_command(folder: Path) -> BatchCommand:
    path = folder / COMMAND
    if not path.is_file():
        what = "a batch folder written before `eval resume` existed" if (folder / MANIFEST).is_file() else "not a batch folder"
        raise FileNotFoundError(f"{folder} holds no {COMMAND} ({what}): run the command that started it with --resume")
    try:
        return BatchCommand.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not a batch command file ({exc.__class__.__name__}: "
                         f"{str(exc).splitlines()[0]})") from None


def write_result(folder: Path, result: SessionResult) -> Path:
    path = folder / SESSIONS / f"{result.key.id}.json"
    write_atomic(path, json_text(result.dump(), indent=1))
    (folder / FAILED / f"{result.key.id}.json").unlink(missing_ok=True)
    return path


def failure_text(key: SessionKey, seed: int, reason: str, record: Any = None) -> str:
    data = {"key": key.model_dump(), "key_id": key.id, "seed": seed, "reason": reason,
            "record": record.model_dump(mode="json") if record is not None else None}
    return json_text(data, indent=1)


def write_failure(folder: Path, key: SessionKey, seed: int, reason: str, record: Any = None) -> None:
    write_atomic(folder / FAILED / f"{key.id}.json", failure_text(key, seed, reason, record))


class EndedSession(BaseModel):
    """One planned session's end as the folder will keep it, with its file already rendered.

    Why rendered before it reaches the folder's writer: in a batch on worker processes the parent
    is the folder's only writer and its CPU is shared with the workers on the same cores; turning
    a record (every message of the session) into JSON is the costly part of keeping it, so the
    worker that ran the session does it and the parent only writes the text (`write_ended`)."""

    key: SessionKey
    seed: int
    ok: bool
    """Finished (`finished`) with no error: `text` is its `sessions/<key>.json`, else its `failed/` file."""
    reason: str
    """The termination reason, or the error, or "no end"."""
    headline: str = ""
    """Every headline score with its name ("Guidance 7/10, ..."), for the progress line."""
    text: str


def render_ended(key: SessionKey, seed: int, record: Any, error: str | None) -> EndedSession:
    """An outcome (its record, None when it never started, and its error) as `EndedSession`."""
    ok = error is None and finished(record)
    if ok:
        headline = ", ".join(f"{s.label} {s.display}" for s in record.scores if s.headline)
        text = json_text(SessionResult(key=key, seed=seed, record=record).dump(), indent=1)
        return EndedSession(key=key, seed=seed, ok=True, reason=record.termination.reason, headline=headline, text=text)
    reason = error or (record.termination.reason if record is not None and record.termination else "no end")
    return EndedSession(key=key, seed=seed, ok=False, reason=reason, text=failure_text(key, seed, reason, record))


def write_ended(folder: Path, ended: EndedSession) -> None:
    """Keep a session's end: its record in `sessions/` (and no `failed/` entry left), or its failure."""
    if ended.ok:
        write_atomic(folder / SESSIONS / f"{ended.key.id}.json", ended.text)
        (folder / FAILED / f"{ended.key.id}.json").unlink(missing_ok=True)
    else:
        write_atomic(folder / FAILED / f"{ended.key.id}.json", ended.text)


def finished_ids(folder: Path) -> set[str]:
    """Keys with a finished record in the folder (a leftover temporary file is no record)."""
    base = folder / SESSIONS
    return {p.stem for p in base.glob("*.json")} if base.is_dir() else set()


def read_results(folder: Path, transcripts: bool = True) -> list[SessionResult]:
    """Every finished session's result in the folder, by key id. `transcripts=False` leaves each
    record's messages out: the report's tables read scores, sections and the environment only,
    and the transcripts are most of a record, so a 1,000-session report held them all at once
    for nothing (the growth batch_memory.py measured). Records to copy keep them. Records of one
    environment share one copy of an identical `environment` (repeats and agents of a sweep
    carry the same one), for the same reason."""
    from proactive_tui.core.run_record import read_record

    out = []
    shared: dict[str, dict[str, Any]] = {}
    base = folder / SESSIONS
    for path in sorted(base.glob("*.json")) if base.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not transcripts and isinstance(data.get("record"), dict):
            data["record"]["messages"] = []
        record = read_record(data["record"])
        env = shared.setdefault(record.env_id, record.environment)
        if env is not record.environment and env == record.environment:
            record.environment = env
        out.append(SessionResult(key=SessionKey.model_validate(data["key"]), seed=int(data["seed"]), record=record))
    return out
