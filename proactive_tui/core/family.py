"""What a benchmark family is: a small declaration plus parts loaded by dotted path
(docs/adding-a-family.md walks through it).

A family is one folder (`proactive_tui/families/<name>/`, or a package of its own) holding
everything one benchmark needs; the rest of proactive-tui reaches it only through its `Family`
declaration, found by the registry (`core.registry`, entry-point group `proactive_tui.families`),
the way Harlequin finds its database adapters.

The declaration says what the family is (name, title, seats, play modes, turn unit, run flags,
the settings model's path) and names its parts, each a dotted path ("package.module:attr") to an
object of one of the part classes below, imported once at first use and cached:

- required: `environments` (reading files, samples), `engine` (running a session), `record` (the
  section model and its reducer), `report` (what views show, exporters);
- optional: `batch` (a batch's tables and pass rule), `resume`, `fork`, `regrade`, `rerun` (a
  frozen user), `generate` (the `synth` pipeline), the screens, the headless printer, exporters,
  studies, `eval` commands and `reference` seats.

An absent optional part means the family does not support it, and its type says so
(`Family.fork -> ForkPart | None`): nothing asks a boolean flag or probes with getattr. Listing the
families at start-up costs only their declarations; a part's module is imported when something
first needs it.

This module imports neither Textual nor Rich (a test checks): the engine side of every family
stays usable headless.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:  # pragma: no cover
    from proactive_tui.core.verdicts import Verdict
    from proactive_tui.core.report import ReportSection
    from proactive_tui.core.events import MessageRecord
    from proactive_tui.core.run_record import RunRecord, Score
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.envs.base import EnvironmentBase
    from proactive_tui.envs.problems import LoadProblem
    from proactive_tui.export.registry import Exporter


class SourceRef(BaseModel):
    """Where a benchmark comes from: named in `envs show`, the picker preview and export metadata,
    because other papers share these names."""

    paper: str
    arxiv: str
    repository: str | None = None
    distinct_from: tuple[str, ...] = ()
    """Other works that share the benchmark's name (a reader must not take one for the other)."""

    def citation(self, title: str = "") -> str:
        """One line naming the source: "<title>: <paper> (arXiv <id>), <repository>"."""
        name = "" if not title or self.paper.startswith(title) else f"{title}: "
        return f"{name}{self.paper} (arXiv {self.arxiv})" + (f", {self.repository}" if self.repository else "")


class TurnUnit(BaseModel):
    """What a family's sessions count as one step, and its name: one meaning per family, which the
    status line, the transcript, the fork list, compare and History all count in and say."""

    name: str
    """Singular, as screens say it: `turn 3/6`, `event 4/12`, `exchange 3/24`."""
    plural: str
    meaning: str
    """One line: what one of them is (docs/protocols.md says the same)."""

    def counted(self, n: int) -> str:
        """`3 exchanges`, `1 event`."""
        return f"{n} {self.name if n == 1 else self.plural}"


class UnsupportedFamily(ValueError):
    """A family, or a capability of one, that this installation cannot provide."""


@dataclass(frozen=True)
class RunFlag:
    """One family-specific option of `proactive-tui run` (and of the family's settings).

    `setting` names the field of the family's settings model the flag fills; `kwargs` go to
    argparse's `add_argument` as they are (type, choices, action, help, metavar).
    """

    flag: str
    setting: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass
class FileCandidate:
    """One environment file as the folder scan met it: which family reads it is decided from this."""

    path: Path
    root: Path
    display: str
    """The path as messages show it (relative to the working directory when shorter)."""
    folders: frozenset[str]
    """Names of the folders the file sits in, from the loaded root down (family hints)."""
    family: str | None = None
    """Set when the source said which family its files belong to (the shipped samples)."""

    def relative_stem(self, family: str) -> str:
        """The file's path without suffix, relative to the nearest folder named after the family
        (else the loaded root): `proactivebench/real/code_11.json` -> `real/code_11`."""
        parts = self.path.relative_to(self.root).parts if self.root.is_dir() else (self.path.name,)
        parts = tuple(parts)
        if family in parts[:-1]:
            index = len(parts) - 2 - parts[:-1][::-1].index(family)
            parts = parts[index + 1:]
        return "/".join(parts[:-1] + (Path(parts[-1]).stem,))


