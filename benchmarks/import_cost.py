"""Import cost of the UI app module vs Textual's own `textual.app`.

Run: .venv/bin/python benchmarks/import_cost.py [--runs 7]

Each run is a fresh `python -c "import ..."`; wall time from spawn to exit and the child's peak
RSS (from `os.wait4`, per child) are recorded, interleaved, and the medians printed with ratios.
It also checks the promise that matters for start-up: importing `proactive_tui.ui.app` leaves
litellm and llama_cpp out of `sys.modules` (the model layer is preloaded later, off the UI thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "import textual.app": "import textual.app",
    "import proactive_tui.ui.app": "import proactive_tui.ui.app",
}


def run_once(code: str) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one fresh interpreter running `code`."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{code!r} failed with exit code {proc.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def heavy_modules() -> list[str]:
    probe = (
        "import sys, json, proactive_tui.ui.app; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'llama_cpp', 'openai'})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per case (>= 5)")
    args = parser.parse_args()
    runs = max(5, args.runs)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    for code in CASES.values():  # warm .pyc files and the page cache
        run_once(code)
    for i in range(runs):
        names = list(CASES) if i % 2 == 0 else list(reversed(CASES))
        for name in names:
            results[name].append(run_once(CASES[name]))
    medians = {name: (statistics.median(t for t, _ in rows), statistics.median(m for _, m in rows)) for name, rows in results.items()}
    print(f"median of {runs} interleaved runs, fresh interpreter each")
    print(f"{'':<30}{'wall (s)':>10}{'peak RSS (MB)':>15}")
    for name, (wall, rss) in medians.items():
        print(f"{name:<30}{wall:>10.3f}{rss:>15.1f}")
    base, ours = medians["import textual.app"], medians["import proactive_tui.ui.app"]
    print(f"ratio ui.app / textual.app: wall {ours[0] / base[0]:.2f}, peak RSS {ours[1] / base[1]:.2f}")
    heavy = heavy_modules()
    print(f"litellm / llama_cpp / openai in sys.modules after `import proactive_tui.ui.app`: {heavy or 'none'}")
    if heavy:
        raise SystemExit("FAIL: the UI app module imports the model layer")


if __name__ == "__main__":
    main()
