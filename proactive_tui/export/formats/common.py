"""What every export format shares: key scrubbing, the header facts, file naming.

Exports leave the machine (a dataset, a shared demo), so every format starts from `scrub(record)`:
every string in the record passes through the key redactor, which masks the values of the
provider key variables set in this process and anything key-shaped. Run records never hold keys
in the first place (keys are read from the keyring or environment at call time); this is the
second line.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from proactive_tui.core.run_record import RunRecord

SEATS = ("agent", "user", "judge")


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """JSON-like data with `fn` applied to every string value in it (keys stay as they are; a
    tuple comes back a list, as JSON writes it): the key redactor here, `textsafe.plain` for the
    viewer's display strings."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


def scrub_data(value: Any) -> Any:
    """JSON data (or a string) with every string passed through the key redactor: for what an
    export writes beside the records (the viewer's report and page title)."""
    from proactive_tui.redact import redact

    return map_strings(value, redact)


def scrub(record: RunRecord) -> RunRecord:
    """The record with every string passed through the key redactor."""
    return RunRecord.model_validate(scrub_data(record.model_dump(mode="json")))


def run_facts(record: RunRecord) -> dict[str, Any]:
    """What every dataset export's `meta` says about how the session was run (models, settings,
    who sat where, how it ended); each format adds its own keys around these."""
    from proactive_tui.core import registry

    family = registry.find(record.family)
    source = family.source if family is not None else None
    facts = {
        "benchmark": None if source is None else {"name": family.title, **source.model_dump(mode="json")},
        "date": record.started_at,
        "models": record.models,
        "settings": record.settings,
        "seats": {seat: info.kind for seat, info in record.seats.items()},
        "human_seats": record.human_seats,
        "mode": record.mode,
        "termination": record.termination.model_dump() if record.termination else None,
    }
    if record.forked_from:  # a branch (core.fork): a corrected branch exported as a demonstration says so
        facts["forked_from"] = record.forked_from
    if record.rerun_of:  # a re-run against a new agent (core.rerun): which session, user frozen or not
        facts["rerun_of"] = record.rerun_of
    if record.comparisons:  # a side of a comparison (services.compare): the person's vote and why
        facts["comparisons"] = record.comparisons
    if record.human_labels:  # a person's labels on the judges' verdicts (services.labels): human annotations
        facts["human_labels"] = record.human_labels
    return facts


def sort_records(records: list[RunRecord]) -> list[RunRecord]:
    return sorted(records, key=lambda r: (r.started_at, r.id))


def write_documents(records: list[RunRecord], out: Path, ext: str, render: Callable[[RunRecord], str]) -> list[Path]:
    """One document per record: `out` is the file for a single record named `*.<ext>`,
    otherwise a folder that receives `<session id>.<ext>` for each record."""
    out = Path(out)
    records = sort_records(records)
    if len(records) == 1 and out.suffix and not out.is_dir():
        targets = [(records[0], out)]
    else:
        targets = [(r, out / f"{r.id}.{ext}") for r in records]
    written = []
    for record, path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(scrub(record)), encoding="utf-8")
        written.append(path)
    return written


def when(ts: str | None) -> str:
    """An ISO timestamp as `2025-01-02 03:04:05 UTC` (the session's own clock, for headers)."""
    if not ts:
        return "-"
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return ts
    zone = dt.strftime("%Z") or ""
    return dt.strftime("%Y-%m-%d %H:%M:%S") + (f" {zone}" if zone else "")


def seat_text(record: RunRecord, seat: str) -> str:
    """Who sat in a seat: the model (and its temperature), or that a person did."""
    info = record.seats.get(seat)
    if info is not None and info.kind == "human":
        return "a person (human seat)"
    summary = record.models.get(seat) or {}
    model = summary.get("model") or (info.label if info else "-")
    extras = []
    if summary.get("temperature") is not None:
        extras.append(f"temperature {summary['temperature']:g}")
    if info is not None and info.kind == "scripted":
        extras.append("scripted")
    return model + (f" ({', '.join(extras)})" if extras else "")


def settings_text(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(settings.items()) if v is not None) or "-"


def header_facts(record: RunRecord) -> list[tuple[str, str]]:
    """The header every readable format shows: environment, models, settings, human seats, outcome."""
    facts = [
        ("Session", record.id + (f" (resumed from {record.resumed_from.get('session_id')} after "
                                 f"{record.resumed_from.get('turns')} turns)" if record.resumed_from else "")),
    ]
    if record.forked_from:  # a branch: where it comes from and what it changed (core.fork)
        from proactive_tui.core.fork import ForkedFrom, describe_fork

        forked = ForkedFrom.model_validate(record.forked_from)
        facts.append(("Branch of", f"{forked.session_id} at {describe_fork(forked)}; the turns before it are that "
                                   "session's"))
    if record.rerun_of:  # a re-run against a new agent (core.rerun)
        from proactive_tui.core.rerun import describe_rerun

        facts.append(("Re-run", describe_rerun(record.rerun_of)))
    facts += [
        ("Environment", record.env_id),
        ("Title", str(record.environment.get("title", "")) or "-"),
        ("Date", when(record.started_at)),
        ("Mode", record.mode),
        ("Human seats", ", ".join(record.human_seats) or "none"),
    ]
    facts += [(seat.capitalize(), seat_text(record, seat)) for seat in SEATS if seat in record.seats]
    facts.append(("Settings", settings_text(record.settings)))
    from proactive_tui.store.queries import reason_word

    ended = reason_word(record.termination.reason) + (f" ({record.termination.detail})" if record.termination.detail else "") \
        if record.termination else "did not end (interrupted)"
    facts.append(("Ended", ended))
    t = record.totals
    usage = f"{t.total_tokens} tokens"
    if t.cost is not None:
        usage += f", ${t.cost:.4f}"
    if t.wall_time_s is not None:
        usage += f", {t.wall_time_s:g} s"
    facts.append(("Usage", usage))
    facts.append(("Versions", ", ".join(f"{k} {v}" for k, v in sorted(record.versions.items())) or "-"))
    return facts
