"""The prompts of ProactiveEval's data pipeline (`synth.py`), ours, written from the stage rules
of the paper's "Evaluation Data Generation" section and its appendix (no upstream prompt text is
public). Each builder returns chat messages; the reply's shape is the step's pydantic schema (the
gateway sends it as the response format), so no prompt spells out JSON by hand.

`SYNTH_PROMPTS_VERSION` is part of the generator version: a changed prompt is another run (a
resume under it is refused).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SYNTH_PROMPTS_VERSION = "pe-synth-prompts-1"


def _samples() -> Path:
    """The shipped items (top-level `sample_envs/proactiveeval`, `paths.sample_envs_dir`)."""
    from proactive_tui.paths import sample_envs_dir

    return sample_envs_dir("proactiveeval")


DOMAIN_TASKS: dict[str, str] = {
    "recommendation": (
        "The assistant notices from the user's situation that they need something (a product, a service, a place, "
        "a piece of content) they have not asked for, and proactively recommends it. Trigger: an observed event "
        "shows an unmet need the user has not voiced."),
    "persuasion": (
        "The assistant sees the user about to act against their own stated interest (health, money, safety, "
        "relationships) and proactively persuades them toward a better course. Trigger: an observed behaviour "
        "that conflicts with the user's goals or circumstances."),
    "ambigious_instruction": (
        "The user gives an instruction that can be read in several ways or lacks information needed to carry it out; "
        "the assistant proactively asks the clarifying questions before acting. Trigger: the ambiguous instruction "
        "itself, in its context."),
    "long-term_follow_up": (
        "The assistant remembers something from an earlier conversation (a plan, a problem, a promise) and "
        "proactively follows up on it when the moment is right. Trigger: time has passed or an event relates to "
        "the earlier matter."),
    "system_operation": (
        "The assistant watches a system the user operates (a computer, a phone, a smart home, a server) and "
        "proactively points out a problem or a better way, and helps fix it. Trigger: a system state or log event."),
    "glasses_assistant": (
        "The assistant lives in smart glasses and sees what the user sees; it proactively offers help grounded in "
        "the scene. Trigger: something in the user's field of view or surroundings."),
}
"""What each domain asks of the assistant and what triggers it (the paper's domain descriptions,
in our words)."""


@lru_cache(maxsize=None)
def example_item(domain: str) -> dict[str, Any] | None:
    """The in-context example: the first shipped sample of the domain (ours, package data)."""
    for tier in ("fair", "hard"):
        path = _samples() / domain / f"{tier}.json"
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, list) and data and isinstance(data[0], dict):
                return data[0]
    return None


def _system(role: str) -> dict[str, str]:
    return {"role": "system", "content": role}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _env_text(user_information: str, trigger_factor: str) -> str:
    return f"User information:\n{user_information}\n\nTrigger factor:\n{trigger_factor}"


def first_level(domain: str, title: str, count: int) -> list[dict[str, str]]:
    return [_system("You design evaluation data for proactive dialogue assistants."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\nList {count} distinct first-level sub-topics of "
                  "this domain: broad areas of everyday life where such a situation happens. Each a short noun phrase; "
                  "no two alike.")]


def expand(domain: str, title: str, path: list[str], count: int) -> list[dict[str, str]]:
    trail = " > ".join([title, *path])
    return [_system("You design evaluation data for proactive dialogue assistants."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\nTopic: {trail}\n\nList {count} distinct, more "
                  "specific sub-topics of the last topic, each a concrete sub-scenario where the assistant would need "
                  "to start the conversation itself. Each a short noun phrase; no two alike, none repeating the "
                  "topic above.")]


def environment(domain: str, title: str, topic: str) -> list[dict[str, str]]:
    example = example_item(domain)
    shown = ""
    if example:
        env = example.get("environment") or {}
        shown = ("\n\nAn example of the form (a different topic; do not copy it):\n"
                 + _env_text(str(env.get("user_information", "")), str(env.get("trigger_factor", ""))))
    return [_system("You write realistic user scenarios for evaluating proactive assistants."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\nTopic: {topic}\n\nWrite one environment:\n"
                  "- user_information: who the user is, their background, habits, constraints and preferences, "
                  "concrete and specific (a named person, numbers, places);\n"
                  "- trigger_factor: the event or observation that makes the assistant start the conversation now.\n"
                  "Together they must make one best target for the assistant clear to a careful reader, without "
                  f"stating it.{shown}")]


def target(domain: str, title: str, user_information: str, trigger_factor: str) -> list[dict[str, str]]:
    return [_system("You are a proactive assistant planning a conversation."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\n{_env_text(user_information, trigger_factor)}"
                  "\n\nWhat should the assistant achieve in the conversation it starts now? Give the target (one "
                  "sentence) and the ordered sub-targets that reach it step by step (3 to 5).")]


def ensemble(domain: str, title: str, user_information: str, trigger_factor: str,
             candidates: list[tuple[str, list[str]]]) -> list[dict[str, str]]:
    listed = "\n\n".join(f"Candidate {i}:\nTarget: {t}\nSub-targets:\n" + "\n".join(f"  {j}. {s}" for j, s in
                                                                                     enumerate(subs, 1))
                         for i, (t, subs) in enumerate(candidates, 1))
    return [_system("You are an expert reviewer of proactive dialogue plans."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\n{_env_text(user_information, trigger_factor)}"
                  f"\n\n{listed}\n\nWeigh each candidate's strengths and weaknesses (fit to the trigger, use of the "
                  "user's information, feasibility, order of the steps). Then write the single best target and its "
                  "ordered sub-targets, combining the strengths and avoiding the weaknesses. Put your weighing in "
                  "`analysis`.")]


def probe(domain: str, title: str, user_information: str, trigger_factor: str) -> list[dict[str, str]]:
    return [_system("You are a proactive assistant."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\n{_env_text(user_information, trigger_factor)}"
                  "\n\nIn one sentence: what is the target of the conversation you should start now?")]


def probe_judge(reference: str, predictions: list[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"{i}. {p}" for i, p in enumerate(predictions, 1))
    return [_system("You judge whether predicted conversation targets match a reference."),
            _user(f"Reference target: {reference}\n\nPredicted targets:\n{listed}\n\nFor each prediction in order, "
                  "say whether it conveys the same meaning as the reference (the same goal, not merely the same "
                  f"topic). `matches` holds exactly {len(predictions)} booleans, one per prediction.")]


OBFUSCATE_RULE = ("Rewrite the text into dispersed, concrete, observable details: replace every abstract statement "
                  "(a diagnosis, a preference, an intention) with the behaviours and facts it shows in, scattered "
                  "through the text, so a reader must infer it.")
NOISE_RULE = ("Embed the text in a longer, realistic record (a log, a profile, a feed of events) by adding "
              "irrelevant but plausible information around it; keep every original fact.")


def rewrite(kind: str, field: str, text: str, reference: str, sub_targets: list[str]) -> list[dict[str, str]]:
    """Obfuscation rewrite (`kind="obfuscate"`) or noise injection (`kind="noise"`) of one field
    (`user_information` or `trigger_factor`), applied to each separately as the paper does; the
    reference is given so the rewrite keeps it the best target (no new event may point elsewhere)."""
    rule = OBFUSCATE_RULE if kind == "obfuscate" else NOISE_RULE
    steps = "\n".join(f"  {i}. {s}" for i, s in enumerate(sub_targets, 1))
    return [_system("You rewrite evaluation environments to make them harder without changing their answer."),
            _user(f"{rule}\n\nField: {field}\nText:\n{text}\n\nThe reference target of this environment is: "
                  f"{reference}\nSub-targets:\n{steps}\n\nThe rewritten text must keep this reference the best target: "
                  "add nothing that points to another one. Put the new text in `text`, and in `reference_still_valid` "
                  "whether the reference is still the best target after your rewrite.")]


def final_check(domain: str, title: str, user_information: str, trigger_factor: str, reference: str,
                sub_targets: list[str]) -> list[dict[str, str]]:
    steps = "\n".join(f"  {i}. {s}" for i, s in enumerate(sub_targets, 1))
    return [_system("You validate evaluation data for proactive dialogue assistants."),
            _user(f"Domain: {title}.\n{DOMAIN_TASKS.get(domain, '')}\n\n{_env_text(user_information, trigger_factor)}"
                  f"\n\nProposed target: {reference}\nSub-targets:\n{steps}\n\nIs this the best target for the "
                  "assistant in this environment? Reason briefly, then answer in `reference_is_best`.")]
