"""Every prompt the engine sends, in one place, versioned.

Written from the protocol facts in docs/protocols.md#proactiveeval (ours, not the papers' wording). Bump
PROMPT_VERSION whenever a template changes: each run records it, so scores from different prompt
versions are never silently compared.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "guidance-2026.12.02-1"

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


PLAN_JUDGE_EXAMPLES = (
    {
        "user_information": "Maren, 52, keeps two beehives in her garden as a hobby and logs them in a hive app. "
                            "She is careful but has never wintered bees before.",
        "trigger_factor": "The app shows the heavier hive lost 4 kg in the last two weeks of August.",
        "ref_target": "Help Maren check her hives' food stores and feed them before winter if they are short.",
        "ref_steps": ["Point out the weight drop and ask what she saw at her last inspection",
                      "Explain why late-summer weight loss matters for wintering",
                      "Suggest how to estimate the stores and when to feed syrup"],
        "target": "Help Maren judge whether the weight loss means her bees need feeding, and feed them in time for winter.",
        "steps": ["Mention the 4 kg drop and ask whether she has seen robbing or fewer frames of honey",
                  "Explain that a colony needs enough stores for winter and August is the time to check",
                  "Walk her through hefting or weighing the hive to estimate the stores",
                  "If they are short, suggest thick syrup before the nights get cold, and ask her to log the result"],
        "reasoning": "Same goal as the reference and builds on her inexperience; it adds a check for robbing "
                     "that the reference misses and ends with a follow-up, so it is a little better.",
        "score": 10,
    },
    {
        "user_information": "Tobiah, 29, freelance translator, invoices clients monthly. He hates chasing "
                            "people for money and keeps putting it off.",
        "trigger_factor": "His accounting tool flags an invoice to a publisher as 30 days overdue.",
        "ref_target": "Help Tobiah send a polite, firm payment reminder to the publisher today.",
        "ref_steps": ["Tell him about the overdue invoice and ask if he has heard from the publisher",
                      "Offer a short reminder he can send that names the invoice and a new due date",
                      "Suggest a follow-up date and what to do if there is still no answer"],
        "target": "Help Tobiah with his finances.",
        "steps": ["Ask how his business is going", "Suggest using an accounting tool", "Offer budgeting tips"],
        "reasoning": "It notices money but not the overdue invoice: the target is vague and the steps are "
                     "generic advice he did not need now. Related to the situation, far below the reference.",
        "score": 3,
    },
    {
        "user_information": "Sunita, 41, cycles 12 km to work daily on an old hybrid bike and is on a tight budget.",
        "trigger_factor": "Her cycling app logs a third flat tyre this month.",
        "ref_target": "Recommend puncture-resistant tyres or tubes within her budget.",
        "ref_steps": ["Ask about the flats and where they happen",
                      "Explain what puncture-resistant tyres and sealant tubes do",
                      "Suggest two affordable options and how to fit them"],
        "target": "Recommend tougher tyres so she stops getting flats on her commute.",
        "steps": ["Ask about the flats", "Recommend a well-known puncture-resistant tyre"],
        "reasoning": "The right target, but the plan skips explaining the options and ignores her budget, "
                     "so she gets one brand name and little reason to choose it.",
        "score": 6,
    },
)
"""Invented environments, graded by us: in-context shots that calibrate the plan judge (the paper
gives its planning judge such shots; these are ours, none from its data or the samples)."""


def _plan_example(i: int, ex: dict[str, Any]) -> str:
    answer = json.dumps({"reasoning": ex["reasoning"], "score": ex["score"]}, ensure_ascii=False)
    return (
        f"Example {i}\nUser information: {ex['user_information']}\nTrigger: {ex['trigger_factor']}\n"
        f"Reference target: {ex['ref_target']}\nReference steps:\n{_numbered(ex['ref_steps'])}\n"
        f"Assistant's target: {ex['target']}\nAssistant's steps:\n{_numbered(ex['steps'])}\n"
        f"Grade: {answer}"
    )


def plan_judge_prompt(user_information: str, trigger_factor: str, target: str, sub_targets: list[str],
                      ref_target: str, ref_sub_targets: list[str]) -> str:
    examples = "\n\n".join(_plan_example(i, ex) for i, ex in enumerate(PLAN_JUDGE_EXAMPLES, 1))
    return (
        "You grade how well an assistant planned a proactive intervention.\n\n"
        "Compare the assistant's plan with the reference, which is a high-quality plan for the same "
        "situation. Scores: 10 = better than the reference; 8-9 = as good, or different but equally "
        "fitting; 5-7 = the right need with weaker, vaguer or incomplete steps; 2-4 = related to the "
        "situation but missing what the user needs now; 1 = unrelated or harmful.\n\n"
        f"Graded examples (invented situations, to show the scale):\n\n{examples}\n\n"
        "Now the plan to grade.\n\n"
        f"User information:\n{user_information}\n\nTrigger:\n{trigger_factor}\n\n"
        f"Reference target: {ref_target}\nReference steps:\n{_numbered(ref_sub_targets)}\n\n"
        f"Assistant's target: {target}\nAssistant's steps:\n{_numbered(sub_targets)}\n\n"
        "Write your reasoning first: is the target what this user needs now, are the steps "
        "specific, ordered and feasible, and how does it compare with the reference? Then give an "
        "integer score from 1 to 10 on the scale above. "
        'Return JSON: {"reasoning": string, "score": integer}.'
    )


def agent_system_prompt(user_information: str, trigger_factor: str, target: str | None,
                        sub_targets: list[str]) -> str:
    """The guiding agent's system prompt. `target` None is the paper's "without target" ablation
    (`without_target`): no goal and no steps, the agent works out where to lead from the user
    information and the trigger alone."""
    goal = (f"Your goal for this conversation: {target}\n"
            f"Steps, in order (move through them one at a time, as the user responds):\n{_numbered(sub_targets)}\n\n"
            if target is not None else
            "Decide from this what would help the user most, and guide the conversation there step by step.\n\n")
    return (
        "You are a proactive assistant. You speak first: nobody asked you, so open naturally and "
        "give the user a reason to talk with you.\n\n"
        f"What you know about the user:\n{user_information}\n\n"
        f"What just happened:\n{trigger_factor}\n\n"
        + goal +
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


GUIDANCE_STANDARDS = {
    "effectiveness": (
        "leads the user toward the target one step at a time, each message moving one step further as "
        "the user responds, and does not hand over the whole plan at once",
        "good: the opening asks about the user's problem and the next message offers one option; "
        "bad: the opening lists every step and product with links",
    ),
    "personalization": (
        "builds on what is known about this user (their situation, limits, preferences, the trigger) "
        "rather than advice anyone could get",
        "good: 'since you ride to work every day, ...'; bad: 'many people find exercise helpful'",
    ),
    "tone": (
        "takes the initiative in a tone that fits the situation (urgent for a safety risk, warm for a "
        "check-in, light for a hobby) and keeps steering when the user hesitates, without pressure",
        "good: a direct warning when something is dangerous; bad: 'it sounds like you might maybe want to...'",
    ),
    "engagement": (
        "short, clear messages the user can take in at once, ending with something easy to answer",
        "good: two sentences and one question; bad: a long paragraph with four questions",
    ),
    "naturalness": (
        "reads like a person talking: no headings, bullet dumps, JSON, labels such as 'Target:' or "
        "'Step 2:', and no scripted turns for the user",
        "good: plain sentences; bad: 'Sub-target 1: ask about the hives'",
    ),
}
"""Our detailed standard for each dimension, with a brief example of each end (the paper gives its
guidance judge detailed standards with brief examples; these are ours)."""

GUIDANCE_BANDS = (
    ("9-10", "guides step by step to the target and meets every standard; the user reaches or clearly "
             "accepts the target; 10 only when nothing could be better"),
    ("7-8", "clear progress toward the target and most standards met, with small lapses (one crowded "
            "message, a generic remark, a slightly stiff line)"),
    ("5-6", "some guidance toward the target but clear problems on one or two standards: several steps "
            "at once, mostly generic advice, a passive or pushy tone, long messages"),
    ("3-4", "little real guidance: reacts instead of leading, drifts from the target, dumps everything "
            "at once, or leaks labels or formats"),
    ("1-2", "no guidance toward the target: off topic, unhelpful or harmful, or broken throughout"),
)
"""Our score bands for the one overall guidance score (the paper's headline)."""


def guidance_judge_prompt(user_information: str, trigger_factor: str, target: str, sub_targets: list[str],
                          transcript: str) -> str:
    standards = "\n".join(f"- {name}: {text} ({example})." for name, (text, example) in GUIDANCE_STANDARDS.items())
    bands = "\n".join(f"- {band}: {text}." for band, text in GUIDANCE_BANDS)
    return (
        "You grade how well a proactive assistant guided a user toward a target.\n\n"
        f"User information:\n{user_information}\n\nTrigger:\n{trigger_factor}\n\n"
        f"Target: {target}\nSteps:\n{_numbered(sub_targets)}\n\n"
        f"Conversation:\n{transcript}\n\n"
        f"The standards of good guidance:\n{standards}\n\n"
        f"Score bands for the overall score:\n{bands}\n\n"
        "Write your reasoning first: go through the standards with evidence from the conversation. "
        "Then give ONE overall guidance score, an integer from 1 to 10 on the bands above: weigh the "
        "standards as a whole, do not average them. After it, as diagnostics, score each standard on "
        "its own from 1 to 10. Return JSON with keys reasoning, overall, effectiveness, "
        "personalization, tone, engagement, naturalness."
    )
