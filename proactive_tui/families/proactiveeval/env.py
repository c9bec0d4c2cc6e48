"""ProactiveEval environments: target planning + dialogue guidance (docs/protocols.md#proactiveeval).

Reads the upstream dataset layout as it is, so a user can point the app at a clone of upstream's
`dataset/` folder::

    <root>/<domain>/fair.json   # JSON array of items
    <root>/<domain>/hard.json
    <root>/<domain>/eval.json   # fair + hard; read only when neither fair.json nor hard.json exists

Domain comes from the folder name and tier from the file name, not from fields. One item::

    {"environment": {"user_information": "...", "trigger_factor": "..."},
     "target": "...", "sub_target": ["...", "..."], "topic": "..."}

Unknown extra keys are kept (they round-trip through export). Ids look like
`proactiveeval/recommendation/fair/3`, where 3 is the item's index in the file's array.
"""

from __future__ import annotations

from proactive_tui.core.family import EnvironmentsPart, FileCandidate

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proactive_tui.envs.base import EnvironmentBase, one_line
from proactive_tui.envs.problems import LoadProblem, problems_from_validation
from proactive_tui.envs.reading import json_kind

FAMILY: Literal["proactiveeval"] = "proactiveeval"

# Canonical domain keys use upstream's folder spelling (including its "ambigious") so exports
# land back in the layout upstream tools expect; both spellings are accepted on input.
DOMAINS: dict[str, str] = {
    "recommendation": "Recommendation",
    "persuasion": "Persuasion",
    "ambigious_instruction": "Ambiguous instruction",
    "long-term_follow_up": "Long-term follow-up",
    "system_operation": "System operation",
    "glasses_assistant": "Glasses assistant",
}
DOMAIN_ALIASES = {"ambiguous_instruction": "ambigious_instruction"}
TIERS = ("fair", "hard")
TIER_FILES = ("fair.json", "hard.json", "eval.json")


def canonical_domain(folder_name: str) -> str | None:
    name = DOMAIN_ALIASES.get(folder_name, folder_name)
    return name if name in DOMAINS else None


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class EvalSetting(BaseModel):
    """What the assistant knows before it speaks: who the user is and what just happened."""

    model_config = ConfigDict(extra="allow")

    user_information: str
    trigger_factor: str

    _check = field_validator("user_information", "trigger_factor")(_non_blank)


class ProactiveEvalItem(BaseModel):
    """One upstream record, extra keys preserved."""

    model_config = ConfigDict(extra="allow")

    environment: EvalSetting
    target: str
    sub_target: list[str] = Field(min_length=1)
    topic: Any = None

    _check = field_validator("target")(_non_blank)

    def topic_text(self) -> str:
        """Upstream topics are usually strings but may be objects (a topic-tree node)."""
        t = self.topic
        if t is None:
            return ""
        if isinstance(t, str):
            return t
        if isinstance(t, dict):
            return " / ".join(str(v) for v in t.values() if isinstance(v, (str, int, float)))
        if isinstance(t, list):
            return " / ".join(str(v) for v in t)
        return str(t)


class ProactiveEvalEnv(EnvironmentBase):
    file_shape: ClassVar[str] = "an array of tasks in <domain>/fair.json, hard.json or eval.json"
    family: Literal["proactiveeval"] = FAMILY
    index: int
    item: ProactiveEvalItem


def record_id(raw: dict[str, Any], domain: str, tier: str, index: int) -> str:
    """An environment's id: its position (`proactiveeval/<domain>/<tier>/<index>`), or for a record
    exported from a session (`meta.session_id`, see export.py) `<source env id>@<session id>`, the
    form every family's read-back export uses. An export keeps the source's domain and tier and
    its positions start at 0 again, so position ids collided with the samples' and the exported
    sessions were skipped as duplicates when read back beside them.

    A record saved from the playground's "What if" editor (`meta.what_if`, a label such as
    `whatif-1`, see `envs.what_if`) is `<source env id>~<label>`, for the same reason, and a
    generated item (`proactive-tui synth proactiveeval`, whose `synth` provenance names its run and
    item) is `proactiveeval/<domain>/<tier>/<run>-<item id>`."""
    meta = raw.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    session_id, source = meta.get("session_id"), meta.get("env_id")
    position = f"{FAMILY}/{domain}/{tier}/{index}"
    what_if = meta.get("what_if")
    if isinstance(what_if, str) and what_if.strip():
        base = source if isinstance(source, str) and source.startswith(f"{FAMILY}/") else position
        return f"{base}~{what_if.strip()}"
    if isinstance(session_id, str) and session_id.strip():
        base = source if isinstance(source, str) and source.startswith(f"{FAMILY}/") else position
        return f"{base}@{session_id.strip()}"
    synth = raw.get("synth")
    if isinstance(synth, dict) and isinstance(synth.get("run"), str) and isinstance(synth.get("item_id"), str):
        # a generated item: its run and item, never its position, which would collide with the
        # samples' and another run's ids (an export or a "What if" of it keeps its `synth` key,
        # and is told apart by its `meta` above)
        return f"{FAMILY}/{domain}/{tier}/{synth['run']}-{synth['item_id']}"
    return position


