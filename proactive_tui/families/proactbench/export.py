"""The `proactbench` export: ProactBench sessions as upstream's evaluation output files.

Upstream's offline evaluation (`proactbench/evaluation/offline.py`, and the released
`dataset/eval/<model>_proactivity_bench_results.jsonl` / `_metrics.json`) writes, per evaluated
model, one JSON object per dialogue and one metrics file. This format writes the same files from
run records, into a folder:

- `<model id>_proactivity_bench_results.jsonl`: one row per offline session, upstream's keys in
  upstream's order:

      {"blueprint_id", "scenario_id", "unique_id_eval": "<source row's>@<session id>", "uuid",
       "category_key", "style_combination_index",
       "evaluated_model": the agent seat's model ("person" when a person answered),
       "source_evaluated_model": the model that wrote the recorded dialogue (gemini-2.5-pro),
       "num_trigger_points", "trigger_stats": {TYPE: {PASS, PARTIAL, FAIL, SKIPPED}} (types present),
       "trigger_points": [{"turn", "evaluation_rubric", "evaluation_result": {status, score,
                           rationale, evidence} | null}],
       "turn_records": [{"turn", "user_message", "assistant_response": the agent's reply,
                         "original_assistant_response": the curation model's reply}],   # one per trigger
       "token_usage": {"assistant": {prompt_tokens, completion_tokens, calls}, "judge": {...}},
       "meta": {session, models, settings, who judged each trigger, ...}}

  A failed judge call is upstream's `"evaluation_result": null`: the trigger is kept (its reply
  too) and tallied SKIPPED, never scored. A trigger the agent never answered (the session was cut
  off first) is left out, as upstream leaves out a trigger whose model call failed.
- `<model id>_proactivity_bench_online_results.jsonl`: online sessions, in the shape of upstream's
  online output (its `final_dialogues.jsonl` rows): `num_turns_completed`, `trigger_stats`, the
  trigger points with the user agent's verdicts, every generated turn with the planner's plan of it
  (`turn_records[].planner`), and `token_usage` for `planner`, `user_agent` and `assistant`. Such a
  row is a whole dialogue: it loads back and runs like a released one.
- `<model id>_proactivity_bench[_online]_metrics.json`: upstream's metrics file:
  `aggregate_trigger_stats`, `metrics` (upstream's keys, `metrics.metrics`: SKIPPED left out of
  every denominator) and `token_usage` (per seat: means per conversation and totals), plus `meta`
  (the judges, the sessions, and every deviation from upstream's protocol their settings make, as
  `first 2 trigger points only`: numbers from such a run are not upstream's).

Why `<source>@<session id>` for `unique_id_eval`: it is the row's primary key, and a session is
not the released dialogue: the export loads with `--envs` beside the samples it came from as a
new environment (`proactbench/<source>@<session id>`) instead of clashing with them. (Upstream's
released result files are not a guide here: their rows carry `unique_id_eval: 0`.)

Token usage per seat comes from the record's `Totals.by_seat` (calls counted only when they
reported tokens, as upstream counts them); a record from before it was kept has zeros there.

Limit worth knowing: an offline row keeps upstream's turn records, one per trigger, so loaded back
it has no turns between triggers; it is for reading and comparing, not for another offline run
(run the released row for that).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from proactive_tui.export.formats.common import run_facts, scrub, sort_records
from proactive_tui.export.registry import ExportError, Exporter, register
from proactive_tui.families.proactbench import METRICS_SUFFIX, ONLINE_METRICS_SUFFIX, ONLINE_RESULTS_SUFFIX, RESULTS_SUFFIX
from proactive_tui.families.proactbench.env import Dialogue
from proactive_tui.families.proactbench.metrics import COUNTS, add_stats, counted, metrics, trigger_stats
from proactive_tui.textsafe import json_text

if TYPE_CHECKING:
    from proactive_tui.core.run_record import RunRecord

FAMILY = "proactbench"
IDENTIFIERS = ("blueprint_id", "scenario_id", "unique_id_eval", "uuid", "category_key", "style_combination_index")
OFFLINE_USAGE = (("assistant", "agent"), ("judge", "judge"))
"""Upstream's `token_usage` blocks of an offline row, and the seat each is counted from."""
ONLINE_USAGE = (("planner", "judge"), ("user_agent", "user"), ("assistant", "agent"))
"""An online row's blocks: the planner sits in the judge seat, the user agent in the user seat."""


def protocol_of(record: RunRecord) -> str:
    return str((record.settings or {}).get("protocol") or "offline")


def source_dialogue(record: RunRecord) -> Dialogue:
    """The dialogue row the session ran on (its environment), or an ExportError naming the session."""
    data = (record.environment or {}).get("dialogue")
    if not isinstance(data, dict):
        raise ExportError(f"session {record.id} has no ProactBench dialogue to export (environment.dialogue is missing)")
    try:
        return Dialogue.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(row)"
        raise ExportError(f"session {record.id}: environment.dialogue.{where}: {first['msg']}") from None


