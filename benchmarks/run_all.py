"""Run every benchmark script in benchmarks/ and print one table of their ratios.

Run: PYTHONPATH=. .venv/bin/python benchmarks/run_all.py [--full] [--only NAME ...] [--timeout 900]

Each script runs in its own interpreter (its figures are its own, and one that fails or times
out costs its row, not the table), with its quick options unless `--full`. Its output is read for
the lines that state a figure against a target, `what: X ... (target <= Y ...)` (a ratio, a
difference in ms, a time per turn: the form every script prints, the figure being the first
number after the last colon before "target"); a script with none
(figures for reference only) gets a row with "-". OK when the figure meets its target, else OVER.
Scripts that are helpers, not benchmarks (`ptyapp.py`, `light_server.py`), are listed in SKIP; those that need the
embedded model's weights (`local_session.py`, `local_memory.py`) in FULL_ONLY, run only with `--full`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SKIP = {"run_all.py": "this script", "ptyapp.py": "a helper of startup.py and responsiveness.py",
        "light_server.py": "batch_throughput.py's stand-in for a provider",
        "minimal_client.py": "batch_throughput.py's reference client"}
FULL_ONLY = {"local_session.py": "needs the embedded model's weights and minutes of CPU",
             "local_memory.py": "needs the embedded model's weights and minutes of CPU"}
QUICK: dict[str, list[str]] = {
    "gateway_overhead.py": ["--calls", "100", "--rounds", "4"],
    "batch_throughput.py": ["--sessions", "48", "--capacity-sessions", "192"],
    "batch_memory.py": ["--sessions", "480"],
    "startup.py": ["--runs", "5"],
    "responsiveness.py": ["--runs", "1"],
    "import_cost.py": ["--runs", "5"],
    "large_env_file.py": ["--runs", "1", "--records", "10000"],
    "envs_list_large.py": ["--records", "20000", "--show-timeout", "60"],
    "large_picker.py": ["--runs", "1"],
    "worker_warmup.py": ["--rounds", "1"],
}
"""Options that make a script's run short; the figures are noisier than a full run's."""
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
TARGET = re.compile(r"target\s*(?P<op><=|<|>=)\s*(?P<value>\d+(?:\.\d+)?)", re.IGNORECASE)
"""A ceiling (`<=`, `<`) or a floor (`>=`: a speed-up such as batch_throughput.py's N workers over one)."""


class Row(BaseModel):
    """One figure of one script, as the table prints it."""

    script: str
    what: str
    ratio: float | None = None
    target: str = "-"
    verdict: str = "-"
    """OK, OVER, or why there is no figure (failed, timed out, skipped)."""


def figures(script: str, output: str) -> list[Row]:
    """The figure lines of a script's output: those that name a target."""
    rows = []
    for line in output.splitlines():
        target = TARGET.search(line)
        if not target:
            continue
        head = line[:target.start()]
        what, colon, rest = head.rpartition(":")
        if colon and "ratio" in rest.lower():  # "...: 1.23 s   ratio 1.02 (target ...)": the ratio is the figure
            cut = rest.lower().rindex("ratio")
            what, rest = what + ": " + rest[:cut].strip() + " ratio", rest[cut + 5:]
        number = NUMBER.search(rest) if colon else None
        if number is None:
            continue
        value, limit = float(number.group()), float(target["value"])
        ok = {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[target["op"]]
        rows.append(Row(script=script, what=what.strip()[:60], ratio=value,
                        target=f"{target['op']} {target['value']}", verdict="OK" if ok else "OVER"))
    return rows


def run(script: Path, full: bool, timeout: float) -> tuple[list[Row], float]:
    args = [] if full else QUICK.get(script.name, [])
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return [Row(script=script.name, what="-", verdict=f"timed out after {timeout:g} s")], time.perf_counter() - start
    took = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1][:70]
        return [Row(script=script.name, what="-", verdict=f"failed ({done.returncode}): {last}")], took
    return figures(script.name, done.stdout) or [Row(script=script.name, what="(no targeted figure)")], took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="every script with its default options")
    parser.add_argument("--only", nargs="*", default=[], metavar="NAME", help="these scripts only (file names)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds allowed per script")
    args = parser.parse_args()
    rows: list[Row] = []
    for script in sorted(HERE.glob("*.py")):
        if script.name.startswith("_") or script.name in SKIP or (args.only and script.name not in args.only):
            continue
        if script.name in FULL_ONLY and not args.full:
            rows.append(Row(script=script.name, what="-", verdict="skipped: " + FULL_ONLY[script.name]))
            continue
        print(f"running {script.name} ...", file=sys.stderr, flush=True)
        found, took = run(script, args.full, args.timeout)
        print(f"  {took:.0f} s", file=sys.stderr, flush=True)
        rows.extend(found)
    header = ("script", "what", "ratio", "target", "OK/OVER")
    cells = [(r.script, r.what, "-" if r.ratio is None else f"{r.ratio:.3f}", r.target, r.verdict) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)))
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)"
              f"{'' if args.full else '; quick options: figures are noisier than a full run'}")


if __name__ == "__main__":
    main()
