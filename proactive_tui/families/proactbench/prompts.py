"""Every prompt a ProactBench session sends, in one place, versioned.

Written by us from the protocol facts in the kit's PROTOCOL.md and SCHEMA.md (roles, what each
role sees and what is hidden from it, the rubric's three levels, the trigger types); no upstream
prompt text is copied. Bump PROMPT_VERSION whenever a template changes: each run records it, so
verdicts given under different prompts are never silently pooled.

What each role sees, as upstream:

- the agent (the model under test): only the plain chat (user / assistant messages) and the
  optional system prompt, empty by default, in which case NO system message is sent at all;
- the offline judge: the rubric, the conversation up to and including the reply, in neutral mode
  (no persona, no communication style: the release does not hold them, and upstream's offline
  judge is told none applies);
- the online Planner: the persona (or "(not provided)"), the scenario package ("(not provided)"),
  the blueprint (here the dialogue's recorded anchors), the turn, the dialogue so far and the
  trigger points declared with their count;
- the online User Agent: its persona and style, the Planner's plan for the turn, the dialogue so
  far and, when a trigger is pending, its rubric and the reply to score.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "proactbench-2026.12.06-1"

NOT_PROVIDED = "(not provided)"

TRIGGER_MEANING = {
    "EMERGENT": "early in the conversation: from ONE detail the user disclosed in passing, the assistant should "
                "infer a need the user did not state and act on it",
    "CRITICAL": "mid conversation: the assistant should combine TWO OR MORE details the user disclosed into a new, "
                "unrequested, actionable conclusion",
    "RECOVERY": "the user signals the task is done: the assistant should still add grounded, forward-looking value "
                "instead of only closing the conversation",
}


def _transcript(turns: list[tuple[str, str]]) -> str:
    """(user, assistant) pairs as a readable block; an empty assistant part is left out."""
    if not turns:
        return "(no earlier turns)"
    lines = []
    for n, (user, assistant) in enumerate(turns, 1):
        lines.append(f"[turn {n}] USER: {user}")
        if assistant:
            lines.append(f"[turn {n}] ASSISTANT: {assistant}")
    return "\n".join(lines)


def _rubric_block(rubric: Any) -> str:
    kind = rubric.type
    return (f"Trigger type: {kind} ({TRIGGER_MEANING.get(kind, 'a planted trigger point')}).\n"
            f"PASS when: {rubric.pass_criteria}\n"
            f"PARTIAL when: {rubric.partial_criteria}\n"
            f"FAIL when: {rubric.fail_criteria}")


SCORE_INSTRUCTIONS = (
    "Decide one score: PASS, PARTIAL or FAIL, exactly as the rubric defines them. Reason first, then score. "
    "Back the score with evidence: a short passage copied word for word from the assistant's reply under review "
    "(not from earlier turns, not paraphrased); if nothing in the reply supports a PASS or PARTIAL, quote the passage "
    "that shows why it fails."
)

JUDGE_FORMAT = ('Answer with a JSON object: {"rationale": "why, in a few sentences", "score": "PASS" | "PARTIAL" | '
                '"FAIL", "evidence": "the verbatim quote"}.')


# -- offline: the neutral judge ----------------------------------------------------------------------

JUDGE_SYSTEM = (
    "You evaluate how proactive an AI assistant was at one planted point of a conversation. Proactive means "
    "addressing a need the user has not stated but that follows from what they disclosed. You are given a rubric "
    "that was written before the assistant answered; apply it strictly and fairly.\n"
    f"User persona: {NOT_PROVIDED}. Communication style: none applies. Judge only from the conversation and the rubric."
)


def judge_message(rubric: Any, earlier: list[tuple[str, str]], user_message: str, reply: str) -> str:
    """The offline judge's one user message: the rubric, the conversation before the trigger turn
    (as the agent saw it), the user's message at the trigger turn and the reply under review."""
    return (
        f"RUBRIC\n{_rubric_block(rubric)}\n\n"
        f"CONVERSATION BEFORE THIS TURN\n{_transcript(earlier)}\n\n"
        f"USER MESSAGE AT THIS TURN\n{user_message}\n\n"
        f"ASSISTANT REPLY UNDER REVIEW\n{reply}\n\n"
        f"{SCORE_INSTRUCTIONS}\n{JUDGE_FORMAT}"
    )


# -- online: the Planner -------------------------------------------------------------------------------

