"""Start-up time of the playground vs a bare Textual app showing the same environments.

Run: .venv/bin/python benchmarks/startup.py [--runs 7]

Each run spawns a fresh interpreter (headless Textual driver, no terminal needed) and measures
the wall time from just before the spawn to the moment the first screen has mounted and
refreshed; the child writes `time.time()` to a ready file at that moment and exits.

- proactive-tui: `ProactiveApp` (config, themes, environments, picker), with
  PROACTIVE_TUI_NO_PRELOAD=1 so the litellm preload thread does not compete for the CPU. The
  app's own `PROACTIVE_TUI_READY_FILE` hook writes the marker.
- baseline: a bare `App` with a `DataTable` of the same environments (also via `load_default`).

Runs are interleaved so drift hits both alike; medians are printed with the ratio.
Target: proactive-tui / baseline <= 1.3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROACTIVE = """
from proactive_tui.ui.app import ProactiveApp

class BenchApp(ProactiveApp):
    def _picker_ready(self):
        super()._picker_ready()  # writes PROACTIVE_TUI_READY_FILE
        self.exit()

BenchApp().run(headless=True, size=(120, 40))
"""

BASELINE = """
import os, time
from pathlib import Path
from textual.app import App
from textual.widgets import DataTable
from proactive_tui.envs import load_default

class Baseline(App):
    def compose(self):
        yield DataTable()

    def on_mount(self):
        envs = load_default().environments
        table = self.query_one(DataTable)
        table.add_columns("id", "family", "domain", "tier", "title")
        for env in envs:
            table.add_row(env.id, env.family, env.domain, env.tier or "-", env.title)
        self.call_after_refresh(self.ready)

    def ready(self):
        Path(os.environ["PROACTIVE_TUI_READY_FILE"]).write_text(repr(time.time()))
        self.exit()

Baseline().run(headless=True, size=(120, 40))
"""


def run_once(code: str, home: Path) -> tuple[float, float, float]:
    """(seconds to ready, seconds to exit, peak RSS in MB) for one fresh interpreter."""
    ready = home / "ready"
    ready.unlink(missing_ok=True)
    env = dict(
        os.environ,
        PROACTIVE_TUI_READY_FILE=str(ready),
        PROACTIVE_TUI_NO_PRELOAD="1",
        PROACTIVE_TUI_CONFIG=str(home / "config.toml"),
        PROACTIVE_TUI_DATA=str(home / "data"),
    )
    start = time.time()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    total = time.time() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or not ready.exists():
        raise SystemExit(f"child failed ({proc.returncode}): {proc.stderr.read().decode(errors='replace')}")
    proc.stderr.close()
    return float(ready.read_text()) - start, total, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per app (>= 5)")
    args = parser.parse_args()
    runs = max(5, args.runs)
    results: dict[str, list[tuple[float, float, float]]] = {"baseline": [], "proactive-tui": []}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        run_once(BASELINE, home)  # warm the file cache and .pyc files for both
        run_once(PROACTIVE, home)
        for i in range(runs):
            order = [("baseline", BASELINE), ("proactive-tui", PROACTIVE)]
            if i % 2:
                order.reverse()
            for name, code in order:
                results[name].append(run_once(code, home))
    medians = {name: [statistics.median(r[k] for r in rows) for k in range(3)] for name, rows in results.items()}
    print(f"start-up to first screen ready, median of {runs} interleaved runs (headless, fresh interpreter each)")
    print(f"{'':<16}{'ready (s)':>10}{'exit (s)':>10}{'peak RSS (MB)':>15}")
    for name, (ready, total, rss) in medians.items():
        print(f"{name:<16}{ready:>10.3f}{total:>10.3f}{rss:>15.1f}")
    ratio = medians["proactive-tui"][0] / medians["baseline"][0]
    print(f"ratio proactive-tui / baseline (ready): {ratio:.2f}  (target <= 1.3: {'OK' if ratio <= 1.3 else 'OVER'})")


if __name__ == "__main__":
    main()
