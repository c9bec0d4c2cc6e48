"""The prompts of ProactiveBench's data pipeline (`synth.py`), ours, written from what each part of
upstream's gym (thunlp/ProactiveAgent `gym/`, Apache-2.0) does: the environment expands a scene
and turns the user's activity into events, the user simulator has a profile and a goal and acts
toward it, and judges the agent's proposals. Upstream's prompt text is not copied; its data shapes
are kept (the agent's step message, its reply keys, the reward-model input).

The proactive agent's messages are the family's own (`prompts.agent_system_prompt`, upstream's
`Instructions` sentence and `{"Time", "Event"}` observations), so a generated trace plays and a
training line reads as the sessions of this family do. The reward-model judge's input is
`prompts.reward_messages`, upstream's layout byte for byte.

`SYNTH_PROMPTS_VERSION` is part of the generator version: a changed prompt is another run.
"""

from __future__ import annotations

import json
from typing import Any

SYNTH_PROMPTS_VERSION = "pb-synth-prompts-1"

SCENES: dict[str, dict[str, Any]] = {
    "coding": {
        "theme": "Coding",
        "description": "A developer works at a desktop computer on a small software project: an editor, a terminal, "
                       "a web browser with documentation and search, and a chat app with teammates.",
        "entities": ["Code editor", "Terminal", "Web browser", "Project files", "Version control", "Team chat"],
        "agent_ops": ["terminal_run(command)", "file.open(file_path)", "file.save(file_path, content)",
                      "browser.open(url)", "doc_search(keyword)", "code_suggest_fix(error_message, code_snippet)"],
        "events_example": [
            "The user opens the file 'parser.py' in the code editor.",
            "The user types a search query 'python argparse subcommands' into the browser and presses Enter.",
            "The user runs 'pytest -q' in the terminal; two tests fail with a KeyError.",
            "The user switches to the team chat window without typing anything.",
            "The user scrolls through a Stack Overflow answer about dictionary defaults.",
        ],
    },
    "writing": {
        "theme": "Writing",
        "description": "A person writes a document on a laptop: a word processor, a browser with sources and a "
                       "reference manager, and an e-mail client.",
        "entities": ["Word processor", "Web browser", "Reference manager", "E-mail client", "Document outline"],
        "agent_ops": ["file.open(file_path)", "file.save(file_path, content)", "browser.open(url)",
                      "web_search(query)", "suggest_edit(paragraph, suggestion)", "display_message(message)"],
        "events_example": [
            "The user opens the document 'grant_proposal.docx' in the word processor.",
            "The user deletes the second paragraph of the introduction and retypes its first sentence.",
            "The user searches the browser for 'average household energy use 2023 statistics'.",
            "The user opens an e-mail from a co-author titled 'comments on section 3'.",
            "The user pauses for several minutes with the cursor at the end of a heading.",
        ],
    },
    "daily_life": {
        "theme": "Daily life",
        "description": "A person at home uses a phone and a laptop for everyday errands: messages, a calendar, "
                       "shopping sites, maps and banking.",
        "entities": ["Phone", "Laptop", "Calendar", "Messaging app", "Shopping site", "Maps", "Banking app"],
        "agent_ops": ["calendar.add(event, time)", "browser.open(url)", "web_search(query)",
                      "send_message(contact, text)", "set_reminder(text, time)", "display_message(message)"],
        "events_example": [
            "The user opens the calendar and looks at next Saturday.",
            "The user searches a shopping site for 'birthday gift for a 7 year old'.",
            "The user reads a message from a friend asking to move dinner to 8 pm.",
            "The user opens the maps app and searches for the nearest pharmacy.",
            "The user locks the phone and puts it down.",
        ],
    },
}
"""The built-in scenes, ours, in the shape of upstream's gym configuration (`environment:` theme,
description, entities, agent_ops, events_example; gym/example.yaml)."""


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


ENV_ROLE = ("You simulate the environment of a person's computer and surroundings for a study of proactive "
            "assistants. You describe only objective, observable changes, never feelings or guesses.")
USER_ROLE = ("You play a person using a computer. You act like a real person with your own profile and goal: "
             "not perfectly efficient, sometimes distracted, reacting to what you see.")


def _scene_text(scene: dict[str, Any]) -> str:
    return (f"Theme: {scene['theme']}\nDescription: {scene['description']}\n"
            f"Entities: {', '.join(scene['entities'])}\nAssistant operations: {', '.join(scene['agent_ops'])}")


