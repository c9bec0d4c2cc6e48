"""A scripted Chronos pipeline for the fake server: each template's fate (given per test) decides
the background it gets; the simulators then follow the protocol the way the oracle does, and the
critics score by the fate. `FATE-<name>` rides in the persona and opening message, so every later
request of the item says which fate it has."""

from __future__ import annotations

import json
import re
from typing import Any

from proactive_tui.families.chronos.synth_prompts import TEMPLATES
from proactive_tui.testing.fake_openai import schema_name

BACKGROUND_FATES = ("ok", "assumption_i", "assumption_ii", "assumption_iii", "assumption_iv", "assumption_v",
                    "invalid", "schema")
DIALOGUE_FATES = ("lowagent", "badagent", "noconfirm", "offagent", "wrongstatus", "mute")
"""lowagent: the agent critic scores the first draft answering the branch's last state 50, the
next 90 (regenerated once per branch); badagent: every agent draft scores 50 (rejected at turn 1
after the attempts); noconfirm: the user never confirms an offer that meets the needs (a rule
failure, no critic asked)."""


def _state(time: str, listing: str, meets: bool) -> dict[str, Any]:
    return {"time": time, "listings": [listing], "meets_needs": meets, "note": ""}


def _week(k: int) -> str:
    return f"2026-03-{2 + 7 * k:02d}T09:00"


def background(fate: str, tier: str) -> dict[str, Any]:
    """Weekly scans after the opening state; the fate breaks exactly one rule."""
    complex_ = tier == "complex"
    reveal = 0 if fate == "assumption_i" else 1
    timeline = [_state("2026-03-02T10:00", "red one, 90" + (" MATCH" if fate == "assumption_ii" else ""),
                       fate == "assumption_ii")]
    if fate == "assumption_iv":  # a state meets the initial needs, then another comes before the shift
        timeline.append(_state(_week(1), "blue one early MATCH", True))
    last = "green one, 80" + (" MATCH" if complex_ and fate != "assumption_iv" else "")
    timeline.append(_state(_week(len(timeline)), last, complex_ and fate != "assumption_iv"))
    if fate == "assumption_iii" and not complex_:  # a third scan, so two intervals can differ
        timeline.append(_state(_week(len(timeline)), "grey one, 70", False))
    week = len(timeline)
    shift_states = []
    if complex_:
        shift_states = [_state(_week(week), "small blue one, 99" + (" MATCH" if fate == "assumption_v" else ""),
                               fate == "assumption_v")]
        week += 1
    ends = _week(week) if fate != "assumption_iii" else f"2026-03-{2 + 7 * week + 3:02d}T09:00"
    draft: dict[str, Any] = {
        "title": f"A blue one ({fate})",
        "persona": f"Sam, 30, teacher. FATE-{fate} {tier}",
        "initial_need": f"I want a blue one under 100, FATE-{fate}. Keep an eye out?",
        "intention": "buy a blue one",
        "constraints": [{"key": "budget", "value": "at most 100", "reveal_turn": 0},
                        {"key": "colour", "value": "blue", "reveal_turn": reveal}],
        "start_time": "2026-03-02T09:00",
        "timeline": timeline,
        "positive_ending": _state(ends, "blue one, 95 ENDING MATCH", True),
        "negative_ending": _state(ends, "blue one, 130 ENDING" + (" MATCH" if fate == "invalid" else ""),
                                  fate == "invalid"),
    }
    if complex_:
        draft["intention_shift"] = {
            "utterance": "Actually I need a bigger one now, still blue, up to 120.",
            "intention": "buy a big blue one",
            "constraints": [{"key": "budget", "value": "at most 120"}, {"key": "size", "value": "big"}],
            "timeline": shift_states,
        }
    return draft


def _fate(text: str) -> str:
    match = re.search(r"FATE-([a-z_]+)", text)
    return match.group(1) if match else "ok"


def _text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []) if isinstance(m, dict))


