"""Chronos environments: long-term intent maintenance on a simulated timeline (docs/protocols.md#chronos).

No public Chronos data exists, so this is our own schema. One scenario per JSON file; the id is
`chronos/<file name without .json>` (a file may also hold an array of scenarios, then the ids get
`/<index>`). A scenario may also branch, as a paper sample does: instead of `branch` it has
`branches: {"positive": [states], "negative": [states]}`, the two continuations of its last
timeline, and loads as two environments, `<id>/positive` and `<id>/negative` (see `fork`). A full example, a complex-tier scenario on the positive branch::

    {
      "title": "Family SUV under budget, then a switch to a hybrid",
      "scenario": "car_purchase",
      "branch": "positive",
      "tier": "complex",
      "persona": "Dana, 38, nurse in Leeds with two children; careful with money; checks messages in the evening.",
      "initial_need": "I need a used family car, nothing fancy. Can you keep an eye out for me?",
      "intention": "buy a used 7-seat family car",
      "constraints": [
        {"key": "budget", "value": "at most £14,000", "reveal_turn": 1},
        {"key": "seats", "value": "7 seats", "reveal_turn": 1},
        {"key": "mileage", "value": "under 60,000 miles", "reveal_turn": 2}
      ],
      "start_time": "2026-03-02T09:00",
      "timeline": [
        {"time": "2026-03-04T09:00", "listings": ["2017 Ford Galaxy, 7 seats, 81,000 mi, £11,900"], "meets_needs": false},
        {"time": "2026-03-09T09:00", "listings": ["2018 Kia Sorento, 7 seats, 52,000 mi, £13,750"], "meets_needs": true}
      ],
      "intention_shift": {
        "utterance": "Actually, with fuel prices as they are I'd rather have a hybrid. Still 7 seats, budget up to £17,000.",
        "intention": "buy a used 7-seat hybrid",
        "constraints": {"budget": "at most £17,000", "seats": "7 seats", "fuel": "hybrid"},
        "timeline": [
          {"time": "2026-03-16T09:00", "listings": ["2019 Toyota Prius+, 7 seats, petrol hybrid, 70,000 mi, £17,900"], "meets_needs": false},
          {"time": "2026-03-23T09:00", "listings": ["2020 Kia Sorento HEV, 7 seats, hybrid, 38,000 mi, £16,800"], "meets_needs": true}
        ]
      },
      "turn_limit": 24
    }

Field meanings:

- `scenario`: the task kind (paper test set: `car_purchase`, `house_hunting`, `ticket_booking`;
  training kinds `product_recommendation`, `job_search`, `flight_booking`; other names allowed).
- `branch`: `positive` when a later state satisfies the needs, `negative` when none does.
- `tier`: `simple` (no shift) or `complex` (the user voices `intention_shift` once, after the
  agent's first follow-up).
- `persona`: who the user is, shown to the simulated user (and a person playing it).
- `initial_need`: the user's opening message.
- `intention`: the task intention the agent should write into `task_description.intention`.
- `constraints`: what the user wants, each with `reveal_turn`: 0 = already in the opening
  message, 1 = said in the user's first reply, and so on.
- `timeline`: environment states in time order, each the listings visible then and whether they
  meet the needs. The monitor advances through them while the user is dormant.
- `intention_shift`: the new intention, the full new constraint set, and the states after the shift.
- `turn_limit`: agent turns after which the session fails (turns answering the agent's own INFO_RETRIEVAL are
  not counted).
- `synth` (optional): a generated scenario's provenance (`proactive-tui synth chronos`: generator
  version, models per role, seed, item id, run); a hand-written file has none.

Checks beyond types: times never go backwards; `simple` has no shift and `complex` has one; on
the positive branch the last relevant timeline (the shift's, in the complex tier) has a state that
meets the needs, on the negative branch none does; in the complex tier the first timeline must
have a satisfying state (the follow-up after which the user shifts), and the first state after
the shift must not satisfy the new needs yet.
"""

from __future__ import annotations

from pathlib import Path

from proactive_tui.core.family import EnvironmentsPart, FileCandidate

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from proactive_tui.envs.base import EnvironmentBase, one_line
from proactive_tui.envs.problems import LoadProblem, problems_from_validation
from proactive_tui.envs.reading import json_kind

FAMILY: Literal["chronos"] = "chronos"

SCENARIO_TITLES = {
    "car_purchase": "Car purchase",
    "house_hunting": "House hunting",
    "ticket_booking": "Ticket booking",
    "product_recommendation": "Product recommendation",
    "job_search": "Job search",
    "flight_booking": "Flight booking",
}


