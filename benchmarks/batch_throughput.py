"""Batch throughput: ProactiveEval sessions through `eval` against the fake server at 100 ms a call,
on one worker (this process alone) and on N worker processes, in one run.

Run: PYTHONPATH=. .venv/bin/python benchmarks/batch_throughput.py [--sessions 120] [--concurrency 32]
     [--workers N] [--rounds 2] [--profile] [--timeline] [--no-issue-workload]
     [--capacity-sessions 288] [--capacity-concurrency 96] [--server light|threaded]

Three workloads, each with its own figures, printed one after the other and named on every figure line:
`default`, this benchmark's own since its first version (`--sessions`, 120: the 24 bundled
environments x sessions/24 repeats, more sessions than seats, so a run has a steady middle), and
`issue`, the one issue 35 states (32 sessions, 16 environments of 4 domains x 2 repeats, at
concurrency 32: every session in flight at once, so start-up and the batch's tail are most of it),
both at concurrency 32 and read against the floor target (wall / max(ideal, CPU / cores)); and
`capacity` (`--capacity-sessions` 288 at `--capacity-concurrency` 96), read against the throughput
target (N workers' calls per second over one's). Throughput is what a configuration can do at
most. At concurrency 32 one process is far past the point where its sessions keep its core busy
(each session has 1.5 calls out on average, 12 calls in 8 steps of 100 ms plus a call's CPU, so
about 14 sessions keep a core busy at 5 ms a call), but two workers hold 16 each, just past that
point, where a closed system still loses much of its throughput to sessions that all wait on
replies at once; so at 32 the ratio compares a saturated process with two that are not, and every
gain in a call's CPU lowers it (one process gains, the two workers were waiting anyway). At 96 in
flight both runs are bound by their cores, so the ratio measures what the N workers add.

The issue's floor has a reference measured beside it in each round: `minimal_client.py`, the
same sessions' shape (steps of 1 and 2 calls, as many in a row) on N processes with nothing of
the project (the batch loop, aiohttp, a CPU burn making each call cost what a call of that round's
N-worker run cost), read with the same formula: what a simple client of that shape gets on this
machine at that moment, so a round's figure can be told from the machine's state. A yardstick,
not a bound: it puts all of a call's CPU on its session's path, the batch's parent spends its
share beside the workers.

The batch command itself (`run_batch_eval`: planning, the runner or the worker pool, the store,
the folder, the report) runs in this process against a fake server (a child process,
`light_server.py` by default: the project's fake server's replies on one asyncio loop) that answers
every call after `--latency` seconds; every agent, user and judge seat is an `openai/` model at that
server. Each round runs the same batch with `--workers 1` and with `--workers N` (default: the
usable cores), alternating, each into a fresh folder and session store and in a fresh process
(`run_fresh`), as `eval run` starts: the N workers fork from a parent that has called no model,
so each pays its own first-call set-up, as in a real batch (until 2026-12-06 every run was made
in this one process, and the N-worker runs forked from a parent the runs before had warmed). Calls are counted per
session from the run records (every seat's calls; checked against a count at `litellm.acompletion`
on the one-worker run), and the ideal wall time is

    max(sum of sessions' calls in a row x latency / concurrency, the longest session's calls in a row x latency)

(each of the --concurrency seats holds one session at a time, for at least its calls that must run
one after another; "in a row" is read from the store's `model_called` events, each call's start and
latency: the most of a session's calls that ran each after the one before ended). Until
2026-12-06 the ideal counted all of a session's calls as in a row, 12 where 8 are:
ProactiveEval checks a turn while the agent writes its next message, so that ideal was half as
long again as the real one and the floor too lenient. A call costs the batch about 5 ms of CPU, so
one process saturates its core at about 14 sessions in flight: the batch is CPU-bound, and its
floor is max(ideal, CPU seconds / cores), the CPU being every process the run keeps busy on these
cores: this process, its workers, and the fake server standing in for the provider (its work has
to run on the same cores before the batch can end, so a floor without it is one no scheduler
could reach here; the figure without it is printed beside). Printed per run: wall, calls per
second, CPU (parent and workers apart), the fake server's CPU, wall / that floor, and the same
with the batch's CPU alone; then the figures with their targets: N workers' throughput over one
worker's at capacity (target >= 1.7 at N=2 on a 2-core machine) and, for N workers at
concurrency 32, wall / max(ideal, CPU / cores) (target <= 1.15); the medians over rounds when
there are several, and the load average before and after, since other processes on the machine
take the same cores; and, before and after, the cores N CPU-bound processes started from here get
(a 2-second spin each; `cores_available`), with wall / max(ideal, CPU / those cores): on a loaded
machine the figures are read against that ceiling. `--profile` prints where the parent spends its
CPU in the N-worker run (cProfile on CPU time): it should do little besides writing. Process start (a fresh
interpreter to the CLI parsed and litellm imported) is on its own line, measured in a child process,
with what each run's process does before its clock beside it: litellm's first-call set-up
(`gateway.warm_up_for_fork`, as the pool does before its fork) and the eval command's own
first-use set-up (`warm_up_command`: a scripted batch, no model called): a process's one-time
costs, not a batch's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TARGET = 1.15
SPEEDUP_TARGET = 1.7
READY = ("import time; t = time.perf_counter()\n"
         "from proactive_tui.cli.main import build_parser; build_parser()\n"
         "from proactive_tui.llm.gateway import litellm_module; litellm_module()\n"
         "print(time.perf_counter() - t)\n")


FREE_TEXT = "Shall we talk about it? Here is a short line, as a model might write it."


SERVER = ("import sys; from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder\n"
          "with FakeOpenAIServer(responder=proactiveeval_responder({text!r}), latency={latency!r}, keep_alive=True) as s:\n"
          "    print(s.base_url, flush=True); sys.stdin.read()\n")


def start_server(latency: float, kind: str = "light") -> tuple[subprocess.Popen, str]:
    """The fake server in its own process: its threads would otherwise take this one's CPU.
    `light` (the default): `light_server.py`, the fake's replies on one asyncio loop, which leaves
    the cores to the batch; `threaded`: the project's fake server itself."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if kind == "light":
        argv = [sys.executable, str(ROOT / "benchmarks" / "light_server.py"), repr(latency), FREE_TEXT]
    else:
        argv = [sys.executable, "-c", SERVER.format(text=FREE_TEXT, latency=latency)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def process_start() -> tuple[float, float]:
    """(interpreter start to ready, of which imports) in a fresh child process, seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", READY], capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, float(out.stdout.strip().splitlines()[-1])


def calls_per_session(folder: Path) -> list[int]:
    """Every finished session's model calls, from its run record (all seats)."""
    import json

    out = []
    for path in sorted((folder / "sessions").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))["record"]
        out.append(sum(seat.get("calls", 0) for seat in (record.get("totals", {}).get("by_seat") or {}).values()))
    return out


