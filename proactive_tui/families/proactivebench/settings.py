"""ProactiveBench's protocol settings (docs/protocols.md, ProactiveBench): the defaults live here
once; setup screens, `run` flags and the run record all read them from this model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ProactiveBenchSettings(BaseModel):
    retries: int = Field(default=0, ge=0, le=5)
    candidates: Literal[1, 3] = 1
    feedback: bool = True
    max_events: int | None = Field(default=None, ge=1)
