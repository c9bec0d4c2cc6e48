"""The synth engine: run a family's pipeline over items, every model call kept as a step file.

A run folder (`synth ... --out DIR`)::

    DIR/manifest.json            what the run is: family, generator version, config, models per role,
                                 seed, config hash, this shard's planned items
    DIR/command.json             the options it was started with (`synth resume DIR` reads them)
    DIR/shared/<name>/<step>.json the steps every item shares (ProactiveEval's topic tree)
    DIR/items/<item>/<step>.json one model call of one item: input, output, model, temperature,
                                 seed, tokens, cost, and for a rejection its reason
    DIR/items/<item>/result.json the item's outcome: kept (tier, the output record) or rejected
    DIR/out/...                  the kept items in the family's own layout
    DIR/summary.json             tried, kept per tier, rejected per reason, calls, tokens, cost

Why one file per call: a step is written (temporary file, then rename) the moment its call
returns, and a pipeline asks for its steps by name, so running an item again (`resume`) reads
every step that is on disk and calls only the missing ones. Whatever stops a run, kill -9
included, loses at most the calls in flight. A step's name depends only on the outputs before it,
so the same seed and the same model replies give the same files, byte for byte (sorted keys, no
timestamps in any step, result or output file).

A call that fails for transport reasons (unreachable, rate limits past the retries) leaves no
result: the item is unfinished and the next resume runs it again. A reply that cannot be used
(schema-invalid after the gateway's re-asks, empty) is a rejection of the item, with the reason,
kept as such: the model said what it said, and asking again would change the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from proactive_tui.evalrun.folder import write_atomic
from proactive_tui.evalrun.plan import Shard
from proactive_tui.llm import trace
from proactive_tui.llm.errors import ModelError
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.textsafe import json_text

T = TypeVar("T", bound=BaseModel)
MANIFEST = "manifest.json"
COMMAND = "command.json"
SUMMARY = "summary.json"
RESULT = "result.json"
ITEMS = "items"
SHARED = "shared"
OUT = "out"
FORMAT = 1
ITEMS_PER_SLOT = 2


def file_text(value: Any) -> str:
    """Every file of a run folder: sorted keys, one indent, a final newline (byte-identical reruns)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json_text(value, indent=1, sort_keys=True) + "\n"


