"""Batch throughput: ProactiveEval sessions through `eval` against the fake server at 100 ms a call.

Run: PYTHONPATH=. .venv/bin/python benchmarks/batch_throughput.py [--sessions 120] [--concurrency 32]

The batch command itself (`run_batch_eval`: planning, the runner, the store, the folder, the
report) runs in this process against a fake server (a child process) that answers every call after `--latency`
seconds; every agent, user and judge seat is an `openai/` model at that server. Calls are
counted per session (a context variable set as each session is built, read by a counting wrapper
around `litellm.acompletion`), so the ideal wall time is

    max(total calls x latency / concurrency, the longest session's calls x latency)

(all seats busy all the time, or the longest session end to end; a session's judge calls overlap
its dialogue, so the second term is conservative). Printed: the batch wall time, the ideal and
their ratio (target <= 1.15), excluding process start; process start (a fresh interpreter to the
CLI parsed and litellm imported, ready to plan) on its own line, measured in a child process.
The process's CPU time during the batch is printed too: litellm spends about 11 ms of CPU on a
whole reply here (30 ms streamed; a batch asks for whole replies unless `--stream`), so at 100 ms a
call one process saturates its core at about 9 calls in flight, long before 32. The last line
divides the wall time by max(ideal, that CPU time): how much the batch loses beyond the CPU its
calls cost. The fake server keeps connections alive (`keep_alive`), as real servers do.
"""

from __future__ import annotations

import argparse
import contextvars
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=120, help="a multiple of 24 (the bundled environments)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--max-turns", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="batch-throughput-"))
    os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")
    os.environ["PROACTIVE_TUI_DATA"] = str(work / "data")

    total_start, imports = process_start()
    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.cli.main import build_parser
    from proactive_tui.core.spec import build_session
    from proactive_tui.llm.gateway import litellm_module

    litellm = litellm_module()  # imported before the clock: process start, on its own line
    session_of: contextvars.ContextVar[int] = contextvars.ContextVar("session_of", default=-1)
    calls: dict[int, int] = {}
    real = litellm.acompletion

    async def counted(*a, **kw):
        sid = session_of.get()
        calls[sid] = calls.get(sid, 0) + 1
        return await real(*a, **kw)

    def build(spec, env, gateway):
        session_of.set(len(calls))  # the session's task (and the tasks it starts) carry its number
        calls[len(calls)] = 0
        return build_session(spec, env, gateway)

    litellm.acompletion = counted
    repeats = max(1, args.sessions // 24)
    proc, base_url = start_server(args.latency)
    try:
        argv = ["eval", "run", "proactiveeval", "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                "--api-base", base_url, "--agreeableness", "low", "--repeats", str(repeats),
                "--max-turns", str(args.max_turns), "--concurrency", str(args.concurrency), "--out", str(work / "out")]
        ns = build_parser().parse_args(argv)
        ns.envs = list(getattr(ns, "sub_envs", []) or [])
        start, cpu_start = time.perf_counter(), time.process_time()
        code = run_batch_eval(ns, build=build)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=10)
    litellm.acompletion = real
    sessions = [n for sid, n in calls.items() if sid >= 0]
    total = sum(sessions)
    ideal = max(total * args.latency / args.concurrency, max(sessions) * args.latency)
    print(f"\n{len(sessions)} ProactiveEval sessions (exit {code}), {total} calls ({min(sessions)}-{max(sessions)} a "
          f"session), {args.latency * 1000:.0f} ms a call, --concurrency {args.concurrency}")
    print(f"process start (interpreter to CLI and litellm ready): {total_start:.2f} s, of which imports {imports:.2f} s")
    print(f"batch wall {wall:.2f} s, ideal {ideal:.2f} s = max({total} x {args.latency:g} / {args.concurrency}, "
          f"{max(sessions)} x {args.latency:g})")
    print(f"CPU of this process during the batch: {cpu:.2f} s ({cpu / total * 1000:.1f} ms a call; litellm's own "
          "share is what gateway_overhead.py calls bare): when it nears the wall time the batch is CPU-bound")
    ratio = wall / ideal
    print(f"ratio wall / ideal: {ratio:.3f}  (target <= {TARGET}: {'OK' if ratio <= TARGET else 'OVER'})")
    floor = max(ideal, cpu)  # one event loop: the process's CPU cannot overlap itself
    print(f"ratio wall / max(ideal, this process's CPU) = {wall / floor:.3f}: what the batch loses beyond the "
          f"CPU its calls need ({cpu / total * 1000:.1f} ms a call, most of it litellm's; one core bounds one process)")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
