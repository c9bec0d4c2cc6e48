""""What if" environments: an environment edited for one session, and saving one as a new file.

The marking: a session on an edited environment (not saved to disk) keeps the environment's id
with the suffix `~whatif` (`proactiveeval/persuasion/fair/0~whatif`). The id is the one thing every
run record, store row, history line and export carries, so a suffix there cannot be lost or
overlooked the way a settings flag could be, and a what-if session is never counted as a session
on the benchmark item itself. (Each family's settings model rejects unknown keys, and the
environment models forbid extra fields, so a `what_if: true` flag would have needed schema
changes in every family.) The environment's `source` also says it was edited.

Saving writes the edited environment into the user's environments folder (`paths.user_envs_dir()`,
the folder the playground loads on every start; not a folder from the config's `envs`, which may
be a clone of a dataset that must stay as it is), in the family's own file format
(`EnvironmentsPart.environment_file`), under a name no file has yet; the file is then loaded back with the
ordinary loader and removed again if it does not read back as the environment. Its id is
`<original id>~whatif-<n>`, a new environment beside the original.

No Textual or Rich here: the editor screen (`ui/screens/what_if.py`) calls these.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from proactive_tui.envs.problems import problems_from_validation

WHAT_IF_SUFFIX = "~whatif"
"""Appended to the id of an environment edited for one session."""


class EditProblem(ValueError):
    """An edit that cannot be used; `lines` are one readable line per thing wrong."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def original_id(env_id: str) -> str:
    """The id without the what-if mark (an edited environment edited again keeps one mark)."""
    return env_id.removesuffix(WHAT_IF_SUFFIX)


_MARKS = re.compile(r"(~whatif(-\d+)?)+$")


def root_id(env_id: str) -> str:
    """The id every what-if mark is taken from: a saved variant edited and saved again is a
    sibling (`<id>~whatif-2`), not a variant of a variant. Without a source qualifier
    (`builtin:`, envs.sources): a saved variant is the user's own, named by the natural id."""
    from proactive_tui.envs.sources import natural_id

    return _MARKS.sub("", natural_id(env_id))


def file_stem(env_id: str, family: str, label: str) -> str:
    """`<family>/<the id's path after the family>~<label>`: the file path (without `.json`) whose
    loaded id is `<id>~<label>` for families whose ids are their files' paths below a folder named
    after the family (ProactiveBench, Chronos). Characters a file name should not hold become `_`."""
    rest = root_id(env_id).removeprefix(f"{family}/")
    parts = [re.sub(r"[^A-Za-z0-9._@+-]", "_", part) or "_" for part in rest.split("/")]
    parts = ["_" if part in (".", "..") else part for part in parts]
    return "/".join([family, *parts[:-1], f"{parts[-1]}~{label}"])


def is_what_if(env: Any) -> bool:
    return str(getattr(env, "id", "")).endswith(WHAT_IF_SUFFIX)


def editable_json(env: Any) -> str:
    """The environment as the editor shows it: its family model's own JSON, under its original id."""
    data = env.model_dump(mode="json")
    data["id"] = original_id(env.id)
    if is_what_if(env) and isinstance(data.get("source"), str):
        data["source"] = data["source"].removeprefix(_SOURCE_PREFIX)
    return json.dumps(data, indent=2, ensure_ascii=False)


_SOURCE_PREFIX = "what if, edited from "


