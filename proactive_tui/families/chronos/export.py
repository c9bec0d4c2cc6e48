"""The `chronos` export: Chronos sessions as dialogue samples for training or testing.

One JSON object per session, one per line (JSON Lines), in the chat-messages shape that
fine-tuning tools read, plus what makes a sample checkable:

    {"id": "<session id>", "env_id": "chronos/<file>", "sample_id": "<the branching sample, or null>",
     "messages": [
       {"role": "system", "content": "<the agent's system prompt>"},
       {"role": "user", "content": "I'm after a cheap used hatchback ..."},
       {"role": "assistant", "content": "{\\"response_text\\": ..., \\"proactive_action\\": \\"INFO_RETRIEVAL\\", ...}"},
       {"role": "observation", "source": "tool_call", "content": "<observation source=\\"tool_call\\" ...>"},
       ...],
     "scenario": {... the ChronosScenario the session ran ...},
     "turns": [{"turn": 1, "input": "user", "action": "INFO_RETRIEVAL", "status": "PENDING",
                "expected_action": "INFO_RETRIEVAL", "acceptable_actions": [...], "expected_status": "PENDING",
                "action_correct": true, "status_correct": true, "critical": null}, ...],
     "outcome": {"branch", "tier", "success", "reason", "action_accuracy", "status_accuracy", ...},
     "meta": {session id, date, models, settings, seats, human seats, termination, versions}}

Assistant contents are the structured replies as JSON text (what a model is trained to write);
observation messages keep their source (`tool_call` or `internal_trigger`). In a live session the
agent's model receives observations as user-role messages with this same content; tools that know
no `observation` role can map it to `user` without losing anything. A turn whose reply never
validated (a format failure) has no assistant message; its entry in `turns` says so.

`out` is a `.jsonl` file, or a folder that receives `chronos.jsonl`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from proactive_tui.families.chronos.prompts import agent_system
from proactive_tui.export.formats.common import run_facts, scrub, sort_records
from proactive_tui.export.registry import ExportError, Exporter, register
from proactive_tui.textsafe import json_text

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

FAMILY = "chronos"


def dialogue_messages(record: RunRecord) -> list[dict[str, Any]]:
    """System (the prompt of the variant the session ran), then each agent turn's input (user message or observation) followed by its reply.

    When the agent has checked as often in a row as `max_tool_calls` allows, the last tool
    observation and the user's reply are both inputs of the same turn: the observation came first."""
    entries: list[tuple[int, int, dict[str, Any]]] = []
    for m in record.messages:
        if m.partial:
            continue
        if m.role == "user":
            entries.append((m.turn, 1, {"role": "user", "content": m.content}))
        else:
            entries.append((m.turn, 2, {"role": "assistant", "content": m.content}))
    section = record.section
    for obs in section.observations if section else []:
        entries.append((obs.turn, 0, {"role": "observation", "source": obs.source, "content": obs.content}))
    entries.sort(key=lambda e: (e[0], e[1]))
    # a record without the setting predates it and ran the basic prompt
    variant = (getattr(record, "settings", None) or {}).get("prompt_variant") or "standard"
    return [{"role": "system", "content": agent_system(variant)}] + [e[2] for e in entries]


def turn_rows(record: RunRecord) -> list[dict[str, Any]]:
    section = record.section
    rows = []
    for t in section.turns if section else []:
        rows.append({
            "turn": t.turn, "input": t.input_kind, "clock": t.clock, "state_index": t.state_index,
            "action": t.action, "status": t.status,
            "expected_action": t.expected_action, "acceptable_actions": list(t.acceptable_actions),
            "expected_status": t.expected_status, "action_correct": t.action_correct,
            "status_correct": t.status_correct, "critical": t.critical, "format_failure": t.format_failure,
            "asks": t.asks,
            **({"user_read": {"as": t.user_read_as, "by": t.user_read_by, "model": t.user_read_model,
                              "note": t.user_read_note}} if t.user_read_by else {}),
        })
    return rows


def sample(record: RunRecord) -> dict[str, Any]:
    """One training/test sample from a Chronos run record."""
    if record.family != FAMILY:
        raise ExportError(f"session {record.id} is a {record.family} session, not chronos")
    section = record.section
    return {
        "id": record.id,
        "env_id": record.env_id,
        "sample_id": (record.environment or {}).get("sample_id"),
        "messages": dialogue_messages(record),
        "scenario": (record.environment or {}).get("scenario"),
        "turns": turn_rows(record),
        "outcome": section.outcome.model_dump(mode="json") if section and section.outcome else None,
        "meta": {
            "session_id": record.id,
            **run_facts(record),
            "versions": record.versions,
        },
    }


def write(records: list[Any], out: Path) -> list[Path]:
    out = Path(out)
    path = out / "chronos.jsonl" if out.is_dir() or not out.suffix else out
    lines = [json_text(sample(scrub(r))) for r in sort_records(records)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return [path]


EXPORTER = register(Exporter(suffix='.jsonl', 
    name=FAMILY,
    description="Chronos dialogue samples (JSON Lines): chat messages with structured replies and observations, "
                "the scenario, per-turn expected actions and the verdict",
    write=write,
    families=(FAMILY,),
))
