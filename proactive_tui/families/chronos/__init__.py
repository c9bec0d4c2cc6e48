"""Chronos (arXiv 2601.09382): keep a long-term intent on a simulated timeline, with reminders,
monitoring and follow-ups, judged turn by turn against an expected-action oracle.

The `family` object is what the registry loads; heavy parts are imported inside its methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, RunFlag, SourceRef, TurnUnit
from proactive_tui.families.chronos import env as env_module
from proactive_tui.families.chronos.settings import ChronosSettings

HERE = Path(__file__).resolve().parent


class ChronosFamily(Family):
    name = "chronos"
    title = "Chronos"
    summary = "keeps a long-term intent on a simulated timeline with reminders and follow-ups"
    source = SourceRef(paper="Long-term Task-oriented Agent: Proactive Long-term Intent Maintenance in Dynamic Environments (ChronosBench)",
                       arxiv="2601.09382",
                       distinct_from=('"Chronos", a memory system for LLM agents (arXiv 2603.16862)',))
    seats = ("agent", "user", "judge")
    """The judge seat reads the user's reply to an offer (explicit confirmation or refusal)."""
    play_modes = {"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"}
    resumable = True
    forkable = True
    frozen_user = True
    regradable = False
    """Not offered: success and the action checks are the rule-based oracle's, which a judge model
    does not change; the one model judgement (the confirmation reading of the user's replies)
    decides where the dialogue goes next, so reading a reply differently would mean a different
    dialogue, which only running it again (a fork) can give."""
    not_regradable_reason = ("they are graded by rules (the oracle), and their one model judgement, reading "
                             "whether the user confirmed, steers the dialogue, so judging it again would need "
                             "a different dialogue; fork the session with another --judge instead")
    settings_model = ChronosSettings
    turn_unit = TurnUnit(name="exchange", plural="exchanges",
                         meaning="the agent's turns answering one user message or monitor scan (answers to its own "
                                 "INFO_RETRIEVAL continue the exchange); the turn limit counts exchanges")

    @property
    def section_model(self) -> type:  # type: ignore[override]
        """Imported when a record is read or begun, not at start-up: the record module builds a
        few dozen pydantic models (events included) that the picker never needs."""
        from proactive_tui.families.chronos.record import ChronosSection

        return ChronosSection

    env_model = env_module.ChronosEnv
    run_flags = (
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
    )

    def synth_arguments(self, parser: Any) -> None:
        """`synth chronos`'s own options (the paper's threshold is the default)."""
        from proactive_tui.families.chronos.synth_prompts import TEMPLATES

        parser.add_argument("--template", action="append", default=[], metavar="TEMPLATE",
                            help=f"a scenario template (repeatable; default all six: {', '.join(TEMPLATES)})")
        parser.add_argument("--tier", action="append", default=[], choices=["simple", "complex"],
                            help="a tier to make (repeatable; default both; complex adds the intention shift)")
        parser.add_argument("--threshold", type=int, default=75, metavar="T",
                            help="critic score (0-100) an utterance must reach to be kept (default 75, the paper's)")
        parser.add_argument("--max-attempts", type=int, default=3, metavar="K",
                            help="drafts per utterance at most before the item is rejected (default 3, ours: the "
                                 "paper states none)")

    def synth_options(self, args: Any) -> dict[str, Any]:
        from proactive_tui.families.chronos.synth_prompts import TEMPLATES

        return {"templates": list(dict.fromkeys(args.template)) or list(TEMPLATES),
                "tiers": list(dict.fromkeys(args.tier)) or ["simple", "complex"], "n": args.n,
                "threshold": args.threshold, "max_attempts": args.max_attempts}

    def synth_targets(self) -> tuple[str, str, list[str]]:
        from proactive_tui.families.chronos.synth_prompts import TEMPLATES as values

        return ("--template", "Template", list(values))

    def synth_pipeline(self, options: dict[str, Any]) -> Any:
        """The paper's data pipeline (`proactive-tui synth chronos`), imported on use."""
        from pydantic import ValidationError

        from proactive_tui.families.chronos.synth import ChronosPipeline, SynthOptions

        try:
            return ChronosPipeline(SynthOptions(**options))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ValueError(f"--{'-'.join(str(p) for p in error['loc']).replace('_', '-')}: {error['msg']}") from None

    def sample_sources(self) -> list[Path]:
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir("chronos")]

    def claims_shape(self, data: Any) -> bool:
        return isinstance(data, dict) and "timeline" in data

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]):
        return env_module.load_scenarios(file.relative_stem(self.name), file.display, data)

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """One scenario file (one branch, so no `branches`) at `chronos/<id path>~<label>.json`."""
        from proactive_tui.envs.what_if import file_stem

        return file_stem(env.id, self.name, label) + ".json", env.scenario.model_dump(mode="json")

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return env_module.describe(env, reveal_reference)

    def default_temperature(self, seat):
        """The agent runs at `protocol.AGENT_TEMPERATURE` unless someone chose another."""
        if seat != "agent":
            return None
        from proactive_tui.families.chronos.protocol import AGENT_TEMPERATURE

        return AGENT_TEMPERATURE

    def build_session(self, spec, env, seats, session_id=None, resume_from=None):
        from proactive_tui.families.chronos.protocol import build_chronos_session

        return build_chronos_session(spec, env, seats, session_id, resume_from=resume_from)

    def user_turns(self, record):
        # turn 1's input is the scenario's opening, not something the user was asked for
        return sorted((m for m in record.messages if m.role == "user" and not m.partial and m.turn > 1),
                      key=lambda m: m.turn)

    def fork_steps(self, record):
        from proactive_tui.families.chronos.fork import fork_steps

        return fork_steps(record)

    def fork_sides(self, point):
        from proactive_tui.families.chronos.fork import Sides

        return Sides(point)

    def recorded_answers(self, record):
        from proactive_tui.families.chronos.resume import recorded_answers

        return recorded_answers(record)

    def edit_answer(self, point, text, record):
        from proactive_tui.families.chronos.fork import edit_answer

        return edit_answer(point, text, record)

    def turn_scores(self, record):
        """Per exchange (the family's `turn_unit`), the share of its agent turns whose action the
        oracle accepts (1 or 0 for an exchange of one turn); success at the end."""
        from proactive_tui.core.scores import TurnScores
        from proactive_tui.families.chronos.record import exchange_of

        outcome = record.section.outcome
        success = None if outcome is None or outcome.success is None else float(outcome.success)
        marks: dict[int, list[float]] = {}
        for t in record.section.turns:
            marks.setdefault(exchange_of(record, t.turn), []).append(float(t.action_correct))
        per_exchange = [sum(m) / len(m) for _, m in sorted(marks.items())]
        return TurnScores(label="action correct", per_turn=per_exchange, final_label="success", final=success)

    def complete_turns(self, record) -> int:
        from proactive_tui.families.chronos.resume import complete_turns

        return complete_turns(record)

    def unit_number(self, record, turn):
        from proactive_tui.families.chronos.record import exchange_of

        return exchange_of(record, turn)

    def units_done(self, record):
        from proactive_tui.families.chronos.record import exchanges_done

        return exchanges_done(record)

    def event_types(self):
        from proactive_tui.families.chronos.events import EVENTS

        return EVENTS

    def legacy_event_types(self):
        from proactive_tui.families.chronos.events import LEGACY_TYPES

        return LEGACY_TYPES

    def new_section(self, record):
        from proactive_tui.families.chronos.record import new_section

        return new_section(record)

    def apply(self, record, event) -> None:
        from proactive_tui.families.chronos.record import apply_timeline_event

        apply_timeline_event(record, event)

    def scores(self, record):
        from proactive_tui.families.chronos.report import scores

        return scores(record)

    def verdicts(self, record):
        from proactive_tui.families.chronos.record import verdicts

        return verdicts(record)

    def upgrade_record(self, data):
        data["section"] = data.get("timeline")
        return data

    def report(self, record):
        from proactive_tui.families.chronos.report import report

        return report(record)

    def printer_class(self):
        from proactive_tui.families.chronos.cli import ChronosPrinter

        return ChronosPrinter

    def exporters(self):
        from proactive_tui.families.chronos.export import EXPORTER

        return [EXPORTER]

    def batch_tables(self, results, repeats):
        from proactive_tui.families.chronos.batch import batch_tables

        return batch_tables(results, repeats)

    def batch_trials(self, result):
        from proactive_tui.families.chronos.batch import batch_trials

        return batch_trials(result)

    def batch_groups(self, result):
        from proactive_tui.families.chronos.batch import batch_groups

        return batch_groups(result)

    def reference_session(self, spec, env, gateway):
        """The oracle agent and the scripted user on the scenario (no model): the scoring's own check."""
        from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
        from proactive_tui.families.chronos.settings import ChronosSettings
        from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona

        return ChronosSession(env, ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()),
                              ChronosSettings(**spec.settings))

    def setup_screen(self):
        from proactive_tui.families.chronos.ui.setup import ChronosSetupScreen

        return ChronosSetupScreen

    def write_form(self):
        from proactive_tui.families.chronos.ui.write_form import ChronosWriteForm

        return ChronosWriteForm

    def session_screen(self):
        from proactive_tui.families.chronos.ui.session import ChronosSessionScreen

        return ChronosSessionScreen

    def studio_view(self):
        """The studio's drawing of one generated item: the scenario card, both branches'
        dialogues with each utterance's critic score, the endings and the verdict."""
        from proactive_tui.families.chronos.ui.studio_view import ChronosStudioView

        return ChronosStudioView


family = ChronosFamily()
