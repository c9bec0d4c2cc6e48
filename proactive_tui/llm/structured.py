"""How a structured reply is asked for, negotiated per server and remembered.

Servers that call themselves OpenAI-compatible disagree on `response_format` (checked against the
real servers; the fake server's quirk modes in `proactive_tui.testing.fake_openai` cite sources):
llama-cpp-python's server answers `json_schema` with HTTP 500 ("response_format.type: Input should
be 'text' or 'json_object'") but constrains `{"type": "json_object", "schema": ...}` to the schema;
LM Studio answers `json_object` with HTTP 400 ("'response_format.type' must be 'json_schema' or
'text'"); Ollama takes both (its `json_object` is any JSON, the schema ignored). So `auto` tries
json_schema, then json_object with the schema, then the schema in the prompt alone; a rejection
(a 4xx/5xx naming response_format, see `errors.names_response_format`) moves to the next mode at
once, never retried. What worked is remembered per api base for the process and written beside
the config file (`structured_modes.json`), so the next run starts with the mode that works.

The memory key is the api base without credentials, query or fragment (`redacted_base`): keys
never reach the file, even when someone put one in a URL.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field, ValidationError

from proactive_tui.llm.settings import STRUCTURED_MODES, ModelSettings, StructuredMode

MEMORY_FILE = "structured_modes.json"
log = logging.getLogger("proactive_tui.llm")


def redacted_base(api_base: str) -> str:
    """`http://user:key@host:8080/v1/?api-key=x` -> `http://host:8080/v1`: the server, no secrets
    (`redact.public_api_base`), normalised (lower case, no trailing slash) as a memory key."""
    from proactive_tui.redact import public_api_base

    parts = urlsplit(public_api_base(api_base) or "")
    if not parts.scheme:
        return "(unparsable api base)"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), "", ""))


def memory_key(settings: ModelSettings) -> str:
    """Per api base for self-hosted servers (the server, not the model, validates response_format);
    per model string for hosted providers (support differs by model)."""
    return redacted_base(settings.api_base) if settings.api_base else settings.model


def response_format(mode: StructuredMode, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The request's `response_format` for a mode; None for `prompt` (nothing sent)."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class LearnedMode(BaseModel):
    mode: StructuredMode
    learned_at: datetime
    rejected: list[StructuredMode] = Field(default_factory=list)
    """The modes this server refused on the way (what a person reads to see why)."""


class MemoryFile(BaseModel):
    """`structured_modes.json`: which mode worked, per server."""

    servers: dict[str, LearnedMode] = Field(default_factory=dict)


class ModeMemory:
    """What worked per server, in process and (best effort) in `path`; thread-safe."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._data = MemoryFile()
        if path is not None and path.exists():
            try:
                self._data = MemoryFile.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, ValidationError) as exc:
                log.info("ignoring %s: %s", path, exc)

    def get(self, key: str) -> StructuredMode | None:
        with self._lock:
            entry = self._data.servers.get(key)
            return entry.mode if entry else None

    def entry(self, key: str) -> LearnedMode | None:
        with self._lock:
            return self._data.servers.get(key)

    def learn(self, key: str, mode: StructuredMode, rejected: list[StructuredMode]) -> None:
        with self._lock:
            known = self._data.servers.get(key)
            if known is not None and known.mode == mode and not rejected:
                return
            self._data.servers[key] = LearnedMode(
                mode=mode, learned_at=datetime.now(timezone.utc), rejected=rejected or (known.rejected if known else []),
            )
            self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".json.tmp")
            tmp.write_text(self._data.model_dump_json(indent=2), encoding="utf-8")
            tmp.replace(self.path)
        except OSError as exc:  # a read-only config dir costs the memory across runs, never the call
            log.info("could not write %s: %s", self.path, exc)


_memories: dict[str, ModeMemory] = {}
_memories_lock = threading.Lock()


def memory_path() -> Path:
    from proactive_tui.paths import config_file

    return config_file().parent / MEMORY_FILE


def shared_memory() -> ModeMemory:
    """One memory per config location, so every gateway in the process shares what was learned
    (and tests, each with its own config dir, never see each other's servers)."""
    path = memory_path()
    with _memories_lock:
        memory = _memories.get(str(path))
        if memory is None:
            memory = _memories[str(path)] = ModeMemory(path)
        return memory


def modes_to_try(settings: ModelSettings, memory: ModeMemory, schema_supported: bool) -> list[StructuredMode]:
    """The modes a structured call tries, in order.

    A forced mode is the only one. The embedded model's handler takes json_schema. Otherwise start
    at the remembered mode (never above it: that one was refused) or at json_schema for a server
    with an api base; a hosted model litellm says has no schema support gets the prompt only.
    """
    if settings.structured != "auto":
        return [settings.structured]
    if settings.is_local:
        return ["json_schema"]
    remembered = memory.get(memory_key(settings))
    if remembered is not None:
        return list(STRUCTURED_MODES[STRUCTURED_MODES.index(remembered):])
    if settings.api_base or schema_supported:
        return list(STRUCTURED_MODES)
    return ["prompt"]


__all__ = [
    "MEMORY_FILE", "LearnedMode", "MemoryFile", "ModeMemory", "memory_key", "memory_path",
    "modes_to_try", "redacted_base", "response_format", "shared_memory",
]
