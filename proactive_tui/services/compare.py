"""Side-by-side comparison: one environment, one user model, one judge, one seed; two or more agents.

The point of a comparison is that the agent is the only thing that differs, so a score difference
is the agent's doing. `ComparePlan.specs` builds one SessionSpec per side and checks that they
differ in the agent role only (`assert_only_agent_differs`); `run_comparison` runs the sides at
once, each recorded in the session store like `run`, and keeps a `ComparisonRow` (blind or not). A
blind comparison shuffles which agent is shown as A, B, ... (`side_order`, from a seed recorded with
it), so a person cannot learn that the first agent named is always A; its sessions are kept in the
shown order, so a vote for a letter is the session, and the model, shown under it.
`turn_table` gives each family's comparable per-turn score and the difference to side A;
`vote` saves a person's verdict on the comparison. No UI imports: the CLI and the compare screen
both drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import uuid
from typing import Any, Callable, Literal

from pydantic import BaseModel, Field

from proactive_tui.core.scores import TurnScores, turn_scores
from proactive_tui.core.spec import SeatKind, SessionSpec
from proactive_tui.llm.settings import ModelSettings, RoleSettings
from proactive_tui.services.study_import import ImportSummary, study_of

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class CompareError(Exception):
    """A comparison that cannot be planned, found or voted on (the message says why)."""


class ComparePlan(BaseModel):
    """What every side shares (environment, user and judge settings, seed, protocol settings) and
    the agents that differ."""

    env_id: str
    agents: list[ModelSettings] = Field(min_length=2)
    user: ModelSettings = Field(default_factory=ModelSettings)
    judge: ModelSettings = Field(default_factory=ModelSettings)
    seed: int | None = None
    """Sent with every model call of every seat (so the user and judge calls match across sides)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The family's protocol settings, the same for every side."""
    seats: dict[str, SeatKind] = Field(default_factory=lambda: {"agent": "model", "user": "model", "judge": "model"})
    blind: bool = False
    shuffle_seed: int | None = None
    """Blind only: the seed of which agent is shown as A, B, ... (`side_order`). None draws one
    per comparison from its id (`shuffle_seed_for`); either way the comparison records it."""

    def specs(self, seed_setting: bool = False) -> list[SessionSpec]:
        """One spec per side, in display order. `seed_setting`: the family takes `seed` as a
        protocol setting too (ProactiveEval)."""
        settings = dict(self.settings)
        if seed_setting and self.seed is not None:
            settings["seed"] = self.seed

        def seeded(role: ModelSettings) -> ModelSettings:
            return role if self.seed is None else role.model_copy(update={"seed": self.seed})

        specs = [SessionSpec(env_id=self.env_id, seats=dict(self.seats), settings=dict(settings),
                             roles=RoleSettings(agent=seeded(agent), user=seeded(self.user), judge=seeded(self.judge)))
                 for agent in self.agents]
        assert_only_agent_differs(specs)
        return specs


def _without_agent(spec: SessionSpec) -> dict[str, Any]:
    data = spec.model_dump(mode="json")
    data["roles"].pop("agent")
    return data


def assert_only_agent_differs(specs: list[SessionSpec]) -> None:
    """Raises CompareError when two sides differ in anything but the agent role: a comparison
    whose user, judge, seed or environment differ would credit the agent with their difference."""
    if len(specs) < 2:
        raise CompareError("a comparison needs two or more sides")
    first = _without_agent(specs[0])
    for index, spec in enumerate(specs[1:], start=1):
        if _without_agent(spec) != first:
            raise CompareError(f"side {LETTERS[index]} differs from side A in more than the agent")


def letter(index: int) -> str:
    return LETTERS[index] if index < len(LETTERS) else f"#{index + 1}"


# -- the blind shuffle -----------------------------------------------------------------------------


