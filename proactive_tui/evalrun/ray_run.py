"""A batch's work units as Ray tasks (`eval --ray`, `synth --ray`); this process the only writer.

The same units as `--workers` (`evalrun.workers`): an eval key group (`SessionKey.group`, run by
`workers.eval_job`) or a synth item (`synth.engine.worker_job`), each made by the same `make_job`
and run by the same job function; only where it runs differs. Ray is imported here alone, and only
when `--ray` is given.

- One Ray task runs one unit (a key group's sessions, or one item) in its own event loop, with a
  gateway whose limited models ask `LimiterActor` for every call's slot: ONE limiter per model for
  the whole cluster (parallel requests, rpm, tpm), as the parent's limiters are for the workers.
  A 429 pauses the model in the task that got it and at the actor, which holds back every later
  grant of a limited model and tells each task as it starts; a task already running asks the actor
  for the pauses twice a second (an unlimited model is not asked about per call: no round trip per
  call).
- A unit is safe to retry: a task sends nothing while it runs. Its store writes (masked in the
  task, `workers.ForwardStore`), file writes, progress events and warnings are kept in order and
  returned with its results, and this process applies them when the task has ended. An attempt a
  worker's death or an exception cut off has written nothing, so Ray's retry (`max_retries`, and
  `retry_exceptions`: a session's own failures are its outcome, caught inside the unit, so what
  escapes a unit is the infrastructure's) cannot duplicate a row or an event. A retried attempt
  first gives back the limiter slots an earlier attempt of its unit still held
  (`LimiterActor.begin`). The price: the session history shows a Ray session when it has ended,
  not while it runs.
- Results come back as their tasks end (`ray.wait`); at most `--concurrency` units are in flight,
  and each task asks for `cluster CPUs / concurrency` (at most 1) CPU, so they can all run at once.
- Ctrl-C / SIGTERM: the tasks in flight are cancelled (`ray.cancel(force=True)`); their units have
  written nothing, so the folder is resumable as after a local stop.
- Secrets: nothing secret enters Ray's object store. Keys are never sent: a task reads the
  provider's key from its own node's environment or keyring (`llm.keys.get_key`), as a local
  process does; `ray_problem` refuses an `--api-base` that carries credentials (it would travel in
  every task's spec); store writes are masked before they are returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from pathlib import Path
from typing import Any, Callable

from proactive_tui.evalrun.spacing import StartSpacing

RAY_EXTRA = "pip install 'proactive-tui[ray]'"
MAX_RETRIES = 3
"""Ray's retries of a unit whose worker died or whose run raised outside its sessions."""
WAIT_S = 0.2
"""How long one `ray.wait` blocks (in a thread) before this process looks at its loop again."""
PAUSE_POLL_S = 0.5
"""How often a running task asks the limiter actor for the 429 pauses other tasks hit."""
LOCAL = "local"
"""`--ray` with no address: start a Ray instance on this machine for this command."""
CLIENT_START_TRIES = 3
"""How often `ray://` is tried when the cluster's Ray Client server fails to start the connection's
own server (`join`)."""


