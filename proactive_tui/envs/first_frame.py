"""The playground's first frame, drawn without pydantic, without any family and without reading
an environment file.

Why: a person waits for the first screen, and a bare Textual app with a table shows one in about
a quarter of a second. Importing pydantic, building the families' models, the registry and the
folder scan with its loaders cost more than that again (issue 35). What the picker's first frame
shows is known from the previous start: the settled list (ids, titles, groups), the problems, and
the first environment's preview. So each start that loads the environments the usual way
(`load_paths(..., lazy=True)`) leaves a snapshot of its result, and the next start draws from it
when nothing it was made from has changed; the families, pydantic and the environment set proper
are loaded after the first frame (`ui.app`), and a choice made before that loads them at once.

The snapshot (`<cache>/catalog/first-<hash>.json`, beside the catalog's per-file indexes):

- is named by what the start was asked for (the working folder, the user's environments folder,
  `PROACTIVE_TUI_SAMPLE_ENVS`, the `--envs` and config paths) and holds a key checked on every
  use: the loading code's stamp (`catalog.code_stamp`) and the modification times of the import
  path's folders (a family plug-in installed or removed changes its site-packages folder);
- lists every root, folder, file and broken link the load looked at, with their `stat`: a file
  added, removed or changed, or a folder that appeared, makes it stale (a file added or removed
  changes its folder's modification time), and a stale or unreadable snapshot is never used;
- holds no environment rows: each file's rows are read from the catalog's index of that file
  (checked against the very key the snapshot recorded), with the ids the load settled (a shared
  id qualified, a duplicate skipped) and the source each came from;
- holds the problems and shared ids as the load gave them, the families' order and which group
  by tier (the tree's shape), and the first environment's preview with the reference shown and
  hidden (so the first frame and the first `r` parse nothing).

Nothing here imports pydantic, a family or the loader (`tests/test_import_contracts.py`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from proactive_tui.envs import catalog

FORMAT = 1
Section = tuple[str, str]


class Seen:
    """What a load looked at (`registry.load_paths(seen_by=...)`), with the `stat` that says
    whether it is still as it was."""

    def __init__(self) -> None:
        self.roots: list[list[Any]] = []
        self.folders: list[list[Any]] = []
        self.files: list[list[Any]] = []
        self.links: list[str] = []

    def root(self, path: Path) -> None:
        self.roots.append([str(path), os.path.exists(path)])

    def folder(self, path: Path, st: os.stat_result) -> None:
        self.folders.append([str(path), st.st_mtime_ns])

    def file(self, path: Path) -> None:
        try:
            st = os.stat(path)
            self.files.append([str(path), st.st_size, st.st_mtime_ns])
        except OSError:
            self.files.append([str(path), None, None])

    def broken_link(self, path: Path) -> None:
        self.links.append(str(path))

    def as_json(self) -> dict[str, Any]:
        return {"roots": self.roots, "folders": self.folders, "files": self.files, "links": self.links}


def unchanged(seen: dict[str, Any]) -> bool:
    """Whether every root, folder, file and broken link is as the load met it."""
    for path, existed in seen["roots"]:
        if os.path.exists(path) != existed:
            return False
    for path, mtime in seen["folders"]:
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    for path, size, mtime in seen["files"]:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            return False
    for path in seen["links"]:
        if os.path.exists(path) or not os.path.islink(path):
            return False
    return True


def inputs(extra: list[str]) -> dict[str, Any]:
    """What the environments a start lists are made from, besides the files themselves (which
    `Seen` covers): the snapshot's name."""
    from proactive_tui.paths import user_envs_dir

    return {"format": FORMAT, "cwd": os.getcwd(), "user_envs": str(user_envs_dir()),
            "samples": os.environ.get("PROACTIVE_TUI_SAMPLE_ENVS"), "extra": [str(p) for p in extra]}


def code_key() -> dict[str, Any]:
    """The loading code and the installed families: the package's stamp, and the modification
    time of each folder on the import path (installing or removing a family plug-in, or any
    package, changes its site-packages folder). The script's folder and the working folder are
    left out: files come and go there all day, and packages are installed elsewhere."""
    folders = []
    skip = {"", os.getcwd(), sys.path[0] if sys.path else ""}
    for entry in sys.path:
        if entry in skip:
            continue
        try:
            folders.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            folders.append([entry, None])
    return {"code": catalog.code_stamp(), "path": folders}