def stable_seed(base: int, *parts: str) -> int:
    """A seed derived from the run's seed and names (an item, a step) by SHA-256: the same on every
    machine and in every process (Python's `hash()` of a string changes per process). 31 bits, as
    every server that takes a seed takes that."""
    digest = hashlib.sha256(json.dumps([base, *parts], ensure_ascii=False).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


class RoleSpec(BaseModel):
    """A seat of a pipeline: its name (`--role NAME=MODEL`) and what it does."""

    name: str
    purpose: str


class Reject(Exception):
    """The item cannot be kept: `reason` is a short code the summary counts, `detail` says why.

    `record` (with `tier` and `group`) is the environment as far as it was made, when the item got
    far enough to be a whole environment (ProactiveEval's too-easy item, Chronos's branch that
    ended wrong): a person may keep it against the pipeline's verdict in the studio (`decide`)."""

    def __init__(self, reason: str, detail: str = "", *, record: dict[str, Any] | None = None,
                 tier: str | None = None, group: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.record = record
        self.tier = tier
        self.group = group


PERSON = "person"
"""The writer of a step or a decision a person made in the studio (as `core.writers` names one)."""


class PersonEdit(BaseModel):
    """A step a person rewrote in the studio: the pipeline's output is kept beside theirs."""

    by: Literal["person"] = PERSON
    original: Any = None
    """The output the model gave (or the previous person's), before this edit."""


class PersonDecision(BaseModel):
    """A person kept or rejected an item against (or with) the pipeline's verdict."""

    by: Literal["person"] = PERSON
    pipeline_status: Literal["kept", "rejected"]
    pipeline_tier: str | None = None
    pipeline_reason: str | None = None


class StepRecord(BaseModel):
    """One model call of one item (or of the shared stages), as kept in its step file."""

    scope: str
    step: str
    stage: str
    role: str
    model: str
    temperature: float
    seed: int
    schema_name: str
    input: list[dict[str, Any]]
    output: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    calls: int = 0
    """Requests sent for this step (structured re-asks and retries included)."""
    rejection: str | None = None
    """The reason code when the reply could not be used (then `output` is None)."""
    detail: str = ""
    edited: PersonEdit | None = None
    """Set when a person rewrote `output` in the studio (the steps after it were made again)."""


class Outcome(BaseModel):
    """What became of an item: kept (with its tier and the family's record) or rejected."""

    item: str
    status: Literal["kept", "rejected"]
    tier: str | None = None
    reason: str | None = None
    detail: str = ""
    record: dict[str, Any] | None = None
    group: str = ""
    """Where the family files the record (ProactiveEval: the domain)."""
    decision: PersonDecision | None = None
    """Set when a person decided the item in the studio (`status` is then theirs)."""
    edited_steps: list[str] = Field(default_factory=list)
    """The steps of this item a person rewrote (their files say what the model had written)."""


class Event(BaseModel):
    """Progress, for whoever displays it: a call began or ended, an item ended."""

    kind: Literal["call_start", "call_end", "item_start", "item_end", "item_failed"]
    stage: str = ""
    item: str = ""
    step: str = ""
    cached: bool = False
    outcome: Outcome | None = None
    message: str = ""


class Pipeline(Protocol):
    """What a family provides (`GeneratePart.pipeline(options)`)."""

    family: str
    version: str
    """The generator version: part of the config hash (a changed prompt is another run)."""
    stages: tuple[str, ...]
    roles: tuple[RoleSpec, ...]
    tiers: tuple[str, ...]
    """The tiers a kept item may have (a person keeping a rejected item without one picks one)."""

    def config(self) -> dict[str, Any]:
        """Everything that decides what the run makes (options, stage settings, shared inputs)."""

    def item_ids(self) -> list[str]:
        """Every item of the whole run (all shards), in a stable order."""

    def needs_shared_input(self) -> str | None:
        """Why sharding needs a shared input given up front (e.g. `--tree FILE`), or None."""

    async def prepare(self, ctx: "StepContext") -> Any:
        """The shared stages, once per run; their result is handed to every item."""

    async def run_item(self, ctx: "StepContext", item_id: str, shared: Any) -> Outcome:
        """One item through every stage; raise Reject for an item that cannot be kept."""

    def outputs(self, kept: list[Outcome], run_name: str) -> dict[str, Any]:
        """Relative path -> the file: a JSON value (written with sorted keys), or a string written
        as it is (JSONL training data, one line per item)."""

    def installed_ids(self, run_name: str) -> str:
        """The pattern of the ids the installed items load under (the command prints it): each
        family's loader names its files its own way."""

    def installed_id(self, outcome: Outcome, run_name: str) -> str:
        """The id a kept item loads under once installed ("Play it now" opens it)."""

    def schemas(self) -> dict[str, type[BaseModel]]:
        """Every reply schema a step may have, by class name (a step file's `schema_name`): a
        person's edit of a step is checked against it before it is kept."""

    def downstream(self, step: str, steps: list[str]) -> list[str]:
        """Of an item's `steps` (file stems), those made from `step`'s output, directly or not:
        the studio deletes them when a person rewrites `step`, so running the item again makes
        them anew from the edit (the steps before it and beside it are kept)."""


class Manifest(BaseModel):
    format: int = FORMAT
    family: str
    generator: str
    options: dict[str, Any]
    """What the family's pipeline was built from (`GeneratePart.pipeline(options)`): a merge or
    resume builds the same pipeline again from it."""
    config: dict[str, Any]
    models: dict[str, str]
    seed: int
    config_hash: str
    total: int
    shard: Shard | None = None
    planned: list[str]

    @property
    def run_name(self) -> str:
        """`synth-<first 8 of the config hash>`: the folder the kept items install under and the
        prefix of their ids, the same for every shard of one run."""
        return f"synth-{self.config_hash[:8]}"


def config_hash(family: str, generator: str, config: dict[str, Any], models: dict[str, str], seed: int) -> str:
    exact = json.dumps({"family": family, "generator": generator, "config": config, "models": models, "seed": seed},
                       sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(exact.encode("utf-8")).hexdigest()


def shard_items(ids: list[str], shard: Shard | None) -> list[str]:
    """This shard's items: sorted, every N-th from position I (as `eval` slices its sessions)."""
    ordered = sorted(ids)
    return ordered if shard is None else [k for i, k in enumerate(ordered) if i % shard.count == shard.index]


def make_manifest(pipeline: Pipeline, options: dict[str, Any], roles: dict[str, ModelSettings], seed: int,
                  shard: Shard | None) -> Manifest:
    models = {spec.name: roles[spec.name].model for spec in pipeline.roles}
    config = pipeline.config()
    ids = pipeline.item_ids()
    return Manifest(family=pipeline.family, generator=pipeline.version, options=options, config=config, models=models, seed=seed,
                    config_hash=config_hash(pipeline.family, pipeline.version, config, models, seed),
                    total=len(ids), shard=shard, planned=shard_items(ids, shard))


class SynthError(Exception):
    """A run that cannot start or continue, in one line for a person."""


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise SynthError(f"{folder} holds no {MANIFEST} (not a synth run folder)")
    try:
        return Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SynthError(f"{path}: not a synth manifest ({str(exc).splitlines()[0]})") from None


def check_same_run(folder: Path, manifest: Manifest) -> None:
    """Refuse a folder made under another config (one clear line naming what differs)."""
    old = read_manifest(folder)
    if old.config_hash != manifest.config_hash or old.shard != manifest.shard:
        mine, theirs = manifest.model_dump(), old.model_dump()
        differ = sorted(k for k in ("family", "generator", "config", "models", "seed", "shard")
                        if mine[k] != theirs[k])
        raise SynthError(f"{folder} holds a run of another config (it differs in {', '.join(differ) or 'config hash'}); "
                         f"`proactive-tui synth resume {folder}` continues it as it was")


class Run:
    """What every step of a run shares: the folder, the seats, the gateway, the bounds."""

    def __init__(self, folder: Path, roles: dict[str, ModelSettings], gateway: Any, seed: int, concurrency: int,
                 on_event: Callable[[Event], None] | None = None,
                 gate: Callable[[str, str, str], Awaitable[None]] | None = None,
                 forward: Callable[[Path, str], None] | None = None) -> None:
        self.folder = folder
        self.forward = forward
        """In a worker process (`synth --workers`): hands a file's text to the parent, the folder's
        only writer, instead of writing it (`write_file`)."""
        self.roles = roles
        self.gateway = gateway
        self.seed = seed
        self.calls = asyncio.Semaphore(concurrency)
        self.concurrency = concurrency
        self.on_event = on_event or (lambda event: None)
        self.gate = gate
        """Awaited before every model call (scope, stage, step): the studio's step / pause. A
        step read from its file passes without it (nothing is spent)."""

    async def write_file(self, path: Path, value: Any) -> None:
        """Write a step or result file (atomically, fsynced) in a worker thread: an fsync waits for
        the disk, and the event loop must go on sending the other items' calls meanwhile (the step is
        on disk before its caller continues, as before). In a worker process the parent writes it,
        in the order this process sent its files (an item's steps before its result)."""
        text = file_text(value)
        if self.forward is not None:
            self.forward(path, text)
            return
        await asyncio.to_thread(write_atomic, path, text)


class StepContext:
    """The steps of one item (or of the shared stages): `ask` returns a step's parsed reply, read
    from its file when it is there, else from one model call that is then written."""

    def __init__(self, run: Run, scope: str, directory: Path) -> None:
        self.run = run
        self.scope = scope
        self.directory = directory

    @property
    def seed(self) -> int:
        return stable_seed(self.run.seed, self.scope)

    async def ask(self, stage: str, step: str, role: str, messages: list[dict[str, Any]], schema: type[T],
                  temperature: float) -> T:
        path = self.directory / f"{_slug(step)}.json"
        if path.is_file():
            record = StepRecord.model_validate_json(path.read_text(encoding="utf-8"))
            self.run.on_event(Event(kind="call_end", stage=stage, item=self.scope, step=step, cached=True))
            if record.rejection:
                raise Reject(record.rejection, record.detail)
            return schema.model_validate(record.output)
        seed = stable_seed(self.run.seed, self.scope, step)
        settings = self.run.roles[role].model_copy(update={"temperature": temperature, "seed": seed})
        base = dict(scope=self.scope, step=step, stage=stage, role=role, model=settings.model,
                    temperature=temperature, seed=seed, schema_name=schema.__name__, input=messages)
        traces: list[trace.CallTrace] = []
        if self.run.gate is not None:
            await self.run.gate(self.scope, stage, step)
        async with self.run.calls:
            self.run.on_event(Event(kind="call_start", stage=stage, item=self.scope, step=step))
            try:
                with trace.listening(lambda t, _label: traces.append(t)):
                    reply = await self.run.gateway.complete_structured(settings, messages, schema)
            except ModelError as exc:
                self.run.on_event(Event(kind="call_end", stage=stage, item=self.scope, step=step))
                reason = unusable_reply(exc)
                if reason is None:
                    raise
                await self.run.write_file(path, StepRecord(**base, **_usage(traces), rejection=reason, detail=exc.message))
                raise Reject(reason, exc.message) from None
            except BaseException:
                self.run.on_event(Event(kind="call_end", stage=stage, item=self.scope, step=step))
                raise
        await self.run.write_file(path, StepRecord(**base, **_usage(traces), output=reply.value.model_dump(mode="json")))
        self.run.on_event(Event(kind="call_end", stage=stage, item=self.scope, step=step))
        return reply.value

    def edited_steps(self) -> list[str]:
        """The steps of this scope a person rewrote (for the record's provenance)."""
        return edited_steps(self.directory)


def _usage(traces: list[trace.CallTrace]) -> dict[str, Any]:
    """Requests, tokens and cost of a step from the gateway's traces of it: every ask (a
    structured re-ask is a request too) and every retry, the failed ones included."""
    costs = [t.cost for t in traces if t.cost is not None]
    return {"calls": sum(t.attempts for t in traces), "prompt_tokens": sum(t.prompt_tokens for t in traces),
            "completion_tokens": sum(t.completion_tokens for t in traces), "cost": sum(costs) if costs else None}


async def gather_calls(*calls: Any) -> list[Any]:
    """Run a stage's calls together (a pipeline's parallel asks: probes, validators, branches); a
    failed call (transport) fails the item before an unusable reply rejects it, both only after
    every call of the group has ended, so no call is left running behind a verdict."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, ModelError):
            raise result
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return list(results)


def unusable_reply(exc: ModelError) -> str | None:
    """The rejection reason of a call whose reply came back unusable, or None for a failure of
    the call itself (which leaves the item unfinished, to run again)."""
    if exc.kind == "structured":
        return "schema_invalid"
    if exc.kind in ("other", "server") and "empty" in exc.message:
        return "empty"
    return None


def has_result(folder: Path, item_id: str) -> bool:
    return (folder / ITEMS / _slug(item_id) / RESULT).is_file()


class RunResult(BaseModel):
    planned: int
    already: int
    ran: int
    failed: dict[str, str] = Field(default_factory=dict)
    """Items that ended on a failed call (no result written; `resume` runs them again)."""


async def run_shared(pipeline: Pipeline, run: Run) -> Any:
    """The shared stages alone (`--tree-only`: make the tree every shard then shares)."""
    return await pipeline.prepare(StepContext(run, SHARED, run.folder / SHARED))


def remove_partial_writes(folder: Path) -> None:
    """Delete the temporary files of writes a killed run left unfinished (`write_atomic` writes
    `.<name>.<random>.tmp`, then renames it; a kill -9 between the two leaves it). Nothing reads
    them, and a resumed folder must equal an uninterrupted run's."""
    for stale in folder.rglob(".*.tmp"):
        if stale.is_file():
            stale.unlink(missing_ok=True)


async def run_pipeline(pipeline: Pipeline, manifest: Manifest, run: Run, items: list[str] | None = None) -> RunResult:
    """Run this folder's planned items (or the given ones of them) that have no result yet.
    Cancelling it (Ctrl-C, SIGTERM, the studio's stop) stops the calls in flight; every file
    already written is whole."""
    folder = run.folder
    remove_partial_writes(folder)
    wanted = manifest.planned if items is None else [i for i in manifest.planned if i in set(items)]
    done = {i for i in wanted if has_result(folder, i)}
    todo = [i for i in wanted if i not in done]
    result = RunResult(planned=len(wanted), already=len(done), ran=0)
    if not todo:
        return result
    shared = await pipeline.prepare(StepContext(run, SHARED, folder / SHARED))
    # Twice as many items under way as call slots: an item spends a moment between two calls
    # (its step written, its next prompt built), and another item's call should take the slot
    # meanwhile; a stop loses only the calls in flight either way (the steps are on disk).
    gate = asyncio.Semaphore(run.concurrency * ITEMS_PER_SLOT)

    async def one(item_id: str) -> None:
        async with gate:
            await run_item(pipeline, run, item_id, shared, result)

    await asyncio.gather(*(one(i) for i in todo))
    return result


# -- what a person does in the studio ------------------------------------------------------------

async def run_item(pipeline: Pipeline, run: Run, item_id: str, shared: Any, result: RunResult | None = None) -> None:
    """One item to its result (kept or rejected, written), or to a failed call (no result: the
    next resume runs it again). Here or in a worker process (`worker_job`)."""
    ctx = StepContext(run, item_id, item_dir(run.folder, item_id))
    run.on_event(Event(kind="item_start", item=item_id))
    try:
        outcome = await pipeline.run_item(ctx, item_id, shared)
    except Reject as exc:
        outcome = Outcome(item=item_id, status="rejected", reason=exc.reason, detail=exc.detail,
                          record=exc.record, tier=exc.tier, group=exc.group)
    except ModelError as exc:
        if result is not None:
            result.failed[item_id] = exc.message
        run.on_event(Event(kind="item_failed", item=item_id, message=exc.message))
        return
    outcome.edited_steps = ctx.edited_steps()
    await run.write_file(ctx.directory / RESULT, outcome)
    if result is not None:
        result.ran += 1
    run.on_event(Event(kind="item_end", item=item_id, outcome=outcome))


def todo_items(folder: Path, manifest: Manifest) -> list[str]:
    """This folder's planned items that have no result yet."""
    return [i for i in manifest.planned if not has_result(folder, i)]


def worker_job(pipeline: Pipeline, folder: Path, roles: dict[str, ModelSettings], seed: int, items: list[str],
               shared: Any) -> Callable[[Any], Any]:
    """`make_job` of `synth --workers` (`evalrun.workers.WorkerPool`): unit i is item `items[i]`,
    run as in one process, its events and files sent to the parent. The worker's part of the call
    slots is its cap over `ITEMS_PER_SLOT` (items under way per slot, as `run_pipeline` runs)."""
    def make(worker: Any) -> Any:
        run = Run(folder, roles, worker.gateway, seed, max(1, worker.cap // ITEMS_PER_SLOT),
                  on_event=lambda event: worker.send(("event", event)),
                  forward=lambda path, text: worker.send(("write", str(path), text)))

        async def job(index: int) -> None:
            await run_item(pipeline, run, items[index], shared)
        return job
    return make


def item_dir(folder: Path, item_id: str) -> Path:
    return folder / ITEMS / _slug(item_id)


def step_path(folder: Path, scope: str, step: str) -> Path:
    """A step's file: `scope` is an item id, or SHARED for the shared stages."""
    base = folder / SHARED if scope == SHARED else item_dir(folder, scope)
    return base / f"{_slug(step)}.json"


def person_provenance(outcome: Outcome) -> dict[str, Any]:
    """What a person did to an item, for the provenance block of its record (nothing when
    nothing): the steps they rewrote, and their decision beside the pipeline's verdict."""
    out: dict[str, Any] = {}
    if outcome.edited_steps:
        out["edited_by_person"] = list(outcome.edited_steps)
    if outcome.decision is not None:
        out["decided_by"] = PERSON
        out["pipeline_verdict"] = outcome.decision.model_dump(mode="json", exclude={"by"})
    return out


class ItemState(BaseModel):
    """An item as its folder holds it: its steps (file stem -> record) and its outcome, if any."""

    item: str
    steps: dict[str, StepRecord]
    outcome: Outcome | None = None


def read_item(folder: Path, item_id: str) -> ItemState:
    """What the studio draws for an item: every step on disk and the result (the same files a
    headless run writes, so a studio opened on any run folder shows any item)."""
    base = item_dir(folder, item_id)
    steps: dict[str, StepRecord] = {}
    outcome = None
    for path in sorted(base.glob("*.json")) if base.is_dir() else []:
        if path.name == RESULT:
            outcome = Outcome.model_validate_json(path.read_text(encoding="utf-8"))
        else:
            steps[path.stem] = StepRecord.model_validate_json(path.read_text(encoding="utf-8"))
    return ItemState(item=item_id, steps=steps, outcome=outcome)


def edited_steps(directory: Path) -> list[str]:
    out = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        if path.name != RESULT and json.loads(path.read_text(encoding="utf-8")).get("edited"):
            out.append(path.stem)
    return out


class EditError(SynthError):
    """A person's edit that cannot be kept (not the step's schema, a rejected step...)."""


def edit_step(folder: Path, pipeline: Pipeline, item_id: str, step: str, output: Any) -> list[str]:
    """Keep a person's `output` for an item's `step` and forget what was made from it: the steps
    `pipeline.downstream` names and the item's result. Running the item again (`run_pipeline`
    with it) reads the edit as the step's reply and makes the rest anew. The edit is checked
    against the step's schema first (nothing is written when it does not validate); the model's
    output is kept in the file beside it. Returns the steps removed."""
    path = step_path(folder, item_id, step)
    if not path.is_file():
        raise EditError(f"{item_id}: no step {step} on disk")
    record = StepRecord.model_validate_json(path.read_text(encoding="utf-8"))
    schema = pipeline.schemas().get(record.schema_name)
    if schema is None:
        raise EditError(f"{item_id}/{step}: no schema {record.schema_name} in this pipeline")
    try:
        value = schema.model_validate(output).model_dump(mode="json")
    except ValueError as exc:
        raise EditError(f"{item_id}/{step}: {record.schema_name}: {first_error(exc)}") from None
    original = record.edited.original if record.edited is not None else record.output
    edited = record.model_copy(update={"output": value, "rejection": None, "detail": "",
                                       "edited": PersonEdit(original=original)})
    names = sorted(p.stem for p in path.parent.glob("*.json") if p.name != RESULT)
    removed = [n for n in pipeline.downstream(step, names) if n != step]
    write_atomic(path, file_text(edited))
    for name in removed:
        step_path(folder, item_id, name).unlink(missing_ok=True)
    (path.parent / RESULT).unlink(missing_ok=True)
    return removed


def first_error(exc: ValueError) -> str:
    """A schema's refusal in one line, `field.path: message` (pydantic's first error): how an
    edit is refused, here and in the studio's live check as the person types."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "value"
        return f"{where}: {first.get('msg', '')}"
    return str(exc).splitlines()[0]


def decide(folder: Path, item_id: str, status: Literal["kept", "rejected"], *, tier: str | None = None) -> Outcome:
    """A person's verdict on a finished item, kept in its result beside the pipeline's: keeping
    needs an environment (a kept item's, or the one a rejection carries); the summary and the
    record's provenance name the person. Deciding again replaces the person's decision, never
    the pipeline's verdict."""
    path = item_dir(folder, item_id) / RESULT
    if not path.is_file():
        raise SynthError(f"{item_id} has no verdict yet: run it first")
    outcome = Outcome.model_validate_json(path.read_text(encoding="utf-8"))
    first = outcome.decision or PersonDecision(pipeline_status=outcome.status, pipeline_tier=outcome.tier,
                                               pipeline_reason=outcome.reason)
    if status == "kept":
        if outcome.record is None:
            raise SynthError(f"{item_id} was rejected ({outcome.reason}) before an environment was made: "
                             "nothing to keep (edit a step and run it again)")
        tier = tier or outcome.tier or first.pipeline_tier
        if not tier:
            raise SynthError(f"{item_id}: keeping it needs a tier")
        decided = outcome.model_copy(update={"status": "kept", "tier": tier, "decision": first})
    else:
        decided = outcome.model_copy(update={"status": "rejected", "reason": outcome.reason or "person",
                                             "decision": first})
        if first.pipeline_status == "kept":
            decided = decided.model_copy(update={"reason": "person", "detail": "rejected by a person in the studio"})
    if decided.status == first.pipeline_status and decided.tier == first.pipeline_tier:
        decided = decided.model_copy(update={"decision": None, "reason": first.pipeline_reason,
                                             "detail": outcome.detail if first.pipeline_status == "rejected" else ""})
    write_atomic(path, file_text(decided))
    return decided


def read_outcomes(folder: Path) -> list[Outcome]:
    base = folder / ITEMS
    out = []
    for path in sorted(base.glob(f"*/{RESULT}")) if base.is_dir() else []:
        out.append(Outcome.model_validate_json(path.read_text(encoding="utf-8")))
    return sorted(out, key=lambda o: o.item)


def read_steps(folder: Path) -> list[StepRecord]:
    steps = []
    for base in (folder / SHARED, folder / ITEMS):
        for path in sorted(base.rglob("*.json")) if base.is_dir() else []:
            if path.name != RESULT:
                steps.append(StepRecord.model_validate_json(path.read_text(encoding="utf-8")))
    return steps


class Summary(BaseModel):
    family: str
    generator: str
    config_hash: str
    models: dict[str, str]
    planned: int
    tried: int
    """Items with an outcome (kept or rejected)."""
    unfinished: int
    """Planned items with no outcome yet (a failed call, or stopped): `resume` runs them."""
    kept: dict[str, int]
    rejected: dict[str, int]
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    """US dollars where litellm knows every price; None when no call had one."""
    calls_per_stage: dict[str, int]
    outputs: list[str]
    decided_by_person: dict[str, int] = Field(default_factory=dict)
    """Items a person kept or rejected against the pipeline's verdict (`kept`, `rejected`)."""
    edited_by_person: int = 0
    """Items with a step a person rewrote."""


def summarize(folder: Path, manifest: Manifest, outputs: list[str]) -> Summary:
    """The run as its files say (so a resumed or merged run counts every call once)."""
    outcomes = [o for o in read_outcomes(folder) if o.item in set(manifest.planned)]
    steps = read_steps(folder)
    kept: dict[str, int] = {}
    rejected: dict[str, int] = {}
    decided: dict[str, int] = {}
    for o in outcomes:
        if o.decision is not None:
            decided[o.status] = decided.get(o.status, 0) + 1
        if o.status == "kept":
            kept[o.tier or "-"] = kept.get(o.tier or "-", 0) + 1
        else:
            rejected[o.reason or "-"] = rejected.get(o.reason or "-", 0) + 1
    per_stage: dict[str, int] = {}
    for s in steps:
        per_stage[s.stage] = per_stage.get(s.stage, 0) + s.calls
    costs = [s.cost for s in steps if s.cost is not None]
    return Summary(family=manifest.family, generator=manifest.generator, config_hash=manifest.config_hash,
                   models=manifest.models, planned=len(manifest.planned), tried=len(outcomes),
                   unfinished=len(manifest.planned) - len(outcomes), kept=dict(sorted(kept.items())),
                   rejected=dict(sorted(rejected.items())), calls=sum(s.calls for s in steps),
                   prompt_tokens=sum(s.prompt_tokens for s in steps),
                   completion_tokens=sum(s.completion_tokens for s in steps),
                   cost=sum(costs) if costs else None, calls_per_stage=dict(sorted(per_stage.items())),
                   outputs=outputs, decided_by_person=dict(sorted(decided.items())),
                   edited_by_person=sum(1 for o in outcomes if o.edited_steps))


def write_outputs(folder: Path, pipeline: Pipeline, manifest: Manifest) -> list[str]:
    """The kept items in the family's layout under DIR/out (replaced whole: a rerun that keeps
    fewer leaves no stale file). Returns the relative paths written."""
    kept = [o for o in read_outcomes(folder) if o.status == "kept" and o.item in set(manifest.planned)]
    files = pipeline.outputs(kept, manifest.run_name)
    out = folder / OUT
    if out.exists():
        shutil.rmtree(out)
    for rel, value in sorted(files.items()):
        write_atomic(out / rel, value if isinstance(value, str) else file_text(value))
    return sorted(files)


def finish(folder: Path, pipeline: Pipeline, manifest: Manifest) -> Summary:
    outputs = write_outputs(folder, pipeline, manifest)
    summary = summarize(folder, manifest, outputs)
    write_atomic(folder / SUMMARY, file_text(summary))
    return summary


def install(folder: Path, manifest: Manifest, target: Path) -> Path | None:
    """Copy DIR/out into `target/<run name>/` (the user's environments folder), replacing an
    earlier copy of the same run whole. None when nothing was kept."""
    out = folder / OUT
    if not out.is_dir() or not any(out.rglob("*.json")):
        return None
    dest = target / manifest.run_name
    staging = target / f".{manifest.run_name}.tmp"
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(out, staging)
    if dest.exists():
        shutil.rmtree(dest)
    staging.replace(dest)
    return dest


def merge(out: Path, shards: list[Path]) -> Manifest:
    """Combine shard folders of one run into `out`: every shard must have the same config hash
    (else refused, naming the folder), no shard twice. Item folders are disjoint by construction
    (shards slice the items); the shared steps are the same input in each (sharding needs one),
    so the first shard's are kept."""
    if not shards:
        raise SynthError("synth merge needs at least one shard folder")
    manifests = [read_manifest(s) for s in shards]
    first = manifests[0]
    for folder, m in zip(shards[1:], manifests[1:]):
        if m.config_hash != first.config_hash:
            raise SynthError(f"{folder} was made under another config than {shards[0]} "
                             f"(config hash {m.config_hash[:12]} against {first.config_hash[:12]}): not one run")
    seen: dict[str, Path] = {}
    for folder, m in zip(shards, manifests):
        key = str(m.shard) if m.shard else "whole"
        if key in seen:
            raise SynthError(f"{folder} and {seen[key]} are the same shard ({key})")
        seen[key] = folder
    if (out / MANIFEST).is_file():
        existing = read_manifest(out)
        if existing.config_hash != first.config_hash:
            raise SynthError(f"{out} holds a run of another config; give an empty folder")
    planned = sorted({i for m in manifests for i in m.planned})
    for folder in shards:
        for item_dir in sorted((folder / ITEMS).glob("*")) if (folder / ITEMS).is_dir() else []:
            dest = out / ITEMS / item_dir.name
            for path in sorted(item_dir.glob("*.json")):
                write_atomic(dest / path.name, path.read_text(encoding="utf-8"))
    shared = shards[0] / SHARED
    for path in sorted(shared.rglob("*.json")) if shared.is_dir() else []:
        write_atomic(out / SHARED / path.relative_to(shared), path.read_text(encoding="utf-8"))
    merged = first.model_copy(update={"shard": None, "planned": planned})
    write_atomic(out / MANIFEST, file_text(merged))
    return merged