def chains_per_session(store: Path, latency: float) -> list[int]:
    """Per session, the most of its model calls that ran one after another, each starting after
    the one before it ended (from the store's `model_called` events: each call's start and
    latency). A session's calls are not all in a row: ProactiveEval checks a turn while the agent
    writes the next message and scores the plan beside the first one, so 12 calls take 8 in a row.
    Calls sent together start within a few milliseconds of each other, hence the tolerance."""
    import json
    import sqlite3
    from datetime import datetime

    spans: dict[str, list[tuple[float, float]]] = {}
    with contextlib.closing(sqlite3.connect(store)) as db:
        for session_id, payload in db.execute("SELECT session_id, payload FROM events WHERE type = 'model_called'"):
            call = json.loads(payload).get("call") or {}
            if not call.get("started_at") or call.get("latency_s") is None:
                continue
            start = datetime.fromisoformat(call["started_at"]).timestamp()
            spans.setdefault(session_id, []).append((start, start + float(call["latency_s"])))
    chains = []
    for calls in spans.values():
        count, free_at = 0, float("-inf")
        for start, end in sorted(calls, key=lambda span: span[1]):  # the most intervals that do not overlap
            if start >= free_at - latency / 4:
                count, free_at = count + 1, end
        chains.append(count)
    return chains


