"""A scripted ProactiveBench gym for the fake server: what each stage replies is decided by the
item's scene (`SCENE_FATES` by default, a test may give its own), so a test states each trace's
fate by the scenes it asks for.

ok: three batches of two events each (30 s apart), the agent proposes a task on batches 1 and 3
and null on 2; the user (or the reward judge) accepts a task and rejects a null, then the user is
finished (15 calls). schema: the events reply is not JSON (schema-invalid after the re-asks).
blank: the events reply holds an empty event. late: as ok, but the events reply of batch 3 is not
JSON (a rejection after two whole batches: a trace a person may keep).
"""

from __future__ import annotations

import json
import re
from typing import Any

from proactive_tui.testing.fake_openai import schema_name

SCENE_FATES = {"coding": "ok", "writing": "schema", "daily_life": "blank"}
THEMES = {"Coding": "coding", "Writing": "writing", "Daily life": "daily_life"}


def _text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []) if isinstance(m, dict))


def make_responder(fates: dict[str, str] | None = None):
    fates = {**SCENE_FATES, **(fates or {})}

    def respond(request: dict[str, Any]) -> str:
        name = schema_name(request)
        text = _text(request)
        if name == "SceneSetting":
            theme = re.search(r"Theme: (.+)", text).group(1).strip()
            return json.dumps({"overview": f"A desk. SCENE-{THEMES[theme]}", "entities": ["Editor", "Browser"],
                               "agent_ops": ["browser.open(url)"]})
        scene = re.search(r"SCENE-([a-z_]+)", text)
        fate = fates.get(scene.group(1), "ok") if scene else "ok"
        if name == "UserProfile":
            return json.dumps({"name": "Ada", "age": 36, "job": "developer", "education": "BSc", "characteristics":
                               ["tidy"], "identities": ["parent"], "goal": "fix the failing test"})
        if name == "Activity":
            done = text.count("the user accepted") + text.count("the user rejected")
            return json.dumps({"is_finished": done >= 3, "act": f"step {done + 1}"})
        if name == "EventBatch":
            act = re.search(r"The user now does this: (.+)", text).group(1)
            if fate == "schema" or (fate == "late" and act == "step 3"):
                return "this is not JSON"
            first = "  " if fate == "blank" else f"The user does {act} (a)."
            return json.dumps({"thoughts": "two events", "events": [{"event": first, "deltatime": 30},
                                                                    {"event": f"The user does {act} (b).",
                                                                     "deltatime": 30}]})
        if name == "ProposalReply":
            batch = sum(1 for m in request["messages"] if m.get("role") == "assistant") + 1
            task = None if batch % 2 == 0 else f"Offer help with batch {batch}"
            return json.dumps({"Purpose": "work", "Thoughts": "watching", "Proactive Task": task,
                               "Response": None if task is None else "Shall I?"})
        if name == "UserJudge":
            return json.dumps({"thought": "I see.", "is_accepted": "The assistant proposes:" in text})
        if name == "JudgeVerdict":
            null = '"Proposed Task": null' in text
            return json.dumps({"thought": "As the user, I decide.", "judgement": "rejected" if null else "accepted"})
        return "free text"

    return respond


def role_args(base_url: str, judge: bool = False) -> list[str]:
    return ["--api-base", base_url, "--role", "environment=openai/env", "--role", "user=openai/user",
            "--role", "agent=openai/agent", *(["--role", "judge=openai/rm"] if judge else [])]
