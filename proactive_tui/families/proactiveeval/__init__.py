"""ProactiveEval (arXiv 2508.20973): target planning, then dialogue guidance toward the target.

The declaration the registry loads (entry point `proactive_tui.families`); each part lives in its
own module and is imported on first use.
"""

from __future__ import annotations

from proactive_tui.core.family import Family, Parts, RunFlag, SourceRef, TurnUnit

family = Family(
    name="proactiveeval",
    title="ProactiveEval",
    summary="plans a target and sub-targets, then guides a simulated user toward it (6 domains)",
    source=SourceRef(paper="ProactiveEval: A Unified Evaluation Framework for Proactive Dialogue Agents",
                     arxiv="2508.20973"),
    package=__name__,
    seats=("agent", "user", "judge"),
    play_modes={"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"},
    replayable=True,
    group_by_tier=True,
    turn_unit=TurnUnit(name="turn", plural="turns", meaning="one agent message and the user's reply to it"),
    # The paper runs every environment at each of the three levels.
    sweeps={"agreeableness": ("low", "medium", "high")},
    settings_model_path=".settings:ProactiveEvalSettings",
    run_flags=(
        RunFlag("--agreeableness", "agreeableness", {"choices": ("low", "medium", "high"),
                                                     "help": "the simulated user's agreeableness (default medium)"}),
        RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N", "help": "turns before the dialogue ends (default 6)"}),
        RunFlag("--memory-turns", "memory_turns", {"type": int, "metavar": "N",
                                                   "help": "turns of dialogue each model sees (default 3)"}),
        RunFlag("--no-planning", "planning", {"action": "store_const", "const": False,
                                              "help": "skip target planning (task A)"}),
        RunFlag("--own-plan", "guide_with", {"action": "store_const", "const": "own_plan",
                                             "help": "guide with the agent's own plan instead of the reference"}),
        RunFlag("--live", "live_judging", {"action": "store_const", "const": True,
                                           "help": "score the guidance after every turn too"}),
        RunFlag("--early-stop", "early_stop", {"action": "store_const", "const": True,
                                               "help": "end when the turn check says the target was reached "
                                                       "(default: on, off with the embedded judge)"}),
        RunFlag("--no-early-stop", "early_stop", {"action": "store_const", "const": False,
                                                  "help": "always play every turn up to the turn limit"}),
        RunFlag("--seed", "seed", {"type": int, "help": "seed passed to every model call that takes one"}),
        RunFlag("--no-target", "without_target", {"action": "store_const", "const": True,
                                                  "help": "the paper's 'without target' ablation: the agent guides "
                                                          "with no target or steps (judged against the reference)"}),
    ),
    parts=Parts(
        environments=".env:ENVIRONMENTS",
        engine=".protocol:ENGINE",
        record=".record:RECORD",
        report=".report:REPORT",
        batch=".batch:BATCH",
        resume=".record:RESUME",
        fork=".fork:FORK",
        regrade=".regrade:REGRADE",
        rerun=".record:RERUN",
        generate=".generate:GENERATE",
        setup_screen=".ui.setup:ProactiveEvalSetupScreen",
        session_screen=".ui.session:ProactiveEvalSessionScreen",
        studio_view=".ui.studio_view:ProactiveEvalStudioView",
        write_form=".ui.write_form:ProactiveEvalWriteForm",
        exporters=(".export:EXPORTER",),
        printer=".cli:ProactiveEvalPrinter",
    ),
)