def shuffle_seed_for(comparison_id: str) -> int:
    """A blind comparison's shuffle seed when none was given: a stable hash of its id (SHA-256,
    never Python's `hash()`, which differs per process), so every comparison draws its own order
    and the recorded seed gives the same order again."""
    return int.from_bytes(hashlib.sha256(comparison_id.encode("utf-8")).digest()[:4], "big")


def side_order(seed: int, sides: int) -> list[int]:
    """Which agent (its index in the order given) each shown side is, A first: the agents sorted
    by a SHA-256 of (seed, index). Defined here rather than by `random`, so a recorded seed names
    the same order in every Python version."""
    return sorted(range(sides), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode("ascii")).digest())


def shuffle_notice(comparison: Any) -> str:
    """What a screen or the CLI says of a comparison's shuffle: `blind: sides shuffled (seed N)`."""
    if comparison.shuffle_seed is None:
        return ""
    return f"blind: sides shuffled (seed {comparison.shuffle_seed})"


# -- running ---------------------------------------------------------------------------------------


class SideResult(BaseModel):
    """One side when it ended: its session id, its record (None if it never started), its error."""

    letter: str
    session_id: str
    agent_model: str
    record: Any = None
    """A core.run_record.RunRecord."""
    error: str | None = None
    saved: bool = False


Build = Callable[[SessionSpec, Any, Any, str], Any]
"""(spec, env, gateway, session_id) -> session; `core.spec.build_session` unless replaced (scripted seats)."""
OnEvent = Callable[[int, Any], Any]
"""(side index, event): called for every event of every side as it arrives (the compare screen)."""


def new_comparison(plan: ComparePlan, session_ids: list[str]) -> Any:
    """The comparison of `plan`, its sessions in the order shown (A, B, ...). A blind one draws
    which agent each side is (`side_order`, from the plan's `shuffle_seed` or one made from the
    new id) and records the seed and the order; the sides then run in that order."""
    from proactive_tui.core.events import now_iso
    from proactive_tui.store.db import ComparisonRow

    comparison_id = uuid.uuid4().hex[:12]
    seed = order = None
    if plan.blind:
        seed = plan.shuffle_seed if plan.shuffle_seed is not None else shuffle_seed_for(comparison_id)
        order = side_order(seed, len(plan.agents))
    return ComparisonRow(id=comparison_id, env_id=plan.env_id, sessions=list(session_ids), blind=plan.blind,
                         created_at=now_iso(), shuffle_seed=seed, side_order=order)


def shown_agents(plan: ComparePlan, comparison: Any) -> list[ModelSettings]:
    """The plan's agents in the order the comparison shows them (A, B, ...)."""
    order = comparison.side_order if comparison is not None and comparison.side_order else range(len(plan.agents))
    return [plan.agents[i] for i in order]