def scene(scene: dict[str, Any]) -> list[dict[str, str]]:
    """Expand a scene into this item's setting (upstream's environment set-up)."""
    return [_system(ENV_ROLE),
            _user(f"{_scene_text(scene)}\n\nMake this scene concrete for one session: an `overview` of the place, "
                  "the devices and what is open on them; the `entities` the person will touch (name and state, one "
                  "line each); and the `agent_ops` an assistant could really perform here (simple, feasible, one "
                  "per line, with their arguments).")]


def _setting_text(overview: str, entities: list[str]) -> str:
    return f"Setting: {overview}\nEntities:\n" + "\n".join(f"- {e}" for e in entities)


def user(scene: dict[str, Any], overview: str, entities: list[str]) -> list[dict[str, str]]:
    """The simulated user's profile and goal (upstream: UserInfo, and a goal for the scene)."""
    return [_system(USER_ROLE),
            _user(f"Theme: {scene['theme']}\n{_setting_text(overview, entities)}\n\nInvent who you are in this "
                  "setting: name, age, job, education, characteristics (habits, skills, preferences) and "
                  "identities; and the `goal`: one concrete task you set out to finish in this session, which takes "
                  "several steps.")]


def _profile_text(profile: dict[str, Any]) -> str:
    return (f"You are {profile['name']}, {profile['age']}, {profile['job']} ({profile['education']}).\n"
            f"Characteristics: {'; '.join(profile['characteristics'])}\nIdentities: {'; '.join(profile['identities'])}\n"
            f"Your goal: {profile['goal']}")


def _history_text(history: list[str]) -> str:
    return "\n".join(history) if history else "(nothing yet: the session begins)"


def activity(profile: dict[str, Any], overview: str, history: list[str]) -> list[dict[str, str]]:
    """The user's next action toward the goal, from what happened so far (upstream: Activity)."""
    return [_system(USER_ROLE),
            _user(f"{_profile_text(profile)}\nSetting: {overview}\n\nWhat happened so far, oldest first:\n"
                  f"{_history_text(history)}\n\nDescribe your next single action toward your goal in `act` (what you "
                  "do, not what will happen). Set `is_finished` to true instead if the goal is already reached.")]


def events(scene: dict[str, Any], overview: str, history: list[str], act: str) -> list[dict[str, str]]:
    """The observable events of one activity, each with the seconds it took (upstream: Events)."""
    examples = "\n".join(f"- {e}" for e in scene["events_example"])
    return [_system(ENV_ROLE),
            _user(f"Setting: {overview}\n\nEarlier events, oldest first:\n{_history_text(history)}\n\nThe user now "
                  f"does this: {act}\n\nWrite the events an activity monitor would record for it, in order: each one "
                  "short, specific and objective, with the user as its subject, in the style of these examples:\n"
                  f"{examples}\n\nInclude small incidental actions and, now and then, a failure or surprise. For each "
                  "event give `deltatime`, the whole seconds it took (1 to 600). Put your planning in `thoughts`.")]


def judge(profile: dict[str, Any], history: list[str], task: str | None, response: str | None) -> list[dict[str, str]]:
    """The user seat judges the agent's proposal (upstream's gym without the reward model: Judge)."""
    offer = ("The assistant offers nothing this time (null)." if task is None
             else f"The assistant proposes: {task}" + (f"\nIt says: {response}" if response else ""))
    return [_system(USER_ROLE),
            _user(f"{_profile_text(profile)}\n\nWhat happened so far, oldest first:\n{_history_text(history)}\n\n"
                  f"{offer}\n\nAs this person, right now: do you accept? Accept an offer only if it would really help "
                  "you at this moment (an interruption costs you); accept no offer only if you need no help now. "
                  "Give your `thought` in the first person, then `is_accepted`.")]


def observations(events: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Upstream's observation dicts (`{"Time", "Event"}`) of (time, event) pairs."""
    return [{"Time": t, "Event": e} for t, e in events]


def history_message(obs: list[dict[str, str]]) -> str:
    """An answered batch in the agent's history, as upstream's trainset builder rewrites it:
    `json.dumps` of its observations."""
    return json.dumps(obs)


def step_message(obs: list[dict[str, str]]) -> str:
    """The batch the agent answers now: upstream's `STEP_OBJ` with its `Observations`
    (gym/components/activeagent.py), `json.dumps` with its defaults."""
    from proactive_tui.families.proactivebench.prompts import STEP_INSTRUCTION

    return json.dumps({"Instructions": STEP_INSTRUCTION, "Observations": obs})