def load_tier_file(path: Path, display: str, domain: str, tier: str, data: Any) -> tuple[list[ProactiveEvalEnv], list[LoadProblem]]:
    """Turn the parsed JSON of one `<domain>/<tier>.json` into environments and problems."""
    if not isinstance(data, list):
        return [], [LoadProblem(file=display, message=f"expected a JSON array of items, got {json_kind(data)}")]
    envs: list[ProactiveEvalEnv] = []
    problems: list[LoadProblem] = []
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            problems.append(LoadProblem(file=display, record=index, message=f"expected an object, got {json_kind(raw)}"))
            continue
        try:
            envs.append(load_item(raw, display, domain, tier, index))
        except ValidationError as exc:
            problems.extend(problems_from_validation(display, index, exc))
    return envs, problems


def load_item(raw: dict[str, Any], display: str, domain: str, tier: str, index: int) -> ProactiveEvalEnv:
    """The environment of record `index` of a tier file (raises pydantic's ValidationError): one
    place for the whole-file load and the catalog's record-by-record one (`envs.catalog`)."""
    item = ProactiveEvalItem.model_validate(raw)
    topic = item.topic_text()
    return ProactiveEvalEnv(
        id=record_id(raw, domain, tier, index),
        title=one_line(topic or item.target, 70),
        summary=one_line(item.environment.trigger_factor),
        domain=domain,
        tier=tier,
        source=f"{display} record {index}",
        index=index,
        item=item,
    )


def describe(env: ProactiveEvalEnv, reveal: bool) -> list[tuple[str, str]]:
    """The family's sections of `envs show` and the picker preview (see envs.describe)."""
    item = env.item
    out = [
        ("Domain", DOMAINS.get(env.domain, env.domain)),
        ("User information", item.environment.user_information),
        ("Trigger", item.environment.trigger_factor),
    ]
    if item.topic_text():
        out.append(("Topic", item.topic_text()))
    if reveal:
        steps = "\n".join(f"{i}. {s}" for i, s in enumerate(item.sub_target, 1))
        out.append(("Reference target", item.target))
        out.append(("Reference sub-targets", steps))
    else:
        out.append(("Reference target", "(hidden)"))
    return out


class ProactiveEvalEnvironments(EnvironmentsPart):
    """Upstream's layout: `<domain>/fair.json`, `hard.json` (or `eval.json`), each a JSON array of
    items, read record by record on demand (`reads_records`)."""

    env_model = ProactiveEvalEnv
    reads_records = True

    def sample_sources(self) -> list[Path]:
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir(FAMILY)]

    def claims_location(self, file: FileCandidate) -> bool:
        return bool(canonical_domain(file.path.parent.name)) and file.path.name in TIER_FILES

    def skip_file(self, file: FileCandidate) -> bool:
        # eval.json is the union of fair.json and hard.json: read only when neither exists.
        return file.path.name == "eval.json" and any((file.path.parent / f).exists() for f in ("fair.json", "hard.json"))

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
        domain = canonical_domain(file.path.parent.name)
        if not domain or file.path.name not in TIER_FILES:
            return [], [LoadProblem(file=file.display, message="expected <domain>/fair.json, hard.json or eval.json "
                                                                "with a ProactiveEval domain folder name")]
        envs, problems = load_tier_file(file.path, file.display, domain, file.path.stem, data)
        return list(envs), problems

    def load_record(self, file: FileCandidate, raw: Any, position: int) -> Any | None:
        """One record of a tier file, as `load_file` reads it (the catalog's on-demand parse)."""
        domain = canonical_domain(file.path.parent.name)
        if not domain or file.path.name not in TIER_FILES or not isinstance(raw, dict):
            return None
        try:
            return load_item(raw, file.display, domain, file.path.stem, position)
        except ValidationError:
            return None

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """A tier file of one item, `proactiveeval/<label>/<domain>/<tier>.json` (upstream's layout
        fixes the file's name, so the new name is the folder). Its `meta` names the environment it
        came from and the label, which make its id `<source id>~<label>` (`record_id`) rather
        than a position id that would collide with the sample's."""
        from proactive_tui.envs.what_if import root_id

        item = env.item.model_dump(mode="json")
        item["meta"] = {"env_id": root_id(env.id), "what_if": label}
        return f"{FAMILY}/{label}/{env.domain}/{env.tier or 'fair'}.json", [item]

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return describe(env, reveal_reference)


ENVIRONMENTS = ProactiveEvalEnvironments()