PLANNER_SYSTEM = (
    "You direct a test conversation between a simulated user and an AI assistant, to measure whether the assistant "
    "is proactive. You never speak to the assistant. Each turn you decide: what the user should do next (a tactical "
    "order for the user simulator: its intent, the pieces of information to reveal, and how to behave), whether the "
    "assistant's reply to this turn's user message is a trigger point to be scored, and whether the conversation "
    "should stop.\n"
    "Trigger types: EMERGENT = "
    + TRIGGER_MEANING["EMERGENT"] + "; CRITICAL = " + TRIGGER_MEANING["CRITICAL"] + "; RECOVERY = "
    + TRIGGER_MEANING["RECOVERY"] + ".\n"
    "Reveal the blueprint's anchors gradually and in passing, never as a request for advice: the assistant must "
    "notice them on its own. When you declare a trigger point, write its rubric now, before the assistant answers: "
    "what earns PASS (the unstated need is acted on, in any form), PARTIAL (awareness without the full step) and "
    "FAIL (purely reactive, rephrasing or generic). At most 6 trigger points per conversation. Stop once the "
    "conversation has run its course."
)

PLANNER_FORMAT = (
    'Answer with a JSON object: {"state_audit": {"current_turn": int, "previous_trigger_count": int, '
    '"is_max_reached": bool}, "is_trigger_point": bool, "stop_conversation": bool, "evaluation_rubric": null or '
    '{"type": "EMERGENT" | "CRITICAL" | "RECOVERY", "pass_criteria": str, "partial_criteria": str, '
    '"fail_criteria": str}, "tactical_order": {"intent": str, "content_payload": [str], "behavioral_directive": str}}.'
)


def planner_message(persona: str, blueprint: dict[str, Any], turn: int, max_turns: int,
                    turns: list[tuple[str, str]], triggers: list[dict[str, Any]], cap: int) -> str:
    declared = json.dumps(triggers, ensure_ascii=False, indent=1) if triggers else "none yet"
    return (
        f"PERSONA\n{persona}\n\n"
        f"SCENARIO PACKAGE\n{NOT_PROVIDED}\n\n"
        f"BLUEPRINT\n{json.dumps(blueprint, ensure_ascii=False, indent=1)}\n\n"
        f"TURN {turn} of at most {max_turns}\n\n"
        f"CONVERSATION SO FAR\n{_transcript(turns)}\n\n"
        f"TRIGGER POINTS DECLARED ({len(triggers)} of at most {cap})\n{declared}\n\n"
        f"Plan turn {turn}.\n{PLANNER_FORMAT}"
    )


# -- online: the User Agent ------------------------------------------------------------------------------

def user_agent_system(persona: str, style: str) -> str:
    return (
        "You play a user talking to an AI assistant. Stay in character: write only what this user would type, in "
        "their voice, following the director's order for this turn; never mention the order, the test or any score.\n"
        f"Who you are: {persona}\n"
        f"How you write: {style}\n"
        "When asked to score the assistant's previous reply, step out of character for that part only and score it "
        "strictly against the rubric you are given."
    )


def _order_block(order: Any) -> str:
    payload = "\n".join(f"- {item}" for item in order.content_payload) or "- (nothing new)"
    return (f"Intent: {order.intent or '(none given)'}\nReveal:\n{payload}\n"
            f"Behave: {order.behavioral_directive or '(no directive)'}")


def user_agent_message(order: Any, turns: list[tuple[str, str]], pending: tuple[Any, str] | None) -> str:
    """The User Agent's one user message for a turn: the director's order and the dialogue; with a
    pending trigger (`(rubric, reply)`), the scoring task first."""
    parts = [f"CONVERSATION SO FAR\n{_transcript(turns)}"]
    if pending is not None:
        rubric, reply = pending
        parts.append(f"SCORE FIRST: the assistant's last reply was a planted trigger point.\nRUBRIC\n{_rubric_block(rubric)}\n"
                     f"REPLY TO SCORE\n{reply}\n{SCORE_INSTRUCTIONS}")
    parts.append(f"DIRECTOR'S ORDER FOR YOUR NEXT MESSAGE\n{_order_block(order)}")
    shape = ('{"evaluation": {"rationale": str, "score": "PASS" | "PARTIAL" | "FAIL", "evidence": str}, '
             '"user_message": str}') if pending is not None else '{"user_message": str}'
    parts.append(f"Answer with a JSON object: {shape}.")
    return "\n\n".join(parts)


def score_only_message(rubric: Any, turns: list[tuple[str, str]], reply: str) -> str:
    """After the last turn: the still-pending trigger scored on its own (no user message follows)."""
    return (f"The conversation is over; one planted trigger point is still to be scored.\n\n"
            f"CONVERSATION\n{_transcript(turns)}\n\nRUBRIC\n{_rubric_block(rubric)}\n\nREPLY TO SCORE\n{reply}\n\n"
            f"{SCORE_INSTRUCTIONS}\n{JUDGE_FORMAT}")


def brief(order: Any) -> str:
    """A person playing the user: the Planner's tactical order as their on-screen brief."""
    payload = "; ".join(order.content_payload) or "nothing new"
    return (f"your message as the user. Intent: {order.intent or '-'} · reveal: {payload} · "
            f"behave: {order.behavioral_directive or '-'}")
