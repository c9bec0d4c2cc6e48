"""Chronos's protocol settings (docs/protocols.md, Chronos): the defaults live here once; setup
screens, `run` flags and the run record all read them from this model.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChronosSettings(BaseModel):
    max_turns: int | None = Field(default=None, ge=1, le=200)
    """Agent turns allowed; None uses the scenario's turn_limit (a lower value cuts a session short)."""
    monitor_delay_s: float | None = Field(default=0.0, ge=0.0, le=3600.0)
    """Wall-clock seconds between monitor scans while the user is dormant; None waits for fast_forward()."""
