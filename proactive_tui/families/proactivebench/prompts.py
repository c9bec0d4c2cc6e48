"""Prompts and message layout for ProactiveBench sessions: the proposing agent and the user-judge
(reward model).

What is ours and what is upstream's (docs/protocols.md#proactivebench):

- The agent's system prompt is ours (our wording, not the paper's). The reply keys ("Purpose",
  "Thoughts", "Proactive Task", "Response") are the protocol's and must not change.
- The agent's message layout follows upstream's evaluation, thunlp/ProactiveAgent
  `eval/script.py` (Apache-2.0): the newest event is `STEP` with the event's
  `{"Time", "Event"}` JSON put in place of its placeholder (`event_message`); once answered, that
  message is rewritten to the plain `{"Time", "Event"}` JSON (`history_event_message`), and the
  agent's reply is written back as `json.dumps` of the reply as parsed (`reply_message`). `STEP`
  and its instruction sentence are upstream's, byte for byte: models fine-tuned on ProactiveBench
  saw this layout. (Upstream's placeholder sits inside quotes, so the newest message is not valid
  JSON: `"Observation": "{"Time": ...}"`. We send the same bytes.)
- The judge's input is upstream's reward-model input, `format_reward_instruction` in
  thunlp/ProactiveAgent `eval/reward_model_template.py` (Apache-2.0): its system prompt
  (`REWARD_SYSTEM`, copied verbatim) and the user message `json.dumps({"Observations (Time
  Ascending)": obs, "Proposed Task": task, "Instruction": ...}, indent=4, ensure_ascii=False)`
  (`reward_messages`). The paper's fine-tuned reward model was trained on exactly this, so it can
  sit in the judge seat; the layout is a protocol fact, not wording of ours.
- The verdict-feedback note (the paper's ablation, off by default) and the retry message after a
  rejection (our `retries` option) are ours.

Bump PROMPT_VERSION whenever a template or the layout changes.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

PROMPT_VERSION = "proposals-2027.01.10-2"

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
        "before being asked. Events arrive one at a time, oldest first, each as JSON with its "
        '"Time" (unix seconds) and "Event". After each one, decide whether the person could use '
        "your help right now.\n\n"
        "Answer every event with one JSON object with exactly these keys:\n"
        f"{_KEYS_THREE if candidates > 1 else _KEYS_ONE}\n\n"
        "Guidelines: every offer interrupts the person, so offer only when a task is clearly useful at "
        "this moment and follows from what the events show; when they are simply getting on with "
        "their work, stay quiet (null). Do not repeat an offer they already turned down. Mind the "
        "timestamps: a long pause, a repeated search or an error message can mean they are stuck."
    )


def format_time(raw: str) -> str:
    """Upstream times are unix seconds as text; show a readable UTC time beside the raw value
    (for people: reports, the printer; models see the raw value)."""
    try:
        moment = datetime.fromtimestamp(float(raw), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(raw)
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC ({raw})"


# -- the agent's messages (upstream's eval/script.py layout) ------------------------------------

STEP_INSTRUCTION = "Now analyze the history events and provide a task if you think the user needs your help."
"""Upstream's instruction sentence (eval/script.py `STEP`)."""

STEP = json.dumps({"Instructions": STEP_INSTRUCTION, "Observation": "[placeholder]"})
"""Upstream's wrapper for the newest event, as script.py builds it."""


def observation_json(time: Any, event: str) -> str:
    """`json.dumps({"Time", "Event"})` with json's defaults, as upstream's `event_filtered`."""
    return json.dumps({"Time": time, "Event": event})


def event_message(time: Any, event: str) -> str:
    """The newest event: `STEP.replace("[placeholder]", json.dumps(event_filtered))`, byte for byte."""
    return STEP.replace("[placeholder]", observation_json(time, event))


def history_event_message(time: Any, event: str) -> str:
    """An earlier event, as upstream rewrites it once answered (`messages[-2]["content"] = ...`)."""
    return observation_json(time, event)


def reply_message(data: dict[str, Any]) -> str:
    """The agent's own earlier reply in its history: `json.dumps(result)` of the parsed reply."""
    return json.dumps(data)


# -- the ablations and options around it (ours) ----------------------------------------------------

VERDICT_WORDS = {"accepted": "accepted", "rejected": "rejected", "skipped": "ignored"}


def feedback_note(judgement: str, thought: str = "", had_task: bool = True) -> str:
    """With `feedback` on (the paper's ablation): how the user's verdict on the agent's previous
    reply is reported back to it, as a user message of its own before the next event."""
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


# -- the judge (upstream's eval/reward_model_template.py) ------------------------------------------

REWARD_SYSTEM = '''<Task>
Evaluate the task proposed by the proactive assistant as the user.
</Task>

<Rule>
0. Analyze the current observation to understand your current situation and requirements.
1. If the proposed task is `null` (indicating no task is proposed under the current observation), follow these steps:
   - Accept the `null` task if you believe there is no need for a task.
   - Reject the `null` task if you believe a task is needed.
2. Minimize interruptions from the assistant by only accepting tasks that are valuable.
3. Evaluate the current observation and make a judgment on the proposed task accordingly.
</Rule>

<Format>
You should answer with following JSON format:
{
    "thought": "Give your thoughts first, then provide the judgement of the task.",
    "judgement": "accepted or rejected"
}
</Format>'''
"""Upstream's reward-model system prompt (`SYSTEM` in eval/reward_model_template.py), verbatim."""

REWARD_INSTRUCTION = "Now give your judgement. You should complete the reasoning process in first person."


def reward_user_message(obs: list[dict[str, Any]], pred_task: Any) -> str:
    """The judge's user message: `obs` is the list of the events' observation dicts up to and
    including the current one, `pred_task` the proposed task or None."""
    inst = {"Observations (Time Ascending)": obs, "Proposed Task": pred_task, "Instruction": REWARD_INSTRUCTION}
    return json.dumps(inst, sort_keys=False, ensure_ascii=False, indent=4)


def reward_messages(obs: list[dict[str, Any]], pred_task: Any) -> list[dict[str, str]]:
    """`format_reward_instruction(obs, pred_task)`: the system and user message, byte for byte."""
    return [{"role": "system", "content": REWARD_SYSTEM},
            {"role": "user", "content": reward_user_message(obs, pred_task)}]
