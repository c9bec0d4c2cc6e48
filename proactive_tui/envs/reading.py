"""Read a JSON file into Python data, turning every way it can be wrong into a LoadProblem."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from proactive_tui.envs.problems import LoadProblem
from proactive_tui.textsafe import field_path, may_hold_surrogates, number_problem, scrub_deep


class Unreadable(Exception):
    """Raised with the problem that stopped a file from being read at all."""

    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(problem.render())
        self.problem = problem


def read_json(path: Path, display: str | None = None) -> Any:
    """Return the parsed JSON in `path`, or raise Unreadable naming what was wrong and where."""
    name = display or str(path)
    raw = _read_regular(path, name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            LoadProblem(
                file=name,
                message=f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}",
            )
        ) from None
    del raw  # a large file is held once while it is parsed (as text), not twice
    if not text.strip():
        raise Unreadable(LoadProblem(file=name, message="empty file: expected JSON"))
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except _NotJSON as exc:
        raise Unreadable(LoadProblem(file=name, message=f"invalid JSON: {exc} is not a JSON number (write a number or null)")) from None
    except json.JSONDecodeError as exc:
        raise Unreadable(
            LoadProblem(
                file=name,
                message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            )
        ) from None
    except RecursionError:
        raise Unreadable(LoadProblem(file=name, message="invalid JSON: nested too deeply")) from None
    except ValueError as exc:  # a number longer than Python converts (sys.get_int_max_str_digits)
        raise Unreadable(LoadProblem(file=name, message=f"invalid JSON: {number_problem(exc)}")) from None
    too_deep = _too_deep(data)
    if too_deep is not None:
        record, field = (too_deep[0], too_deep[1:3]) if isinstance(data, list) else (None, too_deep[:2])
        raise Unreadable(LoadProblem(file=name, record=record, field=field_path(tuple(field)) or None,
                                     message=f"nested too deeply: more than {MAX_DEPTH} levels of arrays and objects "
                                             "(no environment needs that many); file skipped"))
    return scrub_deep(data) if may_hold_surrogates(text) else data


class JsonLines:
    """A `.jsonl` file as read: each line that parsed, with its 1-based line number (blank lines
    skipped), and one problem per line that did not. A family's `load_file` gets this for the
    files its `file_suffixes` include, so one bad row is one line naming the file and the line,
    and the other rows still load (ProactBench's `final_dialogues.jsonl`)."""

    __slots__ = ("rows", "problems")

    def __init__(self, rows: list[tuple[int, Any]], problems: list[LoadProblem]) -> None:
        self.rows = rows
        self.problems = problems

    def first(self) -> Any:
        """The first row that parsed (None when none did): what `claims_shape` looks at."""
        return self.rows[0][1] if self.rows else None


def read_jsonl(path: Path, display: str | None = None) -> JsonLines:
    """The rows of a JSON Lines file, or Unreadable when the file as a whole cannot be read (not
    UTF-8, not a regular file, empty). A line that is not JSON, or nests too deeply, is a problem
    naming its line; the rest are kept."""
    name = display or str(path)
    raw = _read_regular(path, name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(LoadProblem(file=name, message=f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}")) from None
    del raw
    if not text.strip():
        raise Unreadable(LoadProblem(file=name, message="empty file: expected one JSON object per line"))
    rows: list[tuple[int, Any]] = []
    problems: list[LoadProblem] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line, parse_constant=_reject_constant)
        except _NotJSON as exc:
            problems.append(LoadProblem(file=name, line=number, message=f"invalid JSON: {exc} is not a JSON number"))
            continue
        except json.JSONDecodeError as exc:
            problems.append(LoadProblem(file=name, line=number,
                                        message=f"invalid JSON at column {exc.colno}: {exc.msg}"))
            continue
        except RecursionError:
            problems.append(LoadProblem(file=name, line=number, message="invalid JSON: nested too deeply"))
            continue
        except ValueError as exc:
            problems.append(LoadProblem(file=name, line=number, message=f"invalid JSON: {number_problem(exc)}"))
            continue
        if _too_deep(value) is not None:
            problems.append(LoadProblem(file=name, line=number, message=f"nested too deeply: more than "
                                                                          f"{MAX_DEPTH} levels; skipped"))
            continue
        rows.append((number, scrub_deep(value) if may_hold_surrogates(line) else value))
    return JsonLines(rows, problems)


def special_kind(mode: int) -> str | None:
    """What a path that is neither a regular file nor a folder is, in a person's words, or None
    for a file or folder."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def not_a_file(kind: str) -> str:
    """The message for a FIFO, device or socket given where an environment file is expected."""
    return (f"{kind}, not an environment file or folder: not read (reading it could wait for ever "
            "or never end)")


def _read_regular(path: Path, name: str) -> bytes:
    """The bytes of `path`, which must be a regular file. Opened without blocking and checked on
    the open descriptor, so a FIFO (whose plain open waits for a writer, then whose read waits for
    the writer to finish) or a device (/dev/zero never ends) is refused with one line even when it
    replaced a file after the folder was scanned."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unreadable(LoadProblem(file=name, message=f"cannot read file: {exc.strerror or exc}")) from None
    try:
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise Unreadable(LoadProblem(file=name, message=not_a_file(kind)))
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as exc:
        raise Unreadable(LoadProblem(file=name, message=f"cannot read file: {exc.strerror or exc}")) from None
    finally:
        os.close(fd)


MAX_DEPTH = 64
"""Deepest nesting an environment file may have. Free-form fields (a ProactiveEval topic, extra
keys kept for round-trip) hold whatever the file has, and a value nested a few hundred levels
deep loads but cannot be serialised (pydantic stops at 255 levels), so the session or the store
would fail later, far from the file. Real files nest fewer than ten levels."""


def _too_deep(data: Any) -> list[Any] | None:
    """Where arrays and objects first nest deeper than MAX_DEPTH (the keys and indexes leading
    there), or None. Without recursion, so any depth the parser accepted is measured.

    The walk carries a depth, not a path, and never stacks plain values: building a path list per
    value was a third of loading a 100,000-record file. The path is worked out only for a file
    that is too deep (`_deep_path`, the same walk with paths, so the same place is named)."""
    containers = (dict, list)
    stack: list[tuple[Any, int]] = [(data, 0)] if isinstance(data, containers) else []
    while stack:
        value, depth = stack.pop()
        if depth >= MAX_DEPTH:
            return _deep_path(data)
        children = value.values() if isinstance(value, dict) else value
        depth += 1
        stack.extend((item, depth) for item in children if isinstance(item, containers))
    return None


def _deep_path(data: Any) -> list[Any] | None:
    """The keys and indexes leading to the first place nested deeper than MAX_DEPTH, or None."""
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else None
        if items is None:
            continue
        if len(path) >= MAX_DEPTH:
            return path
        stack.extend((item, path + [key]) for key, item in items)
    return None


class _NotJSON(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    """NaN, Infinity and -Infinity: Python's json reads them, JSON does not have them, and a score
    or time of NaN would pass every range check (NaN compares false) into the session."""
    raise _NotJSON(name)


def json_kind(value: Any) -> str:
    """Name a JSON value's type the way a person writing the file thinks of it."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), "a number")
