"""Memory over a long batch: 1,000 short ProactiveEval sessions in one process stay flat.

Run: PYTHONPATH=. .venv/bin/python benchmarks/batch_memory.py [--sessions 1000] [--concurrency 8]

The batch command (`run_batch_eval`, with the session store on and the batch folder written as
usual) runs every session with scripted seats (tests/engine_helpers: instant, no model), so what
grows, if anything, is ours: runner, records, store, folder, progress. Peak RSS is read when the
101st session is built (the first 100 have run or are running) and again at the end. Target: the
final peak <= 1.5x the peak after the first 100.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TARGET = 1.5
FIRST = 100


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000, help="rounded up to a multiple of 24")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="batch-memory-"))
    atexit.register(shutil.rmtree, work, True)  # its folders and stores: gone when it ends, whatever ended it
    os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")
    os.environ["PROACTIVE_TUI_DATA"] = str(work / "data")

    from engine_helpers import scripted_agent, scripted_judge, scripted_user
    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.cli.main import build_parser
    from proactive_tui.core.spec import build_session

    built = [0]
    first_peak: list[float] = []
    last_peak: list[float] = []
    repeats = -(-args.sessions // 24)
    total = repeats * 24

    def build(spec, env, gateway):
        built[0] += 1
        if built[0] == FIRST + 1:
            first_peak.append(peak_mb())
        if built[0] == total:
            last_peak.append(peak_mb())
        seats = {"agent": scripted_agent(), "user": scripted_user(), "judge": scripted_judge()}
        return build_session(spec, env, gateway, seats=seats)

    argv = ["eval", "run", "proactiveeval", "--agreeableness", "low", "--repeats", str(repeats), "--max-turns", "2",
            "--concurrency", str(args.concurrency), "--out", str(work / "out")]
    ns = build_parser().parse_args(argv)
    ns.envs = list(getattr(ns, "sub_envs", []) or [])
    start = time.perf_counter()
    code = run_batch_eval(ns, build=build)
    wall = time.perf_counter() - start
    final = peak_mb()
    first = first_peak[0] if first_peak else final
    print(f"\n{built[0]} sessions (exit {code}) in {wall:.1f} s, --concurrency {args.concurrency}, store on")
    print(f"peak RSS after the first {FIRST}: {first:.1f} MB")
    print(f"peak RSS as the last session starts: {last_peak[0] if last_peak else final:.1f} MB (before the report "
          "reads every record back)")
    print(f"peak RSS after all {built[0]}, the report written: {final:.1f} MB")
    ratio = final / first
    print(f"ratio peak after all / after {FIRST}: {ratio:.3f}  (target <= {TARGET}: {'OK' if ratio <= TARGET else 'OVER'})")


if __name__ == "__main__":
    main()
