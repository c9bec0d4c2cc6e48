"""ProactiveEval (arXiv 2508.20973): target planning, then dialogue guidance toward the target.

The `family` object is what the registry loads (entry point `proactive_tui.families`); every heavy
part (protocol, printer, screens) is imported inside the method that needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proactive_tui.core.family import Family, FileCandidate, RunFlag, SourceRef, TurnUnit
from proactive_tui.families.proactiveeval import env as env_module
from proactive_tui.families.proactiveeval.settings import ProactiveEvalSettings

HERE = Path(__file__).resolve().parent


class ProactiveEvalFamily(Family):
    name = "proactiveeval"
    title = "ProactiveEval"
    summary = "plans a target and sub-targets, then guides a simulated user toward it (6 domains)"
    source = SourceRef(paper="ProactiveEval: A Unified Evaluation Framework for Proactive Dialogue Agents",
                       arxiv="2508.20973")
    seats = ("agent", "user", "judge")
    play_modes = {"watch": "Watch models", "play_user": "Play the user", "play_agent": "Play the agent"}
    resumable = True
    forkable = True
    frozen_user = True
    replayable = True
    group_by_tier = True
    settings_model = ProactiveEvalSettings
    turn_unit = TurnUnit(name="turn", plural="turns", meaning="one agent message and the user's reply to it")
    sweeps = {"agreeableness": ("low", "medium", "high")}
    """The paper runs every environment at each of the three levels."""

    @property
    def section_model(self) -> type:  # type: ignore[override]
        """Imported when a record is read or begun, not at start-up: the record module builds a
        few dozen pydantic models (events included) that the picker never needs."""
        from proactive_tui.families.proactiveeval.record import ProactiveEvalSection

        return ProactiveEvalSection

    env_model = env_module.ProactiveEvalEnv
    run_flags = (
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
    )

    def sample_sources(self) -> list[Path]:
        from proactive_tui.paths import sample_envs_dir

        return [sample_envs_dir("proactiveeval")]

    def claims_location(self, file: FileCandidate) -> bool:
        return bool(env_module.canonical_domain(file.path.parent.name)) and file.path.name in env_module.TIER_FILES

    def skip_file(self, file: FileCandidate) -> bool:
        # eval.json is the union of fair.json and hard.json: read only when neither exists.
        return file.path.name == "eval.json" and any((file.path.parent / f).exists() for f in ("fair.json", "hard.json"))

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]):
        domain = env_module.canonical_domain(file.path.parent.name)
        if not domain or file.path.name not in env_module.TIER_FILES:
            from proactive_tui.envs.problems import LoadProblem

            return [], [LoadProblem(file=file.display, message="expected <domain>/fair.json, hard.json or eval.json "
                                                                "with a ProactiveEval domain folder name")]
        return env_module.load_tier_file(file.path, file.display, domain, file.path.stem, data)

    reads_records = True

    def load_record(self, file: FileCandidate, raw: Any, position: int):
        """One record of a tier file, as `load_file` reads it (the catalog's on-demand parse)."""
        from pydantic import ValidationError

        domain = env_module.canonical_domain(file.path.parent.name)
        if not domain or file.path.name not in env_module.TIER_FILES or not isinstance(raw, dict):
            return None
        try:
            return env_module.load_item(raw, file.display, domain, file.path.stem, position)
        except ValidationError:
            return None

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """A tier file of one item, `proactiveeval/<label>/<domain>/<tier>.json` (upstream's layout
        fixes the file's name, so the new name is the folder). Its `meta` names the environment it
        came from and the label, which make its id `<source id>~<label>` (`env.record_id`) rather
        than a position id that would collide with the sample's."""
        from proactive_tui.envs.what_if import root_id

        item = env.item.model_dump(mode="json")
        item["meta"] = {"env_id": root_id(env.id), "what_if": label}
        return f"{self.name}/{label}/{env.domain}/{env.tier or 'fair'}.json", [item]

    def synth_arguments(self, parser: Any) -> None:
        """`synth proactiveeval`'s own options (the paper's numbers are the defaults)."""
        parser.add_argument("--domain", action="append", default=[], metavar="DOMAIN",
                            help=f"a domain to generate for (repeatable; default all six: {', '.join(env_module.DOMAINS)})")
        parser.add_argument("--depth", type=int, default=2, metavar="D", help="topic tree depth below the domain (default 2)")
        parser.add_argument("--branching", type=int, default=3, metavar="B", help="children per topic node (default 3)")
        parser.add_argument("--candidates", type=int, default=5, metavar="K",
                            help="target candidates per item (default 5, the paper's; other values are a deviation)")
        parser.add_argument("--max-rounds", type=int, default=5, metavar="R",
                            help="refinement rounds at most (default 5, the paper's)")
        parser.add_argument("--validators", type=int, default=5, metavar="V",
                            help="final-check votes (default 5, the paper's; kept on a strict majority)")
        parser.add_argument("--tree", metavar="FILE", help="reuse a topic tree (a run's DIR/tree.json, edited or not) "
                                                           "instead of generating one; shards need one")
        parser.add_argument("--leaf", action="append", default=[], metavar="DOMAIN/PATH",
                            help='draw the items only from this leaf of the --tree (repeatable), e.g. '
                                 '"recommendation/Recommendation / Home cooking / Weeknight meals"; '
                                 "a domain with no chosen leaf uses all of its leaves")
        parser.add_argument("--tree-only", action="store_true", help="make the topic tree (DIR/tree.json) and stop")

    def synth_options(self, args: Any) -> dict[str, Any]:
        """The pipeline's options from the command's (a `--tree` file is read here, so its content,
        not its path, is what the run's config hash covers)."""
        import json

        tree = None
        if getattr(args, "tree", None):
            path = Path(args.tree).expanduser()
            try:
                tree = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"--tree {path}: {exc}") from None
            if not isinstance(tree, dict):
                raise ValueError(f"--tree {path}: expected an object of domain -> topic tree")
        domains = [env_module.DOMAIN_ALIASES.get(d, d) for d in (args.domain or [])] or list(env_module.DOMAINS)
        options = {"domains": list(dict.fromkeys(domains)), "n": args.n, "depth": args.depth,
                   "branching": args.branching, "candidates": args.candidates, "max_rounds": args.max_rounds,
                   "validators": args.validators, "tree": tree}
        if getattr(args, "leaf", None):
            options["leaves"] = list(dict.fromkeys(args.leaf))  # only when given: older runs' options stay as they were
        return options

    def synth_targets(self) -> tuple[str, str, list[str]]:
        from proactive_tui.families.proactiveeval.env import DOMAINS as values

        return ("--domain", "Domain", list(values))

    def synth_pipeline(self, options: dict[str, Any]) -> Any:
        """The data pipeline of the paper (`proactive-tui synth proactiveeval`), imported on use."""
        from proactive_tui.families.proactiveeval.synth import ProactiveEvalPipeline, SynthOptions

        return ProactiveEvalPipeline(SynthOptions(**options))

    def studio_view(self) -> type:
        """The studio's drawing of one generated item (stage by stage, from its step files)."""
        from proactive_tui.families.proactiveeval.ui.studio_view import ProactiveEvalStudioView

        return ProactiveEvalStudioView

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        return env_module.describe(env, reveal_reference)

    def build_session(self, spec, env, seats, session_id=None, resume_from=None, fork_at=None):
        from proactive_tui.core.spec import seat_temperatures
        from proactive_tui.families.proactiveeval.protocol import ProactiveEvalSeats, ProactiveEvalSession

        spec = seat_temperatures(spec, seats, self)
        seed = spec.settings.get("seed")
        if seed is not None:  # the setting reaches every model call (a seat's own seed wins)
            for participant in seats.values():
                settings = getattr(participant, "settings", None)
                if settings is not None and getattr(settings, "seed", 0) is None:
                    participant.settings = settings.model_copy(update={"seed": int(seed)})
        return ProactiveEvalSession(env, ProactiveEvalSeats(**{s: seats[s] for s in self.seats}),
                                    ProactiveEvalSettings(**spec.settings), session_id=session_id,
                                    models=spec.models_summary(), resume_from=resume_from, fork_at=fork_at)

    def batch_share(self, finished):
        """One plan per (environment, agent, repeat) for every agreeableness level (`shared_plan`)."""
        from proactive_tui.families.proactiveeval.shared_plan import PlanShare

        share = PlanShare()
        share.seed([r for r in finished if r.key.family == self.name])
        return share

    def user_turns(self, record):
        return sorted((m for m in record.messages if m.role == "user" and not m.partial), key=lambda m: m.turn)

    def fork_steps(self, record):
        from proactive_tui.families.proactiveeval.fork import fork_steps

        return fork_steps(record)

    def fork_sides(self, point):
        from proactive_tui.families.proactiveeval.fork import Sides

        return Sides(point)

    def check_edit(self, point, text, record) -> None:
        """Any non-empty text is a message (checked by `core.fork.check_fork`)."""

    def build_fork(self, spec, env, seats, parent, prefix, point, change, session_id=None):
        from proactive_tui.families.proactiveeval.fork import build_fork

        return build_fork(self, spec, env, seats, parent, prefix, point, change, session_id=session_id)

    def turn_scores(self, record):
        """The live guidance overall per turn (with `--live`), and the final overall."""
        from proactive_tui.core.scores import TurnScores

        section = record.section
        final = section.guidance.overall if section.guidance is not None else None
        return TurnScores(label="guidance overall (live)", per_turn=[float(s.overall) for s in section.live_scores],
                          final_label="overall", final=None if final is None else float(final))

    def complete_turns(self, record) -> int:
        from proactive_tui.families.proactiveeval.record import complete_turns

        return complete_turns(record)

    regradable = True
    regrade_seat = "judge"

    def judge_event_types(self):
        from proactive_tui.families.proactiveeval.events import PlanScored, TurnChecked, GuidanceScored

        return (PlanScored, TurnChecked, GuidanceScored)

    async def regrade(self, record, env, judge):
        from proactive_tui.families.proactiveeval.regrade import regrade

        return await regrade(record, env, judge)

    def event_types(self):
        from proactive_tui.families.proactiveeval.events import EVENTS

        return EVENTS

    def legacy_event_types(self):
        from proactive_tui.families.proactiveeval.events import LEGACY_TYPES

        return LEGACY_TYPES

    def apply(self, record, event) -> None:
        from proactive_tui.families.proactiveeval.record import apply_event

        apply_event(record, event)

    def scores(self, record):
        from proactive_tui.families.proactiveeval.report import scores

        return scores(record)

    def verdicts(self, record):
        from proactive_tui.families.proactiveeval.record import verdicts

        return verdicts(record)

    def upgrade_record(self, data):
        from proactive_tui.families.proactiveeval.record import upgrade_v1

        return upgrade_v1(data)

    def report(self, record):
        from proactive_tui.families.proactiveeval.report import report

        return report(record)

    def batch_tables(self, results, repeats):
        from proactive_tui.families.proactiveeval.batch import batch_tables

        return batch_tables(results, repeats)

    def batch_trials(self, result):
        from proactive_tui.families.proactiveeval.batch import batch_trials

        return batch_trials(result)

    def batch_groups(self, result):
        from proactive_tui.families.proactiveeval.batch import batch_groups

        return batch_groups(result)

    def printer_class(self):
        from proactive_tui.families.proactiveeval.cli import ProactiveEvalPrinter

        return ProactiveEvalPrinter

    def exporters(self):
        from proactive_tui.families.proactiveeval.export import EXPORTER

        return [EXPORTER]

    def setup_screen(self):
        from proactive_tui.families.proactiveeval.ui.setup import ProactiveEvalSetupScreen

        return ProactiveEvalSetupScreen

    def write_form(self):
        from proactive_tui.families.proactiveeval.ui.write_form import ProactiveEvalWriteForm

        return ProactiveEvalWriteForm

    def session_screen(self):
        from proactive_tui.families.proactiveeval.ui.session import ProactiveEvalSessionScreen

        return ProactiveEvalSessionScreen


family = ProactiveEvalFamily()
