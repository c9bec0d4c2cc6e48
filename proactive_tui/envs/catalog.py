"""A cached index of environment files, so the picker draws without parsing every record.

Loading a file in full validates every record with pydantic (100,000 ProactiveEval records: about
5 s and 500 MB). The picker's tree, its filter's first words and its headings need only a few
strings per environment, and a preview needs one environment at a time. So the playground loads
through this catalog (`load_paths(..., lazy=True)`):

- per environment file, its entries (natural id, family, domain, tier, title, summary, list label,
  source, the record's position and byte span in the file) and the problems the file gave are
  written once, after a full load, to `<cache>/catalog/<hash>.json` (`paths.cache_dir`);
- the entry file is named by the file's path and how it was met (its shown name, the folders
  the family rules look at, the family its source names), and holds a key checked on every use:
  the file's size and modification time, those of its folder's companion files (ProactiveBench's
  `splits.json`), and a stamp of the loading code (package version and the loaders' own files,
  so a new release or an edited loader never trusts an old index);
- a stale or unreadable index is ignored and rebuilt from a full load of that file; a corrupt one
  never stops a load;
- an entry (`Entry`) becomes the family's full environment on demand (`Entry.full`): for a family
  that reads records one by one (`EnvironmentsPart.reads_records`) by parsing only the record's bytes, else
  by loading its (small) file. If the file changed since the index was read, the whole file is
  read again and the record found by its source; one that is gone raises `EnvironmentGone`.

The ids, the shared-id rules (`envs.sources`), the duplicate checks and the problems are those of
the eager load: the loader settles ids over entries exactly as over environments, and the full
environment gets the entry's settled id. Nothing here imports pydantic or a family at import time.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

FORMAT = 1
"""The entry files' layout; a file of another layout is ignored and rebuilt."""

KEEP_PARSED = 2_000
"""A file loaded in full to (re)build its index keeps its parsed environments on its entries when
it holds fewer than this many (no second parse for the samples); a larger file's are dropped, so
memory stays that of the index."""

_ROW = ("natural", "family", "domain", "tier", "title", "summary", "list_label", "source", "sample_id",
        "position", "start", "end")
_NONE = type(None)
_COLUMN_TYPES = ({str}, {str}, {str}, {str, _NONE}, {str}, {str}, {str, _NONE}, {str}, {str, _NONE}, {int, _NONE},
                 {int, _NONE}, {int, _NONE})
"""The types each column may hold (checked as sets of types, in C: 100,000 entries in milliseconds)."""
_WS = re.compile(r"[ \t\n\r]*")


class EnvironmentGone(LookupError):
    """An indexed environment that its file no longer holds (the file changed since the start)."""


class Entry:
    """One environment as the index knows it: what the picker lists, filters and groups by, and
    where its record is. Anything else (`item`, `scenario`, ...) is read from the full environment,
    parsed on first use (`full`)."""

    __slots__ = ("id", "natural", "family", "domain", "tier", "title", "summary", "_label", "source", "sample_id",
                 "position", "span", "_origin", "_file", "_catalog", "_env", "_row")

    def __init__(self, row: Any, catalog: "CatalogFile", number: int) -> None:
        (self.natural, self.family, self.domain, self.tier, self.title, self.summary, self._label, self.source,
         self.sample_id, self.position, start, end) = row
        self.id = self.natural
        self.span = (start, end) if start is not None and end is not None else None
        self._origin: Any = None
        self._file: Any = catalog.file.path
        self._catalog = catalog
        self._env: Any = None
        self._row = number

    def described(self) -> str | None:
        """The bodies of the family's description with the reference shown, joined by spaces (what
        the picker's filter searches after the header), from the index's words file; the record is
        parsed when that file is missing or stale."""
        return self._catalog.described(self)

    def __repr__(self) -> str:
        return f"Entry({self.id!r})"

    @property
    def origin(self) -> Any:
        return self._origin

    @property
    def list_label(self) -> str:
        return self._label if self._label is not None else self.title

    def search_text(self) -> str:
        """As `EnvironmentBase.search_text`."""
        return " ".join([self.id, self.title, self.summary, self.domain, self.tier or ""]).lower()

    def full(self) -> Any:
        """The family's environment, parsed on first use and kept."""
        if self._env is None:
            self._env = self._catalog.environment(self)
        self._dress(self._env)  # the loader may have settled the id after a full load set `_env`
        return self._env

    def parse(self) -> Any:
        """The family's environment, parsed now and not kept (the filter's haystacks)."""
        if self._env is not None:
            return self.full()
        env = self._catalog.environment(self)
        self._dress(env)
        return env

    def _dress(self, env: Any) -> None:
        """Give a parsed environment what the loader settled on the entry (a shared id qualified,
        the source it was met in)."""
        env.id = self.id
        if self.sample_id is not None and getattr(env, "sample_id", None) is not None:
            env.sample_id = self.sample_id
        env._origin, env._file = self._origin, self._file

    def __getattr__(self, name: str) -> Any:
        """Whatever the index does not hold comes from the full environment, so code handed an
        entry reads it as the environment it stands for."""
        if name.startswith("__") or name in Entry.__slots__:
            raise AttributeError(name)
        return getattr(self.full(), name)


