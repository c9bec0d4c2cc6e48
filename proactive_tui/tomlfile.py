"""Read a TOML file (config, themes) into data, with every way it can fail as one readable line.

The caller passes the exception class to raise, so each file kind keeps its own error type.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import number_problem


def read_toml(path: Path, error: type[Exception]) -> dict[str, Any]:
    """The file's data, or `error` naming the file and what is wrong. A UTF-8 byte-order mark is
    accepted (editors on Windows write one; JSON files with one already load), and nesting deep
    enough to exhaust the parser's recursion, or an integer too long to convert, is an error like any other,
    not a traceback."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # not a TOMLDecodeError: an integer too long for Python to convert
        raise error(f"{path}: invalid TOML: {number_problem(exc)}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
