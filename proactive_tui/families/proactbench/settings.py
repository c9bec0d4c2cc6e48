"""ProactBench's protocol settings (docs/protocols.md#proactbench): the defaults are upstream's
(`proactbench/evaluation/offline.py` and `online.py`), and live here once.

Seats: the agent seat is the model under test in both protocols. Offline (the default, upstream's
offline evaluation) the judge seat is the neutral-mode judge and the user seat is not used: the
user's messages are the recorded ones. Online (the three-agent loop upstream curated the corpus
with) the judge seat is the Planner and the user seat is the User Agent, which also scores each
trigger reply (as upstream: the score of turn t comes with the user's message of turn t+1).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.deviations import Deviation

Protocol = Literal["offline", "online"]

PLANNER_TEMPERATURE = 0.1
USER_AGENT_TEMPERATURE = 0.7
JUDGE_TEMPERATURE = 0.7
AGENT_TEMPERATURE = 0.7
AGENT_MAX_TOKENS = 8192
"""Upstream's generation settings for the model under test (temperature 0.7, 8,192 new tokens,
top_p 1.0) and for the Planner, the User Agent and the judge."""


class ProactBenchSettings(BaseModel):
    protocol: Annotated[Protocol, Deviation("online protocol (the three-agent loop; upstream scores models "
                                            "offline on the released dialogues)")] = "offline"
    max_triggers: Annotated[int | None, Deviation("first {value} trigger points only (upstream: all)")] = Field(
        default=None, ge=1, le=6)
    """Offline: score only the dialogue's first N trigger points (a bound for a quick look)."""
    max_turns: Annotated[int, Deviation("{value} turns at most (upstream's online: {default})")] = Field(
        default=10, ge=1, le=50)
    """Online: turns at most (upstream's `num_turns`)."""
    system_prompt: Annotated[str, Deviation("agent system prompt set (upstream's default: none)")] = ""
    """The optional system prompt of the model under test (empty by default, as upstream)."""
    seed: int | None = None