def evaluated_model(record: RunRecord) -> str:
    """The agent seat's model string; `person` when a person answered."""
    seat = record.seats.get("agent")
    if seat is not None and seat.kind == "human":
        return "person"
    return str(((record.models or {}).get("agent") or {}).get("model") or (seat.label if seat is not None else ""))


def model_id(model: str) -> str:
    """A model string as upstream names its files (`qwen/qwen3.5-9b` -> `qwen__qwen3.5-9b`), safe as a
    file name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.replace("/", "__")).strip("._")
    return name or "unknown-model"


def _usage(record: RunRecord, blocks: tuple[tuple[str, str], ...]) -> dict[str, dict[str, int]]:
    by_seat = record.totals.by_seat
    out = {}
    for name, seat in blocks:
        share = by_seat.get(seat)
        out[name] = {"prompt_tokens": share.prompt_tokens if share else 0,
                     "completion_tokens": share.completion_tokens if share else 0,
                     "calls": share.calls if share else 0}
    return out


def row_stats(pairs: list[tuple[str, Any]]) -> dict[str, dict[str, int]]:
    """Upstream's per-row `trigger_stats`: a tally for each type the row has, in the order met."""
    stats: dict[str, dict[str, int]] = {}
    for kind, result in pairs:
        stats.setdefault(kind, {c: 0 for c in COUNTS})[counted(result)] += 1
    return stats


def _agent_reply(record: RunRecord, turn: int) -> str | None:
    replies = [m for m in record.messages if m.role == "agent" and m.turn == turn and not m.partial]
    return replies[-1].content if replies else None


def _answered(record: RunRecord) -> list[tuple[Any, str]]:
    """The triggers the agent answered, each with the reply: the judged one, or (a trigger the
    session ended before judging) the agent's finished message of that turn. Unanswered ones are
    left out, as upstream leaves out a trigger whose model call failed."""
    out = []
    for t in sorted(record.section.triggers, key=lambda t: t.index):
        reply = t.response if t.judged and t.response is not None else _agent_reply(record, t.turn)
        if reply is not None:
            out.append((t, reply))
    return out


def _trigger_point(t: Any) -> dict[str, Any]:
    return {"turn": t.turn, "evaluation_rubric": t.rubric.model_dump(mode="json"),
            "evaluation_result": t.result.model_dump(mode="json") if t.result is not None else None}


def deviations_of(record: RunRecord) -> list[str]:
    """How the session's settings differ from upstream's offline evaluation (`first 2 trigger points
    only`, the online protocol...), as every batch output labels them."""
    from proactive_tui.families.proactbench import family

    return family.deviations(record.settings)


def _meta(record: RunRecord, answered: list[tuple[Any, str]]) -> dict[str, Any]:
    return {
        "session_id": record.id,
        "env_id": record.env_id,
        "protocol": protocol_of(record),
        "deviations": deviations_of(record),
        **run_facts(record),
        "verdicts": [{"turn": t.turn, "type": t.type, "counted": t.counted if t.judged else "SKIPPED",
                      "judge": t.judge, "judged_by": t.judged_by,
                      "problem": t.problem if t.judged else "the session ended before this reply was judged"}
                     for t, _ in answered],
        "versions": record.versions,
    }


def _identifiers(record: RunRecord, dialogue: Dialogue) -> dict[str, Any]:
    row = {key: getattr(dialogue, key) for key in IDENTIFIERS}
    row["unique_id_eval"] = f"{dialogue.unique_id_eval}@{record.id}"
    return row


def offline_row(record: RunRecord) -> dict[str, Any]:
    """One offline session as a row of upstream's `<model>_proactivity_bench_results.jsonl`."""
    dialogue = source_dialogue(record)
    answered = _answered(record)
    turn_records = []
    for t, reply in answered:
        recorded = dialogue.turn(t.turn)
        turn_records.append({
            "turn": t.turn,
            "user_message": t.user_message if t.user_message is not None else (recorded.user_message if recorded else ""),
            "assistant_response": reply,
            "original_assistant_response": t.original_response if t.original_response is not None else (
                recorded.assistant_response if recorded else None),
        })
    return {
        **_identifiers(record, dialogue),
        "evaluated_model": evaluated_model(record),
        "source_evaluated_model": dialogue.evaluated_model,
        "num_trigger_points": len(answered),
        "trigger_stats": row_stats([(t.type, t.result) for t, _ in answered]),
        "trigger_points": [_trigger_point(t) for t, _ in answered],
        "turn_records": turn_records,
        "token_usage": _usage(record, OFFLINE_USAGE),
        "meta": _meta(record, answered),
    }