def ray_module() -> Any:
    """`ray`, or ImportError with the one line that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"--ray needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


def ray_problem(roles: list[Any]) -> str | None:
    """What keeps these seats off Ray: the embedded model (one copy per process, its one-call gate
    holds within a process) or an api base with credentials in it (it would be in every task's
    arguments, in the object store in clear)."""
    from proactive_tui.redact import url_secrets

    for settings in roles:
        if settings.is_local:
            return f"--ray: {settings.model} is the embedded model, which runs in one process; leave out --ray"
        if settings.api_base and url_secrets(settings.api_base):
            return ("--ray: an api base carries credentials, which would travel in every Ray task in clear; give the "
                    "key in the provider's environment variable on every node instead")
    return None


# -- the cluster's one limiter ------------------------------------------------------------------


class LimiterActor:
    """Every limited model's `ModelLimiter` for the whole cluster (a Ray actor, async: one event loop
    holding every slot). A task's call asks `acquire(ticket, ...)`, which returns when the slot is
    granted, and gives it back with `release(ticket, tokens used)`. Tickets are named by the task
    (`owner/n`), so a release that arrives before or instead of its grant is kept, and `begin` /
    `end` of an owner give back whatever an attempt of that unit still held (a dead worker's)."""

    def __init__(self, limits: dict[str, Any]) -> None:
        self.limits = limits
        self.limiters: dict[str, Any] = {}
        self.held: dict[str, list[Any]] = {}
        """ticket -> [given back (asyncio.Event), tokens used, owner]"""
        self.early: dict[str, int] = {}
        """Releases of tickets not asked for yet (the calls of one task may arrive out of order)."""
        self.paused: dict[str, float] = {}
        self.peak: dict[str, int] = {}
        self.now: dict[str, int] = {}

    def _limiter(self, model: str) -> Any:
        from proactive_tui.llm.limits import ModelLimiter, ModelLimits

        limiter = self.limiters.get(model)
        if limiter is None:
            limiter = self.limiters[model] = ModelLimiter(self.limits.get(model) or ModelLimits())
            if model in self.paused:
                left = self.paused[model] - asyncio.get_running_loop().time()
                if left > 0:
                    limiter.pause(left)
        return limiter

    async def acquire(self, ticket: str, owner: str, model: str, estimate: int) -> bool:
        """Wait for a slot of `model`; False when the ticket was given back before it was granted."""
        if ticket in self.early:
            self.early.pop(ticket)
            return False
        entry = self.held[ticket] = [asyncio.Event(), estimate, owner]
        granted: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().create_task(self._hold(model, estimate, entry, granted))
        return await granted

    async def _hold(self, model: str, estimate: int, entry: list[Any], granted: asyncio.Future[bool]) -> None:
        async with self._limiter(model).slot(estimate) as charge:
            if entry[0].is_set():  # given back before it was granted
                granted.set_result(False)
                return
            self.now[model] = self.now.get(model, 0) + 1
            self.peak[model] = max(self.peak.get(model, 0), self.now[model])
            granted.set_result(True)
            await entry[0].wait()
            self.now[model] -= 1
            charge.settle(int(entry[1]))

    async def release(self, ticket: str, used: int) -> None:
        self._release(ticket, used)

    def _release(self, ticket: str, used: int) -> None:
        entry = self.held.pop(ticket, None)
        if entry is None:
            self.early[ticket] = used
            return
        entry[1] = used or entry[1]
        entry[0].set()

    def _end(self, owner: str) -> int:
        mine = [t for t, entry in self.held.items() if entry[2] == owner]
        for ticket in mine:
            self._release(ticket, 0)
        return len(mine)

    async def begin(self, owner: str) -> dict[str, float]:
        """A unit's attempt starts: an earlier attempt's slots go back (its worker is gone); the
        models' 429 pauses still running, in seconds, for the task's own gate."""
        self._end(owner)
        return await self.pauses()

    async def end(self, owner: str) -> int:
        return self._end(owner)

    async def pauses(self) -> dict[str, float]:
        """The models' 429 pauses still running, in seconds (what a running task polls)."""
        now = asyncio.get_running_loop().time()
        return {model: until - now for model, until in self.paused.items() if until > now}

    async def pause(self, model: str, seconds: float) -> None:
        until = asyncio.get_running_loop().time() + seconds
        self.paused[model] = max(self.paused.get(model, 0.0), until)
        if model in self.limiters:
            self.limiters[model].pause(seconds)

    async def peaks(self) -> dict[str, int]:
        """The most slots of each limited model granted at once (checked by the tests)."""
        return dict(self.peak)


# -- a Ray task ------------------------------------------------------------------------------------


class _TaskWorker:
    """What a unit's job sees of its worker (`workers._Worker`'s `send`, `gateway`, `cap`,
    `acquire`), in a Ray task: the limiter's messages go to the actor at once; every other message
    is kept, in order, and returned with the task's results (see the module docstring)."""

    def __init__(self, cap: int, limiter: Any, owner: str, gateway_options: dict[str, Any],
                 pauses: dict[str, float]) -> None:
        from proactive_tui.llm.gateway import Gateway

        self.cap = cap
        self.limiter = limiter
        self.owner = owner
        self.paused_until: dict[str, float] = {}
        """Per model, the loop time its 429 pause (told by the actor) runs to."""
        self.limiters: dict[str, Any] = {}
        self.outbox: list[tuple] = []
        self.calls = 0
        self.gateway = Gateway(**gateway_options, limiter_factory=self._limiter)
        self.follow(pauses)

    def _limiter(self, model: str, limits: Any, local: bool) -> Any:
        from proactive_tui.evalrun.workers import WorkerLimiter

        made = self.limiters[model] = WorkerLimiter(self, model, limits, local)  # type: ignore[arg-type]
        left = self.paused_until.get(model, 0.0) - asyncio.get_running_loop().time()
        if left > 0:
            made.pause(left, tell=False)
        return made

    def follow(self, pauses: dict[str, float]) -> None:
        """The actor's running pauses (seconds left) applied here, to the models' gates made and to come."""
        now = asyncio.get_running_loop().time()
        for model, left in pauses.items():
            self.paused_until[model] = max(self.paused_until.get(model, 0.0), now + left)
            if model in self.limiters:
                self.limiters[model].pause(left, tell=False)

    async def follow_pauses(self) -> None:
        """While the task runs, ask the actor for the 429 pauses every `PAUSE_POLL_S`: a pause
        another task hit then reaches this one's calls of a model with no limit, which never ask
        the actor per call (a limited model's calls wait at the actor's own gate already)."""
        while True:
            await asyncio.sleep(PAUSE_POLL_S)
            try:
                pauses = await self.limiter.pauses.remote()
            except Exception:  # the actor is gone: the unit's own calls to it say so, where it counts
                return
            self.follow(pauses)

    def send(self, message: tuple) -> None:
        kind = message[0]
        if kind == "release":
            self.limiter.release.remote(message[1], message[2])
        elif kind == "pause":
            self.limiter.pause.remote(message[1], message[2])
        else:
            self.outbox.append(message)

    async def acquire(self, model: str, estimate: int) -> str:
        self.calls += 1
        ticket = f"{self.owner}/{self.calls}"
        try:
            granted = await self.limiter.acquire.remote(ticket, self.owner, model, estimate)
        except asyncio.CancelledError:
            self.limiter.release.remote(ticket, 0)  # granted later or never: the actor gives it back
            raise
        if not granted:
            raise asyncio.CancelledError()
        return ticket

    def stats(self) -> dict[str, dict[str, Any]]:
        return {model: counters.model_dump() for model, counters in self.gateway.stats.models.items()}


def run_unit(make_job: Any, indexes: list[int], cap: int, gateway_options: dict[str, Any], limiter: Any,
             owner: str) -> tuple[list[tuple[int, Any]], list[tuple], dict[str, Any]]:
    """The body of one Ray task: the unit's indexes run at most `cap` at once; returns
    ([(index, result)], the kept messages in order, the gateway's counters)."""
    async def main() -> tuple[list[tuple[int, Any]], list[tuple], dict[str, Any]]:
        pauses = await limiter.begin.remote(owner)
        worker = _TaskWorker(cap, limiter, owner, gateway_options, pauses)
        job = make_job(worker)
        gate = asyncio.Semaphore(max(1, cap))
        spacing = StartSpacing()

        async def one(index: int) -> tuple[int, Any]:
            async with gate:
                await spacing.wait_turn()  # a task's units start apart, as a worker's do (evalrun.spacing)
                return index, await job(index)

        follower = asyncio.get_running_loop().create_task(worker.follow_pauses())
        try:
            results = await asyncio.gather(*(one(i) for i in indexes))
        finally:
            follower.cancel()
            limiter.end.remote(owner)
        return list(results), worker.outbox, worker.stats()

    from proactive_tui.llm import batch_loop

    return batch_loop.run(main())  # llm.batch_loop


# -- this process's side -----------------------------------------------------------------------


def join(ray: Any, options: dict[str, Any]) -> None:
    """`ray.init(**options)`; for a `ray://` address, again (up to `CLIENT_START_TRIES` times in
    all) when the cluster's Ray Client server could not start this connection's own server.

    Why: that start fails now and then, in Ray itself: the proxy forks the server while its gRPC
    threads run, and the child can die in the fork (ray-project/ray#63202, open), more often
    the longer the cluster has run. Nothing of the batch has started then, and a new connection
    gets a new server; any other failure is said at once, as before."""
    for attempt in range(1, CLIENT_START_TRIES + 1):
        try:
            ray.init(**options)
            return
        except ConnectionAbortedError as exc:
            client = str(options.get("address", "")).startswith("ray://")
            if not client or "Starting Ray client server failed" not in str(exc) or attempt == CLIENT_START_TRIES:
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()


class RayBatch:
    """A batch's units as Ray tasks, with `workers.WorkerPool`'s interface (`start`, `run`,
    `terminate`, `count`), so the commands and `runner.run_planned` take either."""

    def __init__(self, address: str, concurrency: int, groups: list[list[int]], make_job: Any,
                 gateway_options: dict[str, Any], per_slot: int = 1, name: str = "eval") -> None:
        self.address = address or LOCAL
        self.groups = [list(g) for g in groups if g]
        self.units = sum(len(g) for g in self.groups)
        self.concurrency = concurrency
        self.make_job = make_job
        self.gateway_options = gateway_options
        self.per_slot = per_slot
        self.name = name
        self.started_ray = False
        self.count = 0
        self.limiter: Any = None
        self.planned: list[Any] = []

    @classmethod
    def for_sessions(cls, address: str, concurrency: int, planned: list[Any], build: Any, shares: Any,
                     gateway_options: dict[str, Any], store: bool) -> "RayBatch":
        """An eval batch on Ray: a key group (`SessionKey.group`) is one task, as it is one worker's."""
        from proactive_tui.evalrun.workers import eval_job

        groups: dict[str, list[int]] = {}
        for index, item in enumerate(planned):
            groups.setdefault(item.key.group, []).append(index)
        batch = cls(address, concurrency, list(groups.values()), eval_job(planned, build, shares, store),
                    gateway_options)
        batch.planned = planned
        return batch

    def start(self) -> None:
        """Join the cluster (or start a local one), start the limiter actor, ship the job once."""
        import logging

        ray = ray_module()
        if not ray.is_initialized():
            options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if self.address == LOCAL:
                from proactive_tui.evalrun.workers import usable_cores

                options.update(address="local", num_cpus=usable_cores(), include_dashboard=False)
            else:
                options["address"] = self.address
            join(ray, options)
            self.started_ray = True
        self.count = int(ray.cluster_resources().get("CPU", 1))
        actor = ray.remote(LimiterActor).options(max_concurrency=10_000)
        self.limiter = actor.remote(dict(self.gateway_options.get("limits") or {}))
        self.job_ref = ray.put(self.make_job)
        cpus = min(1.0, max(0.01, self.count / max(1, self.concurrency)))
        self.task = ray.remote(run_unit).options(num_cpus=cpus, max_retries=MAX_RETRIES, retry_exceptions=True)

    def terminate(self) -> None:
        """Leave the cluster: a local instance this command started ends with it."""
        if not self.started_ray:
            return
        ray = ray_module()
        self.started_ray = False
        with contextlib.suppress(Exception):
            ray.shutdown()

    async def run(self, on_done: Callable[[Any], Any], db: Any, warn: Callable[[str], None], gateway: Any,
                  on_lost: Callable[[int, str], Any] | None = None,
                  on_event: Callable[[Any], Any] | None = None) -> None:
        """`workers.WorkerPool.run` on Ray: `on_done(result)` as each unit's results come back, with
        its writes applied first; `on_lost(index, why)` for a unit Ray gave up on."""
        from proactive_tui.evalrun.workers import StoreWriter

        ray = ray_module()
        self.on_done = on_done
        self.on_lost = on_lost or self._lost_session
        self.on_event = on_event or (lambda event: None)
        self.warn = warn
        self.stats = gateway.stats
        self.totals: dict[str, dict[str, Any]] = {}
        writer = StoreWriter(db, warn) if db is not None else None
        queue: deque[list[int]] = deque(self.groups)
        inflight: dict[Any, list[int]] = {}
        holders: list[Any] = []
        try:
            while queue or inflight:
                while queue and (not inflight or sum(map(len, inflight.values())) + len(queue[0]) <= self.concurrency):
                    group = queue.popleft()
                    owner = f"{self.name}-{group[0]}-{uuid.uuid4().hex[:8]}"
                    cap = min(len(group), self.concurrency) * self.per_slot
                    inflight[self.task.remote(self.job_ref, group, cap, self.gateway_options, self.limiter,
                                              owner)] = group
                ready, _ = await asyncio.to_thread(ray.wait, list(inflight), num_returns=1, timeout=WAIT_S)
                if ready:
                    more, _ = ray.wait(list(inflight), num_returns=len(inflight), timeout=0)
                    ready = list(dict.fromkeys([*ready, *more]))
                for ref in ready:
                    group = inflight.pop(ref)
                    try:
                        results, messages, stats = ray.get(ref)
                    except (ray.exceptions.RayError, Exception) as exc:
                        why = f"its Ray task failed after {MAX_RETRIES} retries ({type(exc).__name__})"
                        warn(f"{len(group)} unit(s) lost on Ray: {why}; resume runs them again")
                        for index in group:
                            holders.append(self.on_lost(index, why))
                        continue
                    with writer.together() if writer is not None else contextlib.nullcontext():
                        for message in messages:  # its store writes: one transaction
                            self._apply(message, writer)
                    self._add_stats(stats)
                    for _, result in results:
                        holders.append(on_done(result))
                for held in [h for h in holders if asyncio.iscoroutine(h) or isinstance(h, asyncio.Future)]:
                    await held
                holders.clear()
        except asyncio.CancelledError:
            for ref in inflight:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise
        finally:
            if writer is not None:
                await writer.close()

    def _apply(self, message: tuple, writer: Any) -> None:
        from proactive_tui.evalrun.workers import STORE_WRITES

        kind = message[0]
        if kind not in STORE_WRITES and writer is not None:
            writer.flush()  # what came before this is written before it takes effect
        if kind in STORE_WRITES:
            if writer is not None:
                writer.apply(message)
        elif kind == "write":
            from proactive_tui.evalrun.folder import write_atomic

            write_atomic(Path(message[1]), message[2])
        elif kind == "event":
            self.on_event(message[1])
        elif kind == "warn":
            self.warn(message[1])

    def _add_stats(self, stats: dict[str, dict[str, Any]]) -> None:
        for model, counters in stats.items():
            into = self.totals.setdefault(model, {})
            for name, value in counters.items():
                if value is None:
                    into.setdefault(name, None)
                else:
                    into[name] = (into.get(name) or 0) + value
            target = self.stats.of(model)
            for name, value in into.items():
                setattr(target, name, value)

    def _lost_session(self, index: int, why: str) -> Any:
        from proactive_tui.evalrun.folder import render_ended

        item = self.planned[index]
        return self.on_done(render_ended(item.key, item.seed, None, why))

    def limiter_peaks(self) -> dict[str, int]:
        return ray_module().get(self.limiter.peaks.remote())


def where(batch: RayBatch) -> str:
    """The line saying where the batch runs."""
    place = "a local Ray instance" if batch.address == LOCAL else f"the Ray cluster at {batch.address}"
    return f"Ray tasks on {place} ({batch.count} CPUs)"


__all__ = ["RayBatch", "LimiterActor", "ray_module", "ray_problem", "run_unit", "where", "RAY_EXTRA"]
