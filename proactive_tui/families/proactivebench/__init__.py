"""ProactiveBench (arXiv 2410.12361, thunlp/ProactiveAgent): after each observed user-activity
event the agent proposes a task or stays quiet; a reward judge (or a person) accepts or rejects.

The declaration the registry loads; each part lives in its own module and is imported on first use.
"""

from __future__ import annotations

from proactive_tui.core.family import Family, Parts, RunFlag, SourceRef, TurnUnit
from proactive_tui.families.proactivebench.settings import AGENT_TEMPERATURE, FEEDBACK_HELP

MANIFEST = "proactivebench_sessions.json"
"""Written by the `proactivebench` export beside the traces; not an environment (`env.MANIFEST`)."""

family = Family(
    name="proactivebench",
    title="ProactiveBench",
    summary="proposes help (or stays quiet) after each observed user-activity event",
    source=SourceRef(paper="Proactive Agent: Shifting LLM Agents from Reactive Responses to Active Assistance",
                     arxiv="2410.12361", repository="https://github.com/thunlp/ProactiveAgent",
                     distinct_from=('the multimodal "ProactiveBench" (arXiv 2603.19466)',)),
    package=__name__,
    seats=("agent", "user"),
    seat_labels={"user": "judge (user)"},
    play_modes={"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"},
    no_frozen_user_reason="ProactiveBench's observations come from the trace and its user seat judges",
    turn_unit=TurnUnit(name="event", plural="events",
                       meaning="one observed event of the trace: the agent's answer to it and the judge's verdict"),
    step_starts=("proactivebench.trace_observation",),
    companion_files=("splits.json", MANIFEST),
    settings_model_path=".settings:ProactiveBenchSettings",
    run_flags=(
        RunFlag("--retries", "retries", {"type": int, "metavar": "N",
                                         "help": "after a rejection the agent may answer the event again, up to N times "
                                                 "(default 0, as upstream's evaluation)"}),
        RunFlag("--candidates", "candidates", {"type": int, "choices": (1, 3),
                                               "help": "tasks proposed per event (default 1); 3 is the paper's ablation, "
                                                       "each task judged and counted, as upstream counts"}),
        RunFlag("--feedback", "feedback", {"action": "store_const", "const": True, "help": FEEDBACK_HELP}),
        RunFlag("--no-feedback", "feedback", {"action": "store_const", "const": False,
                                              "help": "no verdict feedback (the default, upstream's evaluation)"}),
        RunFlag("--max-events", "max_events", {"type": int, "metavar": "N", "help": "stop after the first N events of the trace"}),
        RunFlag("--agent-temperature", "agent_temperature", {
            "type": float, "metavar": "T",
            "help": f"the agent model's temperature (default: its configured one, else {AGENT_TEMPERATURE}, "
                    "as upstream's evaluation)"}),
    ),
    parts=Parts(
        environments=".env:ENVIRONMENTS",
        engine=".protocol:ENGINE",
        record=".record:RECORD",
        report=".report:REPORT",
        batch=".batch:BATCH",
        resume=".resume:RESUME",
        fork=".fork:FORK",
        regrade=".regrade:REGRADE",
        generate=".generate:GENERATE",
        setup_screen=".ui.setup:ProactiveBenchSetupScreen",
        session_screen=".ui.session:ProactiveBenchSessionScreen",
        studio_view=".ui.studio_view:ProactiveBenchStudioView",
        write_form=".ui.write_form:ProactiveBenchWriteForm",
        exporters=(".export:EXPORTER",),
        printer=".cli:ProactiveBenchPrinter",
        eval_commands=".eval_cli:add_eval_commands",
    ),
)