def online_row(record: RunRecord) -> dict[str, Any]:
    """One online session as a row of upstream's online output (a `final_dialogues.jsonl` row):
    every turn the agent answered, with the planner's plan and the user's message of it."""
    dialogue = source_dialogue(record)
    plans = {p.turn: p.plan for p in record.section.plans}
    users: dict[int, str] = {}
    agents: dict[int, str] = {}
    for m in record.messages:
        if not m.partial:
            (users if m.role == "user" else agents)[m.turn] = m.content
    turns = sorted(t for t in agents if t in users)
    answered = _answered(record)
    return {
        **_identifiers(record, dialogue),
        "evaluated_model": evaluated_model(record),
        "num_turns_completed": len(turns),
        "trigger_stats": row_stats([(t.type, t.result) for t, _ in answered]),
        "trigger_points": [_trigger_point(t) for t, _ in answered],
        "turn_records": [{"turn": turn, "planner": plans[turn].model_dump(mode="json") if turn in plans else None,
                          "user_message": users[turn], "assistant_response": agents[turn]} for turn in turns],
        "token_usage": _usage(record, ONLINE_USAGE),
        "meta": _meta(record, answered),
    }


def dataset_row(record: RunRecord) -> dict[str, Any]:
    if record.family != FAMILY:
        raise ExportError(f"session {record.id} is a {record.family} session, not proactbench")
    return online_row(record) if protocol_of(record) == "online" else offline_row(record)


def metrics_file(rows: list[dict[str, Any]], protocol: str) -> dict[str, Any]:
    """Upstream's `<model>_proactivity_bench_metrics.json` over the rows of one model."""
    stats = trigger_stats([])
    for row in rows:
        add_stats(stats, row["trigger_stats"])
    usage: dict[str, dict[str, float]] = {}
    n = len(rows)
    for name, _ in OFFLINE_USAGE if protocol == "offline" else ONLINE_USAGE:
        prompt = sum(r["token_usage"][name]["prompt_tokens"] for r in rows)
        completion = sum(r["token_usage"][name]["completion_tokens"] for r in rows)
        calls = sum(r["token_usage"][name]["calls"] for r in rows)
        usage[name] = {"mean_prompt_tokens_per_conversation": prompt / n if n else 0.0,
                       "mean_completion_tokens_per_conversation": completion / n if n else 0.0,
                       "mean_calls_per_conversation": calls / n if n else 0.0,
                       "total_prompt_tokens": prompt, "total_completion_tokens": completion}
    judges = sorted({v["judge"] for r in rows for v in r["meta"]["verdicts"] if v["judge"]})
    deviations = sorted({d for r in rows for d in r["meta"]["deviations"]})
    return {
        "aggregate_trigger_stats": stats,
        "metrics": metrics(stats, n),
        "token_usage": usage,
        "meta": {"protocol": protocol, "evaluated_model": rows[0]["evaluated_model"] if rows else "",
                 "judges": judges, "deviations": deviations, "sessions": [r["meta"]["session_id"] for r in rows]},
    }


def write(records: list[Any], out: Path) -> list[Path]:
    """Per evaluated model and protocol, the results file and the metrics file (existing files of
    those names are replaced)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file; the proactbench format writes a folder "
                          f"(<model>{RESULTS_SUFFIX} and <model>{METRICS_SUFFIX})")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    models: dict[tuple[str, str], str] = {}
    for record in sort_records(records):
        row = dataset_row(scrub(record))
        protocol = protocol_of(record)
        key = (model_id(row["evaluated_model"]), protocol)
        if models.setdefault(key, row["evaluated_model"]) != row["evaluated_model"]:
            raise ExportError(f"models {models[key]!r} and {row['evaluated_model']!r} would share the file name "
                              f"{key[0]}: export their sessions separately")
        groups.setdefault(key, []).append(row)
    written = []
    out.mkdir(parents=True, exist_ok=True)
    for (name, protocol), rows in sorted(groups.items()):
        results, metrics_name = (RESULTS_SUFFIX, METRICS_SUFFIX) if protocol == "offline" else (
            ONLINE_RESULTS_SUFFIX, ONLINE_METRICS_SUFFIX)
        path = out / f"{name}{results}"
        path.write_text("".join(json_text(row) + "\n" for row in rows), encoding="utf-8")
        written.append(path)
        path = out / f"{name}{metrics_name}"
        path.write_text(json_text(metrics_file(rows, protocol), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


EXPORTER = register(Exporter(
    name=FAMILY,
    description="upstream ProactBench evaluation output: per model, results rows (evaluation_result per trigger, "
                "original_assistant_response, trigger_stats, token_usage) and the metrics file",
    write=write,
    families=(FAMILY,),
    out_is_dir=True,
))
