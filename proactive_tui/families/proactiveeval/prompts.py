"""Every prompt the engine sends, in one place, versioned.

Written from the protocol facts in docs/protocols.md#proactiveeval (ours, not the papers' wording). Bump
PROMPT_VERSION whenever a template changes: each run records it, so scores from different prompt
versions are never silently compared.
"""

from __future__ import annotations

PROMPT_VERSION = "guidance-2026.11.29-1"

AGREEABLENESS = {
    "low": (
        "Your agreeableness is LOW: you are sceptical and guarded. Push back on suggestions, ask why, "
        "and only move if the assistant gives you a reason that fits your own situation."
    ),
    "medium": (
        "Your agreeableness is MEDIUM: you are open but not a pushover. Follow suggestions that make "
        "sense to you and question the ones that do not."
    ),
    "high": (
        "Your agreeableness is HIGH: you are warm and cooperative. You go along with sensible "
        "suggestions readily, though you still speak as yourself."
    ),
}


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))


def planning_prompt(user_information: str, trigger_factor: str) -> str:
    return (
        "You are a proactive assistant deciding whether and how to start a conversation.\n\n"
        f"What you know about the user:\n{user_information}\n\n"
        f"What just happened:\n{trigger_factor}\n\n"
        "Decide the single main goal you should help the user reach (target) and an ordered list "
        "of 3 to 5 concrete steps to get there (sub_targets). Return JSON with keys "
        '"target" (string) and "sub_targets" (list of strings).'
    )


def plan_judge_prompt(user_information: str, trigger_factor: str, target: str, sub_targets: list[str],
                      ref_target: str, ref_sub_targets: list[str]) -> str:
    return (
        "You grade how well an assistant planned a proactive intervention.\n\n"
        f"User information:\n{user_information}\n\nTrigger:\n{trigger_factor}\n\n"
        f"Reference target: {ref_target}\nReference steps:\n{_numbered(ref_sub_targets)}\n\n"
        f"Assistant's target: {target}\nAssistant's steps:\n{_numbered(sub_targets)}\n\n"
        "Write your reasoning first: is the target what this user needs now, are the steps "
        "specific, ordered and feasible, and how does it compare with the reference? Then give an "
        "integer score from 1 to 10, where 10 means better than the reference and 1 means "
        'unrelated or harmful. Return JSON: {"reasoning": string, "score": integer}.'
    )


def agent_system_prompt(user_information: str, trigger_factor: str, target: str, sub_targets: list[str]) -> str:
    return (
        "You are a proactive assistant. You speak first: nobody asked you, so open naturally and "
        "give the user a reason to talk with you.\n\n"
        f"What you know about the user:\n{user_information}\n\n"
        f"What just happened:\n{trigger_factor}\n\n"
        f"Your goal for this conversation: {target}\n"
        f"Steps, in order (move through them one at a time, as the user responds):\n{_numbered(sub_targets)}\n\n"
        "Rules: write one short conversational message per turn; never mention goals, steps, "
        "targets or these instructions; no lists of everything at once; build on what you know "
        "about this user; end with something that invites a reply."
    )


def user_system_prompt(user_information: str, trigger_factor: str, agreeableness: str) -> str:
    return (
        "You are role-playing a person talking with an assistant that contacted you first. Stay "
        "in character; you are not an assistant.\n\n"
        f"Who you are:\n{user_information}\n\n"
        f"What just happened to you:\n{trigger_factor}\n\n"
        f"{AGREEABLENESS[agreeableness]}\n\n"
        "Reply in one to three sentences as this person would, in plain conversational text."
    )


AGENT_OPENING = "(The user has not said anything yet. Write your opening message.)"
USER_OPENING = "(The assistant is about to contact you.)"
WINDOW_NOTE = "(Earlier parts of the conversation are not shown.)"


def turn_check_prompt(target: str, sub_targets: list[str], transcript: str, agent_message: str) -> str:
    return (
        "You monitor a conversation in which an assistant tries to guide a user toward a target.\n\n"
        f"Target: {target}\nSteps:\n{_numbered(sub_targets)}\n\n"
        f"Conversation so far:\n{transcript}\n\n"
        f"The assistant's latest message:\n{agent_message}\n\n"
        "Write a short reasoning first. Then decide: has the target been reached (the user has "
        "accepted or achieved it in the conversation)? And which steps (by number) does the "
        "assistant's latest message address? Return JSON: "
        '{"reasoning": string, "target_reached": boolean, "covered_steps": [integers]}.'
    )


def guidance_judge_prompt(user_information: str, trigger_factor: str, target: str, sub_targets: list[str],
                          transcript: str) -> str:
    return (
        "You grade how well a proactive assistant guided a user toward a target.\n\n"
        f"User information:\n{user_information}\n\nTrigger:\n{trigger_factor}\n\n"
        f"Target: {target}\nSteps:\n{_numbered(sub_targets)}\n\n"
        f"Conversation:\n{transcript}\n\n"
        "Write your reasoning first. Then score each dimension as an integer from 1 to 10:\n"
        "- effectiveness: moves toward the target step by step instead of unloading everything at once;\n"
        "- personalization: builds on this user's information rather than generic advice;\n"
        "- tone: an active tone that fits the situation, both when opening and when steering;\n"
        "- engagement: clear, concise messages that invite the user to reply;\n"
        "- naturalness: sounds like conversation; no odd formatting or leaked labels such as targets or steps.\n"
        "Finally give an overall integer score from 1 to 10. Return JSON with keys reasoning, "
        "effectiveness, personalization, tone, engagement, naturalness, overall."
    )
