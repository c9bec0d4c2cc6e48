"""One entry point that loads environments of every family from any mix of folders and files.

Which family reads a file is decided per file by the families themselves (core.family):

1. a source that names its family (the shipped samples) gives every file to it;
2. a family's companion files (ProactiveBench's `splits.json`) are read first, per folder, and
   handed to that family's loader for the files beside them;
3. the first family that claims the file by its location (ProactiveEval's `<domain>/<tier>.json`,
   a folder named after the family) reads it;
4. else the first family that recognises the parsed JSON's shape reads it;
5. anything else is reported as unrecognised, except a `.jsonl` (never an environment file before a
   family read one): one nobody claims is left alone.

Problems are collected, never raised: a bad file or record costs only itself. Ids are unique by
source (`envs.sources`): an id two sources share stays with your data and the other holder is
listed as `<source>:<id>`, never skipped.
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
from proactive_tui.envs.reading import Unreadable, not_a_file, read_json, read_jsonl, special_kind
from proactive_tui.envs.sources import BUILTIN, Holder, Kind, Origin, SharedId, qualified, source_name, split_id

Environment = Any
"""An environment of any installed family (each family's `env_model`, an EnvironmentBase)."""


@dataclass(frozen=True)
class EnvSource:
    """A folder or file to load; `family` set when its files all belong to one family; `kind`
    says whose it is (`builtin` for the package's own, `envs_folder` for the user's folder, else
    a path someone gave), which decides who keeps a shared id."""

    path: Path
    family: str | None = None
    kind: Kind = "path"


def _families() -> dict[str, Any]:
    from proactive_tui.core import registry

    return registry.families()


class EnvironmentSet(BaseModel):
    """The environments found, the problems met, and how many files were read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    environments: list[Any] = Field(default_factory=list)
    problems: list[LoadProblem] = Field(default_factory=list)
    shared: list[SharedId] = Field(default_factory=list)
    """Ids more than one source holds: not problems (every holder is listed), said as notes."""
    files_read: int = 0

    def get(self, env_id: str, source: str | None = None) -> Environment | None:
        found = self._find(env_id, source)
        return _full(found) if found is not None else None

    def _find(self, env_id: str, source: str | None = None) -> Environment | None:
        """The environment listed as `env_id`, or named `<source>:<natural id>` (a qualified id
        names its environment whether or not another source shares the natural id). With
        `source` (an environment's `source` as a session recorded it), the holder of that natural
        id read from that file is preferred: a session on a built-in sample recorded the plain id,
        which one's own data may hold today. A lazily loaded set's entry is parsed into its
        environment here (`envs.catalog`)."""
        if source is not None:
            from proactive_tui.envs.describe import shown_source

            natural, wanted = split_id(env_id)[1], shown_source(source)
            for env in self.environments:
                if split_id(env.id)[1] == natural and shown_source(env.source) == wanted:
                    return env
        for env in self.environments:
            if env.id == env_id:
                return env
        name, natural = split_id(env_id)
        if name is not None:
            for env in self.environments:
                if env.origin is not None and env.origin.name == name and split_id(env.id)[1] == natural:
                    return env
        return None

    def read_from(self, path: Path | str) -> list[Environment]:
        """The environments read from the file `path` or from files under the folder `path` (a
        path `eval` was given as a selector, loaded with everything else so that its ids are
        settled with the others', see envs.sources)."""
        wanted = Path(path).expanduser().resolve()
        out = []
        for env in self.environments:
            file = getattr(env, "_file", None)
            if file is not None and (file.resolve() == wanted or wanted in file.resolve().parents):
                out.append(_full(env))
        return out

    def counts(self) -> Counter[tuple[str, str]]:
        """Environments per (family, domain), for picker headings."""
        return Counter((env.family, env.domain) for env in self.environments)

    def filtered(self, family: str | None = None, domain: str | None = None) -> list[Environment]:
        return [
            env
            for env in self.environments
            if (family is None or env.family == family) and (domain is None or env.domain == domain)
        ]


def _full(env: Any) -> Any:
    """An environment for a catalog entry (lazy load), else `env` itself."""
    full = getattr(type(env), "full", None)
    return env.full() if callable(full) else env


def _display(path: Path) -> str:
    """Paths in messages are relative to the working directory when that is shorter."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def _suffixes(families: dict[str, Any]) -> tuple[str, ...]:
    """Every file suffix some family reads (`Family.file_suffixes`): `.json`, and `.jsonl` for
    ProactBench's dialogues."""
    found = {".json"}
    for family in families.values():
        found.update(s.lower() for s in family.file_suffixes)
    return tuple(sorted(found))


def _json_files(root: Path, suffixes: tuple[str, ...] = (".json",), seen_by: Any = None) -> tuple[list[Path], list[LoadProblem]]:
    """The .json files under `root` (hidden folders and files skipped), and what could not be
    scanned: a symlink whose target is missing, a symlinked folder that loops back into the scan,
    a folder named like a .json file, a FIFO or device given as the path or named like a .json
    file (never opened: reading a FIFO waits for a writer). Each is a problem naming the path,
    never a silent skip."""
    kind = _special(root)  # a FIFO or device given as the path: named, never opened
    if kind is not None:
        return [], [LoadProblem(file=str(root), message=not_a_file(kind))]
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
        if seen_by is not None:
            seen_by.folder(here, st)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in dirs:
            if d.lower().endswith(suffixes):
                problems.append(LoadProblem(file=_display(here / d), message="a folder named like a .json file: "
                                                                              "it is not read as one (its own files are)"))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = here / name
            if path.is_symlink() and not path.exists():
                if seen_by is not None:
                    seen_by.broken_link(path)
                if name.lower().endswith(suffixes) or not path.suffix:  # a file or (no suffix) a folder we cannot reach
                    problems.append(LoadProblem(file=str(path), message=f"broken symlink (points to "
                                                                              f"{os.readlink(path)}, which does not exist); skipped"))
                continue
            if name.lower().endswith(suffixes):
                kind = _special(path)
                if kind is not None:
                    shown = os.path.join(_display(here), name)  # the name in the folder, not a link's target
                    problems.append(LoadProblem(file=shown, message=not_a_file(kind)))
                elif path.is_file():
                    found.append(path)
    return sorted(found), problems


def _special(path: Path) -> str | None:
    """What `path` (its target, for a symlink) is when neither a file nor a folder, else None
    (also when it cannot be stat'ed: reading it then says why)."""
    try:
        return special_kind(path.stat().st_mode)
    except OSError:
        return None


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


def load_paths(paths: Iterable[Path | str | EnvSource], *, lazy: bool = False, seen_by: Any = None,
               later: Any = None) -> EnvironmentSet:
    """Load every environment under the given files and folders, in order (ids unique by source:
    see `envs.sources`).

    `lazy`: list each file's environments from its cached index (`envs.catalog`) as entries that
    parse into the family's environment on first use (`catalog.Entry.full`), reading a file in
    full only when its index is missing or stale (the playground's picker). The ids, shared ids,
    duplicates and problems are those of the eager load.

    `seen_by` (`envs.first_frame.Seen`) is told every root, folder and file the load looked at, so
    the playground's next start can tell, by `stat` alone, that nothing changed since.

    `later(file, companions)` (lazy only): a large file with no current index is handed to it
    instead of being read now (`catalog.LATER_FROM`); the playground indexes it after its first
    frame (`catalog.build_index`) and loads again."""
    with _no_gc_pauses():
        return _load_paths(paths, lazy, seen_by, later)


def _load_paths(paths: Iterable[Path | str | EnvSource], lazy: bool = False, seen_by: Any = None,
                later: Any = None) -> EnvironmentSet:
    if lazy:
        from proactive_tui.envs import catalog
    result = EnvironmentSet()
    families = _families()
    companions = {name: fam for fam in families.values() for name in fam.companion_files}
    names: set[str] = set()
    roots: set[Path] = set()
    # natural id -> the environments holding it, in load order; per source name, the natural ids
    # it holds (two files of one source with one id is the source's own problem, see below)
    holders: dict[str, list[Any]] = {}
    by_source: dict[str, dict[str, Any]] = {}
    for raw in paths:
        source = raw if isinstance(raw, EnvSource) else EnvSource(Path(raw))
        root = Path(source.path).expanduser()
        if seen_by is not None:
            seen_by.root(root)
        if not root.exists():
            result.problems.append(LoadProblem(file=str(root), message="no such file or folder"))
            continue
        if root.resolve() in roots:  # the same folder twice (the config's envs and --envs): read once
            continue
        roots.add(root.resolve())
        if source.kind == "builtin":
            name = BUILTIN
        else:
            name = source_name(root.resolve(), names)
            names.add(name)
        origin = Origin(kind=source.kind, name=name, path=_display(root))
        paths, scan_problems = _json_files(root, _suffixes(families), seen_by)
        if seen_by is not None:
            for path in paths:
                seen_by.file(path)
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
            value, problems = owner.environments.read_companion(file, data)
            result.problems.extend(problems)
            by_dir.setdefault(file.path.parent, {})[file.path.name] = value
        mine = by_source.setdefault(name, {})
        for file in files:
            if file.path.name in companions:
                continue
            companions_here = by_dir.get(file.path.parent, {})
            if lazy:
                envs, problems, _ = catalog.load_file(file, companions_here, lambda f, c: _load_file(f, families, c),
                                                      later=later, reader=lambda f: record_reader(f, families))
            else:
                envs, problems = _load_file(file, families, companions_here)
            result.files_read += 1
            result.problems.extend(problems)
            for env in envs:
                if any(other.source == env.source for other in holders.get(env.id, ())):
                    continue  # the same record met again (a file inside a folder given too): no clash
                earlier = mine.get(env.id)
                if earlier is not None:
                    result.problems.append(LoadProblem(
                        file=file.display, message=f"duplicate id {env.id} within {origin.path} (already read from "
                                                   f"{earlier.source}); skipped: load the two folders as separate "
                                                   "--envs paths to keep both"))
                    continue
                env._origin, env._file = origin, file.path
                mine[env.id] = env
                holders.setdefault(env.id, []).append(env)
                result.environments.append(env)
    _settle_shared(result, holders)
    return result


def _settle_shared(result: EnvironmentSet, holders: dict[str, list[Any]]) -> None:
    """Ids held by several sources: yours keep it (the first of yours loaded), else the first
    built-in one; the others become `<source>:<id>`. Listed in `result.shared`."""
    from proactive_tui.envs.describe import shown_source

    for natural, envs in holders.items():
        if len(envs) < 2:
            continue
        keeper = next((env for env in envs if env.origin.yours), envs[0])
        ordered = [keeper] + sorted((env for env in envs if env is not keeper), key=lambda env: not env.origin.yours)
        for env in ordered[1:]:
            env.id = qualified(env.origin.name, natural)
            if isinstance(getattr(env, "sample_id", None), str):  # Chronos pairs a sample's branches by it
                env.sample_id = qualified(env.origin.name, env.sample_id)
        result.shared.append(SharedId(natural=natural, holders=[Holder(id=env.id, source=shown_source(env.source))
                                                                for env in ordered]))


def record_reader(file: FileCandidate, families: dict[str, Any]) -> Any:
    """The family that reads `file` when its place decides it (its source names the family, or the
    family claims the location) and that family reads records one by one (`EnvironmentsPart.reads_records`),
    for the catalog's streaming index build; else None (the file is loaded as `_load_file` does)."""
    family = families.get(file.family) if file.family else None
    if family is None:
        family = next((f for f in families.values() if f.environments.claims_location(file)), None)
    if family is None or not family.environments.reads_records or family.environments.skip_file(file) or file.path.name.lower().endswith(".jsonl"):
        return None
    return family


def _load_file(file: FileCandidate, families: dict[str, Any], companions: dict[str, Any]) -> tuple[list[Any], list[LoadProblem]]:
    family = families.get(file.family) if file.family else None
    if family is None:
        family = next((f for f in families.values() if f.environments.claims_location(file)), None)
    if family is not None and family.environments.skip_file(file):
        return [], []
    lines = file.path.name.lower().endswith(".jsonl")
    if lines and family is not None and ".jsonl" not in family.file_suffixes:
        return [], []  # a .jsonl in a folder of a family that reads none (ProactiveBench's reward data): not an environment
    try:
        data = read_jsonl(file.path, file.display) if lines else read_json(file.path, file.display)
    except Unreadable as exc:
        return [], [exc.problem]
    if family is None:
        readers = [f for f in families.values() if not lines or ".jsonl" in f.file_suffixes]
        family = next((f for f in readers if f.environments.claims_shape(data)), None)
    if family is None and lines:
        # A .jsonl no family claims by place or shape (a synth run's log, a study's rating file) is
        # not an environment file: .jsonl files were never environments before a family read them,
        # and a folder of a user's notes must not turn into a list of problems.
        return [], []
    if family is None:
        return [], [LoadProblem(file=file.display, message=unrecognised_message(families, file.path.suffix))]
    return family.environments.load_file(file, data, companions)


def unrecognised_message(families: dict[str, Any], suffix: str) -> str:
    """Why a file was not read, and what each installed family that reads files of its `suffix`
    would read instead: its declared suffixes and file shape (`EnvironmentBase.file_shape`), so the
    message names a plug-in family too and never a family's shape it does not read."""
    suffix = suffix.lower()
    accepted = []
    for name, family in families.items():
        suffixes = tuple(s.lower() for s in family.file_suffixes)
        if suffix not in suffixes:
            continue
        shape = family.environments.env_model.file_shape
        accepted.append(f"{name} ({', '.join(suffixes)})" + (f" {shape}" if shape else ""))
    if not accepted:
        return f"unrecognised environment file: no installed family reads {suffix or 'such'} files"
    return ("unrecognised environment file: no installed family reads it (by its place or its shape). Each reads: "
            + "; ".join(accepted))
