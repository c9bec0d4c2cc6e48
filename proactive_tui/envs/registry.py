"""One entry point that loads environments of every family from any mix of folders and files.

Which family reads a file is decided per file by the families themselves (core.family):

1. a source that names its family (the shipped samples) gives every file to it;
2. a family's companion files (ProactiveBench's `splits.json`) are read first, per folder, and
   handed to that family's loader for the files beside them;
3. the first family that claims the file by its location (ProactiveEval's `<domain>/<tier>.json`,
   a folder named after the family) reads it;
4. else the first family that recognises the parsed JSON's shape reads it;
5. anything else is reported as unrecognised.

Problems are collected, never raised: a bad file or record costs only itself.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
import gc
import os
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.core.family import FileCandidate
from proactive_tui.envs.problems import LoadProblem
from proactive_tui.envs.reading import Unreadable, read_json

Environment = Any
"""An environment of any installed family (each family's `env_model`, an EnvironmentBase)."""


@dataclass(frozen=True)
class EnvSource:
    """A folder or file to load; `family` set when its files all belong to one family."""

    path: Path
    family: str | None = None


def _families() -> dict[str, Any]:
    from proactive_tui.core import registry

    return registry.families()


class EnvironmentSet(BaseModel):
    """The environments found, the problems met, and how many files were read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    environments: list[Any] = Field(default_factory=list)
    problems: list[LoadProblem] = Field(default_factory=list)
    files_read: int = 0

    def get(self, env_id: str) -> Environment | None:
        for env in self.environments:
            if env.id == env_id:
                return env
        return None

    def counts(self) -> Counter[tuple[str, str]]:
        """Environments per (family, domain), for picker headings."""
        return Counter((env.family, env.domain) for env in self.environments)

    def filtered(self, family: str | None = None, domain: str | None = None) -> list[Environment]:
        return [
            env
            for env in self.environments
            if (family is None or env.family == family) and (domain is None or env.domain == domain)
        ]


def _display(path: Path) -> str:
    """Paths in messages are relative to the working directory when that is shorter."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def _json_files(root: Path) -> tuple[list[Path], list[LoadProblem]]:
    """The .json files under `root` (hidden folders and files skipped), and what could not be
    scanned: a symlink whose target is missing, a symlinked folder that loops back into the scan,
    a folder named like a .json file. Each is a problem naming the path, never a silent skip."""
    if root.is_file():
        return [root], []
    found: list[Path] = []
    problems: list[LoadProblem] = []
    seen: set[tuple[int, int]] = set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        here = Path(folder)
        st = here.stat()
        if (st.st_dev, st.st_ino) in seen:
            problems.append(LoadProblem(file=str(here), message=f"symlink loop: {here} leads back into a folder "
                                                                     "already scanned; skipped"))
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in dirs:
            if d.endswith(".json"):
                problems.append(LoadProblem(file=_display(here / d), message="a folder named like a .json file: "
                                                                              "it is not read as one (its own files are)"))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = here / name
            if path.is_symlink() and not path.exists():
                if name.endswith(".json") or not path.suffix:  # a file or (no suffix) a folder we cannot reach
                    problems.append(LoadProblem(file=str(path), message=f"broken symlink (points to "
                                                                              f"{os.readlink(path)}, which does not exist); skipped"))
                continue
            if name.endswith(".json") and path.is_file():
                found.append(path)
    return sorted(found), problems


def _folder_names(path: Path, root: Path) -> frozenset[str]:
    """Names of the folders a file sits in, from the loaded root down (family hints)."""
    if root.is_file():
        return frozenset({path.parent.name})
    return frozenset(set(path.relative_to(root).parts[:-1]) | {root.resolve().name})


@contextmanager
def _no_gc_pauses():
    """Hold the cyclic garbage collector off while environments load.

    Loading builds several pydantic objects per record and frees almost nothing, so the
    collector's passes over the growing heap found nothing to free and cost about 40% of loading
    a 40,000-record file. Reference counting still frees as usual; the collector runs again after.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_paths(paths: Iterable[Path | str | EnvSource]) -> EnvironmentSet:
    """Load every environment under the given files and folders, in order; first id wins."""
    with _no_gc_pauses():
        return _load_paths(paths)


def _load_paths(paths: Iterable[Path | str | EnvSource]) -> EnvironmentSet:
    result = EnvironmentSet()
    seen: dict[str, str] = {}
    families = _families()
    companions = {name: fam for fam in families.values() for name in fam.companion_files}
    for raw in paths:
        source = raw if isinstance(raw, EnvSource) else EnvSource(Path(raw))
        root = Path(source.path).expanduser()
        if not root.exists():
            result.problems.append(LoadProblem(file=str(root), message="no such file or folder"))
            continue
        paths, scan_problems = _json_files(root)
        result.problems.extend(scan_problems)
        files = [FileCandidate(path=p, root=root, display=_display(p), folders=_folder_names(p, root), family=source.family)
                 for p in paths]
        by_dir: dict[Path, dict[str, Any]] = {}
        for file in files:
            owner = companions.get(file.path.name)
            if owner is None or (file.family and file.family != owner.name):
                continue
            result.files_read += 1
            try:
                data = read_json(file.path, file.display)
            except Unreadable as exc:
                result.problems.append(exc.problem)
                continue
            value, problems = owner.read_companion(file, data)
            result.problems.extend(problems)
            by_dir.setdefault(file.path.parent, {})[file.path.name] = value
        for file in files:
            if file.path.name in companions:
                continue
            envs, problems = _load_file(file, families, by_dir.get(file.path.parent, {}))
            result.files_read += 1
            result.problems.extend(problems)
            for env in envs:
                if env.id in seen:
                    result.problems.append(
                        LoadProblem(file=file.display, message=f"duplicate id {env.id} (already loaded from {seen[env.id]}); skipped")
                    )
                    continue
                seen[env.id] = env.source
                result.environments.append(env)
    return result


def _load_file(file: FileCandidate, families: dict[str, Any], companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
    family = families.get(file.family) if file.family else None
    if family is None:
        family = next((f for f in families.values() if f.claims_location(file)), None)
    if family is not None and family.skip_file(file):
        return [], []
    try:
        data = read_json(file.path, file.display)
    except Unreadable as exc:
        return [], [exc.problem]
    if family is None:
        family = next((f for f in families.values() if f.claims_shape(data)), None)
    if family is None:
        return [], [
            LoadProblem(
                file=file.display,
                message=(
                    "unrecognised environment file: expected <domain>/fair|hard|eval.json (proactiveeval), "
                    "an array of {observation: ...} events (proactivebench) or a scenario with a timeline (chronos)"
                ),
            )
        ]
    return family.load_file(file, data, companions)
