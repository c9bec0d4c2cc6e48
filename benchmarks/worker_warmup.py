"""Worker warm-up: what a batch worker forked from a parent that did litellm's first-call set-up
(`gateway.warm_up_for_fork`, which `WorkerPool.start` runs before the fork) costs, against one
forked from a parent that only imported litellm (every worker before 2026-12-06), in one run.

Run: PYTHONPATH=. .venv/bin/python benchmarks/worker_warmup.py [--rounds 3] [--calls 20]

Each round runs both arms, alternating which goes first, each in a fresh interpreter: the parent
imports the CLI and litellm (as `eval` has when it forks), warms up or not, then forks one child
that makes `--calls` gateway calls one after another against the project's fake server (0 ms).
Printed per arm: the parent's warm-up (CPU), the child's first call (CPU), its CPU for all the
calls, and its private memory after them (Linux `/proc/self/smaps_rollup` Private_Dirty: pages
the child wrote, which it no longer shares with the parent; a worker's own cost). Then the
medians and the ratios cold / warm: what each worker no longer does, times the workers a batch
forks (the usable cores, by default).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ARM = r"""
import asyncio, json, os, sys, time
from proactive_tui.cli.main import build_parser; build_parser()
from proactive_tui.llm.gateway import Gateway, litellm_module, warm_up_for_fork
from proactive_tui.llm.settings import ModelSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer

litellm_module()
calls = int(sys.argv[2])

def private_mb():
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("Private_Dirty:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None

with FakeOpenAIServer(keep_alive=True) as server:
    seat = ModelSettings(model="openai/bench", api_base=server.base_url)
    started = time.process_time()
    if sys.argv[1] == "warm":
        warm_up_for_fork([seat])
    warm_cpu = time.process_time() - started
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        async def run():
            gateway = Gateway()
            t = time.process_time()
            await gateway.complete(seat, [{"role": "user", "content": "hello"}])
            first = time.process_time() - t
            for _ in range(calls - 1):
                await gateway.complete(seat, [{"role": "user", "content": "hello"}])
            return first, time.process_time() - t
        first, total = asyncio.run(run())
        os.write(write, json.dumps({"first": first, "total": total, "private_mb": private_mb()}).encode())
        os._exit(0)
    os.close(write)
    child = json.loads(os.read(read, 4096).decode())
    os.waitpid(pid, 0)
    print(json.dumps({"warm_cpu": warm_cpu, **child}))
"""


def arm(mode: str, calls: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", ARM, mode, str(calls)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"the {mode} arm failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"cold": [], "warm": []}
    for r in range(args.rounds):
        for mode in (("cold", "warm") if r % 2 == 0 else ("warm", "cold")):
            runs[mode].append(arm(mode, args.calls))
    median = statistics.median
    print(f"a worker forked from the parent, {args.calls} gateway calls against the fake server, {args.rounds} rounds")
    for mode, rows in runs.items():
        memory = [row["private_mb"] for row in rows if row["private_mb"] is not None]
        print(f"  parent {'warmed up (gateway.warm_up_for_fork)' if mode == 'warm' else 'only imported litellm'}: "
              f"warm-up {median(row['warm_cpu'] for row in rows):.3f} s CPU in the parent; the worker's first call "
              f"{median(row['first'] for row in rows):.3f} s CPU, all {args.calls} {median(row['total'] for row in rows):.3f} s"
              + (f", private memory after them {median(memory):.0f} MB" if memory else ""))
    cold, warm = runs["cold"], runs["warm"]
    first = median(row["first"] for row in cold) / max(1e-9, median(row["first"] for row in warm))
    saved_cpu = median(row["total"] for row in cold) - median(row["total"] for row in warm)
    line = (f"worker warm-up: a worker's first call costs {first:.1f}x the CPU when its parent did not warm up; "
            f"each worker saves {saved_cpu:.2f} s of CPU")
    memory_cold = [row["private_mb"] for row in cold if row["private_mb"] is not None]
    memory_warm = [row["private_mb"] for row in warm if row["private_mb"] is not None]
    if memory_cold and memory_warm:
        line += (f" and {median(memory_cold) - median(memory_warm):.0f} MB of private memory "
                 f"({median(memory_cold) / max(1e-9, median(memory_warm)):.1f}x); the parent pays "
                 f"{median(row['warm_cpu'] for row in warm):.2f} s once")
    print(line)


if __name__ == "__main__":
    main()
