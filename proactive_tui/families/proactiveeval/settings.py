"""ProactiveEval's protocol settings (docs/protocols.md, ProactiveEval): the defaults live here once;
setup screens, `run` flags and the run record all read them from this model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from proactive_tui.core.deviations import Deviation


class ProactiveEvalSettings(BaseModel):
    """A setting marked `Deviation` labels every number of a run whose value is not the default
    (the paper's protocol; `core.deviations`). The agreeableness level is not one: the paper runs
    all three."""

    max_turns: Annotated[int, Deviation("max turns {value} (the paper's: {default})")] = Field(default=6, ge=1, le=50)
    memory_turns: Annotated[int, Deviation("memory of {value} turns (the paper's: {default})")] = Field(default=3, ge=1, le=50)
    agreeableness: Literal["low", "medium", "high"] = "medium"
    planning: Annotated[bool, Deviation("planning {value} (the paper plans first)")] = True
    guide_with: Annotated[Literal["reference", "own_plan"],
                          Deviation("guides with {value}, judged against it (the paper's: {default})")] = "reference"
    live_judging: bool = False
    early_stop: Annotated[bool | None, Deviation("early stop {value} (the paper stops at the target)",
                                                 same_as=(True,))] = None
    """End the dialogue when the turn check says the target was reached. None (the default) means
    on, except when the judge is the embedded model: the 135M judge declares the target reached
    at turn 1, so an offline demo would show one turn. The session records the value it used."""
    seed: int | None = None
    without_target: Annotated[bool, Deviation("without target {value} (the paper's ablation; its main protocol gives the target)")] = Field(
        default=False, description=(
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
