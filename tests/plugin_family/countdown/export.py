"""The `countdown` export: sessions as a countdown dataset that loads back as environments.

A JSON array, one item per session: the task as the session saw it (`countdown`), an `id` naming
the session, and the `result` (numbers said, checks, scores). `out` is a `.json` file, or a folder
that receives `countdown.json`; `envs.load_paths([path])` reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import run_facts, scrub, sort_records
from proactive_tui.export.registry import ExportError, Exporter

FAMILY = "countdown"


def item(record: Any) -> dict[str, Any]:
    if record.family != FAMILY:
        raise ExportError(f"session {record.id} is a {record.family} session, not countdown")
    section = record.section
    return {
        "id": f"{record.env_id}@{record.id}",
        "title": str(record.environment.get("title") or record.env_id),
        "countdown": record.environment["countdown"],
        "result": {
            "session_id": record.id, "env_id": record.env_id,
            "said": [c.said for c in section.checks], "checks": [c.model_dump() for c in section.checks],
            "scores": {s.name: s.value for s in record.scores}, "meta": run_facts(record),
        },
    }


def write(records: list[Any], out: Path) -> list[Path]:
    out = Path(out)
    path = out / "countdown.json" if out.is_dir() or not out.suffix else out
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [item(scrub(r)) for r in sort_records(records)]
    path.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [path]


EXPORTER = Exporter(name=FAMILY, description="countdown dataset: tasks with the numbers said and the checks (JSON)",
                    write=write, families=(FAMILY,), suffix=".json")
