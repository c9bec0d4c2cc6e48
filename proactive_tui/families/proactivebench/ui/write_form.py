"""Write a new ProactiveBench trace (the studio's write-your-own form, `ui.studio.write`).

A trace is a list of timed user-activity events (`env.TraceEvent`), each with upstream's
annotations: `task_status` (help is welcome at this event: what the user seat accepts) and
`agent_response.candidate_task` (the help the annotators would accept). The form writes one event
per line, cells split by `|`:

    seconds after the start | what the user does | help welcome (yes/no) | task; task; ...

The theme is the file name's prefix (`coding_`, `writing_`, `life_`), as upstream names its
traces and as the loader reads a trace outside the splits. The times are unix seconds from the
start time (UTC), as upstream writes them. The defaults are a short complete trace.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from textual.app import ComposeResult
from textual.widgets import Input, Select

from proactive_tui.families.proactivebench.env import FAMILY
from proactive_tui.ui.studio.write import Draft, WriteForm, cells, split_lines, yes_no

THEMES = {"coding": "Coding", "writing": "Writing", "life": "Daily life"}
"""File-name prefix -> the theme the loader reads from it (env._theme_from_stem)."""

EVENTS = ("0 | The user opens 'report.py' in VS Code. | no\n"
          "40 | The user runs 'python report.py' and sees 'ModuleNotFoundError: No module named pandas'. | yes | "
          "Install pandas in the project's environment with pip install pandas\n"
          "95 | The user searches the web for 'pip install pandas venv'. | no")


class ProactiveBenchWriteForm(WriteForm):
    family_name = FAMILY
    RECORD_LINES = "Events"
    FIELD_LABELS = {"observation.event": "event", "observation.time": "time", "observation": "event"}

    def compose_fields(self) -> ComposeResult:
        yield from self.labelled("Name", Input("my-trace", id="f-name"), "part of the new id")
        yield from self.labelled("Theme", Select([(title, prefix) for prefix, title in THEMES.items()],
                                                 value="coding", allow_blank=False, id="f-theme"))
        yield from self.labelled("Start time (UTC)", Input("2026-01-01T09:00", id="f-start"))
        yield from self.labelled("Events", self.text_area(EVENTS, "f-events", tall=True),
                                 "seconds after start | what the user does | help welcome (yes/no) | task; task")

    def draft(self) -> tuple[Draft | None, list[str]]:
        problems: list[str] = []
        name = self.value("f-name").strip()
        if (problem := self.name_problem("Name", name)):
            problems.append(problem)
        start_text = self.value("f-start").strip()
        try:
            start = datetime.fromisoformat(start_text)
            start = start if start.tzinfo else start.replace(tzinfo=timezone.utc)
        except ValueError:
            problems.append(f"Start time (UTC): not an ISO 8601 time: {start_text!r} (write e.g. 2026-01-01T09:00)")
            start = None
        events: list[dict[str, Any]] = []
        last = -1.0
        lines = split_lines(self.value("f-events"))
        if not lines:
            problems.append("Events: write at least one event, one per line")
        for n, line in lines:
            offset, text, help_cell, tasks = cells(line, 4)[:4]
            try:
                seconds = float(offset)
            except ValueError:
                problems.append(f"Events, line {n}, time: seconds after the start, a number (got {offset!r})")
                continue
            if seconds < last:
                problems.append(f"Events, line {n}, time: {offset} is earlier than the event before it")
            last = max(last, seconds)
            welcome = yes_no(help_cell)
            if welcome is None:
                problems.append(f"Events, line {n}: help welcome is yes or no (got {help_cell!r})")
                continue
            candidates = [task.strip() for task in tasks.split(";") if task.strip()]
            if candidates and not welcome:
                problems.append(f"Events, line {n}: tasks are the help to accept, so help welcome must be yes")
            when = f"{start.timestamp() + seconds:.1f}" if start is not None else offset
            events.append({"observation": {"time": when, "event": text},
                           "agent_response": {"candidate_task": candidates}, "task_status": welcome})
        if problems:
            return None, problems
        return Draft(f"{FAMILY}/{self.value('f-theme')}_{name}.json", events), []