# -- parts ------------------------------------------------------------------------------------------


class Part:
    """What every part shares: the family that declared it, bound when the part is loaded (so a
    part's defaults can say the family's name without the part repeating it)."""

    family: "Family"


class EnvironmentsPart(Part):
    """Required: how the family's environment files are recognised, read and described."""

    env_model: ClassVar[type["EnvironmentBase"]]
    reads_records: ClassVar[bool] = False
    """Whether `load_record` can build one environment from one element of a file's JSON array,
    so the environment catalog (`envs.catalog`) parses a record of a large file on demand instead
    of the whole file (ProactiveEval's tier files)."""

    def sample_sources(self) -> list[Path]:
        """Folders of environments shipped with the family (package data)."""
        return []

    def claims_location(self, file: FileCandidate) -> bool:
        """The file's place says it is ours (a folder named after the family, by default)."""
        return self.family.name in file.folders

    def claims_shape(self, data: Any) -> bool:
        """The parsed JSON looks like one of ours (asked when no family claimed the location)."""
        return False

    def skip_file(self, file: FileCandidate) -> bool:
        """Files this family knows to ignore without reading (ProactiveEval's `eval.json` beside
        `fair.json`)."""
        return False

    def read_companion(self, file: FileCandidate, data: Any) -> tuple[Any, list["LoadProblem"]]:
        """A companion file (`Family.companion_files`) as `load_file` receives it."""
        return data, []

    def load_file(self, file: FileCandidate, data: Any, companions: dict[str, Any]) -> tuple[list[Any], list["LoadProblem"]]:
        """The environments of one parsed file, and a problem per bad record."""
        raise NotImplementedError(f"{type(self).__name__}.load_file")

    def load_record(self, file: FileCandidate, raw: Any, position: int) -> Any | None:
        """The environment `load_file` makes of the element at `position` of the file's JSON array
        (`raw`), or None when that element is no valid environment. Only asked when
        `reads_records`; the result must equal the one `load_file` gives for that record."""
        raise NotImplementedError(f"{type(self).__name__}.load_record")

    def describe(self, env: Any, reveal_reference: bool = True) -> list[tuple[str, str]]:
        """(heading, body) sections after the common header; `reveal_reference=False` hides what a
        person playing the user should not see."""
        return []

    def validate_env(self, data: Any) -> Any:
        return self.env_model.model_validate(data)

    def environment_file(self, env: Any, label: str) -> tuple[str, Any] | None:
        """Where (a path relative to an environments folder, `/`-separated) and what (JSON data)
        to write so that loading that folder reads `env` back, as a new environment with the id
        `<env's id without its what-if marks (envs.what_if.root_id)>~<label>` ("What if",
        `envs.what_if.save_as_new`). None (the default): this family cannot write its
        environments as files, and the playground says so."""
        return None


