"""Chronos (arXiv 2601.09382): keep a long-term intent on a simulated timeline, with reminders,
monitoring and follow-ups, judged turn by turn against an expected-action oracle.

The declaration the registry loads; each part lives in its own module and is imported on first use.
"""

from __future__ import annotations

from proactive_tui.core.family import Family, Parts, RunFlag, SourceRef, TurnUnit

family = Family(
    name="chronos",
    title="Chronos",
    summary="keeps a long-term intent on a simulated timeline with reminders and follow-ups",
    source=SourceRef(paper="Long-term Task-oriented Agent: Proactive Long-term Intent Maintenance in Dynamic Environments (ChronosBench)",
                     arxiv="2601.09382",
                     distinct_from=('"Chronos", a memory system for LLM agents (arXiv 2603.16862)',)),
    package=__name__,
    # The judge seat reads the user's reply to an offer (explicit confirmation or refusal).
    seats=("agent", "user", "judge"),
    play_modes={"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"},
    turn_unit=TurnUnit(name="exchange", plural="exchanges",
                       meaning="the agent's turns answering one user message or monitor scan (answers to its own "
                               "INFO_RETRIEVAL continue the exchange); the turn limit counts exchanges"),
    settings_model_path=".settings:ChronosSettings",
    run_flags=(
        RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N", "help": "lower the scenario's turn limit"}),
        RunFlag("--prompt-variant", "prompt_variant", {"choices": ["standard", "guided"],
                                                       "help": "the agent's prompt: guided (default; the basic prompt with the paper's "
                                                               "extra guidance, as the paper ran closed models) or "
                                                               "standard (basic only, as the paper ran base open models)"}),
        RunFlag("--user-simulator", "user_simulator", {"choices": ["model", "scripted"],
                                                       "help": "who plays the user: the user seat's model (default) or the "
                                                               "scripted persona (offline fallback, no model)"}),
        RunFlag("--confirmation-reader", "confirmation_reader", {"choices": ["judge", "keywords"],
                                                                 "help": "what reads the user's reply to an offer: the judge "
                                                                         "seat's model (default) or the keyword check (offline fallback)"}),
    ),
    # No regrade part: success and the action checks are the rule-based oracle's, which a judge
    # model does not change; the one model judgement (the confirmation reading of the user's
    # replies) decides where the dialogue goes next, so only running it again (a fork) can give
    # a different reading.
    not_regradable_reason=("they are graded by rules (the oracle), and their one model judgement, reading "
                           "whether the user confirmed, steers the dialogue, so judging it again would need "
                           "a different dialogue; fork the session with another --judge instead"),
    parts=Parts(
        environments=".env:ENVIRONMENTS",
        engine=".protocol:ENGINE",
        record=".record:RECORD",
        report=".report:REPORT",
        batch=".batch:BATCH",
        resume=".resume:RESUME",
        fork=".fork:FORK",
        rerun=".record:RERUN",
        generate=".generate:GENERATE",
        setup_screen=".ui.setup:ChronosSetupScreen",
        session_screen=".ui.session:ChronosSessionScreen",
        studio_view=".ui.studio_view:ChronosStudioView",
        write_form=".ui.write_form:ChronosWriteForm",
        exporters=(".export:EXPORTER",),
        printer=".cli:ChronosPrinter",
        reference=".testing:reference_session",
    ),
)
