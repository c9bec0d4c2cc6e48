"""ProactiveEval's protocol settings (docs/protocols.md, ProactiveEval): the defaults live here once;
setup screens, `run` flags and the run record all read them from this model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator


class ProactiveEvalSettings(BaseModel):
    max_turns: int = Field(default=6, ge=1, le=50)
    memory_turns: int = Field(default=3, ge=1, le=50)
    agreeableness: Literal["low", "medium", "high"] = "medium"
    planning: bool = True
    guide_with: Literal["reference", "own_plan"] = "reference"
    live_judging: bool = False
    early_stop: bool | None = None
    """End the dialogue when the turn check says the target was reached. None (the default) means
    on, except when the judge is the embedded model: the 135M judge declares the target reached
    at turn 1, so an offline demo would show one turn. The session records the value it used."""
    seed: int | None = None
    without_target: bool = Field(default=False, description=(
        "the paper's 'without target' ablation (§ Effects of Target, Table 3): the agent guides with no target "
        "and no steps in its prompt, only the user information and the trigger; the turn checks and the "
        "guidance judge still judge against the reference target. Off: the paper's main protocol."))
    """Off by default (the paper's main results give the agent its target); on, a labelled deviation."""

    @model_validator(mode="after")
    def _one_target(self) -> "ProactiveEvalSettings":
        if self.without_target and self.guide_with == "own_plan":
            raise ValueError("without_target (--no-target) gives the agent no target, so it cannot guide with "
                             "its own plan (--own-plan): choose one")
        return self