def _parse_time(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {value!r} (write e.g. 2026-03-02T09:00)") from None


class TimelineState(BaseModel):
    """What the world offers at one moment of simulated time."""

    model_config = ConfigDict(extra="forbid")

    time: str
    listings: list[str] = Field(min_length=1)
    meets_needs: bool
    note: str = ""

    @field_validator("time")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        _parse_time(value)
        return value

    @property
    def when(self) -> datetime:
        return _parse_time(self.time)


class Constraint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1)
    value: str = Field(min_length=1)
    reveal_turn: int = Field(default=0, ge=0)


class IntentionShift(BaseModel):
    model_config = ConfigDict(extra="forbid")

    utterance: str = Field(min_length=1)
    intention: str = Field(min_length=1)
    constraints: dict[str, str]
    timeline: list[TimelineState] = Field(min_length=1)


def _check_order(states: list[TimelineState], after: datetime | None, where: str) -> datetime | None:
    last = after
    for i, state in enumerate(states):
        if last is not None and state.when < last:
            raise ValueError(f"{where}[{i}].time {state.time} is earlier than the state before it")
        last = state.when
    return last


class ChronosScenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    branch: Literal["positive", "negative"]
    tier: Literal["simple", "complex"]
    persona: str = Field(min_length=1)
    initial_need: str = Field(min_length=1)
    intention: str = Field(min_length=1)
    constraints: list[Constraint] = Field(default_factory=list)
    start_time: str
    timeline: list[TimelineState] = Field(min_length=1)
    intention_shift: IntentionShift | None = None
    turn_limit: int = Field(default=20, ge=2, le=200)
    synth: dict[str, Any] | None = Field(default=None, exclude_if=lambda value: value is None)
    """Provenance of a generated scenario (`proactive-tui synth chronos`): generator version,
    models per role, seed, item id, run. Absent from a hand-written file (and from its dumps)."""

    @field_validator("start_time")
    @classmethod
    def _iso_start(cls, value: str) -> str:
        _parse_time(value)
        return value

    @model_validator(mode="after")
    def _protocol_rules(self) -> "ChronosScenario":
        last = _check_order(self.timeline, _parse_time(self.start_time), "timeline")
        if self.tier == "simple":
            if self.intention_shift is not None:
                raise ValueError("a simple-tier scenario has no intention_shift (use tier complex)")
            final = self.timeline
        else:
            if self.intention_shift is None:
                raise ValueError("a complex-tier scenario needs an intention_shift")
            if not any(s.meets_needs for s in self.timeline):
                raise ValueError(
                    "complex tier: timeline needs a state that meets the needs (the follow-up after which the user shifts)"
                )
            _check_order(self.intention_shift.timeline, last, "intention_shift.timeline")
            if self.intention_shift.timeline[0].meets_needs:
                raise ValueError("complex tier: the first state after the shift must not meet the new needs yet")
            final = self.intention_shift.timeline
        satisfied = any(s.meets_needs for s in final)
        if self.branch == "positive" and not satisfied:
            raise ValueError("positive branch: no state after the last need change meets the needs")
        if self.branch == "negative" and satisfied:
            raise ValueError("negative branch: a state meets the needs; mark it meets_needs false or use branch positive")
        return self

    def constraints_revealed_by(self, user_turn: int) -> list[Constraint]:
        """Constraints the user has said by their `user_turn`-th message (0 = the opening message)."""
        return [c for c in self.constraints if c.reveal_turn <= user_turn]


class ChronosEnv(EnvironmentBase):
    file_shape: ClassVar[str] = "a scenario object with a timeline"
    family: Literal["chronos"] = FAMILY
    scenario: ChronosScenario
    sample_id: str | None = None
    """For a branching scenario (one sample, two continuations): the id the two branches share
    (`chronos/<file>`), so metrics can pair them; None for a one-branch file."""

    @property
    def list_label(self) -> str:
        """The branch first: both branches of a sample have the sample's title, and a narrow list
        cuts the end of a label, so "Cheap city hatchback,…" twice said nothing."""
        return f"{self.scenario.branch}: {self.title}"


BRANCHES = ("positive", "negative")


