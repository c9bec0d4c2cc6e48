"""A batch's sessions on N worker processes; the parent the only writer of the folder and the store.

Why processes: a session's model calls cost litellm about 12 ms of CPU each, so one process tops
out near 65 calls a second, whatever the concurrency; sessions are independent, so more processes
is the fix, not a faster loop. Why the parent stays the only writer: the folder's files and the
store's rows are then written by one process in the order they happened, exactly as a run in one
process writes them, and a worker that dies can leave nothing half-written.

How it goes:

- `WorkerPool.start()` forks the workers before the parent's event loop and any thread start,
  after litellm is imported once (the workers share its pages instead of each importing it for
  5 s). Each worker inherits the planned sessions, the session factory and the batch's shares,
  so the parent sends only indexes.
- The parent hands out whole key groups (`SessionKey.group`: one environment, agent and repeat at
  every swept value), so a group's shared work (ProactiveEval's plan) stays in one worker, as it
  stays on one shard; a worker runs at most its part of `--concurrency` at once (the parts add up
  to it), and gets the next group when it has room.
- A worker's session records into a `ForwardStore`: the recorder's writes (its JSON made in the
  worker) go through the pipe and the parent applies them in order (`StoreWriter`, which keeps a
  backlog while another process holds the database's lock, as the recorder does). A session's end
  comes back as a `folder.EndedSession` with its file already rendered; the parent writes it.
- Per-model limits hold across all workers together: a model with a configured limit
  (`max_parallel_requests`, `rpm`, `tpm`) has its one `ModelLimiter` in the parent, and a
  worker's call asks it for a slot (`acquire`), gets a `grant`, and gives it back with the tokens
  it used (`release`). A model with no limit is not asked about (no round trip per call); a 429
  pauses the model in the worker that got it and, through the parent, in every other worker.
- The workers report their per-model counters (`stats`) twice a second and with every session's
  end; the parent adds them up in its gateway's `GatewayStats`, which the progress display reads.
- Ctrl-C reaches every process of the terminal's group (a scheduler's SIGTERM often the job's):
  workers ignore both, the parent asks them to `stop` (their running sessions are cancelled, their store rows marked interrupted as in one
  process), waits for each to say `bye`, then ends any that did not. A worker that dies loses
  only its sessions in flight: they are written as failed (resume runs them again), its store rows
  left running are marked interrupted, its held limiter slots given back, and the groups it had
  not started go to the other workers. A parent that dies takes its workers with it (Linux:
  PR_SET_PDEATHSIG; elsewhere its closed pipes stop them).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
from collections import deque
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

from proactive_tui.evalrun.idle import IdleQueue
from proactive_tui.evalrun.spacing import StartSpacing

STATS_EVERY_S = 0.5
"""How often a worker reports its per-model counters (also with every session's end)."""
STOP_GRACE_S = 10.0
"""How long a stopping worker may take to cancel its sessions and send their last writes."""
STORE_WRITES = frozenset({"append", "create", "update"})
"""The messages that are store writes (`ForwardStore`'s), applied by the parent's `StoreWriter`."""
FINAL_STATUSES = frozenset({"finished", "stopped", "error", "interrupted"})


def usable_cores() -> int:
    """The cores this process may run on (its affinity: a job scheduler's share), else the count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def shares_of(concurrency: int, count: int) -> list[int]:
    """Each worker's part of `concurrency` (they add up to it, each at least one)."""
    return [concurrency // count + (1 if i < concurrency % count else 0) for i in range(count)]


# -- the worker's side --------------------------------------------------------------------------


class ForwardStore:
    """The session store as a worker's `SessionRecorder` sees it: each write goes to the parent,
    in order, and never waits for a lock (the parent's `StoreWriter` handles that). Secrets are
    masked here, as `Store` would mask them: the parent, writing for every worker on one core,
    then only writes (masking was a third of its CPU). With `defer` (a worker's
    `IdleQueue.defer`) that masking and the send wait for the worker's loop to be idle, in
    order: no session's next reply waits on them (`evalrun.idle`)."""

    def __init__(self, send: Callable[[tuple], None], defer: Callable[[Callable[[], Any]], None] | None = None) -> None:
        self._send = send
        self._defer = defer

    def _later(self, write: Callable[[], None]) -> None:
        if self._defer is None:
            write()
        else:
            self._defer(write)

    @contextlib.contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        yield

    def create_session(self, row: Any) -> None:
        from proactive_tui.store.db import masked_row

        self._later(lambda: self._send(("create", masked_row(row))))

    def append(self, session_id: str, seq: int, type_: str, payload: str, ts: str) -> None:
        self._later(lambda: self._append_now(session_id, seq, type_, payload, ts))

    def append_event(self, session_id: str, event: Any) -> None:
        from proactive_tui.store.db import event_json

        self._later(lambda: self._append_now(session_id, event.seq, event.type, event_json(event), event.ts))

    def _append_now(self, session_id: str, seq: int, type_: str, payload: str, ts: str) -> None:
        from proactive_tui.redact import mask_json

        self._send(("append", session_id, seq, type_, mask_json(payload), ts))

    def update_session(self, session_id: str, updated_at: str, **fields: Any) -> None:
        from proactive_tui.store.db import mask_fields

        self._later(lambda: self._send(("update", session_id, updated_at, mask_fields(fields))))


class RemoteCharge:
    """A slot's token estimate; what the call really used goes back to the parent with the slot."""

    def __init__(self, estimate: int) -> None:
        self.used = estimate

    def settle(self, used: int) -> None:
        if used:
            self.used = used


class WorkerLimiter:
    """A worker's gate for one model, in place of `ModelLimiter` (`Gateway.limiter_factory`).

    A model with a configured limit asks the parent for every slot; one without only keeps the
    429 pause, told to the other workers through the parent."""

    def __init__(self, worker: "_Worker", model: str, limits: Any, local: bool) -> None:
        from proactive_tui.llm.limits import ModelLimiter, ModelLimits

        self.model = model
        self.limits = limits
        self.remote = bool(limits.max_parallel_requests or limits.rpm or limits.tpm)
        self._worker = worker
        self._local = ModelLimiter(ModelLimits() if self.remote else limits, local=local)

    def pause(self, seconds: float, tell: bool = True) -> None:
        self._local.pause(seconds)
        if tell:
            self._worker.send(("pause", self.model, seconds))

    @contextlib.asynccontextmanager
    async def slot(self, estimate: int) -> AsyncIterator[Any]:
        if not self.remote:
            async with self._local.slot(estimate) as charge:
                yield charge
            return
        ticket = await self._worker.acquire(self.model, estimate)
        charge = RemoteCharge(estimate)
        try:
            async with self._local.slot(0):  # the 429 pause this worker knows of
                yield charge
        finally:
            self._worker.send(("release", ticket, charge.used))


class _Worker:
    """One worker process: runs the units of work the parent hands it (`job(index)`, made by the
    pool's `make_job(worker)` once the worker's gateway exists), sends back writes and ends."""

    def __init__(self, conn: Any, cap: int, make_job: Callable[["_Worker"], Any],
                 gateway_options: dict[str, Any]) -> None:
        self.conn = conn
        self.cap = cap
        self.make_job = make_job
        self.gateway_options = gateway_options
        self.tickets: dict[int, asyncio.Future[None]] = {}
        self.next_ticket = 0
        self.limiters: dict[str, WorkerLimiter] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.parent_gone = False
        self._stats_sent: Any = None
        self.outbox: list[tuple] = []
        self._flush_soon = False
        self.spacing = StartSpacing()
        self.idle: IdleQueue | None = None
        """This worker's `IdleQueue` (made with its loop, in `main`)."""

    def send(self, message: tuple) -> None:
        """Queue a message for the parent; what one turn of the event loop queued goes as one list
        (one pickle and one write for a call's several store writes, not one each: the parent
        reads every worker's messages on its one core). Any other message goes after the store
        writes put off until now (`ForwardStore`): a session's end after its last event."""
        if self.parent_gone:
            return
        if message[0] not in STORE_WRITES and self.idle is not None:
            self.idle.drain()
        self.outbox.append(message)
        if not self._flush_soon:
            self._flush_soon = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._flush_soon = False
        if not self.outbox or self.parent_gone:
            return
        batch, self.outbox = self.outbox, []
        try:
            self.conn.send(batch)
        except (OSError, EOFError):  # the parent is gone: stop
            self._lost()

    def _lost(self) -> None:
        self.parent_gone = True
        if not self.closed.done():
            self.closed.set_result(None)

    async def acquire(self, model: str, estimate: int) -> int:
        ticket = self.next_ticket = self.next_ticket + 1
        granted = self.tickets[ticket] = asyncio.get_running_loop().create_future()
        self.send(("acquire", ticket, model, estimate))
        try:
            await granted
        except asyncio.CancelledError:
            self.tickets.pop(ticket, None)
            self.send(("release", ticket, 0))  # granted later or not: the parent gives it back
            raise
        return ticket

    def _limiter(self, model: str, limits: Any, local: bool) -> WorkerLimiter:
        limiter = self.limiters[model] = WorkerLimiter(self, model, limits, local)
        return limiter

    async def main(self) -> None:
        from proactive_tui.llm.gateway import Gateway, defer_litellm_logging

        loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.gate = asyncio.Semaphore(self.cap)
        self.idle = IdleQueue()
        defer_litellm_logging(self.idle.turn)  # litellm's logging of each success: on no session's path
        self.gateway = Gateway(**self.gateway_options, limiter_factory=self._limiter)
        self.job = self.make_job(self)
        loop.add_reader(self.conn.fileno(), self._readable)
        reporter = loop.create_task(self._report_stats())
        try:
            await self.closed
        finally:
            loop.remove_reader(self.conn.fileno())
            reporter.cancel()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)  # recorders mark their rows interrupted
            self._push_stats()
            self.send(("bye",))
            self.flush()

    def _readable(self) -> None:
        try:
            while self.conn.poll():
                self._handle(self.conn.recv())
        except (EOFError, OSError):
            self._lost()

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        if kind == "run":
            for index in message[1]:
                task = asyncio.get_running_loop().create_task(self._one(index))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        elif kind == "grant":
            granted = self.tickets.pop(message[1], None)
            if granted is not None and not granted.done():
                granted.set_result(None)
            elif granted is None:
                self.send(("release", message[1], 0))  # its call was cancelled meanwhile
        elif kind == "pause":
            limiter = self.limiters.get(message[1])
            if limiter is not None:
                limiter.pause(message[2], tell=False)
        elif kind == "stop" and not self.closed.done():
            self.closed.set_result(None)

    async def _one(self, index: int) -> None:
        async with self.gate:
            await self.spacing.wait_turn()  # sessions handed out together start apart (evalrun.spacing)
            self.send(("started", index))
            payload = await self.job(index)
            self._push_stats()
            self.send(("done", index, payload))

    def _push_stats(self) -> None:
        snapshot = {model: counters.model_dump() for model, counters in self.gateway.stats.models.items()}
        if snapshot != self._stats_sent:
            self._stats_sent = snapshot
            self.send(("stats", snapshot))

    async def _report_stats(self) -> None:
        while True:
            await asyncio.sleep(STATS_EVERY_S)
            self._push_stats()


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this worker the moment its parent dies (kill -9 included), so no
    call of a batch whose writer is gone is still sent; it would be lost, and a resume could not
    tell it from its own. Elsewhere the closed pipe stops the worker at its next read."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def _worker_entry(conn: Any, others: list[Any], cap: int, make_job: Any, gateway_options: dict[str, Any],
                  parent: int) -> None:
    """A forked worker's life: its own event loop over the pipe, then out."""
    _die_with_parent(parent)
    for other in others:  # the parent's ends of the other workers' pipes: theirs alone to hold
        other.close()
    # Ctrl-C reaches the terminal's whole group, and a scheduler's SIGTERM often the job's whole
    # group (Slurm's scancel, systemd): both are the parent's to handle, which tells its workers
    # to stop, so their sessions end as interrupted rather than lost
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)  # a parent's running loop wrote signals there: its pipe, not ours
    asyncio.events._set_running_loop(None)  # forked from a running loop (synth): this process starts its own
    sys.setprofile(None)  # a profiler of the parent (benchmarks/batch_throughput.py --profile) measures it alone
    # what the parent made (litellm, the planned sessions) lives as long as this worker: out of the
    # collector's reach, a full collection scans only what the worker makes. Left in, one such
    # collection scanned litellm's whole heap and stalled every session of the worker for 0.3-0.45 s.
    gc.freeze()
    from proactive_tui.llm import batch_loop

    batch_loop.run(_Worker(conn, cap, make_job, gateway_options).main())  # llm.batch_loop