def snapshot_path(wanted: dict[str, Any]) -> Path:
    import zlib  # a name, not a proof: the inputs are stored inside and compared on every use

    digest = zlib.crc32(json.dumps(wanted, sort_keys=True).encode())
    return catalog.cache_folder() / f"first-{digest:08x}.json"


class FileRef:
    """An environment file as the snapshot names it: what the catalog needs to read its records;
    the family's `FileCandidate` is made of it only when a record is parsed."""

    __slots__ = ("path", "root", "display", "folders", "family")

    def __init__(self, path: str, root: str, display: str, folders: list[str], family: str | None) -> None:
        self.path, self.root, self.display = Path(path), Path(root), display
        self.folders, self.family = frozenset(folders), family

    def candidate(self) -> Any:
        from proactive_tui.core.family import FileCandidate

        return FileCandidate(path=self.path, root=self.root, display=self.display, folders=self.folders,
                             family=self.family)


class StoredProblem:
    """A load problem as the snapshot keeps it; `render` is `LoadProblem.render` (a test holds
    them equal), so the first frame's notification is the usual one."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def render(self) -> str:
        d = self.data
        parts = [d["file"]]
        if d.get("line") is not None:
            parts.append(f"line {d['line']}")
        elif d.get("record") is not None:
            parts.append(f"record {d['record']}")
        if d.get("field"):
            parts.append(f"field {d['field']}")
        return ": ".join(parts) + f": {d['message']}"


class FirstFrame:
    """The environments of a snapshot: catalog entries as the load settled them, the problems,
    the families' order and the first preview. `environment_set()` makes the loader's
    `EnvironmentSet` of them (pydantic; after the first frame)."""

    def __init__(self, environments: list[Any], problems: list[dict[str, Any]], shared: list[dict[str, Any]],
                 files_read: int, families: list[str], by_tier: list[str], preview: dict[str, Any] | None) -> None:
        self.environments = environments
        self.problems = [StoredProblem(p) for p in problems]
        self._problems, self._shared, self.files_read = problems, shared, files_read
        self.families, self.by_tier = families, frozenset(by_tier)
        self.preview = preview

    def first_preview(self) -> tuple[str, dict[bool, list[Section]]] | None:
        """(the first environment's id, its preview with the reference shown / hidden)."""
        if self.preview is None:
            return None
        return self.preview["id"], {True: [tuple(s) for s in self.preview["shown"]],
                                    False: [tuple(s) for s in self.preview["hidden"]]}

    def environment_set(self) -> Any:
        from proactive_tui.envs.problems import LoadProblem
        from proactive_tui.envs.registry import EnvironmentSet
        from proactive_tui.envs.shared_ids import SharedId

        return EnvironmentSet(environments=self.environments, problems=[LoadProblem(**p) for p in self._problems],
                              shared=[SharedId.model_validate(s) for s in self._shared], files_read=self.files_read)


def _companions(ref: FileRef, names: list[str]) -> Any:
    """The companions' values for `ref`'s folder, read as the loader reads them (a callable: run
    when a record is first parsed, after the families are loaded)."""

    def read() -> dict[str, Any]:
        from proactive_tui.core import registry
        from proactive_tui.core.family import FileCandidate
        from proactive_tui.envs.reading import Unreadable, read_json
        from proactive_tui.envs.registry import _display

        owners = {name: fam for fam in registry.families().values() for name in fam.companion_files}
        values: dict[str, Any] = {}
        for name in names:
            path, owner = ref.path.parent / name, owners.get(name)
            if owner is None or not path.is_file():
                continue
            companion = FileCandidate(path=path, root=ref.root, display=_display(path), folders=ref.folders,
                                      family=ref.family)
            try:
                values[name], _ = owner.environments.read_companion(companion, read_json(path, companion.display))
            except Unreadable:
                continue
        return values

    return read


def read(extra: list[str]) -> FirstFrame | None:
    """The first frame's environments when the snapshot for `extra` is current, else None (then
    the environments load as usual, and leave a snapshot for the next start)."""
    wanted = inputs(extra)
    try:
        stored = json.loads(snapshot_path(wanted).read_bytes())
        if not isinstance(stored, dict) or stored.get("inputs") != wanted or stored.get("key") != code_key():
            return None
        if not unchanged(stored["seen"]):
            return None
        return _entries(stored)
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return None  # unreadable or not of this layout: the usual load, which writes a good one


def _entries(stored: dict[str, Any]) -> FirstFrame | None:
    from proactive_tui.envs.sources import Origin

    origins = [Origin(kind=kind, name=name, path=path) for kind, name, path in stored["origins"]]
    environments: list[Any] = []
    for item in stored["files"]:
        index = json.loads(Path(item["index"]).read_bytes())
        if not isinstance(index, dict) or index.get("key") != item["key"]:
            return None  # rewritten since (by another start, another working folder)
        key = item["key"]
        ref = FileRef(**item["file"])
        companions = _companions(ref, sorted(key["companions"]))
        cat = catalog.CatalogFile(ref, index["family"], companions, key["size"], key["mtime_ns"])  # type: ignore[arg-type]
        cat.words_path, cat.key = Path(item["index"]).with_suffix(".words"), key
        columns = index["entries"]
        count = len(columns[0]) if columns else 0
        rows = range(count) if item["rows"] is None else item["rows"]
        ids, samples = item["ids"], item["samples"]
        origin = origins[item["origin"]]
        for n in rows:
            entry = catalog.Entry(tuple(column[n] for column in columns), cat, n)
            settled = ids.get(str(n))
            if settled is not None:
                entry.id = settled
            sample = samples.get(str(n))
            if sample is not None:
                entry.sample_id = sample
            entry._origin, entry._file = origin, ref.path
            environments.append(entry)
    return FirstFrame(environments, stored["problems"], stored["shared"], stored["files_read"], stored["families"],
                      stored["by_tier"], stored.get("preview"))


def write(extra: list[str], loaded: Any, seen: Seen, preview: tuple[str, list[Section], list[Section]] | None) -> bool:
    """Keep what a usual load of `extra` gave (`loaded`, an `EnvironmentSet` of catalog entries;
    `seen`, what it looked at; `preview`, the first environment's id and its preview shown and
    hidden) for the next start's first frame. False when it cannot be kept: an environment that
    is no catalog entry, or a file whose index could not be written (a read-only cache)."""
    from proactive_tui.core import registry

    files: list[dict[str, Any]] = []
    by_catalog: dict[int, dict[str, Any]] = {}
    origins: list[list[str]] = []
    origin_no: dict[int, int] = {}
    for env in loaded.environments:
        cat = getattr(env, "_catalog", None) if isinstance(env, catalog.Entry) else None
        if cat is None or cat.key is None or env._origin is None:
            return False
        item = by_catalog.get(id(cat))
        if item is None:
            origin = env._origin
            if id(origin) not in origin_no:
                origin_no[id(origin)] = len(origins)
                origins.append([origin.kind, origin.name, origin.path])
            file = cat.file
            item = by_catalog[id(cat)] = {
                "file": {"path": str(file.path), "root": str(file.root), "display": file.display,
                         "folders": sorted(file.folders), "family": file.family},
                "index": str(catalog.index_path(file)), "key": cat.key, "origin": origin_no[id(origin)],
                "rows": [], "ids": {}, "samples": {}}
            files.append(item)
        n = env._row
        item["rows"].append(n)
        if env.id != env.natural:  # a shared id qualified, and with it a Chronos sample id (`_settle_shared`)
            item["ids"][str(n)] = env.id
            if env.sample_id is not None:
                item["samples"][str(n)] = env.sample_id
    for item in files:  # most files keep every row in order: said in one word
        rows = item["rows"]
        if rows == list(range(len(rows))) and _row_count(item) == len(rows):
            item["rows"] = None
    families = registry.families()
    first = None
    if preview is not None:
        first = {"id": preview[0], "shown": [list(s) for s in preview[1]], "hidden": [list(s) for s in preview[2]]}
    wanted = inputs(extra)
    body = {"inputs": wanted, "key": code_key(), "seen": seen.as_json(), "origins": origins, "files": files,
            "problems": [p.model_dump(exclude_none=True) for p in loaded.problems],
            "shared": [s.model_dump() for s in loaded.shared], "files_read": loaded.files_read,
            "families": list(families), "by_tier": [name for name, fam in families.items() if fam.group_by_tier],
            "preview": first}
    catalog._write(snapshot_path(wanted), body)
    return True


def _row_count(item: dict[str, Any]) -> int:
    try:
        index = json.loads(Path(item["index"]).read_bytes())
        return len(index["entries"][0])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return -1
