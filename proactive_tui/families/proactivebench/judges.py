"""What the ProactiveBench agent and its user-judge return, parsed tolerantly (docs/protocols.md#proactivebench).

The agent answers `{"Purpose", "Thoughts", "Proactive Task", "Response"}` with the keys spelled
exactly so; models also write `proactive_task`, `"null"` for null and wrap the JSON in a code
fence, and none of that should cost a re-ask. What is still unusable (no JSON, a key missing)
fails validation, and the gateway re-asks with the error.

A person judging types a letter or a word; `parse_verdict_text` turns it into the same verdict
shape the model judge returns, plus "skipped" (the event is not counted).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NULLISH = {"", "null", "none", "nil", "n/a", "no task", "no proactive task"}


def _squash(key: str) -> str:
    return re.sub(r"[\s_\-]", "", key).lower()


def is_nullish(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().strip("`'\"").strip().lower() in NULLISH)


class _AgentReply(BaseModel):
    """Shared tolerance: keys matched ignoring case, spaces, `_` and `-`; "null" strings are null."""

    model_config = ConfigDict(populate_by_name=True)

    # Subclasses declare "Proactive Task" and then "Response", so the JSON schema (and a
    # grammar-constrained model) keeps the spec's key order.
    purpose: str = Field(alias="Purpose")
    thoughts: str = Field(alias="Thoughts")

    @model_validator(mode="before")
    @classmethod
    def _canonical_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        wanted = {}
        for name, field in cls.model_fields.items():
            wanted[_squash(field.alias or name)] = field.alias or name
            wanted[_squash(name)] = field.alias or name
        # The plural is what a model writes when asked for up to three tasks.
        if "proactivetask" in wanted:
            wanted.setdefault("proactivetasks", wanted["proactivetask"])
        out: dict[str, Any] = {}
        for key, value in data.items():
            canonical = wanted.get(_squash(str(key)), key)
            if canonical not in out:
                out[canonical] = value
        return out

    @field_validator("purpose", "thoughts", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("response", mode="before", check_fields=False)
    @classmethod
    def _null_response(cls, value: Any) -> Any:
        return None if is_nullish(value) else value

    @property
    def tasks(self) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def upstream_dict(self) -> dict[str, Any]:
        """The reply with upstream's key spelling (what the agent sees of its own earlier replies)."""
        return self.model_dump(by_alias=True)


class ProposalReply(_AgentReply):
    """One proposal per event: a task, or null when the user needs no help."""

    proactive_task: str | None = Field(alias="Proactive Task")
    response: str | None = Field(alias="Response")

    @field_validator("proactive_task", mode="before")
    @classmethod
    def _null_task(cls, value: Any) -> Any:
        if isinstance(value, list):  # a one-item list is a task; more is not what was asked
            items = [v for v in value if not is_nullish(v)]
            if len(items) > 1:
                raise ValueError("give one task (a string) or null, not a list")
            value = items[0] if items else None
        return None if is_nullish(value) else value

    @property
    def tasks(self) -> list[str]:
        return [self.proactive_task] if self.proactive_task else []


class CandidatesReply(_AgentReply):
    """Up to three candidate tasks per event (the paper's three-candidate ablation), or null."""

    proactive_task: list[str] | None = Field(alias="Proactive Task", max_length=3)
    response: str | None = Field(alias="Response")

    @field_validator("proactive_task", mode="before")
    @classmethod
    def _candidates(cls, value: Any) -> Any:
        if is_nullish(value):
            return None
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            items = [str(v).strip() for v in value if not is_nullish(v)]
            return items or None
        return value

    @property
    def tasks(self) -> list[str]:
        return list(self.proactive_task or [])


class JudgeVerdict(BaseModel):
    """The user-judge's answer: reasoning first, then accepted or rejected."""

    thought: str
    judgement: Literal["accepted", "rejected"]

    @field_validator("judgement", mode="before")
    @classmethod
    def _judgement(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "accepted" if value else "rejected"
        if isinstance(value, str):
            word = value.strip().lower()
            if word in ("accept", "accepted", "yes", "true"):
                return "accepted"
            if word in ("reject", "rejected", "no", "false"):
                return "rejected"
        return value

    @field_validator("thought", mode="before")
    @classmethod
    def _thought(cls, value: Any) -> Any:
        return "" if value is None else value


class HumanVerdict(BaseModel):
    """A person's verdict; "skipped" leaves the event out of the counts."""

    thought: str = ""
    judgement: Literal["accepted", "rejected", "skipped"]


_WORDS = {
    "a": "accepted", "accept": "accepted", "accepted": "accepted", "y": "accepted", "yes": "accepted",
    "r": "rejected", "reject": "rejected", "rejected": "rejected", "n": "rejected", "no": "rejected",
    "s": "skipped", "skip": "skipped", "skipped": "skipped", "i": "skipped", "ignore": "skipped", "ignored": "skipped",
}
HUMAN_CHOICES = "a = accept, r = reject, s = skip (optionally followed by a reason)"


def parse_verdict_text(text: str) -> HumanVerdict:
    """'a', 'accept', 'r too early', 's' ... -> a HumanVerdict; anything else raises ValueError."""
    stripped = text.strip()
    word, _, rest = stripped.partition(" ")
    judgement = _WORDS.get(word.lower().rstrip(":,.!"))
    if judgement is None:
        raise ValueError(f"{stripped!r} is not a verdict: type {HUMAN_CHOICES}")
    return HumanVerdict(judgement=judgement, thought=rest.strip())  # type: ignore[arg-type]
