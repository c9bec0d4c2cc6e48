"""Write a new Chronos scenario (the studio's write-your-own form, `ui.studio.write`).

The fields are a scenario file's (`env.ChronosScenario`, one branch: the file the "What if" editor
saves too): the template (scenario kind), tier and branch, persona, opening need, intention, the
constraints, the timeline of states and, in the complex tier, the intention shift with its own
constraints and states. Lists are one entry per line, cells split by `|`:

    constraint:  key | value | reveal turn (0 = in the opening message)
    state:       2026-03-04T09:00 | meets the needs: yes/no | listing; listing; ...

The shift's fields are off in the simple tier (a simple scenario has no shift). The defaults are
the family's own example (env.py), so the form validates before anything is typed.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, Select

from proactive_tui.families.chronos.env import BRANCHES, FAMILY, SCENARIO_TITLES
from proactive_tui.ui.studio.write import Draft, WriteForm, cells, split_lines, yes_no

STATES = ("2026-03-04T09:00 | no | 2017 Ford Galaxy, 7 seats, 81,000 mi, £11,900\n"
          "2026-03-09T09:00 | yes | 2018 Kia Sorento, 7 seats, 52,000 mi, £13,750")
SHIFT_STATES = ("2026-03-16T09:00 | no | 2019 Toyota Prius+, 7 seats, petrol hybrid, 70,000 mi, £17,900\n"
                "2026-03-23T09:00 | yes | 2020 Kia Sorento HEV, 7 seats, hybrid, 38,000 mi, £16,800")


class ChronosWriteForm(WriteForm):
    family_name = FAMILY
    FIELD_LABELS = {
        "title": "Title", "scenario": "Template", "branch": "Branch", "tier": "Tier", "persona": "Persona",
        "initial_need": "Initial need", "intention": "Intention", "constraints": "Constraints",
        "start_time": "Start time", "timeline": "States", "turn_limit": "Turn limit",
        "intention_shift": "Intention shift",
        "intention_shift.utterance": "Shift: what the user says",
        "intention_shift.intention": "Shift: new intention",
        "intention_shift.constraints": "Shift: constraints",
        "intention_shift.timeline": "Shift: states",
    }

    def compose_fields(self) -> ComposeResult:
        yield from self.labelled("Name", Input("my-scenario", id="f-name"), "part of the new id")
        yield from self.labelled("Title", Input("Family car under budget", id="f-title"))
        yield from self.labelled("Template", Select([(title, key) for key, title in SCENARIO_TITLES.items()],
                                                    value="car_purchase", allow_blank=False, id="f-scenario"))
        yield from self.labelled("Tier", Select([("simple (no shift)", "simple"), ("complex (one shift)", "complex")],
                                                value="simple", allow_blank=False, id="f-tier"))
        yield from self.labelled("Branch", Select([(b, b) for b in BRANCHES], value="positive", allow_blank=False,
                                                  id="f-branch"),
                                 "positive: a later state meets the needs; negative: none does")
        yield from self.labelled("Persona", self.text_area(
            "Dana, 38, nurse in Leeds with two children; careful with money; checks messages in the evening.",
            "f-persona"))
        yield from self.labelled("Initial need", self.text_area(
            "I need a used family car, nothing fancy. Can you keep an eye out for me?", "f-need", short=True))
        yield from self.labelled("Intention", Input("buy a used 7-seat family car", id="f-intention"))
        yield from self.labelled("Constraints", self.text_area(
            "budget | at most £14,000 | 1\nseats | 7 seats | 1\nmileage | under 60,000 miles | 2", "f-constraints"),
            "key | value | reveal turn, one per line")
        yield from self.labelled("Start time", Input("2026-03-02T09:00", id="f-start"))
        yield from self.labelled("States", self.text_area(STATES, "f-states", tall=True),
                                 "time | meets the needs (yes/no) | listings split by ;")
        yield from self.labelled("Turn limit", Input("24", id="f-turns"))
        yield from self.labelled("Shift: what the user says", self.text_area(
            "Actually, with fuel prices as they are I'd rather have a hybrid. Still 7 seats, budget up to £17,000.",
            "f-shift-utterance", short=True), "complex tier only")
        yield from self.labelled("Shift: new intention", Input("buy a used 7-seat hybrid", id="f-shift-intention"))
        yield from self.labelled("Shift: constraints", self.text_area(
            "budget | at most £17,000\nseats | 7 seats\nfuel | hybrid", "f-shift-constraints"), "key | value")
        yield from self.labelled("Shift: states", self.text_area(SHIFT_STATES, "f-shift-states", tall=True),
                                 "time | meets the new needs (yes/no) | listings split by ;")

    def on_mount(self) -> None:
        super().on_mount()
        self._shift_fields()

    @on(Select.Changed, "#f-tier")
    def _shift_fields(self) -> None:
        """The shift's fields take input only in the complex tier."""
        simple = self.value("f-tier") == "simple"
        for widget in self.query("#f-shift-utterance, #f-shift-intention, #f-shift-constraints, #f-shift-states"):
            widget.disabled = simple

    def record_problem_label(self, message: str) -> str:
        """The scenario's own rules (tier, branch, order of states) say which part in the message."""
        if "after the shift" in message or "intention_shift" in message:
            return "Shift: states" if "state" in message else "Tier"
        if "branch" in message:
            return "Branch"
        if "timeline" in message or "state" in message:
            return "States"
        return "Scenario"

    def _states(self, label: str, text: str, problems: list[str]) -> list[dict[str, Any]]:
        states = []
        for n, line in split_lines(text):
            time, meets, listings = cells(line, 3)[:3]
            verdict = yes_no(meets)
            if verdict is None:
                problems.append(f"{label}, line {n}: meets the needs is yes or no (got {meets!r})")
                continue
            states.append({"time": time, "meets_needs": verdict,
                           "listings": [item.strip() for item in listings.split(";") if item.strip()]})
        return states

    def draft(self) -> tuple[Draft | None, list[str]]:
        problems: list[str] = []
        name = self.value("f-name").strip()
        if (problem := self.name_problem("Name", name)):
            problems.append(problem)
        constraints = []
        for n, line in split_lines(self.value("f-constraints")):
            key, value, turn = cells(line, 3)[:3]
            try:
                reveal = int(turn or 0)
            except ValueError:
                problems.append(f"Constraints, line {n}: the reveal turn is a whole number (got {turn!r})")
                continue
            constraints.append({"key": key, "value": value, "reveal_turn": reveal})
        turns = self.value("f-turns").strip()
        try:
            turn_limit: Any = int(turns)
        except ValueError:
            problems.append(f"Turn limit: a whole number (got {turns!r})")
            turn_limit = None
        scenario: dict[str, Any] = {
            "title": self.value("f-title").strip(), "scenario": self.value("f-scenario"),
            "branch": self.value("f-branch"), "tier": self.value("f-tier"),
            "persona": self.value("f-persona").strip(), "initial_need": self.value("f-need").strip(),
            "intention": self.value("f-intention").strip(), "constraints": constraints,
            "start_time": self.value("f-start").strip(),
            "timeline": self._states("States", self.value("f-states"), problems),
            "turn_limit": turn_limit,
        }
        if scenario["tier"] == "complex":
            shift_constraints = {}
            for n, line in split_lines(self.value("f-shift-constraints")):
                key, value = cells(line, 2)[:2]
                if not key or not value:
                    problems.append(f"Shift: constraints, line {n}: write key | value")
                    continue
                shift_constraints[key] = value
            scenario["intention_shift"] = {
                "utterance": self.value("f-shift-utterance").strip(),
                "intention": self.value("f-shift-intention").strip(),
                "constraints": shift_constraints,
                "timeline": self._states("Shift: states", self.value("f-shift-states"), problems),
            }
        if problems:
            return None, problems
        return Draft(f"{FAMILY}/{name}.json", scenario), []
