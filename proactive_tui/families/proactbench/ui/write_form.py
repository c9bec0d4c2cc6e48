"""Write a new ProactBench dialogue (the studio's write-your-own form, `ui.studio.write`).

The fields make one row of upstream's `final_dialogues.jsonl` (`env.Dialogue`): the dialogue's
turns as they were "recorded" and its trigger points, each with the rubric written before the
assistant answered. Offline (the default protocol) the agent under test answers each trigger turn
after the turns before it, their replies as written here; the judge grades its reply against the
trigger's rubric. Lists are one entry per line, cells split by `|`:

    turn:           what the user says | the recorded assistant reply
    trigger point:  turn | EMERGENT, CRITICAL or RECOVERY | PASS when | PARTIAL when | FAIL when

A turn's first `|` ends the user's part (the reply may hold more); a trigger's fifth cell takes
the rest of the line. Turns are numbered from 1 in the order written.

Checked before it is kept, beyond the family's loader and model (which refuse a trigger at a turn
the dialogue does not have, or two triggers at one turn): a trigger's user message is not empty (upstream's
offline evaluation skips such a trigger), every turn before the last trigger has its reply (the
agent under test is shown it as the dialogue so far), each rubric has all three criteria and a
dialogue has at most six trigger points (upstream's Planner's cap).

What the row holds beyond the fields: `blueprint_id` and `unique_id_eval` are the name (the id),
`evaluated_model` is `env.WRITTEN_BY` (a person wrote the recorded replies, no curation model),
and no Planner blocks: online, the Planner has no recorded anchors to plan from. The defaults are
one complete dialogue, so the form validates before anything is typed.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Select

from proactive_tui.families.proactbench.env import (
    CATEGORIES, FAMILY, MAX_TRIGGERS, TRIGGER_TYPES, WRITTEN_BY, category_name,
)
from proactive_tui.ui.studio.write import Draft, WriteForm, split_lines

TURNS = (
    "Can you suggest a weekly running plan? I signed up for a half marathon in October, my first race since my "
    "knee surgery last spring. | Here is a 16-week plan: three easy runs, one long run that grows by a kilometre "
    "a week, and one rest day.\n"
    "Thanks. I mostly run after work, around 7pm, along the canal path. | Evening runs are fine; keep the long "
    "run for a weekend morning when you are fresher.\n"
    "The canal gets dark early from September, and my physio said to avoid uneven ground for a while. | Then move "
    "the weekday runs to a lit, even route and keep the canal for daylight weekends.\n"
    "Great, that's the plan sorted. Thanks! | Good luck with the training!"
)
TRIGGERS = (
    "1 | EMERGENT | Infers from the knee surgery that the build-up should be gentler or cleared with the physio, "
    "and adjusts the plan unasked | Mentions the knee without changing the plan | A generic plan that ignores "
    "the surgery\n"
    "3 | CRITICAL | Combines the dark evenings, the uneven path and the knee into one concrete change the user did "
    "not ask for | Addresses one of the details, not their combination | Only answers the literal question\n"
    "4 | RECOVERY | After the wrap-up, adds a grounded next step (a check-in with the physio before the long runs "
    "grow, reflective kit for the evenings) | A related but generic tip | Only closes the conversation"
)


class ProactBenchWriteForm(WriteForm):
    family_name = FAMILY
    FIELD_LABELS = {"unique_id_eval": "Name", "blueprint_id": "Name", "scenario_id": "Scenario",
                    "category_key": "Category", "turn_records": "Turns", "trigger_points": "Trigger points"}

    def compose_fields(self) -> ComposeResult:
        yield from self.labelled("Name", Input("my-dialogue", id="f-name"), "part of the new id")
        yield from self.labelled("Scenario", Input("RUNNING_01", id="f-scenario"), "e.g. PROFESSIONAL_01")
        yield from self.labelled("Category", Select([(category_name(key), key) for key in CATEGORIES],
                                                    value=CATEGORIES[0], allow_blank=False, id="f-category"))
        yield from self.labelled("Turns", self.text_area(TURNS, "f-turns", tall=True),
                                 "one turn per line: what the user says | the recorded assistant reply")
        yield from self.labelled("Trigger points", self.text_area(TRIGGERS, "f-triggers", tall=True),
                                 "turn | EMERGENT, CRITICAL or RECOVERY | PASS when | PARTIAL when | FAIL when")

    def _turns(self, problems: list[str]) -> list[dict[str, Any]]:
        turns = []
        lines = split_lines(self.value("f-turns"))
        if not lines:
            problems.append("Turns: write at least one turn, one per line")
        for n, line in lines:
            user, _bar, reply = line.partition("|")
            turns.append({"turn": n, "user_message": user.strip(), "assistant_response": reply.strip(), "line": n})
        return turns

    def _triggers(self, problems: list[str]) -> list[dict[str, Any]]:
        triggers = []
        lines = split_lines(self.value("f-triggers"))
        if not lines:
            problems.append("Trigger points: write at least one, one per line (nothing would be scored)")
        if len(lines) > MAX_TRIGGERS:
            problems.append(f"Trigger points: at most {MAX_TRIGGERS} (upstream's cap), not {len(lines)}")
        for n, line in lines:
            cells = [part.strip() for part in line.split("|", 4)]
            turn_cell, kind, *criteria = cells + [""] * (5 - len(cells))
            try:
                turn = int(turn_cell)
            except ValueError:
                problems.append(f"Trigger points, line {n}, turn: a turn number (got {turn_cell!r})")
                continue
            if kind.upper() not in TRIGGER_TYPES:
                problems.append(f"Trigger points, line {n}, type: {', '.join(TRIGGER_TYPES)} (got {kind!r})")
                continue
            missing = [level for level, text in zip(("PASS", "PARTIAL", "FAIL"), criteria) if not text]
            if missing:
                problems.append(f"Trigger points, line {n}: no {' or '.join(missing)} criteria "
                                "(write turn | type | PASS when | PARTIAL when | FAIL when)")
                continue
            triggers.append({"turn": turn, "evaluation_rubric": {
                "type": kind.upper(), "pass_criteria": criteria[0], "partial_criteria": criteria[1],
                "fail_criteria": criteria[2]}})
        return triggers

    def draft(self) -> tuple[Draft | None, list[str]]:
        problems: list[str] = []
        name = self.value("f-name").strip()
        if (problem := self.name_problem("Name", name)):
            problems.append(problem)
        scenario = self.value("f-scenario").strip()
        if not scenario:
            problems.append("Scenario: write the scenario's name (the title the picker lists it by)")
        turns = self._turns(problems)
        triggers = self._triggers(problems)
        by_turn = {t["turn"]: t for t in turns}
        last = max((t["turn"] for t in triggers), default=0)
        for trigger in triggers:
            said = by_turn.get(trigger["turn"])
            if said is not None and not said["user_message"]:
                problems.append(f"Turns, line {said['line']}: turn {said['turn']} is a trigger point, so the user "
                                "must say something there")
        for turn in turns:
            if turn["turn"] < last and not turn["assistant_response"]:
                problems.append(f"Turns, line {turn['line']}: the recorded reply is empty, but the agent under test "
                                f"is shown it before the trigger at turn {last} (write user | reply)")
        if problems:
            return None, problems
        row: dict[str, Any] = {
            "blueprint_id": name, "scenario_id": scenario, "unique_id_eval": name,
            "category_key": self.value("f-category"), "evaluated_model": WRITTEN_BY,
            "num_turns_completed": len(turns), "trigger_points": triggers,
            "turn_records": [{k: v for k, v in t.items() if k != "line"} for t in turns],
        }
        return Draft(f"{FAMILY}/{name}.json", row), []
