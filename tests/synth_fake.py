"""A scripted ProactiveEval pipeline for the fake server: what each stage replies is decided by the
item's leaf topic, so a test states each item's fate in the tree it gives (`--tree`)."""

from __future__ import annotations

import json
import re
from typing import Any

from proactive_tui.testing.fake_openai import schema_name

FATES = ("hard", "fair", "easy", "soften", "badjudge", "split", "narrow", "schema", "easyrewrite", "blank")
"""hard: no probe right; fair: one; easy: every probe right every round (too easy at the cap);
soften: two right until one refinement round, then one (fair after 1 round); badjudge: the judge
gives 1 verdict for 3; split: 2 of 5 validators say yes (rejected); narrow: 3 of 5 (kept, hard);
schema: the environment reply is not JSON (schema-invalid after the re-asks); easyrewrite: too
easy, and the rewrite says the reference no longer holds; blank: an empty user information."""


def tree(domain: str = "recommendation", fates: tuple[str, ...] = FATES) -> dict[str, Any]:
    return {domain: {"topic": "Recommendation", "children": [{"topic": f, "children": []} for f in fates]}}


def _text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.get("messages", []) if isinstance(m, dict))


def _fate(text: str) -> str:
    match = re.search(r"\bFATE-([a-z]+)", text)
    return match.group(1) if match else "hard"


def responder(request: dict[str, Any]) -> str:
    name = schema_name(request)
    text = _text(request)
    model = str(request.get("model", ""))
    if name == "TopicList":
        return json.dumps({"topics": ["Home cooking", "Travel planning", "Personal finance"]})
    if name == "EnvironmentDraft":
        topic = re.search(r"Topic: .* / ([a-z]+)", text).group(1)
        if topic == "schema":
            return "this is not JSON"
        user = "   " if topic == "blank" else f"A user FATE-{topic} who likes tea."
        return json.dumps({"user_information": user, "trigger_factor": f"It is 9 am; FATE-{topic} happens."})
    fate = _fate(text)
    if name == "TargetDraft":
        return json.dumps({"target": f"help with {fate}", "sub_targets": ["ask", "offer"]})
    if name == "TargetEnsemble":
        return json.dumps({"analysis": "merged", "target": f"Target FATE-{fate}", "sub_targets": ["ask", "offer", "agree"]})
    if name == "PredictedTarget":
        return json.dumps({"target": f"guess for FATE-{fate}" + " [r]" * text.count("[r]")})
    if name == "ProbeVerdict":
        rounds = text.count("[r]") // 3  # each of the 3 predictions repeats the round's markers
        table = {"hard": [False] * 3, "fair": [True, False, False], "easy": [True] * 3, "easyrewrite": [True] * 3,
                 "soften": [True, True, False] if rounds == 0 else [True, False, False], "badjudge": [True],
                 "split": [False] * 3, "narrow": [False] * 3}
        return json.dumps({"matches": table.get(fate, [False] * 3)})
    if name == "Rewrite":
        original = re.search(r"Text:\n(.*?)\n\nThe reference", text, re.S).group(1)
        marker = " [r]" if "Embed the text" in text and "It is" in original else ""
        return json.dumps({"text": original + marker, "reference_still_valid": fate != "easyrewrite"})
    if name == "FinalCheck":
        k = int(model.rsplit("v", 1)[-1]) if re.search(r"v\d$", model) else 1
        yes = {"split": k <= 2, "narrow": k <= 3}.get(fate, True)
        return json.dumps({"reasoning": "checked", "reference_is_best": yes})
    return "free text"


def role_args(base_url: str) -> list[str]:
    return ["--api-base", base_url, "--role", "generator=openai/gen", "--role", "probe=openai/probe",
            "--role", "judge=openai/judge", *[x for k in range(1, 6) for x in ("--role", f"validator{k}=openai/v{k}")]]