def parse_edit(original: Any, text: str) -> Any:
    """The edited environment, validated by its family (`EnvironmentsPart.validate_env`), or EditProblem.

    `original` is the environment as loaded (not a what-if). The id and family must stay as they
    were: a what-if is the same environment changed for one session. An edit that changes nothing
    returns `original` itself, so the session is not marked edited for nothing."""
    from proactive_tui.core import registry

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EditProblem([f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"]) from None
    if not isinstance(data, dict):
        raise EditProblem(["expected a JSON object (the environment), got " + type(data).__name__])
    problems = []
    if data.get("family") != original.family:
        problems.append(f"family: stays {original.family!r} (a what-if changes an environment, not its family)")
    if data.get("id") != original.id:
        problems.append(f"id: stays {original.id!r} (the session marks it {original.id + WHAT_IF_SUFFIX!r}; "
                        "save as a new environment for a new one)")
    if problems:
        raise EditProblem(problems)
    if data == json.loads(editable_json(original)):
        return original
    family = registry.get(original.family)
    try:
        edited = family.environments.validate_env(data)
    except ValidationError as exc:
        raise EditProblem([p.render().removeprefix("edit: ") for p in problems_from_validation("edit", None, exc)]) from None
    except ValueError as exc:
        raise EditProblem([str(exc)]) from None
    return edited.model_copy(update={"id": original.id + WHAT_IF_SUFFIX,
                                     "source": _SOURCE_PREFIX + (original.source or original.id)})


@dataclass(frozen=True)
class Saved:
    """Where a saved environment went and the environment as loading reads it back."""

    path: Path
    env: Any


def save_note(env: Any) -> str | None:
    """Why this environment's family cannot save it as a file, or None when it can."""
    from proactive_tui.core import registry

    family = registry.get(env.family)
    if family.environments.environment_file(env, "whatif-1") is None:
        return f"{family.title} environments cannot be written back as files yet"
    return None


def save_as_new(env: Any, folder: Path | None = None, taken: set[str] | None = None,
                label_prefix: str = "whatif") -> Saved:
    """Write `env` (an edited environment) as a new file under `folder` (the user's environments
    folder by default) and read it back. Never overwrites a file: `<original id>~whatif-<n>` with
    the first n whose file does not exist and whose id is not in `taken` (ids already loaded).
    Raises EditProblem when the family cannot write files or the file does not read back.

    `label_prefix` names what the new environment is to its original: `whatif` for an edit, `written`
    for one written from scratch in the studio's form (`ui.studio.write`), whose id
    `<id>~written-<n>` must not read as a variant of an environment that never existed."""
    from proactive_tui.core import registry
    from proactive_tui.envs.registry import EnvSource, load_paths
    from proactive_tui.paths import user_envs_dir

    family = registry.get(env.family)
    folder = Path(folder) if folder is not None else user_envs_dir()
    base = root_id(env.id)
    taken = taken or set()
    for n in range(1, 10_000):
        label = f"{label_prefix}-{n}"
        planned = family.environments.environment_file(env, label)
        if planned is None:
            raise EditProblem([save_note(env) or "this family cannot save environments"])
        relative, data = planned
        path = folder / relative
        if f"{base}~{label}" in taken or path.exists() or _any_exists(path.parent, folder, label_prefix):
            continue
        break
    else:  # pragma: no cover - ten thousand saved variants of one environment
        raise EditProblem(["no free file name left for this environment"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as handle:  # "x": never replace a file
        handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    wanted = f"{base}~{label}"
    loaded = load_paths([EnvSource(folder, kind="envs_folder" if folder.resolve() == user_envs_dir().resolve() else "path")])
    back = loaded.get(wanted)
    mine = [p.render() for p in loaded.problems if Path(p.file).resolve() == path.resolve()]
    if back is None or mine:
        path.unlink(missing_ok=True)
        raise EditProblem([f"the written file did not read back as {wanted}; removed it"] + mine)
    return Saved(path=path, env=back)


def _any_exists(parent: Path, folder: Path, label_prefix: str = "whatif") -> bool:
    """A folder the plan creates for its file (ProactiveEval's `whatif-<n>/<domain>/`) that exists
    already belongs to another save: take the next n rather than write beside it."""
    try:
        relative = parent.relative_to(folder)
    except ValueError:
        return False
    parts = relative.parts
    for i, part in enumerate(parts):
        if part.startswith(f"{label_prefix}-") and (folder.joinpath(*parts[: i + 1])).exists():
            return True
    return False
