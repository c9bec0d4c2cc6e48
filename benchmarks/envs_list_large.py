"""Issue 33: `envs list` of a 200,000-record file and `envs show` of a record with a 20 MB value,
this tree beside another (a checkout of main, say), in one run.

Run: PYTHONPATH=. .venv/bin/python benchmarks/envs_list_large.py [--records 200000] [--runs 1]
         [--other-tree /tmp/main-checkout]

It writes ProactiveEval-style records (`large_env_file.py`'s, of the samples' length) into
`<tmp>/big/recommendation/fair.json`, and one record whose user information is VALUE_MB MB of
words into `<tmp>/huge/persuasion/fair.json`, then runs each command as a person would, output
to a pipe that is read and counted (the table at COLUMNS=160), alternating the trees round by
round so drift hits both alike:

- `envs list --envs <big>`: the table;
- `envs list --json --envs <big>`: one JSON line per environment;
- `envs show proactiveeval/persuasion/fair/0 --envs <huge>` (stopped after --show-timeout s).

For each: wall seconds, the child's peak resident memory (ru_maxrss from wait4) and the bytes
it printed; medians per tree, and with `--other-tree` the other/this ratios side by side.
Each command runs from this small process (the files are written by a child: see
`make_files`), so its peak memory is its own. Figures for reference: no target (the tests assert what is printed, never how fast).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptyapp import other_tree_command  # noqa: E402

VALUE_MB = 20


def write_huge(root: Path) -> Path:
    folder = root / "huge" / "persuasion"
    folder.mkdir(parents=True)
    record = {"environment": {"user_information": "word " * (VALUE_MB * 1_000_000 // 5),
                              "trigger_factor": "They asked about walking."},
              "target": "Suggest a daily walk", "sub_target": ["Ask", "Suggest"], "topic": "Health"}
    (folder / "fair.json").write_text(json.dumps([record]), encoding="utf-8")
    return root / "huge"


def make_files(root: Path, records: int) -> tuple[Path, Path]:
    """Write both folders from a child process: a child started later inherits the peak resident
    memory of the process it is forked from (Linux keeps ru_maxrss across fork and exec), and
    building 200,000 records here would put ~700 MB under every figure."""
    code = ("import sys; from pathlib import Path; sys.argv[0] = '';"
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import envs_list_large as b;"
            f"b.write_records(Path({str(root)!r}), {records}); b.write_huge(Path({str(root)!r}))")
    subprocess.run([sys.executable, "-c", code], check=True)
    return root / "big", root / "huge"


def measure(command: list[str], home: Path, timeout: float) -> tuple[float, float, int, bool]:
    """(wall seconds, peak RSS in MB, bytes printed, finished before the timeout)."""
    env = dict(os.environ, COLUMNS="160", PROACTIVE_TUI_CONFIG=str(home / "config.toml"),
               PROACTIVE_TUI_DATA=str(home / "data"))
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    printed, finished = 0, True
    fd = proc.stdout.fileno()
    while True:  # read what it prints as it comes (a full pipe would stall it) until it closes its output
        left = timeout - (time.perf_counter() - start)
        if left <= 0:
            proc.kill()
            finished = False
            break
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        printed += len(chunk)
    _, _status, usage = os.wait4(proc.pid, 0)  # reaped here (not by Popen) for its own rusage
    proc.returncode = 0
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, printed, finished


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--other-tree", type=Path, metavar="PATH", help="also run another source tree (before/after)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a listing may take")
    parser.add_argument("--show-timeout", type=float, default=120.0, help="seconds `envs show` may take")
    args = parser.parse_args()
    trees = {"this": [sys.executable, "-m", "proactive_tui"]}
    if args.other_tree:
        trees["other"] = other_tree_command(args.other_tree)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        big, huge = make_files(root, args.records)
        size = (big / "recommendation" / "fair.json").stat().st_size / 1e6
        commands = {
            "envs list": (["envs", "list", "--envs", str(big)], args.timeout),
            "envs list --json": (["envs", "list", "--json", "--envs", str(big)], args.timeout),
            f"envs show ({VALUE_MB} MB value)": (["envs", "show", "proactiveeval/persuasion/fair/0", "--envs", str(huge)],
                                                 args.show_timeout),
        }
        results: dict[tuple[str, str], list[tuple[float, float, int, bool]]] = {}
        for i in range(args.runs):
            order = list(trees) if i % 2 == 0 else list(trees)[::-1]
            for what, (argv, timeout) in commands.items():
                for tree in order:
                    row = measure(trees[tree] + argv, home, timeout)
                    results.setdefault((what, tree), []).append(row)
                    note = "" if row[3] else f"  (stopped after {timeout:.0f} s)"
                    print(f"  run {i + 1} {tree:<5} {what:<26} {row[0]:8.2f} s {row[1]:8.0f} MB {row[2]:>12,} bytes{note}",
                          flush=True)
    print(f"\n{args.records:,} records ({size:.0f} MB file); `envs show` of one record with a {VALUE_MB} MB value; "
          f"medians of {args.runs} run(s)")
    header = f"{'command':<28}" + "".join(f"{t + ' s':>10}{t + ' MB':>10}{t + ' printed':>16}" for t in trees)
    if "other" in trees:
        header += f"{'time other/this':>17}{'memory other/this':>19}"
    print(header)
    for what in commands:
        line = f"{what:<28}"
        med = {}
        for tree in trees:
            rows = results[(what, tree)]
            med[tree] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
            done = all(r[3] for r in rows)
            line += f"{med[tree][0]:>9.2f}{'' if done else '+'}{'' if not done else ' '}"[:10].rjust(10)
            line += f"{med[tree][1]:>10.0f}{statistics.median(r[2] for r in rows):>16,.0f}"
        if "other" in trees:
            line += f"{med['other'][0] / med['this'][0]:>16.2f}x{med['other'][1] / med['this'][1]:>18.2f}x"
        print(line)
    print("(a + after the seconds: stopped at the timeout, still printing; the ratio is then a lower bound)")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
