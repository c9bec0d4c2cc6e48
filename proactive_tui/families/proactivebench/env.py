"""ProactiveBench environments: a stream of user-activity events (docs/protocols.md#proactivebench).

A trace is a JSON array of events in time order. Only `observation.time` and `observation.event`
drive a session; the annotations upstream keeps beside them (`agent_response`, `task_status`, and
in judged traces `other_infomation` and `judgement`) are kept as they are::

    [{"observation": {"time": "1717377997.0", "event": "The user opens 'notes.md' in an editor."},
      "agent_response": {"candidate_task": ["..."]},
      "task_status": true}, ...]

An optional `splits.json` beside the traces names splits, each with a theme and file list::

    {"real_coding": {"theme": "Coding", "files": ["code_11.json", ...]}, ...}

Ids look like `proactivebench/code_11` (the file name without `.json`).
"""

from __future__ import annotations

from pathlib import Path

from proactive_tui.core.family import EnvironmentsPart, FileCandidate
from proactive_tui.families.proactivebench import MANIFEST

from datetime import datetime, timezone
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proactive_tui.envs.base import EnvironmentBase, one_line
from proactive_tui.envs.problems import LoadProblem, problems_from_validation
from proactive_tui.envs.reading import json_kind

FAMILY: Literal["proactivebench"] = "proactivebench"


class Observation(BaseModel):
    model_config = ConfigDict(extra="allow")

    time: str
    event: str

    @field_validator("time", mode="before")
    @classmethod
    def _time_as_text(cls, value: Any) -> Any:
        # Upstream writes unix seconds as strings; numbers mean the same thing.
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("event")
    @classmethod
    def _event_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class TraceEvent(BaseModel):
    model_config = ConfigDict(extra="allow")

    observation: Observation


class Split(BaseModel):
    model_config = ConfigDict(extra="allow")

    theme: str = ""
    files: list[str] = Field(default_factory=list)


class ProactiveBenchEnv(EnvironmentBase):
    file_shape: ClassVar[str] = "an array of {observation: ...} events (a trace)"
    family: Literal["proactivebench"] = FAMILY
    events: list[TraceEvent]
    splits: list[str] = Field(default_factory=list)
    theme: str = ""


def parse_splits(display: str, data: Any) -> tuple[dict[str, Split], list[LoadProblem]]:
    if not isinstance(data, dict):
        return {}, [LoadProblem(file=display, message=f"expected an object of named splits, got {json_kind(data)}")]
    splits: dict[str, Split] = {}
    problems: list[LoadProblem] = []
    for name, raw in data.items():
        try:
            splits[name] = Split.model_validate(raw)
        except ValidationError as exc:
            problems.extend(problems_from_validation(display, None, exc, prefix=(name,)))
    return splits, problems


def load_trace(stem: str, display: str, data: Any, splits: dict[str, Split],
               id_stem: str | None = None) -> tuple[list[ProactiveBenchEnv], list[LoadProblem]]:
    """Validate one trace file; a trace with any bad event is rejected whole (it would replay wrong).

    `stem` is the file's name (upstream's split files name traces by it); `id_stem` the path the
    id uses (`real/code_11` for the shipped real traces)."""
    if not isinstance(data, list):
        return [], [LoadProblem(file=display, message=f"expected a JSON array of events, got {json_kind(data)}")]
    if not data:
        return [], [LoadProblem(file=display, message="trace has no events")]
    events: list[TraceEvent] = []
    problems: list[LoadProblem] = []
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            problems.append(LoadProblem(file=display, record=index, message=f"expected an object, got {json_kind(raw)}"))
            continue
        try:
            events.append(TraceEvent.model_validate(raw))
        except ValidationError as exc:
            problems.extend(problems_from_validation(display, index, exc))
    if problems:
        return [], problems
    member_of = [name for name, split in splits.items() if f"{stem}.json" in split.files or stem in split.files]
    themes = [splits[n].theme for n in member_of if splits[n].theme and splits[n].theme.lower() != "all"]
    theme = themes[0] if themes else _theme_from_stem(stem)
    env = ProactiveBenchEnv(
        id=f"{FAMILY}/{id_stem or stem}",
        title=f"{theme} trace {stem}" if theme else stem,
        summary=one_line(events[0].observation.event),
        domain=theme.lower() if theme else "other",
        source=display,
        events=events,
        splits=member_of,
        theme=theme,
    )
    return [env], []


def _theme_from_stem(stem: str) -> str:
    prefix = stem.split("_")[0].split("-")[0].lower()
    return {"code": "Coding", "coding": "Coding", "writing": "Writing", "life": "Daily life", "daily": "Daily life"}.get(
        prefix, ""
    )


def _event_time(raw: str) -> str:
    try:
        return datetime.fromtimestamp(float(raw), tz=timezone.utc).strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return raw


def describe(env: ProactiveBenchEnv, reveal: bool) -> list[tuple[str, str]]:
    """The family's sections of `envs show` and the picker preview (see envs.describe)."""
    lines = []
    for i, event in enumerate(env.events):
        mark = ""
        if reveal:
            status = (event.model_extra or {}).get("task_status")
            mark = "  [help welcome]" if status is True else ""
        lines.append(f"{i:>3}  {_event_time(event.observation.time)}  {event.observation.event}{mark}")
    out = [("Theme", env.theme or "-")]
    if env.splits:
        out.append(("Splits", ", ".join(env.splits)))
    out.append((f"Events ({len(env.events)})", "\n".join(lines)))
    return out




class ProactiveBenchEnvironments(EnvironmentsPart):
    """Traces (a JSON array of events), with the folder's `splits.json` as a companion."""

    env_model = ProactiveBenchEnv

    def sample_sources(self) -> list[Path]:
        # The real test set (Apache-2.0, thunlp/ProactiveAgent) loads as proactivebench/real/<stem>.
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir(FAMILY), Path(__file__).resolve().parent / "data"]

    def claims_shape(self, data: Any) -> bool:
        return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "observation" in data[0]

    def read_companion(self, file: FileCandidate, data: Any) -> tuple[Any, list[LoadProblem]]:
        if file.path.name == MANIFEST:  # which session each exported trace came from: read, not used
            return data, []
        return parse_splits(file.display, data)

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
        envs, problems = load_trace(file.path.stem, file.display, data, companions.get("splits.json") or {},
                                    id_stem=file.relative_stem(FAMILY))
        return list(envs), problems

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """The trace (its events, annotations kept) at `proactivebench/<id path>~<label>.json`. Split
        membership lives in `splits.json`, which is not changed: the saved trace belongs to no split
        and takes its theme from its file name, as any trace outside the splits does."""
        from proactive_tui.envs.what_if import file_stem

        return file_stem(env.id, FAMILY, label) + ".json", [event.model_dump(mode="json") for event in env.events]

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return describe(env, reveal_reference)


ENVIRONMENTS = ProactiveBenchEnvironments()