class EnginePart(Part):
    """Required: building the engine session that runs one environment with the given seats."""

    def build_session(self, spec: "SessionSpec", env: Any, seats: dict[str, Any], session_id: str | None = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.build_session")

    def default_temperature(self, seat: str) -> float | None:
        """The temperature the family's protocol runs `seat` at when nobody chose one (Chronos's
        agent, ProactiveBench's agent); None: the model settings' default (0.0)."""
        return None

    def default_max_tokens(self, seat: str) -> int | None:
        """The token cap the family's protocol gives `seat`'s replies when nobody chose one
        (ProactBench's agent: 8,192); None: the model settings' default. Never applied to the
        embedded model, whose small caps are what keep it usable."""
        return None

    def seat_temperature(self, seat: str, roles: Any, settings: dict[str, Any] | None = None) -> float:
        """The one answer to "at what temperature does this seat run", whatever started the session
        (playground, `run`, `eval`, `compare`, a fork, a re-run): a temperature someone chose (the
        setup screen, a flag, the config file or the environment, which set the seat's
        `temperature` explicitly) wins, else `default_temperature`, else the model settings'
        default. `roles` is a `RoleSettings`, `settings` the protocol settings."""
        chosen = roles.for_role(seat)
        if "temperature" in chosen.model_fields_set:
            return float(chosen.temperature)
        default = self.default_temperature(seat)
        return float(chosen.temperature if default is None else default)



class RecordPart(Part):
    """Required: the family's section of the run record and the pure reducer that fills it."""

    section_model: ClassVar[type[BaseModel]]
    events: ClassVar[tuple[type, ...]] = ()
    """The family's own event classes; each `type` literal starts with `<name>.`."""
    legacy_types: ClassVar[dict[str, str]] = {}
    """Event type names written by earlier versions -> today's (so old stores still read)."""

    def new_section(self, record: "RunRecord") -> BaseModel:
        return self.section_model()

    def apply(self, record: "RunRecord", event: Any) -> None:
        """Fold one of the family's events into `record.section` (a pure reducer)."""

    def scores(self, record: "RunRecord") -> list["Score"]:
        """The generic scores of a record (headline numbers, each naming who gave it)."""
        return []

    def verdicts(self, record: "RunRecord") -> list["Verdict"]:
        """Every verdict a judge (or a rule check) gave in the session, that a person can label
        (`services.labels`): each under a key stable within the session, with the judge's value, so
        labels can be compared with the judge per judge model and kind of verdict."""
        return []

    def upgrade_record(self, data: dict[str, Any]) -> dict[str, Any]:
        """Move a version-1 run record's family fields into `section` (see core.run_record)."""
        return data

    def complete_turns(self, record: "RunRecord") -> int:
        """Engine turns the session completed (what a resume keeps, what `run` prints)."""
        return 0

    def unit_number(self, record: "RunRecord", turn: int) -> int:
        """The `turn_unit` a message or reply of engine turn `turn` belongs to (its number, from
        1). The engine numbers turns its own way (events' and messages' `turn`); this is what
        screens show. By default the two are the same."""
        return turn

    def units_done(self, record: "RunRecord") -> int:
        """How many `turn_unit`s the session completed: what History and `sessions list` count."""
        return self.complete_turns(record)

    def turn_scores(self, record: "RunRecord") -> Any:
        """The score a side-by-side comparison (`services.compare`) sets against the other side's per
        turn, and at the end: a `core.scores.TurnScores`, or None when the family has no such
        score (a comparison then shows the headline scores only)."""
        return None

    def reply_writers(self, record: "RunRecord") -> list[tuple[str, str]]:
        """(seat, writer) of every reply the record keeps, in order (`core.writers`): who wrote
        it as the record says, a model string, `person`, or `person (edited)`. By default the
        dialogue messages; a family whose replies live in its section says so."""
        from proactive_tui.core.writers import message_writers

        return message_writers(record)


class ReportPart(Part):
    """Required: what every readable view shows of a session."""

    def sections(self, record: "RunRecord") -> list["ReportSection"]:
        """What every readable view shows of a session, in the order things happened."""
        return []


class BatchPart(Part):
    """Optional: the family's figures of a batch `eval` (without it, a batch report has only the
    common tables and no pass rule).

    Why a part of the family: each paper reports its own figures (ProactiveEval's planning and
    guidance per domain, ProactiveBench's per-split confusion metrics, Chronos's per-branch
    success per tier) and says what a passed task is, while the folder, the manifest, shards and
    the files are the same for every family (`evalrun`)."""

    def tables(self, results: list[Any], repeats: int) -> list[Any]:
        """The family's tables of a batch report (`evalrun.report.ReportTable`) from its finished
        sessions (`evalrun.folder.SessionResult`: key, seed, run record), `repeats` per task. They
        depend only on the results given, so merged shards give the tables of one unsharded run."""
        return []

    def trials(self, result: Any) -> list[Any]:
        """The tasks a finished session is scored on and whether each passed
        (`evalrun.report.Trial`; `passed` None: no verdict): the one pass rule of the family, read
        by its pass^k table and the results screen. Empty: the family has no pass rule."""
        return []

    def groups(self, result: Any) -> list[str]:
        """The groups of `tables` rows a finished session counts in (its domain, split, tier or
        setting, as the rows name them), so the results screen can list the sessions behind a
        row. Empty: only rows without a group list it."""
        return []

    def share(self, finished: list[Any]) -> Any | None:
        """What the sessions of one batch run share, or None (the default: nothing). The object's
        `attach(session, key)` is called with each session the batch builds, before it runs;
        `finished` are the batch folder's finished sessions (on `--resume`), so work they did is
        not done again (ProactiveEval plans once and guides three times: `shared_plan.py`)."""
        return None


class ResumePart(Part):
    """Optional: a session interrupted before its end continues from its last complete turn
    (ProactiveBench and Chronos replay the recorded replies through `core.replay`, ProactiveEval
    restores its turns)."""

    def session(self, spec: "SessionSpec", env: Any, seats: dict[str, Any], record: "RunRecord",
                session_id: str | None = None) -> Any:
        """The engine session that continues `record`."""
        raise NotImplementedError(f"{type(self).__name__}.session")


class ForkPart(Part):
    """Optional: a finished or interrupted session can be forked at any of its `steps`
    (`core.fork`)."""

    def steps(self, record: "RunRecord") -> list[Any]:
        """The replies a branch can start from (`core.fork.ForkStep`), in the order they were given."""
        return []

    def sides(self, point: Any) -> Any:
        """A fresh classifier (`core.fork.Classifier`) saying of each event whether it comes before
        or after the fork point; it may keep state (a message's deltas follow its start)."""
        raise NotImplementedError(f"{type(self).__name__}.sides")

    def recorded_answers(self, record: "RunRecord") -> list[Any]:
        """Every seat's recorded replies in the order they were asked (`core.replay`), for
        families that fork by replay (the default `build`)."""
        raise NotImplementedError(f"{type(self).__name__}.recorded_answers")

    def edit_answer(self, point: Any, text: str, record: "RunRecord") -> Any:
        """A person's edit of the reply at `point` as the recorded answer the seat gives instead
        (`core.replay.RecordedAnswer`); ForkError when the text cannot be that reply."""
        raise NotImplementedError(f"{type(self).__name__}.edit_answer")

    def check_edit(self, point: Any, text: str, record: "RunRecord") -> None:
        """ForkError when `text` cannot be the reply at `point` (by default: the edit is read
        as `edit_answer` reads it)."""
        self.edit_answer(point, text, record)

    def build(self, spec: "SessionSpec", env: Any, seats: dict[str, Any], parent: "RunRecord",
              prefix: "RunRecord", point: Any, change: Any, session_id: str | None = None) -> Any:
        """The branch's engine session (before `inherit`): by default the parent's replies replayed
        up to the fork point, then the edit, then live seats (`core.fork.replay_fork`)."""
        from proactive_tui.core.fork import replay_fork

        return replay_fork(self.family, spec, env, seats, parent, point, change, session_id=session_id)


class RegradePart(Part):
    """Optional: a stored session's judges run again with another judge model, over the dialogue
    as recorded (`services.regrade`), without running the dialogue again."""

    seat: ClassVar[str] = "judge"
    """The seat whose model does the judging a re-grade replaces (ProactiveBench: its user seat,
    the reward judge); its role's settings are the new judge's defaults."""

    def judge_event_types(self) -> tuple[type, ...]:
        """The family's events that say what its judges decided: a re-graded record has these
        from the grading, and every other event from the session as recorded."""
        return ()

    async def regrade(self, record: "RunRecord", env: Any, judge: Any) -> list[Any]:
        """The judge events (in the family's own types, stamped in order, with the `model_called`
        events of the judge's calls) that `judge` (a Participant) gives the recorded dialogue of
        `record`, asked with the very prompts the protocol uses. Nothing is stored or changed here."""
        raise NotImplementedError(f"{type(self).__name__}.regrade")


class RerunPart(Part):
    """Optional: the family's user speaks in turns a re-run against a new agent (`core.rerun`)
    can send again verbatim (the user frozen)."""

    def user_turns(self, record: "RunRecord") -> list["MessageRecord"]:
        """The user's finished messages in the order they were said."""
        return []


class GeneratePart(Part):
    """Optional: the family's data pipeline (`proactive-tui synth <family>`, the studio)."""

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the family's own `proactive-tui synth <family>` options."""

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The pipeline's options (JSON values) from the parsed command."""
        return {}

    def targets(self) -> tuple[str, str, list[str]]:
        """What a run is made for, for the studio's setup: (the command-line option, its label,
        every value), e.g. ("--domain", "Domain", [...])."""
        return ("", "", [])

    def pipeline(self, options: dict[str, Any]) -> Any:
        """The pipeline (a `synth.engine.Pipeline`) built from the command's options."""
        raise NotImplementedError(f"{type(self).__name__}.pipeline")


# -- the declaration ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Parts:
    """Where a family's parts live: dotted paths, `package.module:attr` (a leading dot: relative to
    the declaration's `package`). None: the family has no such part, so cannot do that."""

    environments: str
    engine: str
    record: str
    report: str
    batch: str | None = None
    resume: str | None = None
    fork: str | None = None
    regrade: str | None = None
    rerun: str | None = None
    generate: str | None = None
    setup_screen: str | None = None
    """The playground's setup modal (a class); None: the family cannot be played in the TUI."""
    session_screen: str | None = None
    """The playground's session screen (a class; it takes `replay_events` when `replayable`)."""
    studio_view: str | None = None
    """The studio's drawing of one generated item (a `ui.studio.view.StudioItemView` class)."""
    write_form: str | None = None
    """The studio's "write your own" form (a `ui.studio.write.WriteForm` screen class)."""
    exporters: tuple[str, ...] = ()
    """The family's own dataset formats (`export.registry.Exporter` objects; a pipeline module, so
    not part of the report part, which is engine)."""
    rating_study: str | None = None
    """The family's published human rating study (a `services.labels.RatingStudy` class: import its
    ratings as labels, measure judge and raters as the study does)."""
    pairwise_study: str | None = None
    """The family's published pairwise preference study (a `services.compare.PairwiseStudy` class:
    its pairs become blind comparisons to vote on, its votes import as votes)."""
    printer: str | None = None
    """The headless `run` printer (a `cli.printer.EventPrinter` subclass); None: the base one.
    The engine names no CLI class itself, so it never imports the CLI (`.importlinter`)."""
    reference: str | None = None
    """A function `(spec, env, gateway) -> session` seating protocol-following seats and no model
    (`eval SELECTOR... --reference`, Chronos's oracle agent and scripted user): a check that the
    environments and the scoring agree, where every rate should be perfect."""
    eval_commands: str | None = None
    """A function adding the family's own `proactive-tui eval` sub-commands (argparse), things
    that are not a batch of its sessions (checking a judge against human labels)."""


DEFAULT_TURN_UNIT = TurnUnit(name="turn", plural="turns", meaning="one agent message and the reply to it")
DEFAULT_STEP_STARTS: tuple[str, ...] = ("message_started",)

P = TypeVar("P", bound=Part)
Screen = Literal["setup_screen", "session_screen", "studio_view", "write_form"]


def load_path(path: str, package: str | None = None) -> Any:
    """The object a dotted path names: `package.module:attr.attr` (or a whole module)."""
    module_name, _, attr = path.partition(":")
    found: Any = importlib.import_module(module_name, package)
    for name in attr.split(".") if attr else ():
        found = getattr(found, name)
    return found


@dataclass(kw_only=True, eq=False)
class Family:
    """One benchmark family: what it is, and where its parts live (see the module docstring)."""

    name: str
    """The one name of this family: module, ids, event prefix, CSS ids, export format."""
    title: str
    summary: str = ""
    source: SourceRef | None = None
    package: str | None = None
    """The package that relative part paths (".env:ENVIRONMENTS") are read from: `__name__` of
    the declaring module."""
    settings_model_path: str
    """Dotted path of the typed protocol settings model: the defaults live there once."""
    parts: Parts

    seats: tuple[str, ...] = ("agent", "user", "judge")
    """The seats its sessions use. `judge_seat` is True when "judge" is among them."""
    seat_labels: dict[str, str] = field(default_factory=dict)
    """How setup and summaries name a seat when the plain name would mislead (ProactiveBench's
    user seat is its reward judge)."""
    play_modes: dict[str, str] = field(default_factory=lambda: {"watch": "Watch models"})
    """Mode -> label for the setup screen: `watch`, `play_user`, `play_agent`."""
    group_by_tier: bool = False
    """The picker nests this family's environments domain -> tier (ProactiveEval's fair/hard)."""
    replayable: bool = False
    """History can replay a recorded session in the family's session screen (its screen takes
    `replay_events`); otherwise History shows the session's report as text."""
    turn_unit: TurnUnit = field(default_factory=lambda: DEFAULT_TURN_UNIT)
    """What one step of a session is, declared once (see `TurnUnit`)."""
    step_starts: tuple[str, ...] = DEFAULT_STEP_STARTS
    """The event types that open a step of a demo, where its pause and step hold (`services.demo`): a
    message by default; ProactiveBench's trace event, whose turns are the trace's events."""
    run_flags: tuple[RunFlag, ...] = ()
    sweeps: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Settings the batch `eval` runs at every value unless its flag names one (or `all`): the
    paper's protocol runs them all (ProactiveEval's three agreeableness levels). Each is a grid
    axis of the plan (`evalrun.plan.grid_points`)."""
    file_suffixes: tuple[str, ...] = (".json",)
    """The files this family's environments come in: `.json` (read whole by `envs.reading.read_json`),
    and `.jsonl` (JSON Lines, read by `envs.reading.read_jsonl` into a `JsonLines` of (line, row)
    with a problem per bad line) for a family whose upstream ships them (ProactBench). A `.jsonl`
    file reaches only the families that list it."""
    companion_files: tuple[str, ...] = ()
    """File names that describe their folder rather than hold environments (ProactiveBench's
    `splits.json`); read before the folder's other files and handed to `load_file`."""
    no_frozen_user_reason: str = "its user seat says nothing a re-run could send again"
    """Why there is no `rerun` part: the family's own words in `sessions rerun`'s refusal."""
    not_regradable_reason: str = "this family's sessions cannot be re-graded"
    """Why there is no `regrade` part, in words for the person asking (`regrade` prints it)."""

    _loaded: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    # -- loading ------------------------------------------------------------------------------

    def load(self, path: str) -> Any:
        """The object at `path` (relative to `package` when it starts with a dot), imported once."""
        if path not in self._loaded:
            self._loaded[path] = load_path(path, self.package)
        return self._loaded[path]

    def _part(self, which: str, kind: type[P]) -> P | None:
        """The part named `which`, checked to be a `kind` (a wrong path fails here, naming the
        family, the part and the path, not later as a missing method), or None when not declared."""
        path: str | None = getattr(self.parts, which)
        if path is None:
            return None
        part = self.load(path)
        if not isinstance(part, kind):
            raise TypeError(f"family {self.name}: its {which} part {path} is a {type(part).__name__}, "
                            f"not a {kind.__name__}")
        if vars(part).get("family") is not self:
            part.family = self
        return part

    def _required(self, which: str, kind: type[P]) -> P:
        part = self._part(which, kind)
        assert part is not None  # the declaration's required fields are str
        return part

    @property
    def environments(self) -> EnvironmentsPart:
        return self._required("environments", EnvironmentsPart)

    @property
    def engine(self) -> EnginePart:
        return self._required("engine", EnginePart)

    @property
    def record(self) -> RecordPart:
        return self._required("record", RecordPart)

    @property
    def report(self) -> ReportPart:
        return self._required("report", ReportPart)

    @property
    def batch(self) -> BatchPart | None:
        return self._part("batch", BatchPart)

    @property
    def resume(self) -> ResumePart | None:
        return self._part("resume", ResumePart)

    @property
    def fork(self) -> ForkPart | None:
        return self._part("fork", ForkPart)

    @property
    def regrade(self) -> RegradePart | None:
        return self._part("regrade", RegradePart)

    @property
    def rerun(self) -> RerunPart | None:
        return self._part("rerun", RerunPart)

    @property
    def generate(self) -> GeneratePart | None:
        return self._part("generate", GeneratePart)

    def screen(self, which: Screen) -> type | None:
        """One of the family's screen classes (`Parts.setup_screen` ...), or None when it has none."""
        path: str | None = getattr(self.parts, which)
        if path is None:
            return None
        found: type = self.load(path)
        return found

    def printer_class(self) -> type | None:
        """The headless `run` printer, or None: the CLI then prints with the base EventPrinter."""
        if self.parts.printer is None:
            return None
        found: type = self.load(self.parts.printer)
        return found

    def exporters(self) -> list["Exporter"]:
        """The family's own dataset formats (`Parts.exporters`)."""
        return [self.load(path) for path in self.parts.exporters]

    def rating_study(self) -> Any | None:
        """A fresh `Parts.rating_study`, or None when the family has none."""
        return None if self.parts.rating_study is None else self.load(self.parts.rating_study)()

    def pairwise_study(self) -> Any | None:
        """A fresh `Parts.pairwise_study`, or None when the family has none."""
        return None if self.parts.pairwise_study is None else self.load(self.parts.pairwise_study)()

    def reference_session(self, spec: "SessionSpec", env: Any, gateway: Any) -> Any | None:
        """The `reference` session for `env`, or None when the family has no reference seats."""
        return None if self.parts.reference is None else self.load(self.parts.reference)(spec, env, gateway)

    def add_eval_commands(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        """Add the family's own `proactive-tui eval` sub-commands (`Parts.eval_commands`)."""
        if self.parts.eval_commands is not None:
            self.load(self.parts.eval_commands)(subparsers)

    # -- settings -----------------------------------------------------------------------------

    @property
    def judge_seat(self) -> bool:
        return "judge" in self.seats

    @property
    def settings_model(self) -> type[BaseModel]:
        """The settings model, imported when first asked for (a few pydantic models the picker
        never needs)."""
        found: type[BaseModel] = self.load(self.settings_model_path)
        return found

    def settings(self, values: dict[str, Any] | None = None) -> BaseModel:
        return self.settings_model(**(values or {}))

    def deviations(self, settings: dict[str, Any] | None) -> list[str]:
        """How `settings` differ from the family's protocol, one short label each ("verdict
        feedback on (the paper's ablation)"), from the settings model's defaults and the labels
        its fields declare (`core.deviations`); empty for the protocol's own settings. Every
        output of a batch shows them beside the numbers they affect."""
        from proactive_tui.core.deviations import deviations

        return deviations(self.settings_model, settings)

    def settings_from_args(self, args: argparse.Namespace) -> dict[str, Any]:
        """The protocol settings from `run`'s flags (only this family's flags exist on `args`)."""
        values: dict[str, Any] = {}
        for flag in self.run_flags:
            value = getattr(args, flag.dest, None)
            if value is not None:
                values[flag.setting] = value
        from pydantic import ValidationError

        try:
            return self.settings_model(**values).model_dump()
        except ValidationError as exc:  # one line per flag, in the flag's own name, no pydantic URL
            flags = {flag.setting: flag.flag for flag in self.run_flags}
            raise ValueError("; ".join(
                f"{flags.get(str(e['loc'][0]), str(e['loc'][0])) if e.get('loc') else 'settings'}: "
                f"{e['msg'].removeprefix('Input ')} (got {e.get('input')!r})"
                for e in exc.errors(include_url=False))) from None

    def __repr__(self) -> str:
        return f"<Family {self.name}>"
