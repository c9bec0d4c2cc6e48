"""Batch throughput: ProactiveEval sessions through `eval` against the fake server at 100 ms a call,
on one worker (this process alone) and on N worker processes, in one run.

Run: PYTHONPATH=. .venv/bin/python benchmarks/batch_throughput.py [--sessions 120] [--concurrency 32]
     [--workers N] [--rounds 2] [--profile] [--timeline] [--no-issue-workload]

Two workloads, each with its own figures, printed one after the other and named on every figure line:
`default`, this benchmark's own since its first version (`--sessions`, 120: the 24 bundled
environments x sessions/24 repeats, more sessions than seats, so a run has a steady middle), and
`issue`, the one issue 35 states (32 sessions, 16 environments of 4 domains x 2 repeats, at
concurrency 32: every session in flight at once, so start-up and the batch's tail are most of it).

The batch command itself (`run_batch_eval`: planning, the runner or the worker pool, the store,
the folder, the report) runs in this process against a fake server (a child process) that answers
every call after `--latency` seconds; every agent, user and judge seat is an `openai/` model at that
server. Each round runs the same batch with `--workers 1` and with `--workers N` (default: the
usable cores), alternating, each into a fresh folder and session store. Calls are counted per
session from the run records (every seat's calls; checked against a count at `litellm.acompletion`
on the one-worker run), so the ideal wall time is

    max(total calls x latency / concurrency, the longest session's calls x latency)

(all seats busy all the time, or the longest session end to end; a session's judge calls overlap
its dialogue, so the second term is conservative). litellm spends about 12 ms of CPU on a whole
reply here, so one process saturates its core at about 9 calls in flight, long before 32: the
batch is CPU-bound, and its floor is max(ideal, CPU seconds / cores), the CPU being this process's
and its workers' (the fake server's is not counted, though it shares the cores). Printed per run:
wall, calls per second, CPU (parent and workers apart), wall / max(ideal, CPU / cores), and the same
with the fake server's CPU counted (it shares the cores); then the
figures with their targets: N workers' throughput over one worker's (target >= 1.7 at N=2 on a
2-core machine) and, for N workers, wall / max(ideal, CPU / cores) (target <= 1.15); the medians
over rounds when there are several, and the load average before and after, since other processes
on the machine take the same cores; and, before and after, the cores N CPU-bound processes
started from here get (a 2-second spin each; `cores_available`), with wall / max(ideal, CPU / those
cores): on a loaded machine the figures are read against that ceiling. `--profile` prints where the parent spends its CPU in the
N-worker run (cProfile on CPU time): it should do little besides writing. Process start (a fresh
interpreter to the CLI parsed and litellm imported) is on its own line, measured in a child process.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import os
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


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The fake server in its own process: its threads would otherwise take this one's CPU."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = SERVER.format(text=FREE_TEXT, latency=latency)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
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
    """What one run batches: ProactiveEval environments (selectors) x repeats, at `--concurrency`."""

    def __init__(self, name: str, label: str, selectors: list[str], repeats: int) -> None:
        self.name, self.label, self.selectors, self.repeats = name, label, selectors, repeats


ISSUE_DOMAINS = ["proactiveeval/persuasion", "proactiveeval/recommendation", "proactiveeval/system_operation",
                 "proactiveeval/long-term_follow_up"]
"""The issue's workload, 32 sessions: these 4 domains' 16 bundled environments x 2 repeats."""


def workloads(args: argparse.Namespace) -> list[Workload]:
    """This benchmark's workload (`--sessions`, 120 by default since its first version: every bundled
    environment x sessions/24 repeats) and, beside it, the issue's (32 sessions, all in flight at
    once at concurrency 32), each with its own figures."""
    repeats = max(1, args.sessions // 24)
    out = [Workload("default", f"{24 * repeats} sessions (this benchmark's workload)", ["proactiveeval"], repeats)]
    if not getattr(args, "no_issue_workload", False):
        out.append(Workload("issue", "32 sessions (the issue's workload)", ISSUE_DOMAINS, 2))
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

    BIN_S = 0.5

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
            "--max-turns", str(args.max_turns), "--concurrency", str(args.concurrency), "--out", str(out),
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
    ideal = max(total * args.latency / args.concurrency, max(sessions) * args.latency) if sessions else float("nan")
    cpu = (own1 - own0) + (kids1 - kids0)
    cores = usable_cores()
    figures = {"workload": workload.name, "workers": workers, "code": code, "sessions": len(sessions), "calls": total, "wall": wall,
               "ideal": ideal, "parent_cpu": own1 - own0, "workers_cpu": kids1 - kids0, "cpu": cpu,
               "per_s": total / wall, "floor_ratio": wall / max(ideal, cpu / cores), "server_cpu": served,
               "floor_with_server": wall / max(ideal, (cpu + served) / cores),
               "range": (min(sessions), max(sessions)) if sessions else (0, 0)}
    if traced is not None:
        figures["timeline"] = traced.report(args.concurrency)
    if profiler is not None:
        import io
        import pstats

        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        figures["profile"] = text.getvalue()
    return figures


def throughput_ceiling(run: dict, concurrency: int, latency: float, cores: int) -> dict:
    """What no scheduler could beat for this run's calls: each session in flight has one call out at a
    time, and a call takes at least the server's latency plus its own CPU (Little's law); the cores
    give at most cores / CPU a call; and the longest session bounds the wall (the ideal). With 16
    sessions a worker at 100 ms, a worker cannot fill its core unless a call costs over 6.7 ms of CPU,
    so at --concurrency 32 the ratio of N workers to one is bounded well before the cores are."""
    per_call = run["cpu"] / max(1, run["calls"])
    on_path = (run["workers_cpu"] if run["workers"] > 1 else run["cpu"]) / max(1, run["calls"])  # the parent's is not a call's
    littles = concurrency / (latency + on_path)
    by_cpu = cores / per_call if per_call else float("inf")
    by_ideal = run["calls"] / run["ideal"] if run["ideal"] else float("inf")
    return {"littles": littles, "cpu": by_cpu, "ideal": by_ideal, "bound": min(littles, by_cpu, by_ideal)}


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
    args = parser.parse_args()
    n = args.workers or max(2, usable_cores())
    work = Path(tempfile.mkdtemp(prefix="batch-throughput-"))
    os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")

    total_start, imports = process_start()
    from proactive_tui.llm.gateway import litellm_module

    litellm = litellm_module()  # imported before the clock: process start, on its own line
    counted_calls = [0]
    real = litellm.acompletion

    async def counted(*a, **kw):  # in this process only: the one-worker run's check of the records' count
        counted_calls[0] += 1
        return await real(*a, **kw)

    before = load()
    machine = [cores_available(n)]
    proc, base_url = start_server(args.latency)
    runs: list[dict] = []
    try:
        for _round in range(args.rounds):
            for workload, workers in [(w, k) for w in workloads(args) for k in (1, n)]:
                litellm.acompletion = counted if workers == 1 else real
                counted_calls[0] = 0
                figures = run_once(workers, len(runs), args, base_url, work, args.profile and workers > 1, proc.pid,
                                   workload, timeline=args.timeline and workers > 1)
                figures["counted"] = counted_calls[0] if workers == 1 else None
                runs.append(figures)
    finally:
        litellm.acompletion = real
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=10)
    after = load()
    machine.append(cores_available(n))
    available = min(usable_cores(), max(0.1, statistics.mean(machine)))
    for r in runs:
        r["floor_available"] = r["wall"] / max(r["ideal"], r["cpu"] / available)
    cores = usable_cores()
    median = statistics.median
    label = "median over rounds, " if args.rounds > 1 else ""
    print(f"\nprocess start (interpreter to CLI and litellm ready): {total_start:.2f} s, of which imports {imports:.2f} s")
    for workload in workloads(args):
        mine = [r for r in runs if r["workload"] == workload.name]
        first = mine[0]
        print(f"\n{workload.label}: {first['sessions']} ProactiveEval sessions a run, {first['calls']} calls "
              f"({first['range'][0]}-{first['range'][1]} a session), {args.latency * 1000:.0f} ms a call, "
              f"--concurrency {args.concurrency}, {cores} usable cores")
        for r in mine:
            check = ""
            if r["counted"] is not None and r["counted"] != r["calls"]:
                check = f"  (litellm saw {r['counted']} calls: the records' count is off)"
            print(f"  --workers {r['workers']}: exit {r['code']}, wall {r['wall']:.2f} s, {r['per_s']:.1f} calls/s, "
                  f"ideal {r['ideal']:.2f} s, CPU {r['cpu']:.2f} s (parent {r['parent_cpu']:.2f}, workers "
                  f"{r['workers_cpu']:.2f}; {r['cpu'] / max(1, r['calls']) * 1000:.1f} ms a call), "
                  f"wall / max(ideal, CPU / {cores}) = {r['floor_ratio']:.3f}; the fake server's CPU {r['server_cpu']:.2f} s, "
                  f"counted too: {r['floor_with_server']:.3f}{check}")
        ones = [r for r in mine if r["workers"] == 1]
        many = [r for r in mine if r["workers"] == n]
        speedups = [m["per_s"] / o["per_s"] for o, m in zip(ones, many)]
        # the same two figures for each workload, side by side; run_all.py reads the lines with a target
        print(f"{workload.name}: throughput of {n} workers / 1 worker ({label}per round "
              f"{', '.join(f'{x:.2f}' for x in speedups)}): {median(speedups):.3f}x  (target >= {SPEEDUP_TARGET})")
        print(f"{workload.name}: ratio wall / max(ideal, CPU / cores), {n} workers ({label}per round "
              f"{', '.join(format(m['floor_ratio'], '.3f') for m in many)}): {median([m['floor_ratio'] for m in many]):.3f}  "
              f"(target <= {TARGET})")
        ceiling = [throughput_ceiling(m, args.concurrency, args.latency, cores) for m in many]
        print(f"  the most {n} workers could do at --concurrency {args.concurrency} (the lowest of: concurrency / "
              f"(latency + a call's CPU), {median([c['littles'] for c in ceiling]):.0f} calls/s; cores / a call's CPU, "
              f"{median([c['cpu'] for c in ceiling]):.0f}; calls / ideal, {median([c['ideal'] for c in ceiling]):.0f}): "
              f"{median([c['bound'] for c in ceiling]):.0f} calls/s, so at most "
              f"{median([c['bound'] / o['per_s'] for c, o in zip(ceiling, ones)]):.2f}x one worker; measured "
              f"{median([m['per_s'] for m in many]):.0f} calls/s, "
              f"{median([m['per_s'] / c['bound'] for c, m in zip(ceiling, many)]):.0%} of that ceiling")
        print(f"  the same with the fake server's CPU counted (it runs on the same cores): "
              f"{median([m['floor_with_server'] for m in many]):.3f}; wall / max(ideal, CPU / the {available:.2f} cores "
              f"measured below): {n} workers {median([m['floor_available'] for m in many]):.3f}, 1 worker "
              f"{median([o['floor_available'] for o in ones]):.3f}")
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