def agent_reply(messages: list[dict[str, Any]], fate: str = "ok") -> dict[str, Any]:
    """What the oracle would answer (the fake agent simulator), from the messages alone; the
    fates offagent (always silent), wrongstatus (always COMPLETED) and mute (no text) break it."""
    said = [m for m in messages if m.get("role") == "user" and not str(m.get("content", "")).startswith("<observation")]
    last = str(messages[-1].get("content", ""))
    reminded = any('"SET_REMINDER"' in str(m.get("content", "")) for m in messages if m.get("role") == "assistant")
    if 'source="internal_trigger"' in last:
        action = "FOLLOW_UP" if "MATCH" in last.rsplit("Available now:", 1)[-1] else "KEEP_SILENT"
    elif 'source="tool_call"' in last:
        action = "SET_REMINDER" if len(said) >= 2 else "NO_ACTION"
    elif len(said) == 1:
        action = "INFO_RETRIEVAL"
    elif "Thank" in last:
        action = "COMPLETE_TASK"
    else:
        action = "SET_REMINDER"
    status = {"COMPLETE_TASK": "COMPLETED"}.get(action, "IN_PROGRESS" if reminded or action == "SET_REMINDER"
                                                 else "PENDING")
    if fate == "offagent":
        action = "KEEP_SILENT"
    if fate == "wrongstatus":
        status = "COMPLETED"
    return {"response_text": "" if fate == "mute" else f"Doing {action.lower()}.", "proactive_action": action,
            "trigger_condition": {"type": "EVENT", "value": "a blue one that fits"} if action == "SET_REMINDER" else {},
            "task_description": {"intention": None if action == "COMPLETE_TASK" else "buy a blue one",
                                 "constraints": None, "status": status}}


def user_text(system: str, fate: str) -> str:
    if "Thank the assistant explicitly" in system:
        return "Hmm, let me think about it." if fate == "noconfirm" else (
            "Thank you, that's exactly what I was looking for. My needs are met.")
    if "your plans have changed" in system:
        return "Actually I need a bigger one now, still blue, up to 120."
    if "Add these details" in system:
        return "Also, it has to be blue."
    if "does not meet your needs" in system:
        return "No, that doesn't meet my needs; please cancel the search."
    return "Please let me know when something suitable turns up."


def _scores(names: tuple[str, ...], each: int) -> dict[str, Any]:
    return {"scores": {n: each for n in names}, "passed": each * 5 >= 75, "feedback": f"{each} each"}


USER_CRITERIA = ("profile_consistency", "intention_clarity", "intention_shift", "naturalness", "contextual_logic")
AGENT_CRITERIA = ("tool_usage", "reminder_setting", "context_understanding", "proactivity", "status_accuracy")


class ChronosFake:
    """The responder. `fates`: template -> fate (default ok). A fresh one per run keeps the
    `lowagent` count (the first draft of a history is the one scored low) its own."""

    def __init__(self, fates: dict[str, str] | None = None) -> None:
        self.fates = fates or {}
        self.seen: set[str] = set()

    def __call__(self, request: dict[str, Any]) -> str:
        name = schema_name(request)
        text = _text(request)
        messages = request.get("messages", [])
        if name in ("SimpleBackground", "ComplexBackground"):
            template = next(t for t, d in TEMPLATES.items() if f"Template: {d}" in text)
            fate = self.fates.get(template, "ok")
            if fate == "schema":
                return "this is not JSON"
            return json.dumps(background(fate, "complex" if name == "ComplexBackground" else "simple"))
        fate = _fate(text)
        if name == "AgentReply":
            return json.dumps(agent_reply([m for m in messages if m.get("role") != "system"], fate))
        if name == "UserUtterance":
            return json.dumps({"text": user_text(str(messages[0].get("content", "")), fate)})
        if name == "UserCritique":
            return json.dumps(_scores(USER_CRITERIA, 18))
        if name == "AgentCritique":
            history = text.split("Assistant reply to evaluate:", 1)[0]
            if fate == "badagent":
                return json.dumps(_scores(AGENT_CRITERIA, 10))
            last = history.rstrip().rsplit("\n[", 1)[-1]
            if fate == "lowagent" and "ENDING" in last and history not in self.seen:
                self.seen.add(history)
                return json.dumps(_scores(AGENT_CRITERIA, 10))
            return json.dumps(_scores(AGENT_CRITERIA, 18))
        if name is None and messages and "role-playing a person" in str(messages[0].get("content", "")):
            return user_text(str(messages[0].get("content", "")), fate)  # a `run` session's user seat
        return "free text"


def role_args(base_url: str) -> list[str]:
    return ["--api-base", base_url, "--role", "generator=openai/gen", "--role", "user=openai/user",
            "--role", "agent=openai/agent", "--role", "user_critic=openai/ucritic",
            "--role", "agent_critic=openai/acritic"]
