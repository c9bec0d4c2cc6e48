"""ProactBench environments: one curated dialogue with its trigger points (docs/protocols.md#proactbench).

ProactBench (Boson AI, arXiv 2605.09228, Apache-2.0) releases `final_dialogues.jsonl`: one JSON
object per line, each a dialogue that a Planner, a User Agent and the curation model
(gemini-2.5-pro) ran, with the turns the Planner declared trigger points and the rubric it wrote
for each before the assistant answered. A person's copy of the upstream file loads as it is
(`--envs final_dialogues.jsonl`); the first 8 rows ship as samples (the kit's NOTICE.md and
LICENSE sit beside them).

Upstream's newer rows carry `trigger_stats` and an `evaluation_result` on each trigger point; the
older ones do not: both are optional here. Unknown fields are kept (`extra="allow"`) so a row
written by a later upstream version still loads and exports as it came.

Ids look like `proactbench/<unique_id_eval>` (upstream's primary key; `uuid` repeats across rows).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from proactive_tui.core.family import EnvironmentsPart, FileCandidate
from proactive_tui.families.proactbench import METRICS_SUFFIX, ONLINE_METRICS_SUFFIX, ONLINE_RESULTS_SUFFIX, RESULTS_SUFFIX

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proactive_tui.envs.base import EnvironmentBase, one_line
from proactive_tui.envs.problems import LoadProblem, problems_from_validation
from proactive_tui.envs.reading import json_kind

FAMILY: Literal["proactbench"] = "proactbench"

TriggerType = Literal["EMERGENT", "CRITICAL", "RECOVERY"]
TRIGGER_TYPES: tuple[str, ...] = ("EMERGENT", "CRITICAL", "RECOVERY")
"""In the order a dialogue meets them: an early single anchor, several anchors combined, after
the task is done."""
Score = Literal["PASS", "PARTIAL", "FAIL"]
SCORES: tuple[str, ...] = ("PASS", "PARTIAL", "FAIL")
SCORE_VALUE: dict[str, float] = {"PASS": 1.0, "PARTIAL": 0.5, "FAIL": 0.0}
"""Upstream's weighted score; SKIPPED is left out of the denominator."""
MAX_TRIGGERS = 6
"""Upstream's cap: the Planner may not declare a seventh trigger point in one dialogue."""
CATEGORIES: tuple[str, ...] = ("professional_persona", "sports_persona", "arts_persona", "travel_persona",
                               "culinary_persona")
