"""Countdown: a fourth family that lives only under tests/, to prove the `Family` interface.

The agent says one number per turn, counting down from the environment's `start` to zero; the
user replies; a rule checks every number. It is installed by an entry point
(`countdown = plugin_family.countdown:family`, see tests/plugin_helpers.py) and imports no other
family, exactly like a separate package would. Heavy parts are imported inside the methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, RunFlag, SourceRef
from plugin_family.countdown import env as env_module
from plugin_family.countdown.record import CountdownSection, CountdownSettings

HERE = Path(__file__).resolve().parent


class CountdownFamily(Family):
    name = "countdown"
    title = "Countdown"
    summary = "says one number per turn, counting down to zero (a test-only plug-in family)"
    source = SourceRef(paper="A test-only family proving the plug-in interface", arxiv="0000.00000")
    seats = ("agent", "user")
    replayable = True
    settings_model = CountdownSettings
    section_model = CountdownSection
    env_model = env_module.CountdownEnv
    run_flags = (RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N", "help": "stop after N numbers"}),)

    def sample_sources(self) -> list[Path]:
        return [HERE / "samples"]

    def claims_shape(self, data: Any) -> bool:
        return env_module.is_countdown(data)

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]):
        return env_module.load_file(file.relative_stem(self.name), file.display, data)

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return env_module.describe(env, reveal_reference)

    def build_session(self, spec, env, seats, session_id=None, resume_from=None):
        from plugin_family.countdown.protocol import CountdownSession

        return CountdownSession(env, seats["agent"], seats["user"], CountdownSettings(**spec.settings),
                                session_id=session_id, models=spec.models_summary())

    def complete_turns(self, record) -> int:
        return len(record.section.checks)

    def event_types(self):
        from plugin_family.countdown.events import EVENTS

        return EVENTS

    def legacy_event_types(self):
        from plugin_family.countdown.events import LEGACY_TYPES

        return LEGACY_TYPES

    def new_section(self, record):
        from plugin_family.countdown.record import new_section

        return new_section(record)

    def apply(self, record, event) -> None:
        from plugin_family.countdown.record import apply

        apply(record, event)

    def scores(self, record):
        from plugin_family.countdown.record import scores

        return scores(record)

    def report(self, record):
        from plugin_family.countdown.record import report

        return report(record)

    def printer_class(self):
        from plugin_family.countdown.cli import CountdownPrinter

        return CountdownPrinter

    def exporters(self):
        from plugin_family.countdown.export import EXPORTER

        return [EXPORTER]

    def setup_screen(self):
        from plugin_family.countdown.ui.setup import CountdownSetupScreen

        return CountdownSetupScreen

    def session_screen(self):
        from plugin_family.countdown.ui.session import CountdownSessionScreen

        return CountdownSessionScreen


family = CountdownFamily()
