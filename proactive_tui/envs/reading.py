"""Read a JSON file into Python data, turning every way it can be wrong into a LoadProblem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import may_hold_surrogates, scrub_deep
from proactive_tui.envs.problems import LoadProblem


class Unreadable(Exception):
    """Raised with the problem that stopped a file from being read at all."""

    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(problem.render())
        self.problem = problem


def read_json(path: Path, display: str | None = None) -> Any:
    """Return the parsed JSON in `path`, or raise Unreadable naming what was wrong and where."""
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise Unreadable(LoadProblem(file=name, message=f"cannot read file: {exc.strerror or exc}"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            LoadProblem(
                file=name,
                message=f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}",
            )
        )
    if not text.strip():
        raise Unreadable(LoadProblem(file=name, message="empty file: expected JSON"))
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except _NotJSON as exc:
        raise Unreadable(LoadProblem(file=name, message=f"invalid JSON: {exc} is not a JSON number (write a number or null)"))
    except json.JSONDecodeError as exc:
        raise Unreadable(
            LoadProblem(
                file=name,
                message=f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            )
        )
    except RecursionError:
        raise Unreadable(LoadProblem(file=name, message="invalid JSON: nested too deeply"))
    return scrub_deep(data) if may_hold_surrogates(text) else data


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