def eval_job(planned: list[Any], build: Any, shares: Any, store: bool) -> Callable[[_Worker], Any]:
    """`make_job` of an eval batch: unit i is planned session i, run as in one process
    (`runner.run_one`), its store writes forwarded; its result the `folder.EndedSession`.

    Called in the parent, before the fork: what each worker's first session would otherwise
    import on its own (the runner, the recorder, each family's engine) is imported here once and
    shared by every worker, as `WorkerPool.start` does with litellm's first-call set-up."""
    from proactive_tui.core import registry
    from proactive_tui.evalrun.runner import run_one
    from proactive_tui.store import recorder  # noqa: F401  (the sessions' recorder, in every worker)

    for name in {item.key.family for item in planned}:
        family = registry.find(name)
        if family is None:
            continue
        # a family that cannot load fails in each of its sessions, as in one process: not here
        with contextlib.suppress(Exception):
            family.engine  # noqa: B018  (imports its engine module)

    def make(worker: _Worker) -> Any:
        # a Ray task's worker keeps its messages until the task returns: nothing to put off there
        idle = getattr(worker, "idle", None)
        db = ForwardStore(worker.send, idle.defer if idle is not None else None) if store else None

        async def job(index: int) -> Any:
            return await run_one(planned[index], build, worker.gateway, shares, db,
                                 lambda message: worker.send(("warn", message)))
        return job
    return make


