"""ProactiveBench (arXiv 2410.12361, thunlp/ProactiveAgent): after each observed user-activity
event the agent proposes a task or stays quiet; a reward judge (or a person) accepts or rejects.

The `family` object is what the registry loads; heavy parts are imported inside its methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, RunFlag, SourceRef, TurnUnit
from proactive_tui.families.proactivebench import env as env_module
from proactive_tui.families.proactivebench.settings import AGENT_TEMPERATURE, FEEDBACK_HELP, ProactiveBenchSettings

HERE = Path(__file__).resolve().parent
MANIFEST = "proactivebench_sessions.json"
"""Written by the `proactivebench` export beside the traces; not an environment."""


class ProactiveBenchFamily(Family):
    name = "proactivebench"
    title = "ProactiveBench"
    summary = "proposes help (or stays quiet) after each observed user-activity event"
    source = SourceRef(paper="Proactive Agent: Shifting LLM Agents from Reactive Responses to Active Assistance",
                       arxiv="2410.12361", repository="https://github.com/thunlp/ProactiveAgent",
                       distinct_from=('the multimodal "ProactiveBench" (arXiv 2603.19466)',))
    seats = ("agent", "user")
    seat_labels = {"user": "judge (user)"}
    play_modes = {"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"}
    resumable = True
    forkable = True
    no_frozen_user_reason = "ProactiveBench's observations come from the trace and its user seat judges"
    settings_model = ProactiveBenchSettings
    turn_unit = TurnUnit(name="event", plural="events",
                         meaning="one observed event of the trace: the agent's answer to it and the judge's verdict")
    step_starts = ("proactivebench.trace_observation",)

    @property
    def section_model(self) -> type:  # type: ignore[override]
        """Imported when a record is read or begun, not at start-up: the record module builds a
        few dozen pydantic models (events included) that the picker never needs."""
        from proactive_tui.families.proactivebench.record import ProactiveBenchSection

        return ProactiveBenchSection

    env_model = env_module.ProactiveBenchEnv
    companion_files = ("splits.json", MANIFEST)
    run_flags = (
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
    )

    def sample_sources(self) -> list[Path]:
        # The real test set (Apache-2.0, thunlp/ProactiveAgent) loads as proactivebench/real/<stem>.
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir("proactivebench"), HERE / "data"]

    def claims_shape(self, data: Any) -> bool:
        return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "observation" in data[0]

    def read_companion(self, file: FileCandidate, data: Any):
        if file.path.name == MANIFEST:  # which session each exported trace came from: read, not used
            return data, []
        return env_module.parse_splits(file.display, data)

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]):
        return env_module.load_trace(file.path.stem, file.display, data, companions.get("splits.json") or {},
                                     id_stem=file.relative_stem(self.name))

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """The trace (its events, annotations kept) at `proactivebench/<id path>~<label>.json`. Split
        membership lives in `splits.json`, which is not changed: the saved trace belongs to no split
        and takes its theme from its file name, as any trace outside the splits does."""
        from proactive_tui.envs.what_if import file_stem

        return file_stem(env.id, self.name, label) + ".json", [event.model_dump(mode="json") for event in env.events]

    def synth_arguments(self, parser: Any) -> None:
        """`synth proactivebench`'s own options (upstream's gym numbers are the defaults)."""
        from proactive_tui.families.proactivebench.synth_prompts import SCENES

        parser.add_argument("--scene", action="append", default=[], metavar="SCENE",
                            help=f"a scene to generate traces in (repeatable; default all: {', '.join(SCENES)})")
        parser.add_argument("--batches", type=int, default=7, metavar="B",
                            help="activities (event batches) per trace at most (default 7, upstream's action_times)")
        parser.add_argument("--judge", choices=("user", "reward"), default="user",
                            help="who accepts or rejects each proposal: the simulated user (default, upstream's gym) "
                                 "or a reward-model judge seat fed upstream's reward-model input (--role judge=MODEL)")

    def synth_options(self, args: Any) -> dict[str, Any]:
        from proactive_tui.families.proactivebench.synth_prompts import SCENES

        scenes = [s.replace("-", "_") for s in (args.scene or [])] or list(SCENES)
        return {"scenes": list(dict.fromkeys(scenes)), "n": args.n, "batches": args.batches, "judge": args.judge}

    def synth_targets(self) -> tuple[str, str, list[str]]:
        from proactive_tui.families.proactivebench.synth_prompts import SCENES as values

        return ("--scene", "Scene", list(values))

    def synth_pipeline(self, options: dict[str, Any]) -> Any:
        """The environment gym of the paper (`proactive-tui synth proactivebench`), imported on use."""
        from proactive_tui.families.proactivebench.synth import ProactiveBenchPipeline, SynthOptions

        return ProactiveBenchPipeline(SynthOptions(**options))

    def studio_view(self) -> type | None:
        """The studio's drawing of one generated trace: the scene, the user, then per batch the
        activity, the events on the simulated clock, the proposal and the verdict on it."""
        from proactive_tui.families.proactivebench.ui.studio_view import ProactiveBenchStudioView

        return ProactiveBenchStudioView

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return env_module.describe(env, reveal_reference)

    def default_temperature(self, seat):
        """The agent runs at upstream's 0.5 (`settings.AGENT_TEMPERATURE`) unless someone chose another."""
        return AGENT_TEMPERATURE if seat == "agent" else None

    def seat_temperature(self, seat, roles, settings=None):
        """The `agent_temperature` setting (`--agent-temperature`) wins for the agent."""
        chosen = (settings or {}).get("agent_temperature") if seat == "agent" else None
        return float(chosen) if chosen is not None else super().seat_temperature(seat, roles, settings)

    def build_session(self, spec, env, seats, session_id=None, resume_from=None):
        from proactive_tui.families.proactivebench.protocol import build_proactivebench_session

        return build_proactivebench_session(spec, env, seats, session_id=session_id, resume_from=resume_from)

    def fork_steps(self, record):
        from proactive_tui.families.proactivebench.fork import fork_steps

        return fork_steps(record)

    def fork_sides(self, point):
        from proactive_tui.families.proactivebench.fork import Sides

        return Sides(point)

    def reply_writers(self, record):
        """The agent's proposals and the user-judge's verdicts (a ProactiveBench record has no messages)."""
        return [(seat, writer) for ev in sorted(record.section.events, key=lambda e: e.index) for a in ev.attempts
                for seat, writer in [("agent", a.model), *(("user", v.by) for v in a.verdicts)]]

    def recorded_answers(self, record):
        from proactive_tui.families.proactivebench.resume import recorded_answers

        return recorded_answers(record)

    def edit_answer(self, point, text, record):
        from proactive_tui.families.proactivebench.fork import edit_answer

        return edit_answer(point, text, record)

    def turn_scores(self, record):
        """F1 over the events judged so far, after each judged event; the session's F1 at the end."""
        from proactive_tui.core.scores import TurnScores
        from proactive_tui.families.proactivebench.metrics import Confusion, metrics

        confusion = Confusion()
        running: list[float | None] = []
        for event in record.section.events:
            if event.judgement is None:  # cut off before its verdict: no metrics for it
                continue
            for cell in event.cells:
                confusion = confusion.add(cell)
            running.append(metrics(confusion).f1)
        return TurnScores(label="running F1", per_turn=running, final_label="F1", final=record.section.metrics.f1)

    def complete_turns(self, record) -> int:
        from proactive_tui.families.proactivebench.resume import complete_events

        return complete_events(record)

    regradable = True
    regrade_seat = "user"

    def judge_event_types(self):
        from proactive_tui.families.proactivebench.events import ProposalVerdict, ProposalMetricsUpdated

        return (ProposalVerdict, ProposalMetricsUpdated)

    async def regrade(self, record, env, judge):
        from proactive_tui.families.proactivebench.regrade import regrade

        return await regrade(record, env, judge)

    def event_types(self):
        from proactive_tui.families.proactivebench.events import EVENTS

        return EVENTS

    def legacy_event_types(self):
        from proactive_tui.families.proactivebench.events import LEGACY_TYPES

        return LEGACY_TYPES

    def new_section(self, record):
        from proactive_tui.families.proactivebench.record import new_section

        return new_section(record)

    def apply(self, record, event) -> None:
        from proactive_tui.families.proactivebench.record import apply_proposal_event

        apply_proposal_event(record, event)

    def scores(self, record):
        from proactive_tui.families.proactivebench.report import scores

        return scores(record)

    def verdicts(self, record):
        from proactive_tui.families.proactivebench.record import verdicts

        return verdicts(record)

    def upgrade_record(self, data):
        data["section"] = data.get("proposals")
        return data

    def report(self, record):
        from proactive_tui.families.proactivebench.report import report

        return report(record)

    def batch_tables(self, results, repeats):
        from proactive_tui.families.proactivebench.batch import batch_tables

        return batch_tables(results, repeats)

    def batch_trials(self, result):
        from proactive_tui.families.proactivebench.batch import batch_trials

        return batch_trials(result)

    def batch_groups(self, result):
        from proactive_tui.families.proactivebench.batch import batch_groups

        return batch_groups(result)

    def add_eval_commands(self, subparsers) -> None:
        from proactive_tui.families.proactivebench.eval_cli import add_eval_commands

        add_eval_commands(subparsers)

    def printer_class(self):
        from proactive_tui.families.proactivebench.cli import ProactiveBenchPrinter

        return ProactiveBenchPrinter

    def exporters(self):
        from proactive_tui.families.proactivebench.export import EXPORTER

        return [EXPORTER]

    def setup_screen(self):
        from proactive_tui.families.proactivebench.ui.setup import ProactiveBenchSetupScreen

        return ProactiveBenchSetupScreen

    def write_form(self):
        from proactive_tui.families.proactivebench.ui.write_form import ProactiveBenchWriteForm

        return ProactiveBenchWriteForm

    def session_screen(self):
        from proactive_tui.families.proactivebench.ui.session import ProactiveBenchSessionScreen

        return ProactiveBenchSessionScreen


family = ProactiveBenchFamily()
