"""Countdown: a fourth family that lives only under tests/, to prove the `Family` interface.

The agent says one number per turn, counting down from the environment's `start` to zero; the
user replies; a rule checks every number. It is installed by an entry point
(`countdown = plugin_family.countdown:family`, see tests/plugin_helpers.py) and imports no other
family, exactly like a separate package would.

It shows the minimum a family is: this declaration and its four required parts (environments,
engine, record, report), here with a setup and a session screen and a printer so it can be played;
no fork, resume, regrade, re-run, batch or generate part, so it offers none of those.
"""

from __future__ import annotations

from proactive_tui.core.family import Family, Parts, RunFlag, SourceRef

family = Family(
    name="countdown",
    title="Countdown",
    summary="says one number per turn, counting down to zero (a test-only plug-in family)",
    source=SourceRef(paper="A test-only family proving the plug-in interface", arxiv="0000.00000"),
    package=__name__,
    seats=("agent", "user"),
    replayable=True,
    settings_model_path=".record:CountdownSettings",
    run_flags=(RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N", "help": "stop after N numbers"}),),
    parts=Parts(
        environments=".env:ENVIRONMENTS",
        engine=".protocol:ENGINE",
        record=".record:RECORD",
        report=".record:REPORT",
        setup_screen=".ui.setup:CountdownSetupScreen",
        session_screen=".ui.session:CountdownSessionScreen",
        exporters=(".export:EXPORTER",),
        printer=".cli:CountdownPrinter",
    ),
)
