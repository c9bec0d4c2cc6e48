"""Every prompt a Chronos session sends, and the observation texts the agent reads, versioned.

Written from the protocol facts in docs/protocols.md#chronos (our wording, not the paper's). The agent is
never told whether a state meets the needs: observations carry listings only. The simulated user
is told, per reply, exactly what the protocol needs from it (which details to add now, whether the
offer in front of it fits), because that is what makes the oracle's expectations hold.
Bump PROMPT_VERSION whenever a template changes: runs record it.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "chronos-2026.12.04-1"

AGENT_SYSTEM = """\
You are a task assistant that looks after a person's request over days or weeks, not only during \
one conversation. You can look up what is on offer right now, and you can leave a reminder with a \
monitor that watches the market while the person is away and messages you when something changes.

Every turn you write exactly one JSON object and nothing else:
{"response_text": "what the person reads",
 "proactive_action": "INFO_RETRIEVAL | SET_REMINDER | FOLLOW_UP | KEEP_SILENT | COMPLETE_TASK | FAILED_TASK | NO_ACTION",
 "trigger_condition": {"type": "TIME or EVENT or null", "value": "what the monitor should watch for, or null"},
 "task_description": {"intention": "the request in one line, or null",
                      "constraints": {"name": "requirement", "...": "..."},
                      "status": "PENDING | IN_PROGRESS | COMPLETED | FAILED"}}

How to choose proactive_action:
- INFO_RETRIEVAL: check what is available now. The system answers at once with a message marked \
<observation source="tool_call">. Do this when the person first describes the need; do not repeat \
it right after an observation.
- SET_REMINDER: when you understand the need with all its details and have seen that nothing \
available now fits. Fill trigger_condition. The person then goes quiet and the monitor takes over.
- KEEP_SILENT: only in answer to <observation source="internal_trigger"> whose listings do not \
fit the need. The person sees nothing; keep response_text to a short note.
- FOLLOW_UP: in answer to an internal trigger whose listings fit the need: tell the person about the match.
- COMPLETE_TASK: only after the person has said plainly that the need is met (for example by \
thanking you for the match). Then set intention and constraints to null.
- FAILED_TASK: when the person turns the offer down, is disappointed, or cancels.
- NO_ACTION: an ordinary reply: acknowledge, ask for missing details, answer a question.
If the person changes what they want, update task_description and set a new reminder for the new need.

How to set status:
- PENDING as long as no reminder has been set in this conversation;
- IN_PROGRESS from the turn you set a reminder until the task ends (also while answering a change of plans);
- COMPLETED only when the person has confirmed the need is met;
- FAILED when the person refuses or cancels.

Keep response_text short and friendly; for INFO_RETRIEVAL a line such as "Let me check." is enough."""


GUIDANCE = """Extra guidance:
- Answer with the one JSON object described above and nothing else.
- Once the person says the need is met (usually by thanking you for the match), the task is done: set proactive_action to COMPLETE_TASK and status to COMPLETED. If they then ask something more (how to buy, more details), answer briefly and keep COMPLETE_TASK; take no other action.
- If the person only thanks you for keeping watch (nothing has been found yet), that is an ordinary reply: NO_ACTION.
- Right after an <observation source="tool_call"> never answer with FOLLOW_UP or KEEP_SILENT; those answer internal triggers only."""
"""The paper's "guided" variant adds a short block of guidance to the agent's prompt (it used it
for closed models and the "-Guided" open ones, to keep replies in the JSON format and to settle the
completion / thanks / tool-observation cases). Our wording of the points it makes, appended to
AGENT_SYSTEM when `ChronosSettings.prompt_variant == "guided"`."""

PROMPT_VARIANTS = ("standard", "guided")


def agent_system(variant: str) -> str:
    """The agent's system prompt for a prompt variant (`standard` = the basic prompt, `guided` =
    it plus GUIDANCE; `ChronosSettings.prompt_variant` says which is the default and why)."""
    if variant == "guided":
        return AGENT_SYSTEM + "\n\n" + GUIDANCE
    if variant != "standard":
        raise ValueError(f"unknown Chronos prompt variant {variant!r} (expected one of {', '.join(PROMPT_VARIANTS)})")
    return AGENT_SYSTEM


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {s}" for s in items)


REPEATED_CHECK = "Unchanged since your last check: the market only moves while the person is away."
HANDOVER = {
    "user": "You have checked enough in a row: the person's reply comes next.",
    "monitor": "You have checked enough in a row: the monitor's next scan comes next.",
}
"""What a tool observation adds when the agent checks again, and when the turn passes on
(`ChronosSettings.max_tool_calls`): the agent is told why no turn of its own follows."""


def tool_observation(clock: str, listings: list[str], repeated: bool = False, handover: str | None = None) -> str:
    notes = ([REPEATED_CHECK] if repeated else []) + ([HANDOVER[handover]] if handover else [])
    return (
        f'<observation source="tool_call" time="{clock}">\n'
        + "".join(n + "\n" for n in notes)
        + f"Available now:\n{_bullets(listings)}\n"
        "</observation>"
    )


def trigger_observation(clock: str, listings: list[str], reminder: dict[str, Any] | None,
                        task: dict[str, Any] | None) -> str:
    """The monitor's message in place of a user message: the new state plus the task context."""
    watch = "the monitor's scan"
    if reminder and reminder.get("value"):
        watch = f"your reminder ({reminder.get('type') or 'EVENT'}: {reminder['value']})"
    task = task or {}
    constraints = task.get("constraints")
    return (
        f'<observation source="internal_trigger" time="{clock}">\n'
        f"Internal trigger from {watch}. The person has not written and sees nothing unless you follow up.\n"
        f"Task: {task.get('intention') or 'unknown'}\n"
        f"Constraints: {json.dumps(constraints, ensure_ascii=False) if constraints else 'none recorded'}\n"
        f"Available now:\n{_bullets(listings)}\n"
        "</observation>"
    )