"""Upstream's persona categories (`category_key`)."""
WRITTEN_BY = "person"
"""The `evaluated_model` of a dialogue written in the studio's form (`ui.write_form`): its recorded
replies are a person's, not a curation model's."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Rubric(_Open):
    """Written by the Planner before the assistant answered the trigger turn."""

    type: TriggerType
    pass_criteria: str
    partial_criteria: str
    fail_criteria: str

    @field_validator("type", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    def criteria(self) -> list[tuple[Score, str]]:
        """(level, what earns it) for PASS, PARTIAL and FAIL, as a view prints them: the level,
        then the text. Recorded Planners often begin a criterion with its own level ("PASS if the
        assistant…"); that leading word is left out of the text, so a view does not print it twice
        ("PASS PASS if…"). The stored rubric (and what the judge is sent) keeps it as written."""
        levels: tuple[tuple[Score, str], ...] = (
            ("PASS", self.pass_criteria), ("PARTIAL", self.partial_criteria), ("FAIL", self.fail_criteria))
        return [(level, _LEVEL_WORD[level].sub("", text, count=1)) for level, text in levels]


_LEVEL_WORD: dict[str, re.Pattern[str]] = {
    level: re.compile(rf"^\s*{level}\b\s*[:\-–—]?\s*", re.IGNORECASE) for level in ("PASS", "PARTIAL", "FAIL")}
"""A criterion's leading level word ("PASS if…", "Partial: …"), with the colon or dash after it."""


class EvaluationResult(_Open):
    """A judge's (or the User Agent's) verdict on one trigger reply, upstream's shape."""

    status: Literal["EVALUATED", "SKIPPED"] = "EVALUATED"
    score: Score | None = None
    rationale: str = ""
    evidence: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @property
    def counted(self) -> str:
        """How upstream's tallies count it: the score when EVALUATED with one, else SKIPPED."""
        return self.score if self.status == "EVALUATED" and self.score else "SKIPPED"


class TriggerPoint(_Open):
    turn: int = Field(ge=1)
    """1-based turn whose ASSISTANT reply is scored."""
    evaluation_rubric: Rubric
    evaluation_result: EvaluationResult | None = None


class StateAudit(_Open):
    current_turn: int = 0
    previous_trigger_count: int = 0
    is_max_reached: bool = False


class TacticalOrder(_Open):
    """What the Planner tells the User Agent (or a person in the user seat) to do this turn."""

    intent: str = ""
    content_payload: list[str] = Field(default_factory=list)
    behavioral_directive: str = ""


class PlannerOutput(_Open):
    """The Planner's structured answer for one turn (upstream's shape)."""

    state_audit: StateAudit = Field(default_factory=StateAudit)
    is_trigger_point: bool = False
    stop_conversation: bool = False
    evaluation_rubric: Rubric | None = None
    tactical_order: TacticalOrder = Field(default_factory=TacticalOrder)


class TurnRecord(_Open):
    turn: int = Field(ge=1)
    planner: PlannerOutput | None = None
    user_message: str = ""
    assistant_response: str = ""


class Dialogue(_Open):
    """One row of upstream's `final_dialogues.jsonl`, as it is."""

    blueprint_id: str
    scenario_id: str
    unique_id_eval: str
    uuid: str = ""
    category_key: str = ""
    style_combination_index: int | None = None
    evaluated_model: str = ""
    num_turns_completed: int = 0
    trigger_points: list[TriggerPoint] = Field(default_factory=list)
    turn_records: list[TurnRecord] = Field(default_factory=list)
    token_usage: dict[str, Any] = Field(default_factory=dict)
    trigger_stats: dict[str, Any] | None = None

    @field_validator("trigger_points")
    @classmethod
    def _one_trigger_a_turn(cls, points: list[TriggerPoint]) -> list[TriggerPoint]:
        """A turn is scored once: upstream's Planner declares a turn a trigger point or not, and a
        session's verdicts, forks and comparisons are keyed by the trigger's turn."""
        turns = [t.turn for t in points]
        twice = sorted({n for n in turns if turns.count(n) > 1})
        if twice:
            raise ValueError(f"turn {', '.join(map(str, twice))} has more than one trigger point (a turn is scored once)")
        return points

    def turn(self, n: int) -> TurnRecord | None:
        return next((t for t in self.turn_records if t.turn == n), None)


class ProactBenchEnv(EnvironmentBase):
    file_shape: ClassVar[str] = ("dialogue rows with unique_id_eval and trigger_points (a .jsonl, one row a line, "
                                 "or a .json of one row or an array)")
    family: Literal["proactbench"] = FAMILY
    dialogue: Dialogue
    line: int | None = None
    """The 1-based line of the `.jsonl` file the row was read from (for messages)."""

    @property
    def triggers(self) -> list[TriggerPoint]:
        """The trigger points in turn order."""
        return sorted(self.dialogue.trigger_points, key=lambda t: t.turn)

    def anchors(self) -> list[str]:
        """What the recorded Planner told the user to reveal, turn by turn (its content payloads):
        the online protocol's stand-in for the blueprint, which the release does not include."""
        out: list[str] = []
        for record in sorted(self.dialogue.turn_records, key=lambda t: t.turn):
            if record.planner is not None:
                out.extend(record.planner.tactical_order.content_payload)
        return out


def category_name(key: str) -> str:
    """`professional_persona` -> `professional`."""
    return key.removesuffix("_persona") or "other"


def load_rows(display: str, rows: list[tuple[int, Any]], id_prefix: str = "") -> tuple[list[ProactBenchEnv], list[LoadProblem]]:
    """Validate each (line number, parsed row) of a dialogues file; a bad row is one problem per
    field naming the file, the line and the field, and never stops the others. A row with no
    trigger points is skipped with a line (upstream's offline evaluation writes no row for it)."""
    envs: list[ProactBenchEnv] = []
    problems: list[LoadProblem] = []
    for line, raw in rows:
        if not isinstance(raw, dict):
            problems.append(LoadProblem(file=display, line=line, message=f"expected a dialogue object, got {json_kind(raw)}"))
            continue
        try:
            dialogue = Dialogue.model_validate(raw)
        except ValidationError as exc:
            problems.extend(problems_from_validation(display, None, exc, line=line))
            continue
        if not dialogue.trigger_points:
            problems.append(LoadProblem(file=display, line=line, field="trigger_points",
                                        message="no trigger points: nothing to score; skipped"))
            continue
        missing = [t.turn for t in dialogue.trigger_points if dialogue.turn(t.turn) is None]
        if missing:
            problems.append(LoadProblem(file=display, line=line, field="turn_records",
                                        message=f"no turn record for trigger turn(s) {', '.join(map(str, missing))}"))
            continue
        category = category_name(dialogue.category_key)
        first = dialogue.turn(min(t.turn for t in dialogue.trigger_points))
        envs.append(ProactBenchEnv(
            id=f"{FAMILY}/{id_prefix}{dialogue.unique_id_eval}",
            title=dialogue.scenario_id + (f" style {dialogue.style_combination_index}"
                                          if dialogue.style_combination_index is not None else ""),
            summary=one_line(first.user_message if first else dialogue.blueprint_id),
            domain=category,
            tier=None,
            source=f"{display}:{line}",
            dialogue=dialogue,
            line=line,
        ))
    return envs, problems


def describe(env: ProactBenchEnv, reveal: bool) -> list[tuple[str, str]]:
    """The family's sections of `envs show` and the picker preview. `reveal=False` (a person about
    to play the agent) hides the rubrics and the recorded replies at trigger turns."""
    d = env.dialogue
    parts = [d.blueprint_id, f"scenario {d.scenario_id}", category_name(d.category_key)]
    if d.style_combination_index is not None:
        parts.append(f"style {d.style_combination_index}")
    parts.append(f"{d.num_turns_completed} turns")
    parts.append("replies written by a person" if d.evaluated_model == WRITTEN_BY
                 else f"curated with {d.evaluated_model or '-'}")
    out = [("Dialogue", " · ".join(parts))]
    triggers = []
    for i, t in enumerate(env.triggers, 1):
        line = f"{i}. turn {t.turn} {t.evaluation_rubric.type}"
        if reveal:
            line += f"\n   PASS: {t.evaluation_rubric.pass_criteria}\n   PARTIAL: {t.evaluation_rubric.partial_criteria}" \
                    f"\n   FAIL: {t.evaluation_rubric.fail_criteria}"
        triggers.append(line)
    out.append((f"Trigger points ({len(env.triggers)})", "\n".join(triggers)))
    trigger_turns = {t.turn for t in env.triggers}
    turns = []
    for record in sorted(d.turn_records, key=lambda t: t.turn):
        mark = "  [trigger]" if record.turn in trigger_turns else ""
        turns.append(f"{record.turn:>2} user{mark}: {one_line(record.user_message, 160)}")
    out.append((f"Turns ({len(d.turn_records)})", "\n".join(turns)))
    return out


class ProactBenchEnvironments(EnvironmentsPart):
    """Dialogue rows: upstream's `.jsonl` as it is, or a `.json` of one row or an array of rows;
    the export's results files load back wherever they are."""

    env_model = ProactBenchEnv

    def sample_sources(self) -> list[Path]:
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir(FAMILY)]

    def claims_location(self, file: FileCandidate) -> bool:
        name = file.path.name.lower()
        return (FAMILY in file.folders or name.startswith("final_dialogues")
                or name.endswith((RESULTS_SUFFIX, ONLINE_RESULTS_SUFFIX, METRICS_SUFFIX, ONLINE_METRICS_SUFFIX)))

    def skip_file(self, file: FileCandidate) -> bool:
        """An exported metrics file (beside its results rows) holds numbers, not dialogues."""
        return file.path.name.lower().endswith((METRICS_SUFFIX, ONLINE_METRICS_SUFFIX))

    def claims_shape(self, data: Any) -> bool:
        from proactive_tui.envs.reading import JsonLines

        first = data.first() if isinstance(data, JsonLines) else (data[0] if isinstance(data, list) and data else data)
        return isinstance(first, dict) and "unique_id_eval" in first and "trigger_points" in first

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
        """A `.jsonl` of dialogue rows (upstream's file as it is), or a `.json` holding one row or an
        array of rows (a row written by hand); each bad row is its own problem line."""
        from proactive_tui.envs.reading import JsonLines

        if isinstance(data, JsonLines):
            envs, problems = load_rows(file.display, data.rows)
            return list(envs), [*data.problems, *problems]
        if isinstance(data, dict):
            envs, problems = load_rows(file.display, [(1, data)])
            return list(envs), problems
        if isinstance(data, list):
            envs, problems = load_rows(file.display, list(enumerate(data, 1)))
            for problem in problems:  # a .json array: say record, not line
                problem.record, problem.line = problem.line, None
            return list(envs), problems
        return [], [LoadProblem(file=file.display, message=f"expected dialogue rows (one JSON object per line), got {json_kind(data)}")]

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return describe(env, reveal_reference)

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """The dialogue as one upstream row (`proactbench/<id>~<label>.json`, a `.json` holding one
        row, as `load_file` reads it), its `unique_id_eval` (the id's source) marked `~<label>` so it
        loads as `<id>~<label>`: "What if" saves and the write-your-own form (`ui.write_form`)."""
        from proactive_tui.envs.what_if import file_stem, root_id

        row = env.dialogue.model_dump(mode="json", exclude_none=True)
        row["unique_id_eval"] = f"{root_id(env.id).removeprefix(FAMILY + '/')}~{label}"
        return file_stem(env.id, FAMILY, label) + ".json", row


ENVIRONMENTS = ProactBenchEnvironments()