# -- the parent's side --------------------------------------------------------------------------


class StoreWriter:
    """Applies the workers' store writes in the order they arrive. A write the database refuses
    because another process holds its lock is kept, with every later one, and retried every
    `RETRY_POLL_S` and at `close()`, as `SessionRecorder` does for a session in one process; any
    other failure is reported once and storing stops. Writes applied inside `together()` commit
    as one transaction when it ends (or at `flush()`): the pool applies what one read from a
    worker's pipe brought that way, since a commit per event was most of the parent's CPU."""

    def __init__(self, db: Any, warn: Callable[[str], None]) -> None:
        from proactive_tui.store.recorder import WRITE_WAIT_S

        self.db = db
        self.warn = warn
        self.backlog: deque[tuple] = deque()
        self.failed = False
        self._retry: asyncio.TimerHandle | None = None
        self.wait_s = WRITE_WAIT_S
        """A write's wait for another process's lock (the recorder's, as one process writes)."""
        self._gathered: list[tuple] | None = None

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """Gather the writes applied inside; write them in one transaction at the end."""
        if self._gathered is not None:  # already gathering: the outer one writes
            yield
            return
        self._gathered = []
        try:
            yield
        finally:
            self.flush()
            self._gathered = None

    def apply(self, op: tuple) -> None:
        if self.failed:
            return
        if self._gathered is not None:
            self._gathered.append(op)
            return
        self._write([op])

    def flush(self) -> None:
        """Write what `together()` gathered so far (before anything that must follow it)."""
        if self._gathered:
            ops, self._gathered = self._gathered, []
            self._write(ops)

    def _do(self, op: tuple) -> None:
        """One write; the workers masked its secrets (`ForwardStore`)."""
        kind = op[0]
        if kind == "append":
            self.db.append(*op[1:], premasked=True)
        elif kind == "create":
            self.db.create_session(op[1], premasked=True)
        elif kind == "update":
            self.db.update_session(op[1], op[2], premasked=True, **op[3])

    def _write(self, ops: list[tuple]) -> None:
        """Write `ops` in order, all or none (one of them alone is its own transaction)."""
        from proactive_tui.store import StoreError

        if self.failed:
            return
        if self.backlog:  # earlier writes wait for the lock: these go after them
            self.backlog.extend(ops)
            return
        try:
            with self.db.waiting_at_most(self.wait_s), \
                    (self.db.one_transaction() if len(ops) > 1 else contextlib.nullcontext()):
                for op in ops:
                    self._do(op)
        except StoreError as exc:
            if not exc.transient:
                self._fail(str(exc))
                return
            self.backlog.extend(ops)
            self.warn(f"{exc}; keeping the events and retrying while the sessions go on")
            self._schedule()

    def _schedule(self) -> None:
        from proactive_tui.store.recorder import RETRY_POLL_S

        if self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(RETRY_POLL_S, self._retry_now)

    def _retry_now(self) -> None:
        self._retry = None
        if not self.drain():
            self._schedule()

    def drain(self) -> bool:
        """Write the backlog, waiting for no lock; True when it is empty."""
        from proactive_tui.store import StoreError

        with self.db.waiting_at_most(0):
            while self.backlog and not self.failed:
                try:
                    self._do(self.backlog[0])
                except StoreError as exc:
                    if exc.transient:
                        return False
                    self._fail(str(exc))
                    return True
                self.backlog.popleft()
                if not self.backlog:
                    self.warn("the session database is writable again: every kept event is saved")
            return True

    async def close(self) -> None:
        from proactive_tui.store.recorder import CLOSE_POLL_S, CLOSE_RETRY_S

        self.flush()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLOSE_RETRY_S
        while not self.drain():
            if loop.time() >= deadline:
                self.warn(f"the session database stayed locked: {len(self.backlog)} writes were not saved; "
                          "the batch folder still holds every finished session")
                return
            await asyncio.sleep(CLOSE_POLL_S)

    def _fail(self, message: str) -> None:
        self.failed = True
        self.backlog.clear()
        self.warn(f"{message}; these sessions are no longer being saved")