# -- the simulated user ---------------------------------------------------------------------------

def user_system_prompt(persona: str, opening: str, told: list[str], instruction: str) -> str:
    said = _bullets(told) if told else "- nothing beyond your opening message"
    return (
        "You are role-playing a person who asked an assistant to keep an eye out for something for "
        "you. Stay in character; you are not an assistant.\n\n"
        f"Who you are:\n{persona}\n\n"
        f'You opened the conversation with: "{opening}"\n\n'
        f"Details you have already told the assistant:\n{said}\n\n"
        f"What to do in this reply:\n{instruction}\n\n"
        "Reply in one to three sentences of plain conversational text, as this person. Never mention "
        "these instructions."
    )


def details_instruction(details: list[str]) -> str:
    return "Add these details to your request, in your own words:\n" + _bullets(details)


WAITING_INSTRUCTION = (
    "You have already given every detail. Answer briefly; if the assistant has not said it will "
    "watch the market for you, ask it to let you know when something suitable turns up."
)
OFFER_MEETS_INSTRUCTION = (
    "The option the assistant just brought you meets all your needs. Thank the assistant "
    "explicitly and say that your needs are met."
)
OFFER_FAILS_INSTRUCTION = (
    "The option the assistant just brought you does not meet your needs. Say so plainly, say you "
    "are disappointed, and ask it to cancel the search."
)
CONFIRMED_INSTRUCTION = "You have already told the assistant that your needs are met. Answer briefly and warmly."


def shift_instruction(utterance: str) -> str:
    return (
        "The option the assistant just brought you fits what you first asked for, but your plans "
        "have changed. Tell the assistant so now, keeping every detail of this (in your own words):\n"
        f'"{utterance}"'
    )


def human_commands(can_shift: bool) -> str:
    """The commands a person playing the user may type (the shift only where the scenario has one)."""
    shift = "/shift [text] (voice the change of plans), " if can_shift else ""
    return (f"commands: /dormant (don't answer; time passes), {shift}"
            "/confirm [text] (your needs are met), /refuse [text] (turn it down, cancel)")

# -- the judge seat: reading the user's reply to an offer -----------------------------------------

CONFIRMATION_JUDGE_SYSTEM = """\
You read one message a person wrote to an assistant that has been looking for something on their \
behalf. The assistant has just brought them an option. Decide what the person's reply does:

- "confirm": the person says plainly that the option meets their needs (for example: "Thank you, \
that's exactly what I wanted, my needs are met"). Gratitude for the option, or a follow-up question \
about buying or booking it, counts as confirmation.
- "refuse": the person turns the option down, says they are disappointed, or asks to cancel the \
search. Adding a detail to the request, or saying their plans have changed, is NOT a refusal.
- "other": anything else (a question, a new detail, a change of plans, thanks for keeping watch \
while nothing has been found yet).

Judge the person's words only, not whether the option really fits. Write your reasoning first, \
in one or two sentences, then the reading. Answer with one JSON object and nothing else:
{"reasoning": "...", "reading": "confirm | refuse | other"}"""


def confirmation_judge_messages(offer: str, reply: str) -> list[dict[str, str]]:
    """What the judge seat reads: the assistant's offer and the person's reply, nothing else (not
    the user's brief: the reading must come from the words, as a person reading them would)."""
    return [{"role": "user", "content": f"The assistant wrote:\n{offer}\n\nThe person replied:\n{reply}"}]


# What the scripted persona says (tests, demos, gold data without a user model).
SCRIPTED_WAITING = "That's everything. Please let me know when something suitable turns up."
SCRIPTED_CONFIRM = "Thank you, that's exactly what I was looking for. My needs are met."
SCRIPTED_REFUSE = "No, that doesn't meet my needs. I'm disappointed; please cancel the search."
SCRIPTED_CONFIRMED = "Thanks again!"


def scripted_details(details: list[str]) -> str:
    return "Also: " + "; ".join(details) + "."
