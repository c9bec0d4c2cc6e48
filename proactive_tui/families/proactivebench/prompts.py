"""Prompts for ProactiveBench sessions: the proposing agent and the user-judge (reward model).

Written from the protocol facts in docs/protocols.md#proactivebench (our wording, not the paper's). The reply keys
("Purpose", "Thoughts", "Proactive Task", "Response" and "thought"/"judgement") are the spec's and
must not change; the text around them may. Bump PROMPT_VERSION whenever a template changes.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable

PROMPT_VERSION = "proposals-2026.12.01-1"

_KEYS_ONE = (
    '- "Purpose": what the person meant to do with their latest action;\n'
    '- "Thoughts": your reasoning about the activity so far and whether help would be welcome now;\n'
    '- "Proactive Task": one concrete task you offer to do for them, or null when they need no help;\n'
    '- "Response": the short message you would show them with the offer, or null when you offer nothing.'
)
_KEYS_THREE = (
    '- "Purpose": what the person meant to do with their latest action;\n'
    '- "Thoughts": your reasoning about the activity so far and whether help would be welcome now;\n'
    '- "Proactive Task": a list of up to three different tasks you could do for them, best first (they '
    "may take any one), or null when they need no help;\n"
    '- "Response": the short message you would show them with the offer, or null when you offer nothing.'
)


def agent_system_prompt(candidates: int = 1) -> str:
    return (
        "You are an assistant that watches what a person does on their computer and offers help "
        "before being asked. Events arrive one at a time, oldest first. After each one, decide "
        "whether the person could use your help right now.\n\n"
        "Answer every event with one JSON object with exactly these keys:\n"
        f"{_KEYS_THREE if candidates > 1 else _KEYS_ONE}\n\n"
        "Guidelines: every offer interrupts the person, so offer only when a task is clearly useful at "
        "this moment and follows from what the events show; when they are simply getting on with "
        "their work, stay quiet (null). Do not repeat an offer they already turned down. Mind the "
        "timestamps: a long pause, a repeated search or an error message can mean they are stuck."
    )


def format_time(raw: str) -> str:
    """Upstream times are unix seconds as text; show a readable UTC time beside the raw value."""
    try:
        moment = datetime.fromtimestamp(float(raw), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(raw)
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC ({raw})"


def event_message(index: int, time: str, event: str, feedback: str | None = None) -> str:
    """The agent's view of one new event, with the verdict on its previous reply when feedback is on."""
    head = f"{feedback}\n\n" if feedback else ""
    return (
        f"{head}Event {index}\nTime: {format_time(time)}\nEvent: {event}\n\n"
        "Decide whether to offer help now and reply with the JSON object."
    )


VERDICT_WORDS = {"accepted": "accepted", "rejected": "rejected", "skipped": "ignored"}


def feedback_note(judgement: str, thought: str = "", had_task: bool = True) -> str:
    """How the user's verdict on the agent's previous reply is reported back to it."""
    what = "your offer" if had_task else "your decision not to offer anything"
    note = f"(The user {VERDICT_WORDS.get(judgement, judgement)} {what} on the previous event"
    return note + (f": {thought.strip()})" if thought.strip() else ".)")


def retry_message(thought: str = "", had_task: bool = True) -> str:
    reason = f" Their reason: {thought.strip()}" if thought.strip() else ""
    what = "your offer" if had_task else "your decision to stay quiet"
    return (
        f"The user rejected {what}.{reason}\n"
        "Reconsider the same moment and reply again with the JSON object: propose something "
        "different, or null if you now think they need no help."
    )


JUDGE_SYSTEM = (
    "You are the person whose computer activity is listed below. An assistant that watches your "
    "activity has just offered to do a task for you, or has decided to stay quiet. Judge its "
    "decision as this person would, speaking in the first person.\n\n"
    "- If it offers a task: accept only if the task is useful to you right now and fits what you "
    "are doing; reject offers that are vague, off-topic, premature or not worth the interruption.\n"
    "- If it offers nothing (null): accept when you need no help at this moment; reject when you "
    "would have wanted help now.\n\n"
    'Reply with a JSON object: {"thought": your reasoning first, "judgement": "accepted" or "rejected"}.'
)


def judge_prompt(observations: Iterable[tuple[str, str]], task: str | None) -> str:
    """`observations` are (time, event) pairs up to and including the current event."""
    lines = [f"{i}. [{format_time(t)}] {e}" for i, (t, e) in enumerate(observations, 1)]
    proposal = f"The assistant offers: {task}" if task else "The assistant offers nothing (null): it thinks you need no help now."
    return (
        "Your activity so far, oldest first:\n" + "\n".join(lines) + f"\n\n{proposal}\n\n"
        "Give your judgement."
    )
