"""One entry point that loads environments of every family from any mix of folders and files.

Family is decided per file, first by where it sits, then by its shape:

1. `<domain>/{fair,hard,eval}.json` with a ProactiveEval domain folder name -> proactiveeval
   (`eval.json` is skipped when `fair.json` or `hard.json` sits beside it: it is their union);
2. `splits.json` -> ProactiveBench split definitions for the traces in the same folder;
3. under a folder named `chronos`, or a JSON object with a `timeline` key -> chronos;
4. under a folder named `proactivebench`, or a JSON array whose first item has `observation`
   -> a ProactiveBench trace;
5. anything else is reported as unrecognised.

Problems are collected, never raised: a bad file or record costs only itself.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Iterable, Union

from pydantic import BaseModel, ConfigDict, Field

from proactive_tui.envs import chronos, proactivebench, proactiveeval
from proactive_tui.envs.chronos import ChronosEnv
from proactive_tui.envs.problems import LoadProblem
from proactive_tui.envs.proactivebench import ProactiveBenchEnv
from proactive_tui.envs.proactiveeval import ProactiveEvalEnv
from proactive_tui.envs.reading import Unreadable, read_json

Environment = Annotated[Union[ProactiveEvalEnv, ProactiveBenchEnv, ChronosEnv], Field(discriminator="family")]
FAMILIES = (proactiveeval.FAMILY, proactivebench.FAMILY, chronos.FAMILY)


class EnvironmentSet(BaseModel):
    """The environments found, the problems met, and how many files were read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    environments: list[Environment] = Field(default_factory=list)
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
        return str(path)


def _json_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.json") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))


def _folder_names(path: Path, root: Path) -> set[str]:
    """Names of the folders a file sits in, from the loaded root down (family hints)."""
    if root.is_file():
        return {path.parent.name}
    return set(path.relative_to(root).parts[:-1]) | {root.resolve().name}


def load_paths(paths: Iterable[Path | str]) -> EnvironmentSet:
    """Load every environment under the given files and folders, in order; first id wins."""
    result = EnvironmentSet()
    seen: dict[str, str] = {}
    for raw in paths:
        root = Path(raw).expanduser()
        if not root.exists():
            result.problems.append(LoadProblem(file=str(root), message="no such file or folder"))
            continue
        files = _json_files(root)
        splits_by_dir = _load_splits(files, result)
        for path in files:
            if path.name == "splits.json":
                continue
            envs, problems = _load_file(path, root, splits_by_dir.get(path.parent, {}))
            result.files_read += 1
            result.problems.extend(problems)
            for env in envs:
                if env.id in seen:
                    result.problems.append(
                        LoadProblem(file=_display(path), message=f"duplicate id {env.id} (already loaded from {seen[env.id]}); skipped")
                    )
                    continue
                seen[env.id] = env.source
                result.environments.append(env)
    return result


def _load_splits(files: list[Path], result: EnvironmentSet) -> dict[Path, dict[str, proactivebench.Split]]:
    by_dir: dict[Path, dict[str, proactivebench.Split]] = {}
    for path in files:
        if path.name != "splits.json":
            continue
        result.files_read += 1
        display = _display(path)
        try:
            data = read_json(path, display)
        except Unreadable as exc:
            result.problems.append(exc.problem)
            continue
        splits, problems = proactivebench.parse_splits(display, data)
        result.problems.extend(problems)
        by_dir[path.parent] = splits
    return by_dir


def _load_file(path: Path, root: Path, splits: dict[str, proactivebench.Split]) -> tuple[list[Any], list[LoadProblem]]:
    display = _display(path)
    domain = proactiveeval.canonical_domain(path.parent.name)
    if domain and path.name in proactiveeval.TIER_FILES:
        if path.name == "eval.json" and any((path.parent / f).exists() for f in ("fair.json", "hard.json")):
            return [], []
        try:
            data = read_json(path, display)
        except Unreadable as exc:
            return [], [exc.problem]
        return proactiveeval.load_tier_file(path, display, domain, path.stem, data)
    try:
        data = read_json(path, display)
    except Unreadable as exc:
        return [], [exc.problem]
    folders = _folder_names(path, root)
    in_chronos = "chronos" in folders
    in_bench = "proactivebench" in folders
    if in_chronos or (not in_bench and isinstance(data, dict) and "timeline" in data):
        return chronos.load_scenarios(path.stem, display, data)
    looks_like_trace = isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "observation" in data[0]
    if in_bench or looks_like_trace:
        return proactivebench.load_trace(path.stem, display, data, splits)
    return [], [
        LoadProblem(
            file=display,
            message=(
                "unrecognised environment file: expected <domain>/fair|hard|eval.json (proactiveeval), "
                "an array of {observation: ...} events (proactivebench) or a scenario with a timeline (chronos)"
            ),
        )
    ]
