"""What the ProactiveBench agent and its user-judge return, read as upstream reads them
(docs/protocols.md#proactivebench).

The agent. Upstream's evaluation (`extrat_pred` in thunlp/ProactiveAgent `eval/script.py`,
Apache-2.0) takes the ```json fenced block if there is one, `json.loads` it, and reads only
`Proactive Task`: `ret.get("Proactive Task", None) is None` (the key missing, or JSON null) or
`== "null"` (that exact string) means no proposal; anything else is a proposal, and
`calculate_scores` in `eval/calculate_agent_performance.py` counts it as one (`pred is not None`).
So "None", "none", "" or "no task" are proposals here too (`is_no_proposal`): a model that writes
them has proposed that text, and the judge sees it. A "null" Response is None, as upstream.

Our tolerance adds only ways of finding the object and its keys (other fences and chatter around
the JSON, key case / spaces / `_` / `-`), never other spellings of "no proposal". One deviation,
on purpose: a JSON object with none of the four keys the prompt asks for (`{"foo": 1}`, `{}`) is an
agent format error (`AgentFormatError`), not a silent "no proposal" as upstream's `ret.get`
default would make it. Like a reply that is not JSON (upstream's `json.loads` raising), it is asked
for again and, still unusable, leaves the event uncounted, with the reason recorded.

`read_agent_reply` also returns the parsed object itself: upstream writes `json.dumps(result)`
back into the agent's history, so the agent sees its own reply as parsed.

The judge. Upstream reads `json5.loads(reply)["judgement"] == "accepted"`; `read_verdict`
accepts that and more (booleans, yes/no, a "judgement" line in prose), and needs no "thought".

A person judging types a letter or a word; `parse_verdict_text` turns it into the same verdict
shape the model judge returns, plus "skipped" (the event is not counted).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from proactive_tui.llm.jsonreply import NoJSON, extract_json

TASK_KEY: Final = "Proactive Task"  # Final: a field alias must be a literal to the type checker
EXPECTED_KEYS = ("Purpose", "Thoughts", TASK_KEY, "Response")
"""The keys the system prompt asks for (upstream's `<Format>`); a reply needs at least one."""
_UPSTREAM_FENCE = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
"""Upstream's fence pattern (`extrat_pred`)."""


def _squash(key: str) -> str:
    return re.sub(r"[\s_\-]", "", key).lower()


def is_no_proposal(value: Any) -> bool:
    """Upstream's test, exactly (`extrat_pred`, eval/script.py): None (a missing key or JSON null)
    or the string "null". Any other value, "None" and "" included, is a proposal."""
    return value is None or value == "null"


class AgentFormatError(ValueError):
    """An agent reply that is a JSON object but has none of the expected keys: a format error,
    not "no proposal" (see the module doc)."""


_CANONICAL = {"purpose": "Purpose", "thoughts": "Thoughts", "thought": "Thoughts", "proactivetask": TASK_KEY,
              "proactivetasks": TASK_KEY, "response": "Response"}
"""Our spelling tolerance: squashed key -> upstream's key (the plural is what a model writes when
asked for up to three tasks)."""


def canonical_reply(data: dict[str, Any]) -> dict[str, Any]:
    """The reply with upstream's key spelling, in the order the model wrote it (the first of two
    spellings of one key wins), and null read as upstream reads it (`is_no_proposal`): a missing
    `Proactive Task` is added as None (at the end, as `ret["Proactive Task"] = None` does), a
    "null" one and a "null" `Response` become None. Other keys and values are kept as written.
    AgentFormatError when none of the expected keys is there."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        canonical = _CANONICAL.get(_squash(str(key)), key)
        if canonical not in out:
            out[canonical] = value
    if not any(key in out for key in EXPECTED_KEYS):
        found = ", ".join(repr(str(k)) for k in list(out)[:5]) or "no keys at all"
        raise AgentFormatError(f"the reply has none of the expected keys "
                               f"({', '.join(EXPECTED_KEYS)}), only {found}")
    if is_no_proposal(out.get(TASK_KEY)):
        out[TASK_KEY] = None
    if "Response" in out and is_no_proposal(out["Response"]):
        out["Response"] = None
    return out


class _AgentReply(BaseModel):
    """Shared tolerance: keys matched ignoring case, spaces, `_` and `-`; the string "null" is
    null. Only `Proactive Task` matters; any key may be missing, but not all of them."""

    model_config = ConfigDict(populate_by_name=True)

    # Subclasses declare "Proactive Task" and then "Response", so the JSON schema (and a
    # grammar-constrained model) keeps the spec's key order.
    purpose: str = Field(default="", alias="Purpose")
    thoughts: str = Field(default="", alias="Thoughts")

    @model_validator(mode="before")
    @classmethod
    def _canonical_keys(cls, data: Any) -> Any:
        # field names (`proactive_task`) are among the spellings canonical_reply knows
        return canonical_reply(data) if isinstance(data, dict) else data

    @field_validator("purpose", "thoughts", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    @field_validator("response", mode="before", check_fields=False)
    @classmethod
    def _null_response(cls, value: Any) -> Any:
        if is_no_proposal(value):
            return None
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    @property
    def tasks(self) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def upstream_dict(self) -> dict[str, Any]:
        """The reply with upstream's key spelling (for replies that were not JSON: a person's line)."""
        return self.model_dump(by_alias=True)

    @classmethod
    def asking_schema(cls) -> dict[str, Any]:
        """The JSON schema a grammar-constrained model is held to: all four keys, as the system
        prompt asks (reading never requires them: `model_json_schema` has none required)."""
        schema = cls.model_json_schema()
        schema["required"] = ["Purpose", "Thoughts", TASK_KEY, "Response"]
        return schema


class ProposalReply(_AgentReply):
    """One proposal per event: a task, or null when the user needs no help."""

    proactive_task: str | None = Field(default=None, alias=TASK_KEY)
    response: str | None = Field(default=None, alias="Response")

    @field_validator("proactive_task", mode="before")
    @classmethod
    def _null_task(cls, value: Any) -> Any:
        if is_no_proposal(value):
            return None
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
            return value[0]  # a one-item list is that task
        if isinstance(value, list) and len(value) > 1:
            raise ValueError("give one task (a string) or null, not a list of several")
        # Upstream counts any value but None/"null" as a proposal (`[]`, `0`, an object too):
        # the judge sees it as written.
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    @property
    def tasks(self) -> list[str]:
        # `is not None`, as upstream's `calculate_scores`: an empty string is a proposal too
        return [] if self.proactive_task is None else [self.proactive_task]


class CandidatesReply(_AgentReply):
    """Up to three candidate tasks per event (the paper's three-candidate ablation), or null."""

    proactive_task: list[str] | None = Field(default=None, alias=TASK_KEY, max_length=3)
    response: str | None = Field(default=None, alias="Response")

    @field_validator("proactive_task", mode="before")
    @classmethod
    def _candidates(cls, value: Any) -> Any:
        # Upstream's test per candidate: None and "null" are not candidates, anything else is
        # one; an empty list holds no candidate, so it is no proposal.
        if is_no_proposal(value):
            return None
        if isinstance(value, list):
            items = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                     for v in value if not is_no_proposal(v)]
            return items or None
        return [value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)]

    @property
    def tasks(self) -> list[str]:
        return list(self.proactive_task or [])