def cpu_now() -> tuple[float, float]:
    """(this process's CPU, its waited-for children's CPU), seconds."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


SPIN = ("import time\nend = time.perf_counter() + {seconds!r}\nn = 0\n"
        "while time.perf_counter() < end:\n    n += 1\nprint(time.process_time())\n")


def cores_available(n: int, seconds: float = 2.0) -> float:
    """The cores N CPU-bound processes started from here get right now: their CPU seconds over
    the wall seconds they spun. On an idle 2-core machine, 2.0 for N=2. Other processes take the
    same cores, and Linux's autogroup scheduling gives one terminal session's processes one share
    together however many they are, so on a loaded machine it can be near 1 even for N=2: the
    most N workers can gain here, whatever the batch does."""
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=seconds)], stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    cpu = sum(float(p.communicate()[0]) for p in procs)
    return cpu / (time.perf_counter() - start)


def server_cpu(pid: int) -> float:
    """The fake server's CPU so far (it shares the cores with the batch), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class Workload:
    """What one run batches: ProactiveEval environments (selectors) x repeats, at a concurrency;
    `speedup_target`: whether N workers' throughput over one's is read against its target here
    (at capacity) or the floor is (the other figure printed beside, without one)."""

    def __init__(self, name: str, label: str, selectors: list[str], repeats: int, concurrency: int,
                 speedup_target: bool = False) -> None:
        self.name, self.label, self.selectors, self.repeats = name, label, selectors, repeats
        self.concurrency, self.speedup_target = concurrency, speedup_target


ISSUE_DOMAINS = ["proactiveeval/persuasion", "proactiveeval/recommendation", "proactiveeval/system_operation",
                 "proactiveeval/long-term_follow_up"]
"""The issue's workload, 32 sessions: these 4 domains' 16 bundled environments x 2 repeats."""


