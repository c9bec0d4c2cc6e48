"""The `proactivebench` export: ProactiveBench sessions as upstream judged traces.

One JSON file per trace, named as upstream names traces (`code_11.json`), so upstream's metric
script (`eval/calculate_agent_performance.py`, which reads the split's file names) and our
`metrics.confusion_from_trace` both read the folder as it is. Every event the session
ran is the original event (annotations kept) with upstream's judged fields written over it:

    {"observation": {...}, "task_status": ...,
     "agent_response": ["the task"] | [null] | [],
     "other_infomation": {"Purpose": ..., "Thoughts": ..., "Response": ...},   # (sic), as upstream
     "judgement": [true] | [false] | []}

A judged null proposal is written `[null]` with its verdict, which is what upstream's judging
script leaves behind (it turns `[]` into `[None]` before judging) and what its metric script
counts as TN/FN; a bare `[]` would be skipped there.

What the agent proposed is always written, verdict or not. Upstream pairs the two lists with
`zip(agent_response, judgement)`, so a `judgement` shorter than `agent_response` leaves the
unpaired proposals uncounted; upstream's own judging script leaves exactly that when a verdict
fails. A skipped event (a person chose skip, or no verdict was usable) therefore keeps its
proposal, `["the task"]` or `[null]`, with `judgement: []`: both metric readers skip it, and no
verdict is made up for it. With three candidates every task is listed; the judged ones come first
(in the agent's order) with their verdicts, the skipped ones after them, unpaired. `[]` with
`judgement: []` is left for an event the agent never answered usably. Only the final attempt of
an event (after retries) is written; events a session did not reach are left out.

A `splits.json` beside the traces lists, for each split the traces belong to, the files written,
so reloading the folder keeps split membership.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from proactive_tui.export.formats.common import scrub, sort_records
from proactive_tui.export.registry import Exporter, ExportError, register

FAMILY = "proactivebench"


def judged_event(original: dict[str, Any], ev: Any) -> dict[str, Any]:
    """One trace event with upstream's judged fields from `ev` (a TraceEventRecord)."""
    out = copy.deepcopy(original)
    final = ev.final
    response: list[Any] = []
    verdicts: list[bool] = []
    if final is not None:
        if final.tasks:
            given = {v.candidate: v.judgement == "accepted" for v in final.verdicts
                     if v.judgement != "skipped" and v.candidate is not None and v.candidate < len(final.tasks)}
            judged = [k for k in range(len(final.tasks)) if k in given]
            response = [final.tasks[k] for k in judged] + [t for k, t in enumerate(final.tasks) if k not in given]
            verdicts = [given[k] for k in judged]
        else:
            response = [None]
            judged = [v for v in final.verdicts if v.judgement != "skipped"]
            verdicts = [judged[0].judgement == "accepted"] if judged else []
    out["agent_response"] = response
    out["other_infomation"] = {
        "Purpose": final.purpose if final else None,
        "Thoughts": final.thoughts if final else None,
        "Response": final.response if final else None,
    }
    out["judgement"] = verdicts
    return out


def judged_trace(record: Any) -> list[dict[str, Any]]:
    """The upstream judged trace of one ProactiveBench run record."""
    section = record.section
    originals = (record.environment or {}).get("events") or []
    if section is None:
        return []
    trace = []
    for ev in section.events:
        original = originals[ev.index - 1] if 0 < ev.index <= len(originals) else {"observation": {"time": ev.time, "event": ev.event}}
        trace.append(judged_event(original, ev))
    return trace


def write(records: list[Any], out: Path) -> list[Path]:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file; the proactivebench format writes one file per trace into a folder")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    splits: dict[str, list[str]] = {}
    for record in sort_records(records):
        record = scrub(record)
        trace = judged_trace(record)
        if not trace:
            continue
        stem = record.section.trace or record.env_id.split("/", 1)[-1]
        name = f"{stem}.json" if f"{stem}.json" not in used else f"{stem}-{record.id}.json"
        used.add(name)
        path = out / name
        path.write_text(json.dumps(trace, ensure_ascii=False, indent=4), encoding="utf-8")
        written.append(path)
        for split in record.section.splits:
            splits.setdefault(split, []).append(name)
    if splits:
        path = out / "splits.json"
        path.write_text(json.dumps({k: {"files": v} for k, v in splits.items()}, ensure_ascii=False, indent=4), encoding="utf-8")
        written.append(path)
    return written


EXPORTER = register(Exporter(
    name=FAMILY,
    description="upstream ProactiveBench judged traces (agent_response, other_infomation, judgement), one file per trace",
    write=write,
    families=(FAMILY,),
    out_is_dir=True,
))
