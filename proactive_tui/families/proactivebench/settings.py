"""ProactiveBench's protocol settings (docs/protocols.md#proactivebench): the defaults live here
once; setup screens, `run` flags and the run record all read them from this model.

The defaults are upstream's evaluation (thunlp/ProactiveAgent `eval/script.py`): one candidate,
no retries, and no verdict feedback: the agent's history holds the events and its own replies,
never the judge's verdict. `feedback` is the paper's ablation (GPT-4o F1 64.60 -> 56.00 with
it); a run with it on is labelled so wherever its numbers are shown (`ablation_label`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping

from pydantic import BaseModel, Field

from proactive_tui.core.deviations import Deviation

AGENT_TEMPERATURE = 0.5
"""The agent's temperature in upstream's evaluation: script.py asks `0.0 if attempt_number < 1
else 0.5`, and tenacity counts attempts from 1, so every call runs at 0.5. The paper's text we
have states no temperature. Used unless the user chose one (`agent_temperature`, or the agent's
model settings)."""

FEEDBACK_LABEL = "verdict feedback on (the paper's ablation; upstream's evaluation has none)"
FEEDBACK_HELP = ("show the agent the judge's verdict on its previous reply: the paper's ablation "
                 "(GPT-4o F1 64.60 -> 56.00 with it); off by default, as in upstream's evaluation")


class ProactiveBenchSettings(BaseModel):
    """A setting marked `Deviation` labels every number of a run whose value is not the default
    (upstream's evaluation; `core.deviations`)."""

    retries: Annotated[int, Deviation("{value} retries after a rejection (our option)")] = Field(default=0, ge=0, le=5)
    candidates: Annotated[Literal[1, 3], Deviation("{value} candidates (the paper's ablation)")] = 1
    feedback: Annotated[bool, Deviation("verdict feedback {value} (the paper's ablation)")] = False
    """The paper's verdict-feedback ablation; off in upstream's evaluation."""
    max_events: Annotated[int | None, Deviation("first {value} events of each trace only")] = Field(default=None, ge=1)
    agent_temperature: Annotated[float | None, Deviation("agent temperature {value} (upstream's: 0.5)",
                                                         same_as=(AGENT_TEMPERATURE,))] = Field(
        default=None, ge=0.0, le=2.0)
    """None: the agent model's own temperature if the user set one, else upstream's 0.5. A
    session records the temperature it used here (and in the agent's model settings)."""


def ablation_label(settings: Mapping[str, Any] | None) -> str:
    """"" for upstream's protocol, else what differs from it, for every place numbers are shown."""
    s = settings or {}
    parts = []
    if s.get("feedback"):
        parts.append("verdict feedback on (the paper's ablation)")
    if int(s.get("candidates") or 1) > 1:
        parts.append(f"{s.get('candidates')} candidates (the paper's ablation; counted per candidate)")
    if int(s.get("retries") or 0) > 0:
        parts.append(f"{s.get('retries')} retries after a rejection (our option)")
    return "; ".join(parts)


def ablation_tag(settings: Mapping[str, Any] | None) -> str:
    """The short form of `ablation_label` for one-line summaries ("feedback", "3 candidates")."""
    s = settings or {}
    parts = []
    if s.get("feedback"):
        parts.append("feedback")
    if int(s.get("candidates") or 1) > 1:
        parts.append(f"{s.get('candidates')} candidates")
    if int(s.get("retries") or 0) > 0:
        parts.append(f"retries {s.get('retries')}")
    return ", ".join(parts)
