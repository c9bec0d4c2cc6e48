"""Read a TOML file (config, themes) into data, with every way it can fail as one readable line.

The caller passes the exception class to raise, so each file kind keeps its own error type.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def read_toml(path: Path, error: type[Exception]) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
