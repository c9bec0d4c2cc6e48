"""Write a new ProactiveEval item (the studio's write-your-own form, `ui.studio.write`).

The fields are upstream's record (`env.ProactiveEvalItem`): the environment (user information,
trigger factor), the target, its sub-targets and the topic; the domain and tier are the folder
and file the item is written to, as upstream's layout has them. The defaults are one complete
item, so the form validates before anything is typed.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Select

from proactive_tui.families.proactiveeval.env import DOMAINS, FAMILY, TIERS
from proactive_tui.ui.studio.write import Draft, WriteForm, split_lines

DEFAULTS = {
    "user_information": "Sam, 34, a nurse on night shifts who wants to eat better but rarely has time to cook.",
    "trigger_factor": "Sam has just finished a 12-hour shift and opens a food delivery app at 8 am.",
    "target": "Help Sam to a quick, healthy breakfast instead of a takeaway.",
    "sub_target": ["Ask what Sam has at home", "Suggest two ten-minute options from it",
                   "Offer one healthy delivery option as a fallback"],
    "topic": "Healthy eating / quick breakfasts",
}


class ProactiveEvalWriteForm(WriteForm):
    family_name = FAMILY
    FIELD_LABELS = {
        "environment.user_information": "User information",
        "environment.trigger_factor": "Trigger factor",
        "environment": "Environment",
        "target": "Target",
        "sub_target": "Sub-targets",
        "topic": "Topic",
    }

    def compose_fields(self) -> ComposeResult:
        yield from self.labelled("Name", Input("my-item", id="f-name"), "part of the new id")
        yield from self.labelled("Domain", Select([(title, key) for key, title in DOMAINS.items()],
                                                  value="recommendation", allow_blank=False, id="f-domain"))
        yield from self.labelled("Tier", Select([(tier, tier) for tier in TIERS], value="fair", allow_blank=False,
                                                id="f-tier"))
        yield from self.labelled("User information", self.text_area(DEFAULTS["user_information"], "f-user"))
        yield from self.labelled("Trigger factor", self.text_area(DEFAULTS["trigger_factor"], "f-trigger"),
                                 "what just happened, that the assistant reacts to")
        yield from self.labelled("Target", self.text_area(DEFAULTS["target"], "f-target", short=True))
        yield from self.labelled("Sub-targets", self.text_area("\n".join(DEFAULTS["sub_target"]), "f-subtargets"),
                                 "one per line, in order")
        yield from self.labelled("Topic", Input(DEFAULTS["topic"], id="f-topic"))

    def draft(self) -> tuple[Draft | None, list[str]]:
        name = self.value("f-name").strip()
        domain, tier = self.value("f-domain"), self.value("f-tier")
        problem = self.name_problem("Name", name)
        if problem:
            return None, [problem]
        item: dict[str, Any] = {
            "environment": {"user_information": self.value("f-user").strip(),
                            "trigger_factor": self.value("f-trigger").strip()},
            "target": self.value("f-target").strip(),
            "sub_target": [line for _, line in split_lines(self.value("f-subtargets"))],
        }
        topic = self.value("f-topic").strip()
        if topic:
            item["topic"] = topic
        # the id names the item, not its place in a one-item file (position 0 is a sample's id)
        return Draft(f"{FAMILY}/{domain}/{tier}.json", [item], env_id=f"{FAMILY}/{domain}/{tier}/{name}"), []