def full(env: Any) -> Any:
    """The environment itself for an entry, or `env` as it is."""
    return env.full() if isinstance(env, Entry) else env


class CatalogFile:
    """One environment file as indexed: how to parse one of its entries again."""

    __slots__ = ("file", "family", "companions", "size", "mtime_ns", "_whole", "words_path", "key", "_words")

    def __init__(self, file: Any, family: str | None, companions: dict[str, Any], size: int, mtime_ns: int) -> None:
        self.file = file
        self.family = family
        self.companions = companions
        self.size, self.mtime_ns = size, mtime_ns
        self._whole: dict[tuple[str, str], Any] | None = None
        self.words_path: Path | None = None
        self.key: dict[str, Any] | None = None
        self._words: list[Any] | None = None

    def for_family(self) -> tuple[Any, dict[str, Any]]:
        """(the file as families take it, the companions' values). An index met by the first frame
        (`envs.first_frame`) holds a plain reference to the file and reads the companions (the
        family's `read_companion`) only now, when a record is parsed: the first frame imports no
        family."""
        if callable(self.companions):
            self.companions = self.companions()
        candidate = getattr(self.file, "candidate", None)
        if callable(candidate):
            self.file = candidate()
        return self.file, self.companions

    def described(self, entry: Entry) -> str | None:
        """From the words file, read only as far as this entry (the filter warms its haystacks in
        order, a slice at a time, so the file is never parsed whole in one go)."""
        if self._words is None and self.words_path is not None and self.key is not None:
            self._words = _Words.open(self.words_path, self.key)
            self.words_path = None  # opened once, whether or not it was good
        found = self._words.get(entry._row) if self._words is not None else _MISSING
        return described(entry.parse()) if found is _MISSING else found

    def environment(self, entry: Entry) -> Any:
        from proactive_tui.core import registry

        family = registry.families().get(entry.family)
        if family is None:
            raise EnvironmentGone(f"{entry.source}: the family {entry.family} is not installed")
        try:
            st = os.stat(self.file.path)
        except OSError as exc:
            raise EnvironmentGone(f"{self.file.display}: cannot be read now ({exc.strerror})") from None
        unchanged = (st.st_size, st.st_mtime_ns) == (self.size, self.mtime_ns)
        if unchanged and entry.span is not None and family.environments.reads_records:
            try:
                env = family.environments.load_record(self.for_family()[0], self._record(entry.span), entry.position)
            except (OSError, ValueError, RecursionError):  # not the record the index said: read the file
                env = None
            if env is not None and env.id == entry.natural and env.source == entry.source:
                return env
        return self._from_whole(entry, family)

    def _record(self, span: tuple[int, int]) -> Any:
        from proactive_tui.envs.reading import _reject_constant as reject_constant
        from proactive_tui.textsafe import may_hold_surrogates, scrub_deep

        with open(self.file.path, "rb") as handle:
            handle.seek(span[0])
            text = handle.read(span[1] - span[0]).decode("utf-8")
        data = json.loads(text, parse_constant=reject_constant)
        return scrub_deep(data) if may_hold_surrogates(text) else data

    def _from_whole(self, entry: Entry, family: Any) -> Any:
        """The entry's environment out of a full load of its file (a family that reads whole files,
        or a file changed since its index was read: then the record is found by its source)."""
        if self._whole is None:
            from proactive_tui.envs.reading import Unreadable, read_json, read_jsonl

            path = self.file.path
            try:
                data = read_jsonl(path, self.file.display) if path.name.lower().endswith(".jsonl") else \
                    read_json(path, self.file.display)
            except Unreadable as exc:
                raise EnvironmentGone(exc.problem.render()) from None
            file, companions = self.for_family()
            envs, _ = family.environments.load_file(file, data, companions)
            self._whole = {(env.source, env.id): env for env in envs}
            if len(envs) >= KEEP_PARSED:  # a large file changed under us: keep none, parse again if asked
                found = self._whole.get((entry.source, entry.natural))
                self._whole = None
                if found is None:
                    raise EnvironmentGone(f"{entry.source}: {entry.natural} is no longer in the file (it changed "
                                          "since the start; ctrl+r reads the folders again)")
                return found
        found = self._whole.get((entry.source, entry.natural))
        if found is None:
            raise EnvironmentGone(f"{entry.source}: {entry.natural} is no longer in the file (it changed since the "
                                  "start; ctrl+r reads the folders again)")
        return found