def fork(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | str:
    """A branching scenario as two one-branch scenarios, or why it cannot be.

    In the paper a sample forks: the dialogue runs the same way up to a point, then the environment
    either comes to meet the needs (positive) or never does (negative). Our file writes that as
    the shared states plus `branches: {positive: [states], negative: [states]}`; each branch's states
    continue the last timeline the needs apply to (the main one, or the shift's in the complex
    tier). Each result is then checked like any scenario (so a positive continuation must hold a
    state that meets the needs and a negative one must not)."""
    branches = raw.get("branches")
    if not isinstance(branches, dict) or set(branches) != set(BRANCHES):
        return "branches must be an object with exactly the keys positive and negative"
    if "branch" in raw:
        return "a branching scenario has no branch field: each entry of branches is one branch"
    out = []
    for name in BRANCHES:
        states = branches[name]
        if not isinstance(states, list) or not states:
            return f"branches.{name} must be a non-empty list of states"
        one = {k: v for k, v in raw.items() if k != "branches"}
        one["branch"] = name
        shift = one.get("intention_shift")
        if isinstance(shift, dict):
            one["intention_shift"] = {**shift, "timeline": list(shift.get("timeline") or []) + states}
        else:
            one["timeline"] = list(one.get("timeline") or []) + states
        out.append((name, one))
    return out


def load_scenarios(stem: str, display: str, data: Any) -> tuple[list[ChronosEnv], list[LoadProblem]]:
    if isinstance(data, dict):
        records: list[tuple[int | None, Any]] = [(None, data)]
    elif isinstance(data, list):
        if not data:
            return [], [LoadProblem(file=display, message="no scenarios in file")]
        records = list(enumerate(data))
    else:
        return [], [LoadProblem(file=display, message=f"expected a scenario object, got {json_kind(data)}")]
    envs: list[ChronosEnv] = []
    problems: list[LoadProblem] = []
    for index, raw in records:
        if not isinstance(raw, dict):
            problems.append(LoadProblem(file=display, record=index, message=f"expected an object, got {json_kind(raw)}"))
            continue
        suffix = "" if index is None else f"/{index}"
        base_id = f"{FAMILY}/{stem}{suffix}"
        source = display if index is None else f"{display} record {index}"
        if "branches" in raw:
            forked = fork(raw)
            if isinstance(forked, str):
                problems.append(LoadProblem(file=display, record=index, message=forked))
                continue
            variants: list[tuple[str, dict[str, Any], str | None]] = [
                (f"{base_id}/{name}", one, base_id) for name, one in forked]
        else:
            variants = [(base_id, raw, None)]
        for env_id, one, sample_id in variants:
            try:
                scenario = ChronosScenario.model_validate(one)
            except ValidationError as exc:
                problems.extend(problems_from_validation(display, index, exc))
                continue
            kind = SCENARIO_TITLES.get(scenario.scenario, scenario.scenario.replace("_", " ").capitalize())
            envs.append(
                ChronosEnv(
                    id=env_id,
                    title=scenario.title,
                    summary=one_line(f"{kind}, {scenario.branch} branch: {scenario.initial_need}"),
                    domain=scenario.scenario,
                    tier=scenario.tier,
                    source=source,
                    scenario=scenario,
                    sample_id=sample_id,
                )
            )
    return envs, problems


def describe(env: ChronosEnv, reveal: bool) -> list[tuple[str, str]]:
    """The family's sections of `envs show` and the picker preview (see envs.describe).

    With the reference hidden (a person about to play), what gives the outcome away is left out:
    the branch (whether any state will meet the needs), each state's verdict, and the authors'
    notes on the states (they say why a state does or does not fit)."""
    sc = env.scenario
    branch = f"{sc.branch} branch, " if reveal else ""
    out = [
        ("Scenario", f"{sc.scenario}, {branch}{sc.tier} tier, turn limit {sc.turn_limit}"),
        ("Persona", sc.persona),
        ("Initial need", sc.initial_need),
        ("Intention", sc.intention),
        ("Constraints", "\n".join(f"- {c.key}: {c.value} (revealed at user turn {c.reveal_turn})" for c in sc.constraints) or "-"),
        ("Timeline", _states(sc.start_time, sc.timeline, reveal)),
    ]
    if sc.intention_shift:
        shift = sc.intention_shift
        body = f'"{shift.utterance}"\nnew intention: {shift.intention}\n' + "\n".join(
            f"- {k}: {v}" for k, v in shift.constraints.items()
        )
        out.append(("Intention shift", body))
        out.append(("Timeline after the shift", _states(None, shift.timeline, reveal)))
    return out


def _states(start: str | None, states: list[TimelineState], reveal: bool) -> str:
    lines = [f"start {start}"] if start else []
    for state in states:
        verdict = (" ✓ meets needs" if state.meets_needs else " ✗ does not meet needs") if reveal else ""
        lines.append(f"{state.time}{verdict}")
        lines.extend(f"    {listing}" for listing in state.listings)
        if state.note and reveal:
            lines.append(f"    ({state.note})")
    return "\n".join(lines)


class ChronosEnvironments(EnvironmentsPart):
    """Scenario files: one scenario (both branches) per file, ours by folder or by its timeline."""

    env_model = ChronosEnv

    def sample_sources(self) -> list[Path]:
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir(FAMILY)]

    def claims_shape(self, data: Any) -> bool:
        return isinstance(data, dict) and "timeline" in data

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
        envs, problems = load_scenarios(file.relative_stem(FAMILY), file.display, data)
        return list(envs), problems

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """One scenario file (one branch, so no `branches`) at `chronos/<id path>~<label>.json`."""
        from proactive_tui.envs.what_if import file_stem

        return file_stem(env.id, FAMILY, label) + ".json", env.scenario.model_dump(mode="json")

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return describe(env, reveal_reference)


ENVIRONMENTS = ChronosEnvironments()
