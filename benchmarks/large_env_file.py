"""Issue 15: the picker with a 40,000-record environment file, beside the bundled environments alone.

Run: PYTHONPATH=. .venv/bin/python benchmarks/large_env_file.py [--runs 3] [--records 40000]
         [--other-tree /tmp/main-checkout --other-runs 1]

It writes ProactiveEval-style records (`<tmp>/big/recommendation/fair.json`: an `environment` with
`user_information` and `trigger_factor`, a `target`, `sub_target` steps and a `topic`, of the
samples' length) and, in one run, alternating the configurations round by round so drift hits all
alike, starts `python -m proactive_tui` on a real pseudo-terminal (`ptyapp.py`) with the bundled
environments only, and with `--envs <that folder>` too. For each it measures:

- start-up: process start to a picker that answers a key (the preview title turns to
  "reference hidden" after `r`, as `startup.py` measures it);
- a 5-letter filter: `/`, then the five letters of QUERY 80 ms apart (a quick typist), from the
  last letter to the terminal showing the filtered count in the list's border title
  ("Environments <matches>/<total>"; the matches are counted here with the same index). By
  default the first key goes the moment the picker answered `r`, while the picker still builds
  its filter haystacks in idle slices and the model layer preloads: the worst case.
  `--read-pause 2` waits that long first, as a person reading the screen would.

Printed: medians, the large/bundled ratio within each round, and with `--other-tree` (a checkout
of main, say: `git worktree add /tmp/main-checkout main`) the same for that tree and the
this-tree/other-tree ratios; the old tree needs half a minute to start and minutes to filter with
40,000 records, so `--other-runs` defaults to 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptyapp import HIDDEN, SHOWN, PtyApp, other_tree_command  # noqa: E402

QUERY = "music"
KEY_GAP_S = 0.08
NAMES = ("Amara", "Bartek", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ilse", "Joao", "Kaito", "Lucia",
         "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomasz", "Uma", "Viktor", "Wen", "Yusuf")
JOBS = ("nurse", "QA engineer", "teacher", "electrician", "accountant", "chef", "translator", "bus driver",
        "architect", "pharmacist", "journalist", "carpenter")
HOBBIES = ("bouldering", "sourdough baking", "trail running", "birdwatching", "chess", "pottery", "cycling",
           "film photography", "gardening", "salsa dancing", "astronomy", "knitting", "kayaking", "board games")
THINGS = ("shoes", "a laptop", "a rain jacket", "a tent", "a coffee grinder", "headphones", "a bicycle helmet",
          "a camera lens", "a yoga mat", "a desk chair", "a travel backpack", "running socks")
CITIES = ("Gdansk", "Porto", "Lagos", "Osaka", "Lyon", "Tartu", "Cusco", "Pune", "Leeds", "Graz", "Izmir", "Perth")


def record(i: int, rng: random.Random) -> dict:
    name, job, city = rng.choice(NAMES), rng.choice(JOBS), rng.choice(CITIES)
    hobby, other, thing = rng.choice(HOBBIES), rng.choice(HOBBIES), rng.choice(THINGS)
    extra = " On the way to work he listens to music and podcasts." if i % 37 == 0 else ""
    person = (f"{name} {i}, {rng.randint(19, 71)}, works as a {job} in {city}. They took up {hobby} "
              f"{rng.randint(2, 30)} months ago and now go twice a week, usually in the evenings. They also "
              f"enjoy {other} with friends at weekends. They are saving for a flat, so they compare prices on "
              f"forums before buying anything and like lightly used gear. They prefer practical, no-nonsense "
              f"advice over brand hype and dislike long sales pitches.{extra}")
    return {
        "environment": {"user_information": person,
                        "trigger_factor": f"{name} has just logged session {rng.randint(5, 90)} of {hobby} in "
                                          f"a tracker app and noted that {thing} let them down again."},
        "target": f"Recommend {thing} suited to {hobby} within a modest budget.",
        "sub_target": [f"Ask what went wrong with {thing} during {hobby}",
                       f"Explain what matters in {thing} for someone at their level",
                       "Suggest two or three options in their price range, new or second-hand",
                       "Offer to check local shops in the area for a sale"],
        "topic": f"{hobby} / {thing}",
    }


def write_records(root: Path, count: int) -> Path:
    rng = random.Random(15)
    folder = root / "big" / "recommendation"
    folder.mkdir(parents=True)
    (folder / "fair.json").write_text(json.dumps([record(i, rng) for i in range(count)]), encoding="utf-8")
    return root / "big"


def expected_title(extra: list[str]) -> tuple[bytes, int]:
    """The border title the filter ends on, and the number of environments (loaded here with the
    same loader and index the picker uses)."""
    from proactive_tui.envs import load_default
    from proactive_tui.ui.env_index import EnvironmentIndex

    envs = load_default(extra).environments
    found = len(EnvironmentIndex(envs).matches(QUERY))
    title = f"Environments {found}/{len(envs)}" if found else f"No match (0/{len(envs)})"
    return title.encode(), len(envs)


def run_once(command: list[str], home: Path, title: bytes, timeout: float, read_pause: float = 0.0) -> tuple[float, float, float]:
    """(seconds from spawn to the first answered key, seconds from the filter's last letter to
    the filtered list on screen, CPU seconds the app used)."""
    app = PtyApp(command, home)
    try:
        painted = app.wait_for(SHOWN, app.started + timeout)
        if painted is None:
            raise SystemExit(f"{command} did not paint within {timeout:.0f} s")
        app.press(b"r")
        answered = app.wait_for(HIDDEN, painted + timeout)
        if answered is None:
            raise SystemExit(f"{command} did not answer `r` within {timeout:.0f} s")
        if read_pause:
            app.drain(read_pause)
        app.press(b"/")
        app.drain(KEY_GAP_S)
        for letter in QUERY[:-1]:
            app.press(letter.encode())
            app.drain(KEY_GAP_S)  # keep reading: a full pty would stall the app's writes
        app.press(QUERY[-1].encode())
        last = time.perf_counter()
        done = app.wait_for(title, last + timeout * 8)
        if done is None:
            raise SystemExit(f"{command} did not show {title!r} within {timeout * 8:.0f} s of the last key")
        return answered - app.started, done - last, app.cpu_seconds()
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per configuration of this tree")
    parser.add_argument("--records", type=int, default=40_000)
    parser.add_argument("--other-tree", type=Path, metavar="PATH", help="also run the app from another source tree")
    parser.add_argument("--other-runs", type=int, default=1, help="runs per configuration of the other tree")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds allowed to start (x8 to filter)")
    parser.add_argument("--read-pause", type=float, default=0.0, metavar="S",
                        help="seconds between the picker answering a key and the first filter key")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        big = write_records(Path(tmp), args.records)
        titles = {"bundled": expected_title([]), "large": expected_title([str(big)])}
        trees = {"this tree": [sys.executable, "-m", "proactive_tui"]}
        if args.other_tree:
            trees["other tree"] = other_tree_command(args.other_tree)
        configs = {(tree, data): cmd + ([] if data == "bundled" else ["--envs", str(big)])
                   for tree, cmd in trees.items() for data in ("bundled", "large")}
        runs = {key: (args.runs if key[0] == "this tree" else args.other_runs) for key in configs}
        for tree in trees:  # warm .pyc files and the page cache
            run_once(configs[(tree, "bundled")], home, titles["bundled"][0], args.timeout)
        results: dict[tuple[str, str], list[tuple[float, float, float]]] = {key: [] for key in configs}
        rounds: list[dict[tuple[str, str], tuple[float, float, float]]] = []
        for i in range(max(runs.values())):
            order = [k for k in configs if runs[k] > i]
            this_round = {}
            for key in order if i % 2 == 0 else order[::-1]:
                row = run_once(configs[key], home, titles[key[1]][0], args.timeout, args.read_pause)
                results[key].append(row)
                this_round[key] = row
                print(f"  round {i + 1} {key[0]:<10} {key[1]:<8} start-up {row[0]:7.2f} s  filter {row[1]:7.2f} s",
                      flush=True)
            rounds.append(this_round)
    print(f"\n{args.records:,} ProactiveEval records beside the bundled environments "
          f"({titles['large'][1]:,} in all) vs the bundled {titles['bundled'][1]} alone; "
          f"filter {QUERY!r} typed {KEY_GAP_S * 1000:.0f} ms a key, {args.read_pause:g} s after the picker answered, on a pty")
    print(f"{'':<22}{'runs':>5}{'start-up to ready (s)':>23}{f'{len(QUERY)}-letter filter (s)':>22}{'CPU (s)':>9}")
    med = {}
    for key, rows in results.items():
        med[key] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
        cpu = statistics.median(r[2] for r in rows)
        print(f"{key[0] + ', ' + key[1]:<22}{len(rows):>5}{med[key][0]:>23.3f}{med[key][1]:>22.3f}{cpu:>9.2f}")
    for tree in trees:
        paired = [(r[(tree, "large")], r[(tree, "bundled")]) for r in rounds if (tree, "large") in r]
        start = statistics.median(big_row[0] / small[0] for big_row, small in paired)
        filt = statistics.median(big_row[1] / small[1] for big_row, small in paired)
        print(f"{tree}: large / bundled within a round: start-up {start:.2f}x, filter {filt:.2f}x")
    if args.other_tree:
        for data in ("bundled", "large"):
            paired = [(r[("this tree", data)], r[("other tree", data)]) for r in rounds if ("other tree", data) in r]
            start = statistics.median(o[0] / t[0] for t, o in paired)
            filt = statistics.median(o[1] / t[1] for t, o in paired)
            print(f"{data}: other tree / this tree within a round: start-up {start:.2f}x, filter {filt:.2f}x")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
