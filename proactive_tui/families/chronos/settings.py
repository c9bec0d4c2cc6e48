"""Chronos's protocol settings (docs/protocols.md, Chronos): the defaults live here once; setup
screens, `run` flags and the run record all read them from this model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.deviations import Deviation


class ChronosSettings(BaseModel):
    """A setting marked `Deviation` labels every number of a run whose value is not the default
    (the protocol's; `core.deviations`). The monitor's wall-clock pace is not one."""

    max_turns: Annotated[int | None, Deviation("agent turns capped at {value} (the scenario's limit otherwise)")] = Field(
        default=None, ge=1, le=200)
    """Agent turns allowed; None uses the scenario's turn_limit (a lower value cuts a session short).
    Only turns that answer the user or the monitor count: a turn answering the agent's own
    INFO_RETRIEVAL continues the same exchange (bounded by `max_tool_calls`), so a looping agent
    cannot spend a person's turns without them ever being asked."""
    monitor_delay_s: float | None = Field(default=0.0, ge=0.0, le=3600.0)
    """Wall-clock seconds between monitor scans while the user is dormant; None waits for fast_forward()."""
    max_tool_calls: Annotated[int, Deviation("{value} retrievals in a row (default {default})")] = Field(
        default=2, ge=1, le=20)
    """INFO_RETRIEVALs in a row (no user message or monitor scan in between) after which the turn
    passes on. The last one is still answered with its observation (marked unchanged: the market
    only moves while the user is dormant), but the user's reply (or, while the user is dormant, the
    monitor's next scan) comes next instead of another agent turn. 2 keeps the protocol's own flow
    (check, then report) and stops an agent that keeps checking, such as the small local model."""
    prompt_variant: Annotated[Literal["standard", "guided"], Deviation("agent prompt {value} (default {default})")] = Field(default="guided", description=(
        "the agent's prompt: 'guided' (the default) is the basic prompt with the paper's extra guidance "
        "(Appendix D.2), with which the paper reports every closed model and its '-Guided' open models; "
        "'standard' is the basic prompt alone (Appendix D.1), which the paper gives only base open "
        "models and their fine-tuned versions: a labelled setting for those."))
    """Guided by default (paper § 4.2, "For close-source models ... we uniformly add
    additional guidance (see Appendix D.2) content to the basic prompt"): the paper's results for
    the models a person most often brings (closed ones, through an API) come from it. Recorded with
    the run's settings, so results say which prompt they came from; a record without the setting
    ran the basic prompt (the default before issue 30)."""
    user_simulator: Annotated[Literal["model", "scripted"], Deviation("{value} user (the paper's: a model)")] = "model"
    """Who plays the simulated user when no person does: the user seat's model, briefed turn by
    turn as the paper's user simulator is (persona, constraints revealed over turns, the intention
    shift, explicit confirmation of a fitting offer), or the scripted persona (fixed words, exactly
    what the brief says; no model call): the offline fallback, also what `eval chronos --reference`
    seats."""
    confirmation_reader: Annotated[Literal["judge", "keywords"],
                                   Deviation("confirmations read by {value} (the paper's: a model)")] = "judge"
    """What decides whether the user's reply to an offer is the explicit confirmation the paper's
    COMPLETE_TASK needs (or a refusal, or neither): the judge seat's model reading the offer and the
    reply, or the documented keyword check (`oracle.classify_reply`; no model call). The judge is
    the default, as a model reads the user in the paper; the keyword check is the offline fallback
    and also reads a reply whenever the judge gives no usable reading (each turn records which
    reader produced it). A person's /confirm, /refuse and /shift commands need no reader."""