@dataclass
class AgentReading:
    """A usable agent reply: the typed reply and the parsed object (upstream's `result`)."""

    reply: ProposalReply | CandidatesReply
    data: dict[str, Any]


def _json_object(text: str) -> Any:
    """Upstream's reading first (the ```json block, else the whole text, through json.loads),
    then ours (any fence, chatter around the JSON). Lone surrogates the JSON spells (`"\\ud800"`)
    become U+FFFD (`textsafe.scrub_deep`): the reply text was scrubbed where it entered, but
    parsing it makes them anew, and one left in a proposal made `run --out` and the record
    unwritable as UTF-8."""
    from proactive_tui.textsafe import scrub_deep

    source = text
    if "```json" in text:
        found = _UPSTREAM_FENCE.findall(text)
        if found:
            source = found[0]
    try:
        return scrub_deep(json.loads(source))
    except (json.JSONDecodeError, TypeError):
        return extract_json(text)  # scrubbed there


def read_agent_reply(text: str, candidates: int = 1) -> AgentReading:
    """Read one agent reply as upstream does (see the module doc); ValueError when unusable: no
    JSON object, an object with none of the expected keys (AgentFormatError), or a
    `Proactive Task` that is not a task (a list of several with one candidate)."""
    data = _json_object(text)
    if not isinstance(data, dict):
        raise NoJSON("the reply is JSON but not an object")
    data = canonical_reply(data)
    schema = CandidatesReply if candidates > 1 else ProposalReply
    return AgentReading(reply=schema.model_validate(data), data=data)


class JudgeVerdict(BaseModel):
    """The user-judge's answer: reasoning first, then accepted or rejected."""

    thought: str = ""
    judgement: Literal["accepted", "rejected"]

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out: dict[Any, Any] = {}  # keys as given: a caller's dict may hold any
        for key, value in data.items():
            name = {"thought": "thought", "thoughts": "thought", "judgement": "judgement",
                    "judgment": "judgement"}.get(_squash(str(key)), key)
            out.setdefault(name, value)
        return out

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


_JUDGEMENT_LINE = re.compile(r'"judge?ment"\s*:\s*"(accepted|rejected)"', re.IGNORECASE)


def read_verdict(text: str) -> JudgeVerdict:
    """The judge's reply as a verdict (upstream: `json5.loads(res)["judgement"] == "accepted"`;
    its reward-model check falls back to a `"judgement": "accepted|rejected"` match in the text,
    and so do we). ValueError when there is no verdict in it."""
    try:
        return JudgeVerdict.model_validate(extract_json(text))
    except ValueError as exc:
        found = _JUDGEMENT_LINE.findall(text)
        if found:
            return JudgeVerdict(judgement=found[-1].lower())
        raise exc


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
