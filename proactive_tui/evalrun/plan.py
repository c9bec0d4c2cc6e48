"""Which sessions a batch runs: selecting environments, the session keys, seeds and shards.

A session key names one session of the plan (environment, agent model, the swept settings,
repeat). Its `id` is a stable, file-name-safe string: the run record's file name, the resume
check and the shard assignment all use it, so every machine computes the same plan and the same
slice of it without talking to another.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, field_validator

GLOB_CHARS = re.compile(r"[*?\[]")


class SessionKey(BaseModel):
    """One planned session. `settings` holds only the swept settings (e.g. agreeableness); the
    settings every session of the family shares are in the manifest."""

    model_config = ConfigDict(frozen=True)

    family: str
    env_id: str
    agent: str
    settings: dict[str, str] = Field(default_factory=dict)
    repeat: int = 0

    @property
    def id(self) -> str:
        """`<env>__<agent>__<settings>__r<repeat>-<hash>`: readable, safe as a file name, and
        unique (the hash of the exact fields tells apart ids that the slugging made alike)."""
        exact = json.dumps(self.model_dump(), sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha1(exact.encode("utf-8")).hexdigest()[:8]
        grid = "_".join(f"{k}-{v}" for k, v in sorted(self.settings.items()))
        parts = [_slug(self.env_id), _slug(self.agent)] + ([_slug(grid)] if grid else []) + [f"r{self.repeat}"]
        return "__".join(parts) + f"-{digest}"

    @property
    def group(self) -> str:
        """The id of the key without its swept settings: the sessions of one environment, agent
        and repeat at every swept value, which share work in a batch (ProactiveEval's plan,
        `BatchPart.share`) and so go to one shard. Without swept settings, the key's own id."""
        return self.model_copy(update={"settings": {}}).id if self.settings else self.id

    @property
    def task(self) -> str:
        """The key without the repeat: what pass^k and the variance over repeats group by."""
        grid = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return f"{self.env_id}" + (f" [{grid}]" if grid else "")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


def seed_for(repeat: int, base: int = 0) -> int:
    """The seed of repeat `repeat`: `base + repeat`, so repeats differ and a rerun of a repeat
    (resume, another shard) sends the same seed."""
    return base + repeat


class Shard(BaseModel):
    """`--shard I/N`: slice I (0-based) of N."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
        if not match:
            raise ValueError(f"--shard wants I/N (e.g. 0/8), got {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 0 <= index < count:
            raise ValueError(f"--shard {text}: I must be in 0..N-1 and N at least 1")
        return cls(index=index, count=count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_keys(keys: Iterable[SessionKey], shard: Shard | None) -> list[SessionKey]:
    """The shard's slice of the plan: the key groups (`SessionKey.group`: one environment, agent
    and repeat at every swept value) sorted by id, every N-th from position I, and their keys
    sorted by id. A group stays on one shard, so the work its sessions share is done once (the
    paper's one ProactiveEval plan per environment). The order does not depend on concurrency or
    on which machine runs it, the slices are disjoint and together they are the plan; sorted
    positions (not hashes) keep the slices within one group of each other in size (within one
    session when nothing is swept)."""
    ordered = sorted(keys, key=lambda k: k.id)
    if shard is None:
        return ordered
    groups = sorted({k.group for k in ordered})
    mine = {g for i, g in enumerate(groups) if i % shard.count == shard.index}
    return [k for k in ordered if k.group in mine]


def plan_keys(environments: list[Any], agents: list[str], grids: dict[str, list[dict[str, str]]],
              repeats: int) -> list[SessionKey]:
    """Every session: environments x agents x the family's settings grid x repeats, by id."""
    keys = [SessionKey(family=env.family, env_id=env.id, agent=agent, settings=point, repeat=r)
            for env in environments for agent in agents for point in grids.get(env.family, [{}])
            for r in range(repeats)]
    return sorted(keys, key=lambda k: k.id)


def grid_points(sweeps: dict[str, list[str]]) -> list[dict[str, str]]:
    """The cartesian product of the swept settings ({} when none is swept)."""
    points: list[dict[str, str]] = [{}]
    for name, values in sweeps.items():
        points = [{**p, name: v} for p in points for v in values]
    return points


class Selection(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    environments: list[Any]
    unmatched: list[str]


def matches(env_id: str, selector: str) -> bool:
    """A selector matches an exact id, a prefix of whole id parts (`proactiveeval/persuasion`, a
    family), or, with glob characters, an fnmatch pattern on the id or on its leading parts
    (`proactiveeval/*/hard` and `proactiveeval/*/hard/*` both pick every hard item)."""
    sel = selector.rstrip("/")
    if GLOB_CHARS.search(sel):
        return fnmatch.fnmatchcase(env_id, sel) or fnmatch.fnmatchcase(env_id, sel + "/*")
    return env_id == sel or env_id.startswith(sel + "/")


def source_id(env: Any) -> str:
    """`<source>:<natural id>` (envs.sources), which names an environment whether or not its
    natural id is shared: `builtin:proactiveeval` selects the shipped samples, `dataset:` a folder."""
    from proactive_tui.envs.sources import natural_id, qualified

    origin = getattr(env, "origin", None)
    return qualified(origin.name, natural_id(env.id)) if origin is not None else env.id


def select(environments: list[Any], selectors: list[str], load_path: Any = None) -> Selection:
    """The environments any selector picks (by id, or by `<source>:` id, each once, sorted) and
    the selectors that pick nothing. A selector naming an existing file or folder is loaded like
    `--envs` (`load_path(path) -> environments`) and picks all it holds."""
    chosen: dict[str, Any] = {}
    unmatched: list[str] = []
    for selector in selectors:
        if load_path is not None and Path(selector).exists():
            hits = list(load_path(Path(selector)))
        else:
            hits = [e for e in environments if matches(e.id, selector) or matches(source_id(e), selector)]
        if not hits:
            unmatched.append(selector)
        chosen.update({e.id: e for e in hits})
    return Selection(environments=[chosen[k] for k in sorted(chosen)], unmatched=unmatched)


class SweepSpec(BaseModel):
    """What a sweep asked for, as both its folder's manifest and its report state it (one
    definition, so the report says exactly what the manifest planned)."""

    selectors: list[str]
    agents: list[str]
    models: dict[str, str]
    """The user and judge seats' models (the agent varies: `agents`)."""
    settings: dict[str, dict[str, Any]]
    """Per family: the settings every session shares (its flags as given, defaults filled in)."""
    sweeps: dict[str, dict[str, list[str]]]
    """Per family: setting -> the values the grid runs (ProactiveEval's agreeableness levels)."""
    repeats: int

    def sweep_spec(self) -> dict[str, Any]:
        """These fields alone, to build the report from the manifest."""
        return self.model_dump(include=set(SweepSpec.model_fields))


class Manifest(SweepSpec):
    """What a batch folder was asked to run, written before anything runs: `--resume` checks a
    rerun asks for the same, and `report merge` checks shards belong to one sweep."""

    format: int = 1
    families: list[str]
    total: int
    """Sessions in the whole plan (every shard)."""
    shard: Shard | None = None
    planned: list[str]
    """Ids of this folder's sessions (its shard of the plan), sorted."""
    keys: list[SessionKey] = Field(default_factory=list)

    @field_validator("planned")
    @classmethod
    def _sorted(cls, value: list[str]) -> list[str]:
        return sorted(value)

    def sweep_fields(self) -> dict[str, Any]:
        """What every shard of one sweep shares (all but the shard and its slice)."""
        return self.model_dump(exclude={"shard", "planned", "keys"})
