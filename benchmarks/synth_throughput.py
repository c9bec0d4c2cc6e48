"""Synth throughput: ProactiveEval items per minute through `synth proactiveeval` against a fake
server that answers every call after `--latency` seconds (100 ms by default).

Run: PYTHONPATH=. .venv/bin/python benchmarks/synth_throughput.py [--items 60] [--concurrency 16]

The command (`cli.synth_cmd.run_synth`: the manifest, the engine, every step file, the summary)
runs in this process; the fake server is a child process (its threads would otherwise take this
one's CPU) whose replies send every item down the shortest path: a generated topic tree (depth 2,
branching 3: 4 calls, 2 in a row), then per item one environment, 5 candidates, the ensemble, 3
probes of which exactly one is judged right (fair: no refinement), the judge, 5 validators: 16
calls, 6 in a row. So the ideal wall time is

    max(total calls x latency / concurrency, (2 + 6) x latency)

(every call slot busy all the time, or the longest chain end to end). Printed: items per minute,
the wall time, the ideal and their ratio; the CPU during the run too, this process's and its
worker processes' (`synth` runs on the usable cores by default, issue 35), and the wall against
max(ideal, that CPU / cores): what the engine loses beyond the CPU its calls cost.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
TREE_CHAIN = 2
ITEM_CHAIN = 6
ITEM_CALLS = 16
TREE_CALLS = 4
WORDS = ("kettle", "harbor", "violin", "meadow", "lantern", "granite", "orchid", "compass", "saddle")


def respond(request: dict) -> str:
    """Replies that keep every item on the shortest path (fair, no refinement, kept)."""
    fmt = request.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name")
    text = "\n".join(str(m.get("content", "")) for m in request.get("messages", []) if isinstance(m, dict))
    if name == "TopicList":
        if "first-level" in text:
            return json.dumps({"topics": ["Alpha sports", "Bravo cooking", "Charlie finance"]})
        last = re.search(r"Topic: (.*)", text).group(1).rsplit(" > ", 1)[-1]
        offset = sum(map(ord, last)) % 6
        return json.dumps({"topics": [f"{last} {w}" for w in WORDS[offset:offset + 3]]})
    if name == "EnvironmentDraft":
        return json.dumps({"user_information": "A user who likes tea.", "trigger_factor": "It is 9 am."})
    if name in ("TargetDraft", "TargetEnsemble"):
        return json.dumps({"analysis": "merged", "target": "Offer tea", "sub_targets": ["ask", "offer"]})
    if name == "PredictedTarget":
        return json.dumps({"target": "Offer tea"})
    if name == "ProbeVerdict":
        return json.dumps({"matches": [True, False, False]})
    if name == "FinalCheck":
        return json.dumps({"reasoning": "fine", "reference_is_best": True})
    return "ok"


SERVER = ("import sys; sys.path.insert(0, {here!r})\n"
          "from proactive_tui.testing.fake_openai import FakeOpenAIServer\n"
          "from synth_throughput import respond\n"
          "with FakeOpenAIServer(responder=respond, latency={latency!r}, keep_alive=True) as s:\n"
          "    print(s.base_url, flush=True); sys.stdin.read()\n")


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(here=str(HERE), latency=latency)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="synth-throughput-"))
    atexit.register(shutil.rmtree, work, True)  # its folders and stores: gone when it ends, whatever ended it
    os.environ["PROACTIVE_TUI_CONFIG"] = str(work / "config.toml")
    os.environ["PROACTIVE_TUI_DATA"] = str(work / "data")

    from proactive_tui.cli.main import build_parser
    from proactive_tui.llm.gateway import litellm_module

    litellm_module()  # imported before the clock
    proc, base_url = start_server(args.latency)
    try:
        argv = ["synth", "proactiveeval", "--domain", "recommendation", "--n", str(args.items), "--seed", "1",
                "--out", str(work / "run"), "--out-only", "--api-base", base_url, "--concurrency", str(args.concurrency),
                "--role", "generator=openai/g", "--role", "probe=openai/p", "--role", "judge=openai/j",
                "--role", "validator=openai/v"]
        ns = build_parser().parse_args(argv)
        start, cpu_start = time.perf_counter(), os.times()
        code = ns.func(ns)
        wall, cpu_end = time.perf_counter() - start, os.times()
        own = cpu_end.user + cpu_end.system - cpu_start.user - cpu_start.system
        kids = (cpu_end.children_user + cpu_end.children_system
                - cpu_start.children_user - cpu_start.children_system)  # the workers, joined by now
        cpu = own + kids
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=10)
    summary = json.loads((work / "run" / "summary.json").read_text())
    calls = summary["calls"]
    expected = TREE_CALLS + ITEM_CALLS * args.items
    chain = TREE_CHAIN + ITEM_CHAIN
    ideal = max(calls * args.latency / args.concurrency, chain * args.latency)
    print(f"\n{args.items} ProactiveEval items (exit {code}; kept {summary['kept']}, rejected {summary['rejected']}), "
          f"{calls} calls (expected {expected}), {args.latency * 1000:.0f} ms a call, --concurrency {args.concurrency}")
    print(f"items per minute: {args.items / wall * 60:.1f}")
    print(f"wall {wall:.2f} s, ideal {ideal:.2f} s = max({calls} x {args.latency:g} / {args.concurrency}, "
          f"critical path {chain} x {args.latency:g})")
    print(f"ratio wall / ideal: {wall / ideal:.3f}")
    from proactive_tui.evalrun.workers import usable_cores

    cores = usable_cores()  # what synth's --workers defaults to
    print(f"CPU during the run: {cpu:.2f} s ({cpu / calls * 1000:.1f} ms a call; this process {own:.2f} s, "
          f"its workers {kids:.2f} s)")
    print(f"ratio wall / max(ideal, CPU / {cores} cores) = {wall / max(ideal, cpu / cores):.3f}")
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
