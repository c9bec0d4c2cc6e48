"""The prompts of Chronos's data pipeline (`synth.py`), ours, written from the paper's section 3.3
and its appendices: the scenario background (Step 1, the paper's Appendix A prompt is not public),
and the two quality critics, whose checklists follow Appendices F.1 (user) and F.2 (agent) in our
words. The user and agent simulators need no prompt here: they sit in a real Chronos session and
read what a session's seats read (`prompts.user_system_prompt`, `prompts.agent_system`).

Each builder returns chat messages; the reply's shape is the step's pydantic schema (the gateway
sends it as the response format). `SYNTH_PROMPTS_VERSION` is part of the generator version: a
changed prompt is another run (a resume under it is refused).
"""

from __future__ import annotations

import json
from typing import Any

SYNTH_PROMPTS_VERSION = "chronos-synth-prompts-1"

TEMPLATES: dict[str, str] = {
    "product_recommendation": (
        "Product recommendation: the person wants a product (furniture, electronics, sports gear ...) that is not on "
        "offer yet at a price and with the features they need; listings are products with price and specs."),
    "job_search": (
        "Job search: the person looks for a job opening that fits their skills, location, salary and hours; listings "
        "are job adverts with employer, role, place, salary and terms."),
    "flight_booking": (
        "Flight booking: the person wants a flight on a route and dates within a budget; listings are flights with "
        "airline, times, stops and fare."),
    "car_purchase": (
        "Car purchase: the person wants a used car that fits a budget, size and running costs; listings are cars "
        "with year, model, mileage and price."),
    "house_hunting": (
        "House hunting: the person wants a home to rent or buy in an area, with rooms, budget and conditions; "
        "listings are homes with place, size, terms and price."),
    "ticket_booking": (
        "Ticket booking: the person wants tickets (a concert, a match, a train) that are sold out or too dear now; "
        "listings are tickets with event or route, date, seats and price."),
}
"""The scenario templates: the paper's three (Step 1) and the project's own three (the themes of
the shipped samples)."""

PAPER_TEMPLATES = ("product_recommendation", "job_search", "flight_booking")


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def background(template: str, tier: str) -> list[dict[str, str]]:
    """Step 1: one scenario background, with the paper's assumptions (i)-(v) stated as rules."""
    shift = (
        "\nThis is a COMPLEX case with an intention shift:\n"
        "- (iv) the LAST state of `timeline` meets the initial needs (the agent's first follow-up brings it); no "
        "earlier state does. Right after that follow-up the person changes their mind once: `intention_shift` gives "
        "what they say (utterance), the new intention (mostly the same core need with changed or added "
        "constraints) and the full new constraint set;\n"
        "- (v) `intention_shift.timeline` holds one or two later states, and its first state does NOT meet the new "
        "needs (the agent must set a new reminder);\n"
        "- the two endings below continue after the shift's timeline, judged against the NEW needs.\n"
        if tier == "complex" else
        "\nThis is a SIMPLE case: no intention shift; no state of `timeline` meets the needs.\n")
    return [
        _system("You design scenario backgrounds for training and testing long-term task assistants: an assistant "
                "that keeps a person's request alive over days, sets a reminder with a monitor, and follows up when "
                "the market changes."),
        _user(
            f"Template: {TEMPLATES[template]}\n\n"
            "Write one scenario background:\n"
            "- title: a short title; persona: who the person is (name, age, job, place, habits), concrete;\n"
            "- initial_need: the person's first message to the assistant, asking it to keep an eye out;\n"
            "- intention: the task in a few words;\n"
            "- constraints: 2 to 4 requirements, each a key, a value and reveal_turn: 0 when the opening message "
            "already says it, 1 or 2 when the person adds it in their first or second reply. (i) The person "
            "expresses the intent progressively: at least one constraint has reveal_turn 1 or more;\n"
            "- start_time and timeline: the market states in time order (ISO times like 2026-03-02T09:00), each with "
            "1 to 3 listings and meets_needs (whether a listing satisfies EVERY constraint). (ii) The first state is "
            "the market when the conversation opens and does NOT meet the needs. (iii) After the first state the "
            "monitor scans at one fixed frequency: every later state (the shift's and the endings too) comes the "
            "same interval after the one before (e.g. weekly);\n"
            f"{shift}"
            "- positive_ending: one state, the next scan, that DOES meet the (final) needs;\n"
            "- negative_ending: one state at the same time that does NOT (one listing close but failing one "
            "constraint).\n"
            "Make every listing concrete (names, numbers, prices) so a careful reader can check it against the "
            "constraints."),
    ]


