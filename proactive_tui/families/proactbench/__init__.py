"""ProactBench (Boson AI, arXiv 2605.09228): conversational proactivity scored at planted trigger
points (EMERGENT, CRITICAL, RECOVERY), each against a rubric fixed before the assistant answers.

The `family` object is what the registry loads (entry point `proactive_tui.families`); every heavy
part (protocol, printer, screens, exporters) is imported inside the method that needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, SourceRef, TurnUnit
from proactive_tui.families.proactbench import env as env_module
from proactive_tui.families.proactbench.settings import ProactBenchSettings

HERE = Path(__file__).resolve().parent


class ProactBenchFamily(Family):
    name = "proactbench"
    title = "ProactBench"
    summary = "answers at planted trigger turns, each judged against a rubric written before the reply"
    source = SourceRef(paper="ProactBench: Beyond What The User Asked For", arxiv="2605.09228",
                       repository="github.com/boson-ai/ProactBench",
                       distinct_from=("ProactiveBench (arXiv 2410.12361)",))
    seats = ("agent", "user", "judge")
    seat_labels = {"judge": "judge (offline) / planner (online)", "user": "user agent (online)"}
    settings_model = ProactBenchSettings
    env_model = env_module.ProactBenchEnv
    file_suffixes = (".json", ".jsonl")
    replayable = True
    """History replays a session in its screen (`ProactBenchSessionScreen` takes `replay_events`)."""
    turn_unit = TurnUnit(name="turn", plural="turns", meaning="one user message and the assistant's reply to it")

    @property
    def section_model(self) -> type:  # type: ignore[override]
        from proactive_tui.families.proactbench.record import ProactBenchSection

        return ProactBenchSection

    # -- environments ---------------------------------------------------------------------

    def sample_sources(self) -> list[Path]:
        return [HERE / "samples"]

    def claims_location(self, file: FileCandidate) -> bool:
        return self.name in file.folders or file.path.name.lower().startswith("final_dialogues")

    def claims_shape(self, data: Any) -> bool:
        from proactive_tui.envs.reading import JsonLines

        first = data.first() if isinstance(data, JsonLines) else (data[0] if isinstance(data, list) and data else data)
        return isinstance(first, dict) and "unique_id_eval" in first and "trigger_points" in first

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]):
        """A `.jsonl` of dialogue rows (upstream's file as it is), or a `.json` holding one row or an
        array of rows (a row written by hand); each bad row is its own problem line."""
        from proactive_tui.envs.problems import LoadProblem
        from proactive_tui.envs.reading import JsonLines, json_kind

        if isinstance(data, JsonLines):
            envs, problems = env_module.load_rows(file.display, data.rows)
            return envs, [*data.problems, *problems]
        if isinstance(data, dict):
            return env_module.load_rows(file.display, [(1, data)])
        if isinstance(data, list):
            envs, problems = env_module.load_rows(file.display, list(enumerate(data, 1)))
            for problem in problems:  # a .json array: say record, not line
                problem.record, problem.line = problem.line, None
            return envs, problems
        return [], [LoadProblem(file=file.display, message=f"expected dialogue rows (one JSON object per line), got {json_kind(data)}")]

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return env_module.describe(env, reveal_reference)

    # -- events and the run record ---------------------------------------------------------

    def event_types(self) -> tuple[type, ...]:
        from proactive_tui.families.proactbench.events import EVENT_TYPES

        return EVENT_TYPES

    def apply(self, record: Any, event: Any) -> None:
        from proactive_tui.families.proactbench.record import apply_event

        apply_event(record, event)


    # -- screens ------------------------------------------------------------------------------

    def setup_screen(self):
        from proactive_tui.families.proactbench.ui.setup import ProactBenchSetupScreen

        return ProactBenchSetupScreen

    def session_screen(self):
        from proactive_tui.families.proactbench.ui.session import ProactBenchSessionScreen

        return ProactBenchSessionScreen


family = ProactBenchFamily()
