"""ProactBench (Boson AI, arXiv 2605.09228): conversational proactivity scored at planted trigger
points (EMERGENT, CRITICAL, RECOVERY), each against a rubric fixed before the assistant answers.

The declaration the registry loads (entry point `proactive_tui.families`); each part lives in its
own module and is imported on first use.
"""

from __future__ import annotations

from proactive_tui.core.family import Family, Parts, RunFlag, SourceRef, TurnUnit

RESULTS_SUFFIX = "_proactivity_bench_results.jsonl"
ONLINE_RESULTS_SUFFIX = "_proactivity_bench_online_results.jsonl"
METRICS_SUFFIX = "_proactivity_bench_metrics.json"
ONLINE_METRICS_SUFFIX = "_proactivity_bench_online_metrics.json"
"""The file names the `proactbench` export writes (upstream's `dataset/eval/` naming): results rows
load back as dialogues wherever the folder is; the metrics files beside them are not environments."""

family = Family(
    name="proactbench",
    title="ProactBench",
    summary="answers at planted trigger turns, each judged against a rubric written before the reply",
    source=SourceRef(paper="ProactBench: Beyond What The User Asked For", arxiv="2605.09228",
                     repository="github.com/boson-ai/ProactBench",
                     distinct_from=("ProactiveBench (arXiv 2410.12361)",)),
    package=__name__,
    seats=("agent", "user", "judge"),
    seat_labels={"judge": "judge (offline) / planner (online)", "user": "user agent (online)"},
    # Play the user: online only (offline the user's messages are the recorded ones).
    play_modes={"watch": "Watch models", "play_agent": "Play the agent", "play_user": "Play the user"},
    no_frozen_user_reason=("offline, every session sends the dialogue's recorded user messages as they are; "
                           "online, the user agent speaks to what the new agent says"),
    not_regradable_reason=("online sessions are judged by their user agent in the same call that writes the "
                           "user's next message; only offline sessions can be re-graded"),
    settings_model_path=".settings:ProactBenchSettings",
    run_flags=(
        RunFlag("--protocol", "protocol", {"choices": ("offline", "online"),
                                           "help": "offline (default, upstream's evaluation: recorded context, a neutral "
                                                   "judge at each trigger) or online (planner, user agent and agent live)"}),
        RunFlag("--max-triggers", "max_triggers", {"type": int, "metavar": "N",
                                                   "help": "offline: score only the first N trigger points (default all)"}),
        RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N",
                                             "help": "online: turns at most (default 10, upstream's)"}),
    ),
    file_suffixes=(".json", ".jsonl"),
    # History replays a session in its screen (`ProactBenchSessionScreen` takes `replay_events`).
    replayable=True,
    turn_unit=TurnUnit(name="turn", plural="turns", meaning="one user message and the assistant's reply to it"),
    parts=Parts(
        environments=".env:ENVIRONMENTS",
        engine=".protocol:ENGINE",
        record=".record:RECORD",
        report=".report:REPORT",
        batch=".batch:BATCH",
        fork=".fork:FORK",
        regrade=".regrade:REGRADE",
        setup_screen=".ui.setup:ProactBenchSetupScreen",
        session_screen=".ui.session:ProactBenchSessionScreen",
        write_form=".ui.write_form:ProactBenchWriteForm",
        exporters=(".export:EXPORTER",),
        rating_study=".study:ProactBenchRatingStudy",
        pairwise_study=".study:ProactBenchPairwiseStudy",
        printer=".cli:ProactBenchPrinter",
    ),
)
