"""Start-up as a person waits for it: process start to a picker that answers a key.

Run: .venv/bin/python benchmarks/startup.py [--runs 9]

Each run starts a fresh interpreter on a real pseudo-terminal (see `ptyapp.py`): for
proactive-tui the console script's own path, `python -m proactive_tui`, with everything a person
gets by default (the CLI, config, themes, environments, the picker, and the model preload that
follows the first paint); for the reference a bare Textual app with a `DataTable` of the same
environments that imports nothing of the project (the rows are written into its source by this
script, `ptyapp.bare_command`). Both first paint "reference shown"; at that moment `r` is pressed once, as a
person would on seeing the screen, and the time measured ends when the terminal receives the
answer ("reference hidden"). So it covers interpreter start, imports, the first paint and the
first key handled (which a first paint alone would not: a thread started after the paint can
still hold the key up).

Runs alternate between the two apps so drift hits both alike; medians and the ratio are printed.
Target: proactive-tui / bare <= 1.3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptyapp import APP_COMMAND, HIDDEN, SHOWN, PtyApp, bare_command, other_tree_command  # noqa: E402

TIMEOUT_S = 30.0


def run_once(command: list[str], home: Path) -> tuple[float, float, float]:
    """(seconds to the first paint, seconds to the first answered key, CPU seconds used by then)
    from spawn, one fresh process."""
    app = PtyApp(command, home)
    try:
        painted = app.wait_for(SHOWN, app.started + TIMEOUT_S)
        if painted is None:
            raise SystemExit(f"{command} did not paint its first screen within {TIMEOUT_S:.0f} s")
        app.press(b"r")
        answered = app.wait_for(HIDDEN, painted + TIMEOUT_S)
        if answered is None:
            raise SystemExit(f"{command} did not answer `r` within {TIMEOUT_S:.0f} s")
        return painted - app.started, answered - app.started, app.cpu_seconds()
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per app (>= 5)")
    parser.add_argument("--other-tree", type=Path, metavar="PATH",
                        help="also run the app from another source tree (e.g. a checkout of main), for before/after in one run")
    args = parser.parse_args()
    runs = max(5, args.runs)
    commands = {"proactive-tui": APP_COMMAND, "bare textual": bare_command()}
    if args.other_tree:
        commands["other tree"] = other_tree_command(args.other_tree)
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for command in commands.values():  # warm .pyc files and the page cache for each
            run_once(command, home)
        for i in range(runs):
            names = list(commands) if i % 2 == 0 else list(reversed(commands))
            for name in names:
                results[name].append(run_once(commands[name], home))
    print(f"process start to first answered key, {runs} alternating runs each (pty, fresh interpreter)")
    print(f"{'':<16}{'first paint (s)':>16}{'key answered (s)':>18}{'min':>8}{'max':>8}{'CPU by then (s)':>17}")
    medians, cpu = {}, {}
    for name, rows in results.items():
        answered = [row[1] for row in rows]
        medians[name] = statistics.median(answered)
        cpu[name] = statistics.median(row[2] for row in rows)
        paint = statistics.median(row[0] for row in rows)
        print(f"{name:<16}{paint:>16.3f}{medians[name]:>18.3f}{min(answered):>8.3f}{max(answered):>8.3f}{cpu[name]:>17.2f}")
    ratio = medians["proactive-tui"] / medians["bare textual"]
    # Each round runs both apps back to back, so the ratio within a round sees one machine state;
    # its median is steadier than the ratio of medians when other jobs come and go.
    paired = statistics.median(ours[1] / bare[1] for ours, bare in zip(results["proactive-tui"], results["bare textual"]))
    print(f"ratio of medians proactive-tui / bare textual (key answered): {ratio:.2f}")
    print(f"median ratio within a round (key answered): {paired:.2f}  (target <= 1.3: {'OK' if paired <= 1.3 else 'OVER'})")
    print(f"ratio of CPU time used by then: {cpu['proactive-tui'] / cpu['bare textual']:.2f}")
    if "other tree" in medians:
        other = statistics.median(o[1] / b[1] for o, b in zip(results["other tree"], results["bare textual"]))
        print(f"median ratio within a round, other tree / bare textual (key answered): {other:.2f}")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs; figures stretch on a busy machine)")


if __name__ == "__main__":
    main()
