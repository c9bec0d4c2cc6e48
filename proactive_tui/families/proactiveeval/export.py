"""`proactiveeval`: sessions as upstream ProactiveEval dataset records, in upstream's folder layout.

Each session becomes one record: the upstream item as the session saw it (environment
{user_information, trigger_factor}, target, sub_target, topic and any extra keys the source had),
plus what the session produced:

- `dialogue`: [{role: "assistant" | "user", content}], the finished messages in order;
- `planning`: the agent's own plan {target, sub_target, model, score, reasoning, judge_model}, or null;
  in a batch, a plan another session of its environment made has `reused_from` and
  `score_reused_from` (those sessions' ids);
- `scores`: {guidance: overall (the headline, the judge's one score) + the five diagnostic
  dimensions + reasoning, or null; planning; judged_against: "reference" or "own_plan" (what the
  turn checks and the guidance judge compared the dialogue with; the turn checks' sub-target
  numbers index its steps); turn_checks};
- `meta`: session id, source environment id, date, models, settings, seats and which were human,
  termination, versions.

Records are written as JSON arrays to `<out>/<domain>/<tier>.json` (existing files there are
replaced), so the folder loads back as environments: `proactive-tui --envs <out>` or
`proactive_tui.envs.load_paths([out])`, the extra keys kept; each read-back record has its own id,
`<source env id>@<session id>`, so the export loads beside the samples it came from.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proactive_tui.export.formats.common import run_facts, scrub, sort_records
from proactive_tui.families.proactiveeval.report import DIMENSIONS, env_item, judged_against, ordered_messages
from proactive_tui.export.registry import ExportError, Exporter, register
from proactive_tui.textsafe import json_text

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

ROLE_NAMES = {"agent": "assistant", "user": "user"}
PRODUCED = ("dialogue", "planning", "scores", "meta")


def dataset_record(record: RunRecord) -> dict[str, Any]:
    """One upstream-compatible item (the source's keys first) with what the session produced."""
    item = {k: v for k, v in env_item(record).items() if k not in PRODUCED}
    if not item:
        raise ExportError(f"session {record.id} has no ProactiveEval item to export")
    p = record.section.planning
    planning = None if p.target is None else {
        "target": p.target, "sub_target": list(p.sub_targets), "model": p.model, "score": p.score,
        "reasoning": p.reasoning, "judge_model": p.judge_model,
    }
    if planning is not None and (p.reused_from or p.score_reused_from):  # a batch's shared plan (`shared_plan`)
        planning.update(reused_from=p.reused_from, score_reused_from=p.score_reused_from)
    g = record.section.guidance
    guidance = None if g is None else {
        "overall": g.overall, **{d: getattr(g, d) for d in DIMENSIONS}, "reasoning": g.reasoning,
        "judge_model": g.judge_model,
    }
    checks = [{"turn": c.turn, "target_reached": c.target_reached, "covered_sub_targets": c.covered_sub_targets,
               "target_density": c.target_density, "probes": c.probes} for c in record.section.turn_checks]
    return {
        **item,
        "dialogue": [{"role": ROLE_NAMES.get(m.role, m.role), "content": m.content}
                     for m in ordered_messages(record) if not m.partial],
        "planning": planning,
        "scores": {"guidance": guidance, "planning": p.score, "judged_against": judged_against(record),
                   "turn_checks": checks},
        "meta": {
            "session_id": record.id,
            "env_id": record.env_id,
            **run_facts(record),
            "resumed_from": record.resumed_from,
            "versions": record.versions,
        },
    }


def write(records: list[Any], out: Path) -> list[Path]:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file; the proactiveeval format writes a folder (<domain>/<tier>.json)")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in sort_records(records):
        domain = str(record.environment.get("domain") or "")
        tier = str(record.environment.get("tier") or "fair")
        if not domain:
            raise ExportError(f"session {record.id} has no domain to file it under")
        groups[(domain, tier)].append(dataset_record(scrub(record)))
    written = []
    for (domain, tier), items in sorted(groups.items()):
        path = out / domain / f"{tier}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json_text(items, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


EXPORTER = register(Exporter(
    name="proactiveeval",
    description="ProactiveEval dataset records with dialogue, planning and scores (<domain>/<tier>.json)",
    write=write, families=("proactiveeval",), out_is_dir=True,
))
