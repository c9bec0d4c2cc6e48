"""Where an environment comes from, and how ids stay unique when two sources share one.

Every environment's id is its *natural id*, read from its file's place and record
(`proactiveeval/persuasion/fair/0` is the first item of a `persuasion/fair.json`). A person's copy
of upstream's ProactiveEval dataset therefore has the very ids of the built-in samples, and two
folders of one's own can share ids too. The rule, one for every family and every source:

- your data keeps its natural id: your environments folder, then the config's `envs` and the
  `--envs` paths in the order given (generated environments count as yours), then what ships
  inside the package (the built-in samples, ProactiveBench's real traces);
- every other holder of the id is listed under `<source>:<natural id>`, where `<source>` is
  `builtin` for what ships inside the package and otherwise the loaded folder's (or file's) name
  (`dataset:proactiveeval/persuasion/fair/0`; a second folder of the same name gets `-2`);
- `<source>:<natural id>` also names an environment whose id nobody shares, so
  `builtin:proactiveeval/persuasion/fair/0` always means the shipped sample;
- nothing is skipped; the loader lists each shared id (`EnvironmentSet.shared`) for `envs list`,
  `envs validate` and the picker to say so.

Built-in environments keep their ids as long as nothing of yours has them, so stored sessions and
documentation that name a sample keep meaning it (a session also stores its environment, so it
opens, resumes, forks and re-runs whatever is loaded today).

No Textual or Rich here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SEPARATOR = ":"
BUILTIN = "builtin"
"""The source name of everything shipped inside the package."""

Kind = Literal["builtin", "envs_folder", "path"]


@dataclass(frozen=True)
class Origin:
    """The source an environment was loaded from: its kind, the name that qualifies its id when
    the id is shared, and the path that was loaded (as messages show it)."""

    kind: Kind
    name: str
    path: str

    @property
    def yours(self) -> bool:
        """Data of the person's own (not shipped with the package): keeps a shared id."""
        return self.kind != "builtin"

    @property
    def description(self) -> str:
        """One line saying what the source is, for previews and notes."""
        if self.kind == "builtin":
            return "built-in (shipped inside the package)"
        if self.kind == "envs_folder":
            return f"your environments folder, {self.path}"
        return f"{self.path} (--envs or the config's envs)"


def source_name(path: Path, taken: set[str]) -> str:
    """The name of a loaded folder or file as a qualifier: its name without `.json`, reduced to
    characters an id part can hold, made unique among the names `taken` (`dataset`, `dataset-2`).
    `builtin` stays the package's own."""
    stem = path.name[: -len(".json")] if path.name.lower().endswith(".json") else path.name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("_") or "envs"
    name, n = base, 1
    while name in taken or name == BUILTIN:
        n += 1
        name = f"{base}-{n}"
    return name


def split_id(env_id: str) -> tuple[str | None, str]:
    """(source name or None, natural id): `dataset:proactiveeval/x/fair/0` -> ("dataset",
    "proactiveeval/x/fair/0"). A natural id begins with its family's name, which holds no `:`, so
    only a `:` before the first `/` is a qualifier."""
    head = env_id.split("/", 1)[0]
    if SEPARATOR in head:
        name, _, rest = env_id.partition(SEPARATOR)
        return name, rest
    return None, env_id


def natural_id(env_id: str) -> str:
    return split_id(env_id)[1]


def family_of(env_id: str) -> str:
    """The family name an id starts with, qualified or not."""
    return natural_id(env_id).split("/", 1)[0]


def qualified(name: str, natural: str) -> str:
    return f"{name}{SEPARATOR}{natural}"


def __getattr__(name: str):
    """`Holder` and `SharedId` are pydantic models, defined in `envs.shared_ids` and imported on
    first use: the playground's first frame needs `Origin` and the id rules from here, not pydantic."""
    if name in ("Holder", "SharedId"):
        from proactive_tui.envs import shared_ids

        value = getattr(shared_ids, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