class _Seat:
    """The parent's view of one worker."""

    def __init__(self, index: int, process: Any, conn: Any, cap: int) -> None:
        self.index = index
        self.process = process
        self.conn = conn
        self.cap = cap
        self.outstanding: set[int] = set()
        """Units sent to this worker, not ended yet."""
        self.started: set[int] = set()
        self.open_rows: set[str] = set()
        """Store rows it created and has not marked ended."""
        self.held: dict[int, list[Any]] = {}
        """Ticket -> [released event, tokens used] of the limiter slots it asked for."""
        self.stats: dict[str, dict[str, Any]] = {}
        self.alive = True
        self.said_bye = False


class WorkerPool:
    """N forked workers running one batch's units of work; see the module docstring.

    `groups`: the units (indexes 0..n-1) in the groups that go to one worker together, in the
    order they are handed out; `make_job(worker)` gives the worker's `job(index)` (`eval_job`,
    `synth.engine`'s); `cap` of the groups of units one worker runs at once is its part of
    `concurrency` times `per_slot`."""

    def __init__(self, count: int, concurrency: int, groups: list[list[int]], make_job: Any,
                 gateway_options: dict[str, Any], per_slot: int = 1, name: str = "eval",
                 models: list[Any] | None = None) -> None:
        self.groups = [list(g) for g in groups if g]
        self.units = sum(len(g) for g in self.groups)
        self.count = max(1, min(count, concurrency, self.units or 1))
        self.concurrency = concurrency
        self.make_job = make_job
        self.gateway_options = gateway_options
        self.per_slot = per_slot
        self.name = name
        self.warm_up = list(models or [])
        """The model seats the jobs call (`ModelSettings`): litellm's first-call set-up for them is
        done once in this process before the fork (`gateway.warm_up_for_fork`)."""
        self.seats: list[_Seat] = []

    @classmethod
    def for_sessions(cls, count: int, concurrency: int, planned: list[Any], build: Any, shares: Any,
                     gateway_options: dict[str, Any], store: bool) -> "WorkerPool":
        """An eval batch's pool: a key group (`SessionKey.group`) goes to one worker."""
        groups: dict[str, list[int]] = {}
        for index, item in enumerate(planned):
            groups.setdefault(item.key.group, []).append(index)
        from proactive_tui.llm.settings import ROLES

        # scripted seats (`build`, the reference agent) call no model: nothing to warm up
        models = [] if build is not None else [item.spec.roles.for_role(role) for item in planned for role in ROLES]
        pool = cls(count, concurrency, list(groups.values()), eval_job(planned, build, shares, store), gateway_options,
                   models=models)
        pool.planned = planned
        return pool

    def caps(self) -> list[int]:
        """Each worker's units at once."""
        return [share * self.per_slot for share in shares_of(self.concurrency, self.count)]

    def start(self) -> None:
        """Fork the workers. Call before the event loop runs and before any thread starts (a
        fork copies only the calling thread: a lock another thread held stays held)."""
        import multiprocessing

        from proactive_tui.llm.gateway import litellm_module, warm_up_for_fork

        litellm_module()  # imported once here, shared by every worker's copy of this process
        warm_up_for_fork(self.warm_up)  # and its first-call set-up too
        context = multiprocessing.get_context("fork")
        parents: list[Any] = []
        for index, cap in enumerate(self.caps()):
            mine, theirs = context.Pipe(duplex=True)
            process = context.Process(
                target=_worker_entry, name=f"proactive-tui {self.name} worker {index}", daemon=True,
                args=(theirs, list(parents), cap, self.make_job, self.gateway_options, os.getpid()))
            process.start()
            theirs.close()
            parents.append(mine)
            self.seats.append(_Seat(index, process, mine, cap))

    def terminate(self) -> None:
        """End every worker still running (the command is leaving, whatever happened)."""
        for seat in self.seats:
            if seat.process.is_alive():
                seat.process.kill()
            seat.process.join(timeout=2.0)

    @property
    def pids(self) -> list[int]:
        return [seat.process.pid for seat in self.seats]

    async def run(self, on_done: Callable[[Any], Any], db: Any, warn: Callable[[str], None], gateway: Any,
                  on_lost: Callable[[int, str], Any] | None = None, on_event: Callable[[Any], Any] | None = None) -> None:
        """Run every unit on the workers: `on_done(result)` as each ends (an eval session's
        `EndedSession`), `on_lost(index, why)` for a unit a dying worker took with it, `on_event`
        for the events a job forwards (synth's progress); the store writes go to `db`, the file
        writes (`write`) to disk. On cancellation the workers are stopped (see the module
        docstring) before it is raised."""
        from proactive_tui.llm.limits import ModelLimiter, ModelLimits

        loop = asyncio.get_running_loop()
        self.loop = loop
        self.on_done = on_done
        self.on_lost = on_lost or self._lost_session
        self.on_event = on_event or (lambda event: None)
        self.warn = warn
        self.stats = gateway.stats
        self.writer = StoreWriter(db, warn) if db is not None else None
        self.limits: dict[str, ModelLimits] = dict(self.gateway_options.get("limits") or {})
        self.limiters: dict[str, ModelLimiter] = {}
        self.queue: deque[list[int]] = deque(self.groups)
        self.pending = self.units
        self.all_done: asyncio.Future[None] = loop.create_future()
        self.all_gone: asyncio.Future[None] = loop.create_future()
        self.holders: set[asyncio.Task[None]] = set()
        for seat in self.seats:
            loop.add_reader(seat.conn.fileno(), self._readable, seat)
        try:
            self._dispatch()
            self._check_done()
            await self.all_done
            await self._stop()
        except asyncio.CancelledError:
            await self._stop()
            raise
        finally:
            self._close()
            if self.writer is not None:
                await self.writer.close()

    # -- handing out work ------------------------------------------------------------------

    def _dispatch(self) -> None:
        while self.queue:
            room = [s for s in self.seats if s.alive and len(s.outstanding) < s.cap]
            if not room:
                return
            seat = min(room, key=lambda s: len(s.outstanding) / s.cap)
            group = self.queue.popleft()
            seat.outstanding.update(group)
            self._send(seat, ("run", group))

    def _send(self, seat: _Seat, message: tuple) -> None:
        if not seat.alive:
            return
        try:
            seat.conn.send(message)
        except (OSError, EOFError):
            self._gone(seat)

    def _check_done(self) -> None:
        if self.pending <= 0 and not self.all_done.done():
            self.all_done.set_result(None)

    def _ended(self, result: Any) -> None:
        """A unit ended (`result`: what its callback returned, awaited when it is awaitable)."""
        self.pending -= 1
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            task = asyncio.ensure_future(result)
            self.holders.add(task)
            task.add_done_callback(self.holders.discard)
        self._check_done()

    # -- messages from the workers ---------------------------------------------------------

    def _readable(self, seat: _Seat) -> None:
        """Handle what the worker sent; its store writes go in one transaction per read."""
        with self.writer.together() if self.writer is not None else contextlib.nullcontext():
            try:
                while seat.conn.poll():
                    for message in seat.conn.recv():  # a worker sends lists (`_Worker.send`)
                        self._handle(seat, message)
            except (EOFError, OSError):
                self._gone(seat)

    def _handle(self, seat: _Seat, message: tuple) -> None:
        kind = message[0]
        if kind not in STORE_WRITES and self.writer is not None:
            self.writer.flush()  # what arrived before this is written before it takes effect
        if kind in STORE_WRITES:
            if kind == "create":
                seat.open_rows.add(message[1].id)
            elif kind == "update" and message[3].get("status") in FINAL_STATUSES:
                seat.open_rows.discard(message[1])
            if self.writer is not None:
                self.writer.apply(message)
        elif kind == "started":
            seat.started.add(message[1])
        elif kind == "done":
            _, index, result = message
            seat.outstanding.discard(index)
            seat.started.discard(index)
            self._ended(self.on_done(result))
            self._dispatch()
        elif kind == "write":
            from proactive_tui.evalrun.folder import write_atomic

            write_atomic(Path(message[1]), message[2])
        elif kind == "event":
            self.on_event(message[1])
        elif kind == "acquire":
            _, ticket, model, estimate = message
            entry = seat.held[ticket] = [asyncio.Event(), estimate]
            task = self.loop.create_task(self._hold(seat, ticket, model, estimate, entry))
            self.holders.add(task)
            task.add_done_callback(self.holders.discard)
        elif kind == "release":
            held = seat.held.pop(message[1], None)
            if held is not None:
                held[1] = message[2]
                held[0].set()
        elif kind == "pause":
            _, model, seconds = message
            if model in self.limiters:
                self.limiters[model].pause(seconds)
            for other in self.seats:
                if other is not seat:
                    self._send(other, message)
        elif kind == "stats":
            seat.stats = message[1]
            self._sum_stats()
        elif kind == "warn":
            self.warn(message[1])
        elif kind == "bye":
            seat.said_bye = True
            self._check_gone()

    async def _hold(self, seat: _Seat, ticket: int, model: str, estimate: int, entry: list[Any]) -> None:
        """One worker call's slot of a limited model, held here until the worker gives it back
        (`entry`: [given back, tokens it used])."""
        from proactive_tui.llm.limits import ModelLimiter, ModelLimits

        limiter = self.limiters.get(model)
        if limiter is None:
            limiter = self.limiters[model] = ModelLimiter(self.limits.get(model) or ModelLimits())
        released = entry[0]
        async with limiter.slot(estimate) as charge:
            if released.is_set():  # given back (cancelled, or its worker died) before it was granted
                return
            self._send(seat, ("grant", ticket))
            await released.wait()
            charge.settle(int(entry[1]))

    def _sum_stats(self) -> None:
        totals: dict[str, dict[str, Any]] = {}
        for seat in self.seats:
            for model, counters in seat.stats.items():
                into = totals.setdefault(model, {})
                for name, value in counters.items():
                    if value is None:
                        into.setdefault(name, None)
                    else:
                        into[name] = (into.get(name) or 0) + value
        for model, counters in totals.items():
            target = self.stats.of(model)
            for name, value in counters.items():
                setattr(target, name, value)

    # -- a worker that ends ------------------------------------------------------------------

    def _gone(self, seat: _Seat) -> None:
        """A worker's pipe closed: it ended (stopped, killed, crashed). What it had started is
        lost (written as failed: resume runs it again); what it had not goes to the others."""
        if not seat.alive:
            return
        seat.alive = False
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(seat.conn.fileno())
        seat.process.join(timeout=1.0)
        code = seat.process.exitcode
        how = (f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}")
        for held in seat.held.values():
            held[0].set()
        seat.held.clear()
        if self.writer is not None:
            from proactive_tui.core.events import now_iso

            for row in sorted(seat.open_rows):
                self.writer.apply(("update", row, now_iso(), {"status": "interrupted"}))
        seat.open_rows.clear()
        stopping = self.all_done.done() or getattr(self, "stopping", False)
        if seat.outstanding and not stopping:

            lost = sorted(seat.outstanding & seat.started)
            back = sorted(seat.outstanding - seat.started)
            seat.outstanding.clear()
            if back:
                self.queue.appendleft(back)
            self.warn(f"worker process {seat.index} ended ({how}) with {len(lost)} in flight; "
                      "they are kept as unfinished and resume runs them again")
            for index in lost:
                self._ended(self.on_lost(index, f"the worker process running it ended ({how})"))
            if not any(s.alive for s in self.seats):
                for group in self.queue:
                    for index in group:
                        self._ended(self.on_lost(index, "no worker process left to run it"))
                self.queue.clear()
            self._dispatch()
        self._check_gone()

    def _lost_session(self, index: int, why: str) -> Any:
        """An eval session lost with its worker: written as failed (`eval resume` runs it again)."""
        from proactive_tui.evalrun.folder import render_ended

        item = self.planned[index]
        return self.on_done(render_ended(item.key, item.seed, None, why))

    def _check_gone(self) -> None:
        if all(not s.alive or s.said_bye for s in self.seats) and not self.all_gone.done():
            self.all_gone.set_result(None)

    async def _stop(self) -> None:
        """Ask every worker to stop and wait for their last writes (their bye), then end the rest."""
        self.stopping = True
        for seat in self.seats:
            self._send(seat, ("stop",))
        self._check_gone()
        try:
            await asyncio.wait_for(asyncio.shield(self.all_gone), STOP_GRACE_S)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass

    def _close(self) -> None:
        for seat in self.seats:
            if seat.alive:
                with contextlib.suppress(ValueError, OSError):
                    self.loop.remove_reader(seat.conn.fileno())
            seat.process.join(timeout=2.0)
            if seat.process.is_alive():
                seat.process.kill()
                seat.process.join(timeout=2.0)
            seat.conn.close()
            seat.alive = False
        for task in list(self.holders):
            task.cancel()
