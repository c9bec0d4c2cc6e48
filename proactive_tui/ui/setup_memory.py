"""What the setup form remembers per family: the last mode, models, api base and settings.

A person comparing runs starts many sessions of one family in a row; retyping the models and
settings each time is what made the form tedious. The memory is a small JSON file beside the config
(`last_setup.json`), written after each Start. It is a convenience, so a broken or unreadable file
is ignored (the form opens on the defaults), and a value the family no longer accepts is dropped
when the form opens, never an error.

Never stored: keys, and credentials an api base URL may carry (user:password@, query strings such
as ?api-key=...): only scheme, host, port and path are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, ValidationError


class SetupMemory(BaseModel):
    mode: str = "watch"
    models: dict[str, str] = Field(default_factory=dict)
    """seat -> litellm model string, for the seats a model played."""
    api_base: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    """The family's protocol settings as the form read them (validated again when reused)."""
    temperatures: dict[str, float] = Field(default_factory=dict)
    """seat -> the temperature the form held, for the seats a model played."""


class SetupMemories(BaseModel):
    families: dict[str, SetupMemory] = Field(default_factory=dict)


def memory_file() -> Path:
    from proactive_tui.paths import config_file

    return config_file().with_name("last_setup.json")


def safe_api_base(url: str | None) -> str | None:
    """`url` without user info, query or fragment (where credentials hide); None if not a URL."""
    from proactive_tui.redact import public_api_base

    if not url or not url.strip():
        return None
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.hostname:
        return None
    return public_api_base(url)


def load_memories(path: Path | None = None) -> SetupMemories:
    path = path or memory_file()
    try:
        return SetupMemories.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return SetupMemories()


def remember(family: str, spec: Any, path: Path | None = None) -> SetupMemory:
    """Store what `spec` (a SessionSpec just started) chose for `family`; returns the memory."""
    human = next((seat for seat, kind in spec.seats.items() if kind == "human"), None)
    memory = SetupMemory(
        mode=f"play_{human}" if human else "watch",
        models={seat: spec.roles.for_role(seat).model for seat, kind in spec.seats.items() if kind == "model"},
        api_base=safe_api_base(next((spec.roles.for_role(s).api_base for s in spec.seats
                                     if spec.roles.for_role(s).api_base), None)),
        settings=json.loads(json.dumps(spec.settings, default=str)),
        temperatures={seat: spec.roles.for_role(seat).temperature for seat, kind in spec.seats.items() if kind == "model"},
    )
    path = path or memory_file()
    memories = load_memories(path)
    memories.families[family] = memory
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(memories.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only config folder costs only the convenience
    return memory