def _dialogue_text(messages: list[dict[str, Any]]) -> str:
    lines = []
    for m in messages:
        lines.append(f"[{m.get('role')}] {m.get('content')}")
    return "\n".join(lines) if lines else "(nothing yet)"


def user_critic(persona: str, history: list[dict[str, Any]], utterance: str, situation: str) -> list[dict[str, str]]:
    """Appendix F.1's checklist, in our words: the simulated user's reply, scored 0-20 per criterion."""
    return [
        _system("You are an objective evaluator of a simulated user's reply in a conversation with a long-term task "
                "assistant. Score each criterion from 0 to 20:\n"
                "1. profile_consistency: does the reply match the person's profile?\n"
                "2. intention_clarity: are the intention and constraints clear, concise and centred on the need? A "
                "turn that need not add anything may default to 12.\n"
                "3. intention_shift: when the assistant presents an option meeting the initial needs and the person "
                "is to change their mind, do they say so explicitly, once, and then stick to the new intention? Adding "
                "constraints in the second turn is not a shift. Turns before the shift may default to 12.\n"
                "4. naturalness: is it conversational?\n"
                "5. contextual_logic: does it make sense after the assistant's last message (rejecting when needs are "
                "not met, accepting when they are)?\n"
                "passed is false when the person shifts intention a second time after the need was resolved, "
                "whatever the scores."),
        _user(f"User profile:\n{persona}\n\nWhat this reply had to do:\n{situation}\n\nDialogue so far (as the user "
              f"saw it):\n{_dialogue_text(history)}\n\nUser reply to evaluate:\n{utterance}"),
    ]


def agent_critic(history: list[dict[str, Any]], reply: str) -> list[dict[str, str]]:
    """Appendix F.2's checklist, in our words: the simulated agent's structured reply, scored 0-20 per
    criterion (status accuracy 0 or 20)."""
    return [
        _system("You are an objective evaluator of a proactive task assistant's structured reply. Score each "
                "criterion from 0 to 20:\n"
                "1. tool_usage: is INFO_RETRIEVAL used only when genuinely needed (when the need is first stated, "
                "once after a change of situation), never repeatedly? Turns without it may default to 12.\n"
                "2. reminder_setting: is SET_REMINDER used once the needs are clear, with a trigger_condition that "
                "states them? Turns without it may default to 12.\n"
                "3. context_understanding: does it follow the person's latest intent (the shifted one after a "
                "shift)?\n"
                "4. proactivity: FOLLOW_UP when the new state meets the needs, KEEP_SILENT when it does not. Turns "
                "without these may default to 12.\n"
                "5. status_accuracy (0 or 20): PENDING before any reminder; IN_PROGRESS once one is set (also when "
                "answering a shift); COMPLETED with COMPLETE_TASK only after the person's explicit thanks; FAILED on "
                "a refusal or cancellation.\n"
                "passed is false on repeated INFO_RETRIEVAL or a wrong status, whatever the scores."),
        _user(f"Dialogue so far (as the assistant saw it; observations come from the monitor or its own look-ups):\n"
              f"{_dialogue_text(history)}\n\nAssistant reply to evaluate:\n{reply}"),
    ]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
