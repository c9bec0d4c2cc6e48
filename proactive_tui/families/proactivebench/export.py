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

A `splits.json` beside the traces lists, for each split the traces belong to, the files written
(each once), so reloading the folder keeps split membership and upstream's script reads each trace
once. A trace run in several sessions is written once, from the latest of the sessions given
(`write`). `proactivebench_sessions.json` says, per file, which session it holds, its settings
(a run with verdict feedback on is labelled the paper's ablation there), the models and the agent's
temperature.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proactive_tui.export.formats.common import scrub, sort_records
from proactive_tui.export.registry import Exporter, ExportError, register
from proactive_tui.textsafe import json_text, say

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

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


def judged_trace(record: RunRecord) -> list[dict[str, Any]]:
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
    """One file per trace under upstream's name, a `splits.json` listing each once, and a
    `proactivebench_sessions.json` saying which session each file holds and how it was run.

    Upstream's metric script reads one file per trace name, so a trace run several times is
    written once: the latest of the sessions given (`record.runs_by_trace`). `export --all` gives
    every session, so the latest run counts; naming session ids picks them. Sessions of a trace
    that were not written are named on stderr, and in the sessions file, never silently dropped.
    """
    from proactive_tui.families.proactivebench import MANIFEST
    from proactive_tui.families.proactivebench.record import runs_by_trace
    from proactive_tui.families.proactivebench.settings import ablation_label

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file; the proactivebench format writes one file per trace into a folder")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    splits: dict[str, list[str]] = {}
    manifest: dict[str, Any] = {}
    for stem, runs in sorted(runs_by_trace(sort_records(records)).items()):
        record = scrub(runs.chosen)
        trace = judged_trace(record)
        if not trace:
            continue
        name = f"{stem}.json"
        path = out / name
        path.write_text(json_text(trace, indent=4), encoding="utf-8")
        written.append(path)
        for split in record.section.splits:
            if name not in splits.setdefault(split, []):
                splits[split].append(name)
        agent = (record.models or {}).get("agent") or {}
        judge = (record.models or {}).get("user") or {}
        manifest[name] = {
            "session": record.id, "started_at": record.started_at, "env_id": record.env_id,
            "protocol": ablation_label(record.settings) or "upstream's evaluation",
            "settings": record.settings, "agent": agent.get("model"), "agent_temperature": agent.get("temperature"),
            "judge": judge.get("model"), "prompt_version": (record.versions or {}).get("prompts"),
            "not_written": [r.id for r in runs.others],
        }
        if record.forked_from:  # a branch (core.fork): which session and turn it changed
            manifest[name]["forked_from"] = record.forked_from
        if record.human_labels:  # a person's labels on the judge's verdicts (services.labels): human annotations
            manifest[name]["human_labels"] = record.human_labels
        if runs.others:
            say(f"warning: {stem} was run in {len(runs.others) + 1} of the sessions given; {name} holds "
                f"{record.id} (the latest), not {', '.join(r.id for r in runs.others)}. Name one session id "
                "per trace to pick another.", file=sys.stderr)
    if splits:
        path = out / "splits.json"
        path.write_text(json_text({k: {"files": v} for k, v in splits.items()}, indent=4), encoding="utf-8")
        written.append(path)
    if manifest:
        path = out / MANIFEST
        path.write_text(json_text(manifest, indent=4), encoding="utf-8")
        written.append(path)
    return written


EXPORTER = register(Exporter(
    name=FAMILY,
    description="upstream ProactiveBench judged traces (agent_response, other_infomation, judgement), one file per trace",
    write=write,
    families=(FAMILY,),
    out_is_dir=True,
))