async def run_sides(specs: list[SessionSpec], env: Any, session_ids: list[str], store: Any = None,
                    on_event: OnEvent | None = None, build: Build | None = None, gateway: Any = None,
                    warn: Callable[[str], None] | None = None) -> list[SideResult]:
    """Run every side at once, each recorded in `store` (if given) as it runs; one side's failure
    is that side's result, never the other's."""
    from proactive_tui.core.run_record import RunRecordBuilder
    from proactive_tui.core.spec import build_session
    from proactive_tui.llm.gateway import Gateway

    gateway = gateway or Gateway()
    say = warn or (lambda message: None)

    def default_build(spec: SessionSpec, env: Any, gateway: Any, session_id: str) -> Any:
        return build_session(spec, env, gateway, session_id=session_id)

    async def one(index: int, spec: SessionSpec) -> SideResult:
        result = SideResult(letter=letter(index), session_id=session_ids[index], agent_model=spec.roles.agent.model)
        builder = RunRecordBuilder()
        recorder = None
        try:
            session = (build or default_build)(spec, env, gateway, session_ids[index])
            if store is not None:
                from proactive_tui.store.recorder import SessionRecorder, record_events

                recorder = SessionRecorder(store, spec, on_error=lambda m: say(f"side {result.letter}: {m}"))
                stream = record_events(store, spec, session, recorder=recorder)
            else:
                stream = session.events()
            async with contextlib.aclosing(stream) as events:
                async for event in events:
                    builder.apply(event)
                    if on_event is not None:
                        on_event(index, event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one side's failure is its result
            result.error = f"{type(exc).__name__}: {exc}"
        result.record = builder.record
        result.saved = bool(recorder is not None and recorder.saved)
        return result

    return list(await asyncio.gather(*(one(i, spec) for i, spec in enumerate(specs))))


async def run_comparison(plan: ComparePlan, env: Any, store: Any = None, on_event: OnEvent | None = None,
                         build: Build | None = None, gateway: Any = None,
                         warn: Callable[[str], None] | None = None,
                         on_start: Callable[[Any], Any] | None = None) -> tuple[Any, list[SideResult]]:
    """Run the plan's sides at once; the ComparisonRow (kept in `store` before the sides start,
    so a comparison cut short is still listed) and each side's result."""
    from proactive_tui.core import registry

    family = registry.get(env.family)
    specs = plan.specs(seed_setting=takes_seed_setting(family))
    ids = [uuid.uuid4().hex[:12] for _ in specs]
    row = new_comparison(plan, ids)
    if row.side_order is not None:  # a blind comparison runs its sides in the order it shows them
        specs = [specs[i] for i in row.side_order]
    if store is not None:
        store.put_comparison(row)
    if on_start is not None:
        on_start(row)
    results = await run_sides(specs, env, ids, store=store, on_event=on_event, build=build, gateway=gateway, warn=warn)
    return row, results


def takes_seed_setting(family: Any) -> bool:
    """The family has a `--seed` protocol setting of its own (ProactiveEval)."""
    return any(flag.dest == "seed" for flag in family.run_flags)


# -- per-turn scores -------------------------------------------------------------------------------


class TurnRow(BaseModel):
    turn: int
    values: list[float | None]
    """Each side's value, in display order."""
    differences: list[float | None]
    """Each side after A minus A (None when either value is missing)."""


class CompareTable(BaseModel):
    """The per-turn table and the final differences of a comparison (what `comparison.json` and
    the screen show). A row is one of the family's `turn_unit`s (`unit`: turn, event, exchange)."""

    label: str
    family: str = ""
    unit: str = "turn"
    rows: list[TurnRow] = Field(default_factory=list)
    final_label: str
    finals: list[float | None] = Field(default_factory=list)
    final_differences: list[float | None] = Field(default_factory=list)
    headlines: list[dict[str, Any]] = Field(default_factory=list)
    """Each side's headline values (store.queries.headline)."""
    headline_differences: list[list[tuple[str, Any, Any]]] = Field(default_factory=list)
    """For each side after A: (score, A's value, its value) where they differ."""


def _minus(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else round(value - base, 6)


def turn_table(records: list[Any]) -> CompareTable:
    """The per-turn values of each side, and each side's difference to side A, per turn and at the end."""
    from proactive_tui.store.queries import headline, score_differences

    scores = [turn_scores(r) if r is not None else TurnScores(label="-", per_turn=[], final_label="-") for r in records]
    label = next((s.label for s in scores if s.label != "-"), "-")
    final_label = next((s.final_label for s in scores if s.final_label != "-"), "-")
    turns = max((len(s.per_turn) for s in scores), default=0)
    rows = []
    for turn in range(turns):
        values = [s.per_turn[turn] if turn < len(s.per_turn) else None for s in scores]
        rows.append(TurnRow(turn=turn + 1, values=values, differences=[_minus(v, values[0]) for v in values[1:]]))
    finals = [s.final for s in scores]
    heads = [headline(r) if r is not None else {} for r in records]
    from proactive_tui.store.queries import turn_unit

    family = next((r.family for r in records if r is not None), "")
    return CompareTable(label=label, family=family, unit=turn_unit(family).name, rows=rows, final_label=final_label, finals=finals,
                        final_differences=[_minus(v, finals[0]) for v in finals[1:]], headlines=heads,
                        headline_differences=[score_differences(heads[0], h) for h in heads[1:]])


# -- voting ----------------------------------------------------------------------------------------


def find_comparison(store: Any, comparison_id: str) -> Any:
    """The comparison with this id (or the one id it is a unique prefix of)."""
    rows = [c for c in store.comparisons() if c.id == comparison_id]
    if not rows:
        rows = [c for c in store.comparisons() if c.id.startswith(comparison_id)]
    if not rows:
        raise CompareError(f"no comparison {comparison_id!r} (see `proactive-tui compare list`)")
    if len(rows) > 1:
        raise CompareError(f"{comparison_id!r} names {len(rows)} comparisons; give more of the id")
    return rows[0]


def winner_of(comparison: Any, winner: str) -> str:
    """`winner` (a letter A, B..., "tie", or a session id or its prefix) as the stored vote: a
    session id or "tie"."""
    text = winner.strip()
    if text.lower() == "tie":
        return "tie"
    if len(text) == 1 and text.upper() in LETTERS:
        index = LETTERS.index(text.upper())
        if index >= len(comparison.sessions):
            raise CompareError(f"the comparison has sides {', '.join(letter(i) for i in range(len(comparison.sessions)))}; "
                               f"there is no side {text.upper()}")
        return comparison.sessions[index]
    matches = [s for s in comparison.sessions if s == text] or [s for s in comparison.sessions if s.startswith(text)]
    if len(matches) != 1:
        raise CompareError(f"{text!r} is not a side of comparison {comparison.id} "
                           f"(A/B/tie or one of {', '.join(comparison.sessions)})")
    return matches[0]


def vote(store: Any, comparison_id: str, winner: str, reason: str = "") -> Any:
    """Save a person's vote (the better side, or "tie") and why; the updated ComparisonRow. A new
    vote replaces an earlier one (a person may change their mind)."""
    from proactive_tui.core.events import now_iso

    comparison = find_comparison(store, comparison_id)
    updated = comparison.model_copy(update={"vote": winner_of(comparison, winner), "reason": reason.strip(),
                                            "voted_at": now_iso()})
    store.put_comparison(updated)
    return updated


def side_name(comparison: Any, index: int, models: list[str], reveal: bool | None = None) -> str:
    """How a side is named: its letter while the comparison is blind and not voted on, else
    `A (model)`. `reveal` forces either."""
    shown = (not comparison.blind or comparison.vote is not None) if reveal is None else reveal
    name = letter(index)
    return f"{name} ({models[index]})" if shown and index < len(models) else name


def vote_text(comparison: Any) -> str:
    """The vote in words: `A (session abc)`, `tie`, or `no vote yet`."""
    if comparison.vote is None:
        return "no vote yet"
    if comparison.vote == "tie":
        return "tie"
    if comparison.vote in comparison.sessions:
        return f"{letter(comparison.sessions.index(comparison.vote))} (session {comparison.vote})"
    return comparison.vote



# -- a family's published pairwise study -------------------------------------------------------------


class StudyPair(BaseModel):
    """One pair of a pairwise study as it enters the store: its two sides' sessions, in the
    study's case order (A, B)."""

    item_id: str
    env_id: str
    sessions: list[str] = Field(min_length=2, max_length=2)


class StudyVote(BaseModel):
    """One recorded vote of a pairwise study."""

    item_id: str
    voter: str
    chosen: Literal["A", "B", "tie"]
    """The case chosen (the study's `chosen_case`), or a tie."""
    swapped: bool
    """The voter saw case B on the left (the study's `ab_swap`)."""
    reason: str = ""
    at: str = ""


class PairImport(ImportSummary):
    """What importing a pairwise study did (`PairwiseStudy.import_study`)."""

    pairs_new: int = 0
    pairs_kept: int = 0
    """Pairs already in the store (an import run twice adds nothing, and keeps a person's vote)."""
    votes_new: int = 0
    votes_kept: int = 0


class PairwiseStudy:
    """A family's published pairwise preference study (`Family.pairwise_study`): people shown two
    replies to the same turn, blind and in a shuffled order, picking the better one or a tie.

    `import_study` stores each pair's two replies as sessions (through the family, which knows
    its events), then `keep_study_pair` here makes the comparisons: one blind comparison per
    pair for the person using this store to vote on (`compare vote`, the vote modal), and one
    per recorded vote, with its voter, the order that voter saw and the side they chose."""

    family: str = ""
    title: str = ""

    def import_study(self, store: Any, source: Any = None) -> PairImport:
        """Import the study in `source` (a folder; None: the copy the family ships)."""
        raise NotImplementedError

    def owns(self, comparison: Any) -> bool:
        """The comparison is one of this study's pairs."""
        raise NotImplementedError

    def shown(self, record: Any) -> tuple[str, str]:
        """What a voter reads of one side's session: (the message the reply answers, the reply)."""
        raise NotImplementedError


def pairs_to_vote(store: Any) -> list[tuple[PairwiseStudy, Any]]:
    """The imported study pairs still waiting for the vote of the person using this store, in
    the order they were imported (each with its study)."""
    studies = pairwise_studies()
    out = []
    for row in store.comparisons():
        if row.voter or row.vote is not None:
            continue
        study = next((s for s in studies if s.owns(row)), None)
        if study is not None:
            out.append((study, row))
    return out


def pairwise_studies() -> list[PairwiseStudy]:
    """The pairwise study of every installed family that has one."""
    from proactive_tui.core import registry

    return [s for s in (f.pairwise_study() for f in registry.families().values()) if s is not None]


def pairwise_study(family_name: str) -> PairwiseStudy:
    """The pairwise study of `family_name`; CompareError naming the families that have one."""
    return study_of(pairwise_studies(), family_name, "pairwise study", CompareError)


def study_comparison_id(item_id: str, voter: str = "") -> str:
    """The comparison of a study pair for `voter` ('' : the person using this store): a stable
    hash, so importing the study again finds the comparisons it made before."""
    return "pair-" + hashlib.sha256(f"{item_id}\x00{voter}".encode("utf-8")).hexdigest()[:12]


def keep_study_pair(store: Any, pair: StudyPair, votes: list[StudyVote], created_at: str) -> tuple[bool, int, int]:
    """The comparisons of one study pair: (whether the person's blind comparison is new, votes
    new, votes already there). The person's comparison, once made, is never touched again (their
    vote stays); each recorded vote is its own comparison, with the voter, the sides in the order
    that voter saw them and the session of the case chosen."""
    from proactive_tui.store.db import ComparisonRow

    existing = {row.id: row for row in store.comparisons()}
    mine = study_comparison_id(pair.item_id)
    new_pair = mine not in existing
    if new_pair:
        seed = shuffle_seed_for(mine)
        order = side_order(seed, 2)
        store.put_comparison(ComparisonRow(id=mine, env_id=pair.env_id, sessions=[pair.sessions[i] for i in order],
                                           blind=True, created_at=created_at, shuffle_seed=seed, side_order=order))
    new = kept = 0
    for v in votes:
        order = [1, 0] if v.swapped else [0, 1]
        shown = [pair.sessions[i] for i in order]
        row = ComparisonRow(
            id=study_comparison_id(pair.item_id, v.voter), env_id=pair.env_id, sessions=shown, blind=True,
            vote="tie" if v.chosen == "tie" else pair.sessions["AB".index(v.chosen)], reason=v.reason,
            created_at=v.at or created_at, voted_at=v.at or created_at, side_order=order, voter=v.voter)
        if existing.get(row.id) == row:
            kept += 1
            continue
        store.put_comparison(row)
        new += 1
    return new_pair, new, kept