def workloads(args: argparse.Namespace) -> list[Workload]:
    """This benchmark's workload (`--sessions`, 120 by default since its first version: every bundled
    environment x sessions/24 repeats, at `--concurrency`), the issue's beside it (32 sessions, all
    in flight at once at concurrency 32), each with its own figures; and the capacity workload
    (`--capacity-sessions` at `--capacity-concurrency`), where the throughput of N workers and
    of one is each configuration's most, so their ratio is read against its target there."""
    repeats = max(1, args.sessions // 24)
    out = [Workload("default", f"{24 * repeats} sessions (this benchmark's workload)", ["proactiveeval"], repeats,
                    args.concurrency)]
    if not getattr(args, "no_issue_workload", False):
        out.append(Workload("issue", "32 sessions (the issue's workload)", ISSUE_DOMAINS, 2, 32))
    if getattr(args, "capacity_sessions", 0):
        many = max(1, args.capacity_sessions // 24)
        out.append(Workload("capacity", f"{24 * many} sessions at capacity (enough in flight to keep every core "
                            "busy)", ["proactiveeval"], many, args.capacity_concurrency, speedup_target=True))
    return out


def proc_cpu(pid: int) -> float:
    """A process's CPU so far, seconds (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Timeline:
    """`--timeline`: where an N-worker run's wall goes. Read from the worker pool as it runs (each
    unit's start and end as the parent receives them, the queue of units not handed out) and from
    /proc (each worker's CPU, every 50 ms), with the parent's event-loop lag (how late a 50 ms
    sleep wakes: what a worker waiting for a limiter slot or a unit would wait on top) and its
    full garbage collections. Wraps `WorkerPool._handle` and `WorkerPool.run` for the run only."""

    BIN_S = 0.2

    def __init__(self) -> None:
        self.events: list[tuple[float, int, str]] = []
        self.samples: list[tuple[float, list[float], float, int, dict[int, int]]] = []
        self.collections: list[float] = []
        self.t0 = self.end = 0.0

    def __enter__(self) -> "Timeline":
        import asyncio
        import gc

        from proactive_tui.evalrun import workers as pool_module

        pool_class = pool_module.WorkerPool
        self._saved = (pool_class._handle, pool_class.run)
        handle, run = self._saved
        timeline = self

        def traced_handle(pool, seat, message):
            if message[0] in ("started", "done"):
                timeline.events.append((time.perf_counter(), seat.index, message[0]))
            return handle(pool, seat, message)

        async def traced_run(pool, *args, **kwargs):
            timeline.t0 = time.perf_counter()
            sampler = asyncio.get_running_loop().create_task(timeline._sample(pool))
            try:
                return await run(pool, *args, **kwargs)
            finally:
                sampler.cancel()
                timeline.end = time.perf_counter()

        pool_class._handle, pool_class.run = traced_handle, traced_run
        started: list[float] = []

        def on_gc(phase: str, info: dict) -> None:
            if phase == "start":
                started[:] = [time.perf_counter()]
            elif info["generation"] == 2 and started and self.t0 and not self.end:
                self.collections.append(time.perf_counter() - started[0])

        self._on_gc = on_gc
        gc.callbacks.append(on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        import gc

        from proactive_tui.evalrun import workers as pool_module

        pool_module.WorkerPool._handle, pool_module.WorkerPool.run = self._saved
        gc.callbacks.remove(self._on_gc)

    async def _sample(self, pool) -> None:
        import asyncio

        while True:
            asked = time.perf_counter()
            await asyncio.sleep(0.05)
            now = time.perf_counter()
            flying = {seat.index: len(seat.outstanding) for seat in pool.seats}
            self.samples.append((now, [proc_cpu(pid) for pid in pool.pids], now - asked - 0.05, len(pool.queue), flying))

    def report(self, concurrency: int) -> list[str]:
        if not self.samples or not self.events:
            return ["  (no timeline: the run did not use worker processes)"]
        t0, wall = self.t0, self.end - self.t0
        workers = len(self.samples[0][1])
        first = min(t for t, _, kind in self.events if kind == "started") - t0
        last = max(t for t, _, kind in self.events if kind == "done") - t0
        emptied = next((t - t0 for t, _, _, queue, _ in self.samples if queue == 0), wall)
        lines = [f"  pool ran {wall:.2f} s: first session started at {first:.2f} s, every session handed out at "
                 f"{emptied:.2f} s, the last ended at {last:.2f} s (the tail, fewer than --concurrency {concurrency} "
                 f"in flight: {last - emptied:.2f} s)"]
        for i in range(workers):
            cpu = self.samples[-1][1][i] - self.samples[0][1][i]
            idle_with_work = 0.0
            for (t_a, cpu_a, _, _, _), (t_b, cpu_b, _, queue, _flying) in zip(self.samples, self.samples[1:]):
                if queue > 0 and (cpu_b[i] - cpu_a[i]) / (t_b - t_a) < 0.1:
                    idle_with_work += t_b - t_a
            lines.append(f"  worker {i}: CPU {cpu:.2f} s over the {wall:.2f} s ({cpu / wall:.0%} of a core); "
                         f"below 10% of a core while units were still queued: {idle_with_work:.2f} s")
        lags = sorted(lag for _, _, lag, _, _ in self.samples)
        lines.append(f"  the parent's loop: a 50 ms sleep woke late by {statistics.median(lags) * 1000:.1f} ms (median), "
                     f"{lags[int(0.99 * (len(lags) - 1))] * 1000:.1f} ms (p99), {lags[-1] * 1000:.1f} ms (max); "
                     f"its full collections during the run: {len(self.collections)}"
                     + (f", the longest {max(self.collections) * 1000:.0f} ms" if self.collections else ""))
        lines.append(f"  per {self.BIN_S} s from the pool's start: each worker's share of a core | units in flight | queued")
        for b in range(int(wall / self.BIN_S) + 1):
            window = [x for x in self.samples if b * self.BIN_S <= x[0] - t0 < (b + 1) * self.BIN_S]
            if len(window) < 2:
                continue
            span = window[-1][0] - window[0][0]
            shares = " ".join(f"{(window[-1][1][i] - window[0][1][i]) / span:4.2f}" for i in range(workers))
            flying = " ".join(f"{window[-1][4].get(i, 0):3d}" for i in range(workers))
            lines.append(f"    {b * self.BIN_S:5.1f} s  {shares} | {flying} | {window[-1][3]:4d}")
        return lines


def run_once(workers: int, index: int, args: argparse.Namespace, base_url: str, work: Path,
             profile: bool, server_pid: int, workload: Workload | None = None, timeline: bool = False) -> dict:
    """One batch with `--workers workers` into a fresh folder and store; its figures."""
    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.cli.main import build_parser

    workload = workload or workloads(args)[0]
    os.environ["PROACTIVE_TUI_DATA"] = str(work / f"data-{index}")
    out = work / f"out-{index}-w{workers}"
    argv = ["eval", "run", *workload.selectors, "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
            "--api-base", base_url, "--agreeableness", "low", "--repeats", str(workload.repeats),
            "--max-turns", str(args.max_turns), "--concurrency", str(workload.concurrency), "--out", str(out),
            "--workers", str(workers)]
    ns = build_parser().parse_args(argv)
    ns.envs = list(getattr(ns, "sub_envs", []) or [])
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)  # CPU, not the waits
    start, (own0, kids0), served0 = time.perf_counter(), cpu_now(), server_cpu(server_pid)
    traced = Timeline() if timeline else None
    if profiler is not None:
        profiler.enable()
    with traced or contextlib.nullcontext():
        code = run_batch_eval(ns)
    if profiler is not None:
        profiler.disable()
    wall, (own1, kids1), served = time.perf_counter() - start, cpu_now(), server_cpu(server_pid) - served0
    sessions = calls_per_session(out)
    total = sum(sessions)
    chains = chains_per_session(work / f"data-{index}" / "sessions.db", args.latency)
    # each of --concurrency seats holds one session at a time, for at least its calls in a row
    ideal = (max(sum(chains) * args.latency / workload.concurrency, max(chains) * args.latency)
             if chains else float("nan"))
    cpu = (own1 - own0) + (kids1 - kids0)
    cores = usable_cores()
    figures = {"workload": workload.name, "workers": workers, "code": code, "sessions": len(sessions), "calls": total, "wall": wall,
               "ideal": ideal, "parent_cpu": own1 - own0, "workers_cpu": kids1 - kids0, "cpu": cpu,
               "per_s": total / wall, "floor_ratio": floor_ratio(wall, ideal, cpu + served, cores), "server_cpu": served,
               "floor_batch_only": floor_ratio(wall, ideal, cpu, cores),
               "range": (min(sessions), max(sessions)) if sessions else (0, 0),
               "chains": (min(chains), max(chains)) if chains else (0, 0), "in_a_row": sum(chains)}
    if traced is not None:
        figures["timeline"] = traced.report(workload.concurrency)
    if profiler is not None:
        import io
        import pstats

        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        figures["profile"] = text.getvalue()
    return figures


def throughput_ceiling(run: dict, concurrency: int, latency: float, cores: int) -> dict:
    """What no scheduler could beat for this run's calls: a session in flight has its calls out one
    step at a time (12 calls in 8 steps: 1.5 at once, on average), and a step takes at least the
    server's latency plus a call's CPU (Little's law); the cores give at most cores / CPU a call;
    and the ideal wall bounds it too. These are the asymptotic bounds: near the point where
    the sessions just fill the cores (16 a worker at --concurrency 32), a run stays well below
    them, since its sessions often all wait on replies at once."""
    per_call = run["cpu"] / max(1, run["calls"])
    on_path = (run["workers_cpu"] if run["workers"] > 1 else run["cpu"]) / max(1, run["calls"])  # the parent's is not a call's
    at_once = run["calls"] / max(1, run["in_a_row"])
    littles = concurrency * at_once / (latency + on_path)
    by_cpu = cores / per_call if per_call else float("inf")
    by_ideal = run["calls"] / run["ideal"] if run["ideal"] else float("inf")
    return {"littles": littles, "cpu": by_cpu, "ideal": by_ideal, "bound": min(littles, by_cpu, by_ideal)}


def floor_ratio(wall: float, ideal: float, cpu: float, cores: float) -> float:
    """The floor figure: wall / max(ideal, CPU seconds / cores)."""
    return wall / max(ideal, cpu / cores)


def reference_steps(calls: int, in_a_row: int) -> tuple[int, ...]:
    """A session's shape for the reference: steps of 1 and 2 calls at once, `calls` calls in all,
    `in_a_row` steps, the 2s spread among the 1s (ProactiveEval at 3 turns: 12 and 8, so 1+2 four
    times)."""
    twos = min(max(0, calls - in_a_row), in_a_row)
    ones = max(0, in_a_row - twos)
    steps: list[int] = []
    while ones or twos:
        if ones:
            steps.append(1)
            ones -= 1
        if twos:
            steps.append(2)
            twos -= 1
    return tuple(steps)


def reference_run(run: dict, n: int, base_url: str, server_pid: int) -> dict:
    """The minimal client (`minimal_client.py`) with `run`'s sessions, shape and CPU a call (the
    batch's, parent and workers), on `n` processes: its floor figure, read as the batch's is."""
    import minimal_client
    from proactive_tui.evalrun.spacing import START_SPACING_S

    steps = reference_steps(run["range"][1], run["chains"][1])
    per_call = run["cpu"] / max(1, run["calls"])
    bare = minimal_client.run(base_url, n, run["sessions"], steps, 0.0, START_SPACING_S)
    served0 = server_cpu(server_pid)
    ref = minimal_client.run(base_url, n, run["sessions"], steps, max(0.0, per_call - bare["per_call"]), START_SPACING_S)
    served = server_cpu(server_pid) - served0
    # the same sessions, all in flight at once, as many calls in a row: the batch's ideal is theirs
    return {**ref, "steps": steps, "floor_ratio": floor_ratio(ref["wall"], run["ideal"], ref["cpu"] + served, usable_cores())}


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=120, help="a multiple of 24 (the bundled environments)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="N for the N-worker runs (default: the usable cores)")
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs (1 worker, N workers), alternating")
    parser.add_argument("--profile", action="store_true", help="where the parent spends its CPU (N-worker runs)")
    parser.add_argument("--timeline", action="store_true",
                        help="where the N-worker runs' wall goes: each worker's CPU and units in flight over time, "
                             "the tail, the parent's loop lag")
    parser.add_argument("--no-issue-workload", action="store_true",
                        help="leave out the issue's workload (32 sessions), run beside --sessions by default")
    parser.add_argument("--server", choices=["light", "threaded"], default="light",
                        help="the provider's stand-in: light_server.py (one asyncio loop) or the project's threaded "
                             "fake server, which spends more of the cores the batch needs")
    parser.add_argument("--capacity-sessions", type=int, default=288,
                        help="the capacity workload's sessions, a multiple of 24 (0: leave it out)")
    parser.add_argument("--capacity-concurrency", type=int, default=96,
                        help="the capacity workload's sessions in flight: enough that N workers are bound by "
                             "their cores, not by how many sessions wait on the server")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one run, in a fresh process (`run_fresh`)
    args = parser.parse_args()
    if args.child:
        return child_run(args)
    n = args.workers or max(2, usable_cores())
    work = Path(tempfile.mkdtemp(prefix="batch-throughput-"))
    try:
        report(args, n, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_fresh(workers: int, index: int, args: argparse.Namespace, base_url: str, work: Path, server_pid: int,
              workload: Workload) -> dict:
    """One run (`run_once`) in a fresh interpreter, as `eval run` starts: its parent has made no
    model call before it forks the workers. Run in this process after the others, the N-worker
    runs forked from a parent that earlier runs had warmed (litellm's call path, the OpenAI SDK's
    reply models, the keyring): each worker's first call was cheaper than a real one, which
    hid what every worker of a real batch pays (`gateway.warm_up_for_fork`). The child's own
    start (imports, litellm's warm-up) is before the clock, as here before: process start is on
    its own line."""
    order = {"workers": workers, "index": index, "base_url": base_url, "work": str(work), "server_pid": server_pid,
             "workload": workload.name, "args": {k: v for k, v in vars(args).items() if k != "child"}}
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(order)], env=env, check=True)
    return json.loads((work / f"figures-{index}.json").read_text(encoding="utf-8"))


def child_run(args: argparse.Namespace) -> None:
    """`--child`: the run `run_fresh` ordered; its figures to `figures-<index>.json` in the work folder."""
    order = json.loads(args.child)
    work = Path(order["work"])
    os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")
    ns = argparse.Namespace(**order["args"])
    workload = next(w for w in workloads(ns) if w.name == order["workload"])
    from proactive_tui.llm.gateway import litellm_module, warm_up_for_fork
    from proactive_tui.llm.settings import ModelSettings

    litellm = litellm_module()
    # litellm's first-call set-up, done before the clock as `WorkerPool.start` does it before its
    # fork (`gateway.warm_up_for_fork`, once a process): the one-worker run would otherwise pay it
    # inside its wall, the N-worker run in its pool's start. Timed on its own line, in the parent.
    warm_up_for_fork([ModelSettings(model=f"openai/{seat}", api_base=order["base_url"]) for seat in "auj"])
    command_warm = warm_up_command(ns, workload, work, order["index"])
    counted_calls = [0]
    real = litellm.acompletion

    async def counted(*a, **kw):  # the one-worker run's check of the records' count
        counted_calls[0] += 1
        return await real(*a, **kw)

    if order["workers"] == 1:
        litellm.acompletion = counted
    figures = run_once(order["workers"], order["index"], ns, order["base_url"], work,
                       ns.profile and order["workers"] > 1, order["server_pid"], workload,
                       timeline=ns.timeline and order["workers"] > 1)
    figures["counted"] = counted_calls[0] if order["workers"] == 1 else None
    figures["command_warm"] = command_warm
    (work / f"figures-{order['index']}.json").write_text(json.dumps(figures), encoding="utf-8")


def warm_up_command(args: argparse.Namespace, workload: Workload, work: Path, index: int) -> float:
    """What the command does once a process before any batch work, done before the clock: a
    scripted batch of the workload's first selector (one repeat, one turn, in this process, no
    model called), so the clock does not count the eval command's own imports and first-use
    set-up (the environment loader, the store, the report and its statistics), which a process
    pays once, like its interpreter's start. No model is called: the workers still fork from a
    parent that never called one, as in a real `eval run`. Its wall, seconds."""
    import io

    sys.path.insert(0, str(ROOT / "tests"))
    from engine_helpers import scripted_agent, scripted_judge, scripted_user
    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.cli.main import build_parser
    from proactive_tui.core.spec import build_session

    def scripted(spec, env, gateway):
        seats = {"agent": scripted_agent(), "user": scripted_user(), "judge": scripted_judge()}
        return build_session(spec, env, gateway, seats=seats)

    os.environ["PROACTIVE_TUI_DATA"] = str(work / f"command-{index}")
    ns = build_parser().parse_args(["eval", "run", workload.selectors[0], "--agreeableness", "low", "--repeats", "1",
                                    "--max-turns", "1", "--workers", "1", "--out", str(work / f"command-{index}-out")])
    ns.envs = list(getattr(ns, "sub_envs", []) or [])
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = run_batch_eval(ns, build=scripted)
    if code != 0:
        raise SystemExit(f"the scripted warm-up batch ended with {code}")
    return time.perf_counter() - start


def report(args: argparse.Namespace, n: int, work: Path) -> None:
    """Every run, each in its own process (`run_fresh`), and the figures."""
    total_start, imports = process_start()
    from proactive_tui.llm.gateway import litellm_module, warm_up_for_fork
    from proactive_tui.llm.settings import ModelSettings

    litellm_module()  # process start, on its own line

    before = load()
    machine = [cores_available(n)]
    proc, base_url = start_server(args.latency, args.server)
    warm_started = time.process_time()  # what each run's process does before its clock (`child_run`)
    warm_up_for_fork([ModelSettings(model=f"openai/{seat}", api_base=base_url) for seat in "auj"])
    warm_cpu = time.process_time() - warm_started
    runs: list[dict] = []
    references: list[dict] = []
    try:
        for _round in range(args.rounds):
            for workload, workers in [(w, k) for w in workloads(args) for k in (1, n)]:
                runs.append(run_fresh(workers, len(runs), args, base_url, work, proc.pid, workload))
                if workload.name == "issue" and workers == n:
                    references.append(reference_run(runs[-1], n, base_url, proc.pid))
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=10)
    after = load()
    machine.append(cores_available(n))
    available = min(usable_cores(), max(0.1, statistics.mean(machine)))
    for r in runs:
        r["floor_available"] = floor_ratio(r["wall"], r["ideal"], r["cpu"] + r["server_cpu"], available)
    cores = usable_cores()
    median = statistics.median
    label = "median over rounds, " if args.rounds > 1 else ""
    print(f"\nprocess start (interpreter to CLI and litellm ready): {total_start:.2f} s, of which imports {imports:.2f} s; "
          f"then litellm's first-call set-up (gateway.warm_up_for_fork, once a process, before any run): {warm_cpu:.2f} s CPU; "
          f"then the eval command's own first-use set-up (a scripted batch, no model called, `warm_up_command`): "
          f"{statistics.median(r['command_warm'] for r in runs):.2f} s (median over the runs' processes)")
    for workload in workloads(args):
        mine = [r for r in runs if r["workload"] == workload.name]
        first = mine[0]
        print(f"\n{workload.label}: {first['sessions']} ProactiveEval sessions a run, {first['calls']} calls "
              f"({first['range'][0]}-{first['range'][1]} a session, of which {first['chains'][0]}-{first['chains'][1]} in a row), "
              f"{args.latency * 1000:.0f} ms a call, "
              f"--concurrency {workload.concurrency}, {cores} usable cores")
        for r in mine:
            check = ""
            if r["counted"] is not None and r["counted"] != r["calls"]:
                check = f"  (litellm saw {r['counted']} calls: the records' count is off)"
            print(f"  --workers {r['workers']}: exit {r['code']}, wall {r['wall']:.2f} s, {r['per_s']:.1f} calls/s, "
                  f"ideal {r['ideal']:.2f} s, CPU {r['cpu']:.2f} s (parent {r['parent_cpu']:.2f}, workers "
                  f"{r['workers_cpu']:.2f}; {r['cpu'] / max(1, r['calls']) * 1000:.1f} ms a call), "
                  f"the fake server's CPU {r['server_cpu']:.2f} s; wall / max(ideal, CPU with the server's / {cores}) = "
                  f"{r['floor_ratio']:.3f}, with the batch's CPU alone {r['floor_batch_only']:.3f}{check}")
        ones = [r for r in mine if r["workers"] == 1]
        many = [r for r in mine if r["workers"] == n]
        speedups = [m["per_s"] / o["per_s"] for o, m in zip(ones, many)]
        ceiling = [throughput_ceiling(m, workload.concurrency, args.latency, cores) for m in many]
        most = median([c["bound"] / o["per_s"] for c, o in zip(ceiling, ones)])
        # the same figures for each workload, side by side; run_all.py reads the lines with a target
        speedup = (f"{workload.name}: throughput of {n} workers / 1 worker ({label}per round "
                   f"{', '.join(f'{x:.2f}' for x in speedups)}): {median(speedups):.3f}x")
        floor = (f"{workload.name}: ratio wall / max(ideal, CPU / cores) (the fake server's CPU counted), {n} workers ({label}per round "
                 f"{', '.join(format(m['floor_ratio'], '.3f') for m in many)}): {median([m['floor_ratio'] for m in many]):.3f}")
        if workload.speedup_target:  # each workload is read against one target, the other figure beside it
            print(f"{speedup}  (target >= {SPEEDUP_TARGET})")
            print(f"{floor}  (no target here: this workload is for the throughput)")
        else:
            print(f"{speedup}  (no target here: {n} workers hold too few sessions each to fill their cores; "
                  "the throughput target is read at capacity)")
            print(f"{floor}  (target <= {TARGET})")
        print(f"  the most {n} workers could do at --concurrency {workload.concurrency} (the lowest of: concurrency x calls at once / "
              f"(latency + a call's CPU), {median([c['littles'] for c in ceiling]):.0f} calls/s; cores / a call's CPU, "
              f"{median([c['cpu'] for c in ceiling]):.0f}; calls / ideal, {median([c['ideal'] for c in ceiling]):.0f}): "
              f"{median([c['bound'] for c in ceiling]):.0f} calls/s, so at most "
              f"{most:.2f}x one worker; measured "
              f"{median([m['per_s'] for m in many]):.0f} calls/s, "
              f"{median([m['per_s'] / c['bound'] for c, m in zip(ceiling, many)]):.0%} of that ceiling")
        print(f"  the same with the batch's CPU alone (the fake server's left out, though it runs on the same cores): "
              f"{median([m['floor_batch_only'] for m in many]):.3f}; wall / max(ideal, CPU with the server's / the {available:.2f} cores "
              f"measured below): {n} workers {median([m['floor_available'] for m in many]):.3f}, 1 worker "
              f"{median([o['floor_available'] for o in ones]):.3f}")
        if workload.name == "issue" and references:
            print(f"  the reference, a minimal client of the same shape on {n} processes (`minimal_client.py`: steps of "
                  f"{'+'.join(map(str, references[0]['steps']))} calls, the batch loop, aiohttp, each call spending the CPU "
                  f"a call of the round's {n}-worker run spent, {median([x['per_call'] for x in references]) * 1000:.1f} ms; "
                  f"no parent, no engine, no litellm): wall / max(ideal, CPU with the server's / {cores}) ({label}per round "
                  f"{', '.join(format(x['floor_ratio'], '.3f') for x in references)}): "
                  f"{median([x['floor_ratio'] for x in references]):.3f}; the batch's over it, per round "
                  f"{', '.join(format(m['floor_ratio'] / x['floor_ratio'], '.2f') for m, x in zip(many, references))} "
                  "(a yardstick, not a bound: all of its CPU is on its sessions' paths, none in a parent beside them)")
        print(f"  parent CPU in the {n}-worker runs: {median([m['parent_cpu'] for m in many]):.2f} s "
              f"({median([m['parent_cpu'] / max(1, m['calls']) for m in many]) * 1000:.2f} ms a call): what writing "
              "the store and the folder and handing out work cost")
    print(f"\nthe machine as loaded: {n} CPU-bound processes started from here got {machine[0]:.2f} cores (before) and "
          f"{machine[1]:.2f} (after) of {cores}: what {n} workers can use here, whatever the batch does")
    print(f"load average (1, 5, 15 min) before: {before}; after: {after} (on {os.cpu_count()} CPUs)")
    for m in runs:
        if "timeline" in m:
            print(f"\nwhere the wall went, {m['workload']} workload, --workers {m['workers']} (--timeline):")
            print("\n".join(m["timeline"]))
    for m in runs:
        if "profile" in m:
            print(f"\nthe parent's CPU, {m['workload']} workload, --workers {m['workers']} (cProfile, CPU time, top 25 by own time):")
            print(m["profile"])


if __name__ == "__main__":
    main()