# -- the cache ------------------------------------------------------------------------------------

_STAMP: str | None = None


def code_stamp() -> str:
    """The package version and the newest modification time of the loading code (this package and
    every family's `__init__`/`env` modules): an index written by other code is never trusted."""
    global _STAMP
    if _STAMP is None:
        from proactive_tui import __version__

        package = Path(__file__).resolve().parent.parent
        newest = 0
        for path in [*package.joinpath("envs").glob("*.py"), *package.joinpath("families").glob("*/__init__.py"),
                     *package.joinpath("families").glob("*/env.py"), package / "textsafe.py"]:
            try:
                newest = max(newest, path.stat().st_mtime_ns)
            except OSError:
                pass
        _STAMP = f"{__version__}:{newest}"
    return _STAMP


def cache_folder() -> Path:
    from proactive_tui.paths import cache_dir

    return cache_dir() / "catalog"


def _identity(file: Any) -> dict[str, Any]:
    """What names a file's entry file: the file and how the loader met it (a name shown in
    messages, the folders and family that decide who reads it)."""
    return {"path": os.path.abspath(file.path), "display": file.display, "folders": sorted(file.folders),
            "family": file.family}


def _key(file: Any, companions: dict[str, Any]) -> dict[str, Any] | None:
    """What must be unchanged for the index to hold: None when the file cannot be stat'ed."""
    try:
        st = os.stat(file.path)
    except OSError:
        return None
    beside = {}
    for name in sorted(companions):
        try:
            cst = os.stat(Path(file.path).parent / name)
            beside[name] = [cst.st_size, cst.st_mtime_ns]
        except OSError:
            beside[name] = None
    return {"format": FORMAT, "code": code_stamp(), **_identity(file), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "companions": beside}


def index_path(file: Any) -> Path:
    import hashlib  # not at import: the first frame (envs.first_frame) reads indexes, never names them

    digest = hashlib.sha256(json.dumps(_identity(file), sort_keys=True).encode()).hexdigest()[:32]
    return cache_folder() / f"{digest}.json"


