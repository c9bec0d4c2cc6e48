"""Peak memory of the default embedded session against bare llama-cpp-python on the same calls.

Run: PYTHONPATH=. .venv/bin/python benchmarks/local_memory.py [--env ENV_ID] [--turns N] [--threads N] [--rounds R]

1. Session: `proactive-tui run ENV --max-turns N` (default proactiveeval/system_operation/fair/0,
   one turn: every seat `local/smollm2`, planning and judging included), in a child process of its
   own, as a person runs it, with its store in a temporary folder. A recorder around the worker's
   one generation function writes down every call: the prompt tokens llama.cpp evaluated and how
   many tokens it produced. Its peak RSS is the child's `ru_maxrss`.
2. Bare: a child process that imports llama-cpp-python alone, loads the same GGUF with the same
   constructor arguments (context size, threads, seed) and replays the session's calls in order
   through `Llama.generate`, greedy, taking as many tokens as each call produced: no project code,
   no litellm, no prompt cache, no grammar. Its peak RSS likewise.
3. The ratio session / bare. Target: <= 1.5 (issue 35, point 5).

Each round runs the session and then the bare replay of that session's calls; with --rounds > 1
the ratio quoted is the worst round's. Both children use the same thread count (given, or chosen
once here from the free cores) so their compute buffers match. Memory hardly depends on machine
load, wall times do: they are printed for reference, with the load average.
Figures on the default call (6 calls), same script: before issue 35 840 MB against 383 MB bare
(2.19x): litellm imported (~210 MB before the model even loaded), and llama-cpp-python's RAM prompt
cache holding copied states (96 MB by the end of one turn) plus three transient copies per save.
After: 444 MB (1.16x): no litellm, the cache's states in files (`llm.local.state_cache`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_calls import ROOT, CallLog, calls_from_json, generate_like, project_on_path

TARGET = 1.5
DEFAULT_ENV = "proactiveeval/system_operation/fair/0"


# -- the children -----------------------------------------------------------------------------

def child_session(calls_out: str, env_id: str, turns: int) -> int:
    """Run the CLI's `run` in this process, recording every generation's prompt and length."""
    project_on_path()
    log = CallLog()
    log.install()
    from proactive_tui.cli.main import main

    code = main(["run", env_id, "--max-turns", str(turns)])
    Path(calls_out).write_text(json.dumps({"calls": log.to_json(), "litellm_imported": "litellm" in sys.modules}))
    return int(code or 0)


def child_bare(calls_in: str, model_path: str, n_ctx: int, threads: int) -> int:
    """llama-cpp-python alone: load the model as the project does, replay the recorded calls."""
    from llama_cpp import Llama

    calls = calls_from_json(json.loads(Path(calls_in).read_text())["calls"])
    llama = Llama(model_path=model_path, n_ctx=n_ctx, n_threads=threads, verbose=False, seed=0)
    generate_like(llama, calls)
    return 0


# -- the parent -------------------------------------------------------------------------------

def measure(args: list[str], env: dict[str, str], log: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit code) of one child running this script with `args`."""
    start = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, __file__, *args], stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=env.get("PROACTIVE_TUI_DATA", None))
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - start, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default=DEFAULT_ENV)
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--threads", type=int, help="llama.cpp threads for both (default: the free cores, chosen once)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--child", choices=["session", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--calls", help=argparse.SUPPRESS)
    parser.add_argument("--model-path", help=argparse.SUPPRESS)
    parser.add_argument("--n-ctx", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "session":
        raise SystemExit(child_session(args.calls, args.env, args.turns))
    if args.child == "bare":
        raise SystemExit(child_bare(args.calls, args.model_path, args.n_ctx, args.threads))

    project_on_path()
    from proactive_tui.llm.local.loader import N_CTX, choose_threads, model_path

    threads = args.threads or choose_threads().threads
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="local-memory-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               "PROACTIVE_TUI_DATA": str(folder / "data"), "PROACTIVE_TUI_CONFIG": str(folder / "config.toml"),
               "PROACTIVE_TUI_LOCAL_THREADS": str(threads)}
        (folder / "data").mkdir()
        print(f"{args.env}, {args.turns} turn(s), every seat local/smollm2, {threads} llama.cpp thread(s); "
              f"load average at the start {os.getloadavg()[0]:.2f}")
        for round_ in range(1, args.rounds + 1):
            calls = folder / f"calls-{round_}.json"
            session_mb, session_s, code = measure(
                ["--child", "session", "--calls", str(calls), "--env", args.env, "--turns", str(args.turns)],
                env, folder / "session.log")
            if code != 0 or not calls.exists():
                print((folder / "session.log").read_text()[-3000:], file=sys.stderr)
                raise SystemExit(f"the session failed (exit {code})")
            recorded = json.loads(calls.read_text())
            n_calls = len(recorded["calls"])
            prompt = sum(len(c["prompt"]) for c in recorded["calls"])
            completion = sum(c["completion_tokens"] for c in recorded["calls"])
            bare_mb, bare_s, code = measure(
                ["--child", "bare", "--calls", str(calls), "--model-path", str(model_path()),
                 "--n-ctx", str(N_CTX), "--threads", str(threads)], env, folder / "bare.log")
            if code != 0:
                print((folder / "bare.log").read_text()[-3000:], file=sys.stderr)
                raise SystemExit(f"the bare replay failed (exit {code})")
            ratio = session_mb / bare_mb
            worst = max(worst, ratio)
            print(f"round {round_}: {n_calls} calls, {prompt:,} prompt + {completion:,} completion tokens; "
                  f"litellm imported by the session: {'yes' if recorded['litellm_imported'] else 'no'}")
            print(f"  session peak RSS {session_mb:.0f} MB ({session_s:.0f} s), bare llama-cpp-python "
                  f"{bare_mb:.0f} MB ({bare_s:.0f} s), ratio {ratio:.2f}")
    print(f"peak RSS session / bare llama-cpp-python, worst round: {worst:.2f}   (target <= {TARGET})")
    print(f"load average at the end {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
