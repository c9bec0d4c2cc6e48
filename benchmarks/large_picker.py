"""Issue 35 point 6: the picker with 100,000 environment records: first draw, peak memory, quit.

Run: PYTHONPATH=. .venv/bin/python benchmarks/large_picker.py [--records 100000] [--runs 2]

It writes ProactiveEval-style records (`large_env_file.py`'s, of the samples' length) into
`<tmp>/big/recommendation/fair.json` and, alternating round by round, starts
`python -m proactive_tui --envs <that folder>` and, as the reference, `python -m proactive_tui`
with the bundled environments only, each on a real pseudo-terminal (`ptyapp.py`). For each run:

- first draw: process start to a picker that answers a key (`r` flips the preview title), as
  `startup.py` measures it;
- peak memory: the process's peak resident set (VmHWM in /proc) once the picker has answered;
- quit: ctrl+q to the process having exited (what a person waits for before their shell is back).

A start with a fresh data folder (nothing cached) is measured first, then `--runs` starts that
find what the earlier start left behind, as a person's second and later starts do. The first start
draws the picker before the large file is indexed (`envs.catalog.LATER_FROM`: it is indexed after
the first frame, in one streaming pass); for it the time until the large file is listed (the
list's border title shows every environment) and the process's peak memory by then are printed too.
Targets (issue 35): first draw <= 3 s, peak <= 300 MB, quit < 1 s, with the large file.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from large_env_file import write_records  # noqa: E402
from ptyapp import APP_COMMAND, CSI, HIDDEN, SHOWN, PtyApp, reference_data  # noqa: E402

TIMEOUT_S = 120.0


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_once(command: list[str], home: Path, listed: bytes | None = None) -> tuple[float, ...]:
    """(seconds to the first answered key, peak RSS in MB by then, seconds from ctrl+q to exit);
    with `listed` (the list's border title with every environment), also the seconds until the
    terminal shows it and the peak RSS by then."""
    app = PtyApp(command, home)
    try:
        painted = app.wait_for(SHOWN, app.started + TIMEOUT_S)
        if painted is None:
            raise SystemExit(f"{command} did not paint within {TIMEOUT_S:.0f} s")
        app.press(b"r")
        answered = app.wait_for(HIDDEN, painted + TIMEOUT_S)
        if answered is None:
            raise SystemExit(f"{command} did not answer `r` within {TIMEOUT_S:.0f} s")
        peak = peak_mb(app.proc.pid)
        extra: tuple[float, ...] = ()
        if listed is not None:
            seen = listed in CSI.sub(b"", bytes(app.buffer))
            at = time.perf_counter() if seen else app.wait_for(listed, answered + TIMEOUT_S)
            if at is None:
                raise SystemExit(f"{command} did not list every environment within {TIMEOUT_S:.0f} s")
            extra = (at - app.started, peak_mb(app.proc.pid))
        pressed = time.perf_counter()
        app.press(b"\x11")
        while app.proc.poll() is None and time.perf_counter() - pressed < TIMEOUT_S:
            try:
                app._read(0.01)
            except RuntimeError:  # the pty closed: the app is going or gone
                app.proc.wait(TIMEOUT_S)
                break
        quit_s = time.perf_counter() - pressed
        return (answered - app.started, peak, quit_s, *extra)
    finally:
        if app.proc.poll() is None:
            os.killpg(app.proc.pid, signal.SIGKILL)
        app.proc.wait()
        os.close(app.master)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2, help="starts after the first (which finds no cache)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        big = write_records(Path(tmp), args.records)
        size = (big / "recommendation" / "fair.json").stat().st_size / 1e6
        commands = {"large": APP_COMMAND + ["--envs", str(big)], "bundled": APP_COMMAND}
        run_once(commands["bundled"], home)  # .pyc files and the page cache warm
        total = len(reference_data()[0]) + args.records
        first = run_once(commands["large"], home, listed=f"Environments ({total})".encode())
        print(f"  first start (nothing cached)  large   draw {first[0]:6.2f} s  peak {first[1]:6.0f} MB  quit {first[2]:5.2f} s"
              f"  (all {total:,} listed at {first[3]:.2f} s, peak by then {first[4]:.0f} MB)", flush=True)
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for i in range(max(1, args.runs)):
            for name in (list(commands) if i % 2 == 0 else list(commands)[::-1]):
                row = run_once(commands[name], home)
                results[name].append(row)
                print(f"  run {i + 1:<26}{name:<8}draw {row[0]:6.2f} s  peak {row[1]:6.0f} MB  quit {row[2]:5.2f} s",
                      flush=True)
    print(f"\n{args.records:,} ProactiveEval records ({size:.0f} MB file) beside the bundled environments; "
          f"medians of {args.runs} later start(s), on a pty")
    med = {name: tuple(statistics.median(r[k] for r in rows) for k in range(3)) for name, rows in results.items()}
    for name, (draw, peak, quit_s) in med.items():
        print(f"{name:<10}draw {draw:6.2f} s  peak {peak:6.0f} MB  quit {quit_s:5.2f} s")
    draw, peak, quit_s = med["large"]
    print(f"first draw with the large file: {draw:.2f} s  (target <= 3: {'OK' if draw <= 3 else 'OVER'})")
    print(f"peak memory with the large file: {peak:.0f} MB  (target <= 300: {'OK' if peak <= 300 else 'OVER'})")
    print(f"quit with the large file: {quit_s:.2f} s  (target < 1: {'OK' if quit_s < 1 else 'OVER'})")
    print(f"first start (nothing cached): draw {first[0]:.2f} s, peak {first[1]:.0f} MB, quit {first[2]:.2f} s "
          f"(targets 3 s, 300 MB, 1 s: {'OK' if first[0] <= 3 and first[1] <= 300 and first[2] < 1 else 'OVER'}); "
          f"the large file indexed in the background and listed at {first[3]:.2f} s, peak by then {first[4]:.0f} MB")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