def _read_index(path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The stored index when it is whole and its key is `key`; else None (rebuilt by the caller)."""
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    family, problems, columns = stored.get("family"), stored.get("problems"), stored.get("entries")
    if not isinstance(family, (str, _NONE)) or not isinstance(problems, list) or not isinstance(columns, list):
        return None
    if not all(isinstance(p, dict) and isinstance(p.get("file"), str) and isinstance(p.get("message"), str)
               for p in problems):
        return None
    if len(columns) != len(_ROW) or not all(isinstance(column, list) for column in columns):
        return None
    if len({len(column) for column in columns}) > 1:
        return None
    if not all(set(map(type, column)) <= kinds for column, kinds in zip(columns, _COLUMN_TYPES)):
        return None
    return stored


def described(env: Any) -> str | None:
    """The family's description bodies of `env`, reference shown, joined by spaces (None if none)."""
    from proactive_tui.core import registry

    family = registry.find(env.family)
    bodies = [body for _, body in family.environments.describe(env, True)] if family is not None else []
    return " ".join(bodies) if bodies else None


_MISSING = object()


class _Words:
    """A words file: a first line holding the index's key, then one JSON string (or null) per
    entry. Read forward line by line as entries ask; a bad line ends its use (the records are
    parsed instead)."""

    __slots__ = ("handle", "words")

    def __init__(self, handle: Any) -> None:
        self.handle, self.words = handle, []

    @classmethod
    def open(cls, path: Path, key: dict[str, Any]) -> "_Words | None":
        try:
            handle = open(path, encoding="utf-8")
            if json.loads(handle.readline() or "null") != {"key": key}:
                handle.close()
                return None
        except (OSError, ValueError, RecursionError):
            return None
        return cls(handle)

    def get(self, row: int) -> Any:
        while len(self.words) <= row and self.handle is not None:
            line = self.handle.readline()
            try:
                value = json.loads(line) if line else _MISSING
            except (ValueError, RecursionError):
                value = _MISSING
            if value is _MISSING or not isinstance(value, (str, _NONE)):
                self.handle.close()
                self.handle = None
                break
            self.words.append(value)
        return self.words[row] if row < len(self.words) else _MISSING


def _write_words(path: Path, key: dict[str, Any], words: list[str | None]) -> None:
    lines = [json.dumps({"key": key}, ensure_ascii=False)]
    lines += [json.dumps(word, ensure_ascii=False) for word in words]
    _write_text(path, "\n".join(lines) + "\n")


def _write_index(path: Path, key: dict[str, Any], family: str | None, problems: list[Any], rows: list[list[Any]]) -> None:
    _write(path, {"key": key, "family": family, "problems": [p.model_dump(exclude_none=True) for p in problems],
                  "entries": [list(column) for column in zip(*rows)] if rows else [[] for _ in _ROW]})


def _write(path: Path, value: Any) -> None:
    _write_text(path, json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _write_text(path: Path, body: str) -> None:
    """Written to a temporary file and renamed, so a reader never meets half an index; a cache that
    cannot be written (read-only home, full disk) only means the next start loads in full again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _words_path(index: Path) -> Path:
    return index.with_suffix(".words")


def array_spans(path: Path) -> list[tuple[int, int]] | None:
    """The byte span of every element of the JSON array in `path` (None if it holds no array)."""
    raw = path.read_bytes()
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    text = raw[bom:].decode("utf-8")
    del raw
    decoder = json.JSONDecoder()
    i = _WS.match(text, 0).end()
    if text[i : i + 1] != "[":
        return None
    i = _WS.match(text, i + 1).end()
    spans: list[tuple[int, int]] = []
    if text[i : i + 1] == "]":
        return spans
    while True:
        try:
            _, end = decoder.raw_decode(text, i)
        except ValueError:
            return None
        spans.append((i, end))
        i = _WS.match(text, end).end()
        mark = text[i : i + 1]
        if mark == ",":
            i = _WS.match(text, i + 1).end()
        elif mark == "]":
            break
        else:
            return None
    if text.isascii():
        return [(start + bom, end + bom) for start, end in spans]
    out, chars, bytes_ = [], 0, bom  # character offsets to byte offsets, one pass
    for start, end in spans:
        bytes_ += len(text[chars:start].encode("utf-8", "surrogatepass"))
        length = len(text[start:end].encode("utf-8", "surrogatepass"))
        out.append((bytes_, bytes_ + length))
        bytes_, chars = bytes_ + length, end
    return out


def _elements(path: Path) -> Any:
    """(element, byte start, byte end, its text) for each element of the JSON array in `path`,
    read `STREAM_CHUNK` characters at a time, so a file of any size costs the memory of a chunk
    and one element; raises ValueError when the file is not one JSON array (the full load then
    says how). Consumed text is dropped only when more is read, never element by element (a
    slice per element copied the rest of the chunk each time)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant_lazy())
    with open(path, "rb") as head:
        bom = 3 if head.read(3) == b"\xef\xbb\xbf" else 0
    with open(path, encoding="utf-8-sig", newline="") as handle:
        buf = handle.read(STREAM_CHUNK)
        ascii_text = buf.isascii()
        at, byte_at = 0, bom  # buf[at:] is not yet consumed; byte_at is the file offset of buf[at]

        def span(a: int, b: int) -> int:
            return b - a if ascii_text else len(buf[a:b].encode("utf-8", "surrogatepass"))

        def refill(i: int) -> int | None:
            """Read more text (dropping what is consumed); `i` shifted, or None at the end."""
            nonlocal buf, at, ascii_text
            more = handle.read(STREAM_CHUNK)
            if not more:
                return None
            buf = buf[at:] + more
            i -= at
            at = 0
            ascii_text = buf.isascii()
            return i

        i = _WS.match(buf, 0).end()
        if buf[i:i + 1] != "[":
            raise ValueError("not an array")
        i += 1
        position, expect_value = 0, True
        while True:
            i = _WS.match(buf, i).end()
            while i >= len(buf):
                shifted = refill(i)
                if shifted is None:
                    raise ValueError("cut short")
                i = _WS.match(buf, shifted).end()
            mark = buf[i]
            if mark == "]" and (position == 0 or not expect_value):
                rest = buf[i + 1:]
                if rest.strip() or handle.read(1).strip():
                    raise ValueError("text after the array")
                return
            if not expect_value:
                if mark != ",":
                    raise ValueError("expected , or ]")
                i += 1
                expect_value = True
                continue
            while True:
                try:
                    value, end = decoder.raw_decode(buf, i)
                    if end < len(buf):  # a number may go on in the next chunk
                        break
                except ValueError:
                    pass
                shifted = refill(i)
                if shifted is None:
                    value, end = decoder.raw_decode(buf, i)  # the last element: whole, or the error
                    break
                i = shifted
            start = byte_at + span(at, i)
            stop = start + span(i, end)
            yield value, start, stop, buf[i:end]
            at, byte_at, i = end, stop, end
            position += 1
            expect_value = False


def _reject_constant_lazy() -> Any:
    from proactive_tui.envs.reading import _reject_constant

    return _reject_constant


def stream_rows(file: Any, family: Any, where: Path, key: dict[str, Any]) -> tuple[list[list[Any]], str] | None:
    """Index a `.json` array file of a family that reads records one by one (`EnvironmentsPart.reads_records`)
    in one streaming pass: each element parsed and made an environment alone (`load_record`), its
    row and filter words kept, the environment dropped; the index and words file written as the
    full load would write them. None, with nothing written, when any element is not a valid
    environment or the file is not a plain array (the full load then reports its problems, which
    a record-by-record pass could not word the same way)."""
    from proactive_tui.envs.reading import _too_deep
    from proactive_tui.textsafe import may_hold_surrogates, scrub_deep

    path = Path(file.path)
    if path.name.lower().endswith(".jsonl"):
        return None
    columns: list[list[Any]] = [[] for _ in _ROW]  # a list per column: no list object per record
    adds = [column.append for column in columns]
    words_tmp = where.with_suffix(".words.part")
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        with open(words_tmp, "w", encoding="utf-8") as words:
            words.write(json.dumps({"key": key}, ensure_ascii=False) + "\n")
            for position, (raw, start, end, text) in enumerate(_elements(path)):
                if _too_deep([raw]) is not None:
                    return None
                if may_hold_surrogates(text):
                    raw = scrub_deep(raw)
                env = family.environments.load_record(file, raw, position)
                if env is None:
                    return None
                label = env.list_label
                sample = getattr(env, "sample_id", None)
                for add, value in zip(adds, (env.id, env.family, env.domain, env.tier, env.title, env.summary,
                                             None if label == env.title else label, env.source,
                                             sample if isinstance(sample, str) else None, position, start, end)):
                    add(value)
                words.write(json.dumps(described(env), ensure_ascii=False) + "\n")
        if _key(file, {name: None for name in key["companions"]}) != key:
            return None  # changed while it was read
        os.replace(words_tmp, _words_path(where))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    finally:
        try:
            os.unlink(words_tmp)
        except OSError:
            pass
    if not columns[0]:
        return None
    name = columns[1][0]
    _write(where, {"key": key, "family": name, "problems": [], "entries": columns})
    return columns, name


def _rows(envs: list[Any], family: Any, path: Path) -> list[list[Any]]:
    spans: list[tuple[int, int]] | None = None
    if family is not None and family.environments.reads_records and not path.name.lower().endswith(".jsonl") and envs:
        try:
            spans = array_spans(path)
        except (OSError, ValueError):
            spans = None
    rows = []
    for env in envs:
        position = getattr(env, "index", None) if spans is not None else None
        span = spans[position] if spans is not None and isinstance(position, int) and 0 <= position < len(spans) else None
        label = env.list_label
        sample = getattr(env, "sample_id", None)
        rows.append([env.id, env.family, env.domain, env.tier, env.title, env.summary,
                     None if label == env.title else label, env.source, sample if isinstance(sample, str) else None,
                     position if span is not None else None, span[0] if span else None, span[1] if span else None])
    return rows


LATER_FROM = 16_000_000
"""Bytes from which a file with no current index is indexed after the first frame rather than
before it (`load_file(..., later=...)`): 100,000 ProactiveEval records (about 130 MB) took 5 s and
870 MB to load in full before the picker could show anything."""

STREAM_FROM = 2_000_000
"""Bytes from which a file with no current index is indexed in one streaming pass (`stream_rows`)
when its family reads records one by one: its memory is that of the index, not of every
environment at once. A smaller file is loaded in full and keeps its environments parsed."""

STREAM_CHUNK = 1 << 22
"""Characters read at a time by the streaming index build (`stream_rows`)."""


def load_file(file: Any, companions: dict[str, Any], loader: Any, later: Any = None,
              reader: Any = None) -> tuple[list[Entry], list[Any], bool]:
    """(entries, problems, whether the file was read in full) for one environment file: from its
    index when that is current, else by `loader(file, companions)` -> (envs, problems),
    the eager load, whose result is indexed for the next time.

    `later(file, companions)`: called instead of loading a large file (`LATER_FROM`) that has no
    current index; the file then lists nothing now, and whoever passed `later` builds its index
    (`build_index`) and loads again. `reader(file)`: the family that reads the file, when its
    place says so and it reads records one by one, for the streaming build (`stream_rows`)."""
    key = _key(file, companions)
    where = index_path(file)
    stored = _read_index(where, key) if key is not None else None
    if stored is None and later is not None and key is not None and key["size"] >= LATER_FROM:
        later(file, companions)
        return [], [], False
    if stored is None and reader is not None and key is not None and key["size"] >= STREAM_FROM:
        family = reader(file)
        streamed = stream_rows(file, family, where, key) if family is not None else None
        if streamed is not None:  # every record read alone, nothing held but the index
            columns, name = streamed
            catalog = CatalogFile(file, name, companions, key["size"], key["mtime_ns"])
            catalog.words_path, catalog.key = _words_path(where), key
            return [Entry(row, catalog, n) for n, row in enumerate(zip(*columns))], [], True
    if stored is not None:
        catalog = CatalogFile(file, stored["family"], companions, key["size"], key["mtime_ns"])
        problems = stored["problems"]
        if problems:
            from proactive_tui.envs.problems import LoadProblem

            problems = [LoadProblem(**p) for p in problems]
        catalog.words_path, catalog.key = _words_path(where), key
        return [Entry(row, catalog, n) for n, row in enumerate(zip(*stored["entries"]))], problems, False
    envs, problems = loader(file, companions)
    name = envs[0].family if envs else None
    family = None
    if name is not None:
        from proactive_tui.core import registry

        family = registry.families().get(name)
    rows = _rows(envs, family, Path(file.path))
    after = _key(file, companions) if key is not None else None
    if key is not None:
        if after == key:  # not changed while it was read: an index of what is there now
            _write_index(where, key, name, problems, rows)
            _write_words(_words_path(where), key, [described(env) for env in envs])
    catalog = CatalogFile(file, name, companions, key["size"] if key else -1, key["mtime_ns"] if key else -1)
    if key is not None and after == key:
        catalog.words_path, catalog.key = _words_path(where), key
    entries = [Entry(row, catalog, n) for n, row in enumerate(rows)]
    if len(envs) < KEEP_PARSED:
        for entry, env in zip(entries, envs):
            entry._env = env
    return entries, problems, True


def build_index(file: Any, companions: dict[str, Any]) -> None:
    """Index one file `load_file(..., later=...)` put off (in the playground's background thread):
    in one streaming pass when its family reads records one by one, else by the full load. The
    next load lists it from the index."""
    import gc

    from proactive_tui.envs import registry as loader

    families = loader._families()
    key = _key(file, companions)
    where = index_path(file)
    if key is None or _read_index(where, key) is not None:
        return
    family = loader.record_reader(file, families)
    if family is None or stream_rows(file, family, where, key) is None:
        load_file(file, companions, lambda f, c: loader._load_file(f, families, c))
    gc.collect()  # what the pass built is garbage now; the reload that follows reuses its memory
