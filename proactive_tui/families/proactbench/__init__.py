"""ProactBench (Boson AI, arXiv 2605.09228): conversational proactivity scored at planted trigger
points (EMERGENT, CRITICAL, RECOVERY), each against a rubric fixed before the assistant answers.

The `family` object is what the registry loads (entry point `proactive_tui.families`); every heavy
part (protocol, printer, screens, exporters) is imported inside the method that needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, RunFlag, SourceRef, TurnUnit
from proactive_tui.families.proactbench import env as env_module
from proactive_tui.families.proactbench.settings import (
    AGENT_MAX_TOKENS, AGENT_TEMPERATURE, JUDGE_TEMPERATURE, PLANNER_TEMPERATURE, USER_AGENT_TEMPERATURE, ProactBenchSettings,
)

HERE = Path(__file__).resolve().parent
RESULTS_SUFFIX = "_proactivity_bench_results.jsonl"
ONLINE_RESULTS_SUFFIX = "_proactivity_bench_online_results.jsonl"
METRICS_SUFFIX = "_proactivity_bench_metrics.json"
ONLINE_METRICS_SUFFIX = "_proactivity_bench_online_metrics.json"
"""The file names the `proactbench` export writes (upstream's `dataset/eval/` naming): results rows
load back as dialogues wherever the folder is; the metrics files beside them are not environments."""


class ProactBenchFamily(Family):
    name = "proactbench"
    title = "ProactBench"
    summary = "answers at planted trigger turns, each judged against a rubric written before the reply"
    source = SourceRef(paper="ProactBench: Beyond What The User Asked For", arxiv="2605.09228",
                       repository="github.com/boson-ai/ProactBench",
                       distinct_from=("ProactiveBench (arXiv 2410.12361)",))
    seats = ("agent", "user", "judge")
    seat_labels = {"judge": "judge (offline) / planner (online)", "user": "user agent (online)"}
    play_modes = {"watch": "Watch models", "play_agent": "Play the agent", "play_user": "Play the user"}
    """Play the user: online only (offline the user's messages are the recorded ones)."""
    forkable = True
    no_frozen_user_reason = ("offline, every session sends the dialogue's recorded user messages as they are; "
                             "online, the user agent speaks to what the new agent says")
    regradable = True
    regrade_seat = "judge"
    not_regradable_reason = ("online sessions are judged by their user agent in the same call that writes the "
                             "user's next message; only offline sessions can be re-graded")
    settings_model = ProactBenchSettings
    run_flags = (
        RunFlag("--protocol", "protocol", {"choices": ("offline", "online"),
                                           "help": "offline (default, upstream's evaluation: recorded context, a neutral "
                                                   "judge at each trigger) or online (planner, user agent and agent live)"}),
        RunFlag("--max-triggers", "max_triggers", {"type": int, "metavar": "N",
                                                   "help": "offline: score only the first N trigger points (default all)"}),
        RunFlag("--max-turns", "max_turns", {"type": int, "metavar": "N",
                                             "help": "online: turns at most (default 10, upstream's)"}),
    )
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
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir("proactbench")]

    def claims_location(self, file: FileCandidate) -> bool:
        name = file.path.name.lower()
        return (self.name in file.folders or name.startswith("final_dialogues")
                or name.endswith((RESULTS_SUFFIX, ONLINE_RESULTS_SUFFIX, METRICS_SUFFIX, ONLINE_METRICS_SUFFIX)))

    def skip_file(self, file: FileCandidate) -> bool:
        """An exported metrics file (beside its results rows) holds numbers, not dialogues."""
        return file.path.name.lower().endswith((METRICS_SUFFIX, ONLINE_METRICS_SUFFIX))

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

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """The dialogue as one upstream row (`proactbench/<id>~<label>.json`, a `.json` holding one
        row, as `load_file` reads it), its `unique_id_eval` (the id's source) marked `~<label>` so it
        loads as `<id>~<label>`: "What if" saves and the write-your-own form (`ui.write_form`)."""
        from proactive_tui.envs.what_if import file_stem, root_id

        row = env.dialogue.model_dump(mode="json", exclude_none=True)
        row["unique_id_eval"] = f"{root_id(env.id).removeprefix(self.name + '/')}~{label}"
        return file_stem(env.id, self.name, label) + ".json", row

    # -- sessions ---------------------------------------------------------------------------

    def default_temperature(self, seat):
        """Upstream's: the agent 0.7, the offline judge 0.7, the User Agent 0.7 (the online
        Planner's 0.1 is `seat_temperature`'s, as it depends on the protocol)."""
        return {"agent": AGENT_TEMPERATURE, "user": USER_AGENT_TEMPERATURE, "judge": JUDGE_TEMPERATURE}.get(seat)

    def default_max_tokens(self, seat):
        """Upstream's 8,192 new tokens for the model under test. (Upstream gives the Planner, the
        User Agent and the judge 32,768; we keep the project's default there, as many hosted models
        refuse a cap above their output limit and every verdict would fail: docs/protocols.md.)"""
        return AGENT_MAX_TOKENS if seat == "agent" else None

    def seat_temperature(self, seat, roles, settings=None):
        """A temperature someone chose wins; else upstream's for the protocol: the online Planner
        (the judge seat) runs at 0.1, every other seat at `default_temperature`."""
        chosen = roles.for_role(seat)
        if seat == "judge" and "temperature" not in chosen.model_fields_set and (settings or {}).get("protocol") == "online":
            return PLANNER_TEMPERATURE
        return super().seat_temperature(seat, roles, settings)

    def build_session(self, spec, env, seats, session_id=None, resume_from=None):
        """The session (`protocol.build_proactbench_session`). A person in the user seat needs the
        online protocol: offline, the user's messages are the recorded ones and nobody would ask them."""
        from proactive_tui.core.family import UnsupportedFamily
        from proactive_tui.families.proactbench.protocol import build_proactbench_session

        if resume_from is not None:
            raise UnsupportedFamily("proactbench sessions cannot be resumed yet")
        offline = (spec.settings or {}).get("protocol", "offline") == "offline"
        user = seats.get("user")
        if offline and user is not None and getattr(getattr(user, "info", None), "kind", "") == "human":
            raise UnsupportedFamily("a person can play the ProactBench user only in the online protocol "
                                    "(--protocol online): offline, the user's messages are the recorded ones")
        return build_proactbench_session(self, spec, env, seats, session_id=session_id)

    def complete_turns(self, record) -> int:
        """Offline: the trigger points judged (each one user message and the agent's reply to it);
        online: the turns whose agent reply finished."""
        if (record.settings or {}).get("protocol") == "online":
            return len({m.turn for m in record.messages if m.role == "agent" and not m.partial})
        return sum(1 for t in record.section.triggers if t.judged)

    def reply_writers(self, record):
        """The dialogue's messages, then who gave each verdict (offline the judge seat's, online
        the user seat's: the User Agent or the person playing the user)."""
        from proactive_tui.core.writers import message_writers

        seat = "user" if (record.settings or {}).get("protocol") == "online" else "judge"
        return message_writers(record) + [(seat, t.judge) for t in record.section.triggers if t.result is not None and t.judge]

    def turn_scores(self, record):
        """Per dialogue turn, the verdict's value at a trigger turn (PASS 1, PARTIAL 0.5, FAIL 0;
        None at other turns and for SKIPPED), so two agents on the same dialogue line up trigger by
        trigger; at the end the overall weighted score."""
        from proactive_tui.core.scores import TurnScores
        from proactive_tui.families.proactbench.env import SCORE_VALUE

        triggers = {t.turn: t for t in record.section.triggers if t.judged}
        last = max(triggers, default=0)
        per_turn = [SCORE_VALUE.get(triggers[n].counted) if n in triggers else None for n in range(1, last + 1)]
        overall = record.score("overall_weighted")
        return TurnScores(label="trigger verdict (1 / 0.5 / 0)", per_turn=per_turn, final_label="weighted score",
                          final=overall.value if overall is not None else None)

    def fork_steps(self, record):
        from proactive_tui.families.proactbench.fork import fork_steps

        return fork_steps(record)

    def fork_sides(self, point):
        from proactive_tui.families.proactbench.fork import Sides

        return Sides(point)

    def recorded_answers(self, record):
        from proactive_tui.families.proactbench.fork import recorded_answers

        return recorded_answers(record)

    def edit_answer(self, point, text, record):
        from proactive_tui.families.proactbench.fork import edit_answer

        return edit_answer(point, text, record)

    def judge_event_types(self):
        from proactive_tui.families.proactbench.events import TriggerJudged

        return (TriggerJudged,)

    async def regrade(self, record, env, judge):
        from proactive_tui.families.proactbench.regrade import regrade

        return await regrade(record, env, judge)

    def scores(self, record):
        from proactive_tui.families.proactbench.report import scores

        return scores(record)

    def report(self, record):
        from proactive_tui.families.proactbench.report import report

        return report(record)

    def batch_tables(self, results, repeats):
        from proactive_tui.families.proactbench.batch import batch_tables

        return batch_tables(results, repeats)

    def batch_trials(self, result):
        from proactive_tui.families.proactbench.batch import batch_trials

        return batch_trials(result)

    def batch_groups(self, result):
        from proactive_tui.families.proactbench.batch import batch_groups

        return batch_groups(result)

    def printer_class(self):
        from proactive_tui.families.proactbench.cli import ProactBenchPrinter

        return ProactBenchPrinter

    # -- events and the run record ---------------------------------------------------------

    def event_types(self) -> tuple[type, ...]:
        from proactive_tui.families.proactbench.events import EVENT_TYPES

        return EVENT_TYPES

    def apply(self, record: Any, event: Any) -> None:
        from proactive_tui.families.proactbench.record import apply_event

        apply_event(record, event)

    # -- export ------------------------------------------------------------------------------

    def exporters(self):
        from proactive_tui.families.proactbench.export import EXPORTER

        return [EXPORTER]

    # -- labels and the human studies --------------------------------------------------------

    def verdicts(self, record: Any) -> list[Any]:
        from proactive_tui.families.proactbench.labels import verdicts

        return verdicts(record)

    def rating_study(self) -> Any:
        from proactive_tui.families.proactbench.study import ProactBenchRatingStudy

        return ProactBenchRatingStudy()

    def pairwise_study(self) -> Any:
        from proactive_tui.families.proactbench.study import ProactBenchPairwiseStudy

        return ProactBenchPairwiseStudy()


    # -- screens ------------------------------------------------------------------------------

    def setup_screen(self):
        from proactive_tui.families.proactbench.ui.setup import ProactBenchSetupScreen

        return ProactBenchSetupScreen

    def write_form(self):
        from proactive_tui.families.proactbench.ui.write_form import ProactBenchWriteForm

        return ProactBenchWriteForm

    def session_screen(self):
        from proactive_tui.families.proactbench.ui.session import ProactBenchSessionScreen

        return ProactBenchSessionScreen


family = ProactBenchFamily()
