"""Countdown environments: `{"countdown": {"start": 3, "goal": "..."}}`, or a JSON array of them
(the family's own dataset export, each item with its `id` and the `result` a session produced).

Ids look like `countdown/three` (the file's path without `.json`), or the item's own `id`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from proactive_tui.core.family import EnvironmentsPart, FileCandidate
from proactive_tui.envs.base import EnvironmentBase, one_line
from proactive_tui.envs.problems import LoadProblem, problems_from_validation

FAMILY = "countdown"


class CountdownTask(BaseModel):
    start: int = Field(ge=0, le=50)
    goal: str


class CountdownEnv(EnvironmentBase):
    family: Literal["countdown"] = FAMILY
    countdown: CountdownTask
    result: dict[str, Any] | None = None
    """What a session produced, when the environment was read from a countdown export."""


class _Item(BaseModel):
    model_config = {"extra": "forbid"}

    countdown: CountdownTask
    id: str | None = None
    title: str | None = None
    result: dict[str, Any] | None = None


def is_countdown(data: Any) -> bool:
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(isinstance(i, dict) and "countdown" in i for i in items)


def load_file(stem: str, display: str, data: Any) -> tuple[list[CountdownEnv], list[LoadProblem]]:
    many = isinstance(data, list)
    envs: list[CountdownEnv] = []
    problems: list[LoadProblem] = []
    for index, raw in enumerate(data if many else [data]):
        try:
            item = _Item.model_validate(raw)
        except ValidationError as exc:
            problems += problems_from_validation(display, index if many else None, exc)
            continue
        task = item.countdown
        envs.append(CountdownEnv(
            id=item.id or (f"{FAMILY}/{stem}/{index}" if many else f"{FAMILY}/{stem}"),
            title=item.title or f"Count down from {task.start}", summary=one_line(task.goal),
            domain="counting", source=display, countdown=task, result=item.result,
        ))
    return envs, problems


def describe(env: CountdownEnv, reveal: bool) -> list[tuple[str, str]]:
    out = [("Task", f"start at {env.countdown.start}; {env.countdown.goal}")]
    if reveal:
        out.append(("Expected", ", ".join(str(n) for n in range(env.countdown.start, -1, -1))))
    return out


class CountdownEnvironments(EnvironmentsPart):
    """Sample tasks shipped beside the package; a file is ours by its folder or its shape."""

    env_model = CountdownEnv

    def sample_sources(self) -> list[Path]:
        return [Path(__file__).resolve().parent / "samples"]

    def claims_shape(self, data: Any) -> bool:
        return is_countdown(data)

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
        envs, problems = load_file(file.relative_stem(FAMILY), file.display, data)
        return list(envs), problems

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return describe(env, reveal_reference)


ENVIRONMENTS = CountdownEnvironments()
