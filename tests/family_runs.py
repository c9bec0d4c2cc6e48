"""One headless session of each family against the fake OpenAI server, and the commands after it.

Shared by the suites that follow text through every surface (test_hostile_text: hostile model
output and environment files; test_secrets_canary: keys that must never be written anywhere), so
both drive exactly the runs and exports a person would: `run ... --out`, `export` in every
format, `sessions list/show`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from chronos_helpers import scripted_agent_responder
from conftest import ROOT, SAMPLE_DIRS
from test_proactbench_fork import ENV_ID as PROACTBENCH_ENV, proactbench_responder
from test_proactivebench_cli import bench_responder
from test_run_command import judge_aware_responder

Responder = Callable[[dict], str]


@dataclass(frozen=True)
class FamilyRun:
    """How one family's session is run headless: the environment, its seats and flags, and a
    fake-server responder that plays every seat by the family's protocol."""

    family: str
    env_id: str
    args: tuple[str, ...]
    responder: Responder
    dataset_format: str


RUNS = {
    "proactiveeval": FamilyRun("proactiveeval", "proactiveeval/persuasion/fair/0",
                               ("--agent", "openai/agent-m", "--user", "openai/user-m", "--judge", "openai/judge-m",
                                "--max-turns", "2"), judge_aware_responder, "proactiveeval"),
    "proactivebench": FamilyRun("proactivebench", "proactivebench/coding_01",
                                ("--agent", "openai/agent-m", "--user", "openai/judge-m", "--max-events", "2"),
                                bench_responder, "proactivebench"),
    "chronos": FamilyRun("chronos", "chronos/car-purchase-towing/negative",
                         ("--agent", "openai/agent-m", "--user", "openai/user-m", "--judge", "openai/judge-m",
                          "--max-turns", "3"), scripted_agent_responder, "chronos"),
    "proactbench": FamilyRun("proactbench", PROACTBENCH_ENV,
                             ("--agent", "openai/agent-m", "--judge", "openai/judge-m", "--max-triggers", "2"),
                             proactbench_responder, "proactbench"),
}
EXPORT_FORMATS = ("run-record", "markdown", "html", "svg")
"""The formats every family takes; each family's own dataset format comes on top."""


def cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    """`python -m proactive_tui ...` from the repository root, output captured as bytes (so a
    stray byte the program wrote cannot be hidden by decoding)."""
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args], cwd=ROOT, capture_output=True,
                          env={**os.environ, "COLUMNS": "160", **(env or {})}, timeout=timeout, stdin=subprocess.DEVNULL)


def run_family(run: FamilyRun, api_base: str, out: Path, env: dict[str, str] | None = None,
               env_id: str | None = None, envs: Path | None = None) -> subprocess.CompletedProcess:
    """One headless session (`envs`: an extra environment folder, for `env_id` from it)."""
    folder = ["--envs", str(envs)] if envs else []
    return cli([*folder, "run", env_id or run.env_id, "--api-base", api_base, *run.args, "--out", str(out)], env=env)


def run_in_process(family: str, api_base: str, out: Path) -> str:
    """`run` of the family's session in this process, recorded in the store; its session id.
    (A Pilot test calls it through `asyncio.to_thread`: the command has its own event loop.)"""
    from proactive_tui.cli.main import main

    run = RUNS[family]
    assert main(["run", run.env_id, *run.args, "--api-base", api_base, "--out", str(out), "--quiet"]) == 0
    return session_id_of(out)


def export_all(run: FamilyRun, session_id: str, out: Path, env: dict[str, str] | None = None) -> list[Path]:
    """The session exported in every format that takes it; the files written."""
    written: list[Path] = []
    for fmt in (*EXPORT_FORMATS, run.dataset_format):
        target = out / fmt
        done = cli(["export", session_id, "--format", fmt, "--out", str(target)], env=env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        files = [target] if target.is_file() else [p for p in target.rglob("*") if p.is_file()]
        assert files, fmt
        written += files
    return written


def session_id_of(out: Path) -> str:
    return json.loads(out.read_text(encoding="utf-8"))["id"]


def hostile_env_files(root: Path, text: str) -> dict[str, str]:
    """A copy of each family's sample environment with `text` in the fields a person reads
    (title, persona, the user's information and target, an observed event; ProactBench's first
    trigger turn's user message, which the agent is sent, and its rubric), under `root`; the
    env id of each copy, by family."""
    chronos = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase-towing.json").read_text(encoding="utf-8"))
    chronos["title"] += " " + text
    chronos["persona"] += " " + text
    (root / "chronos").mkdir(parents=True, exist_ok=True)
    (root / "chronos" / "hostile.json").write_text(json.dumps(chronos), encoding="utf-8")
    items = json.loads((SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json").read_text(encoding="utf-8"))[:1]
    items[0]["environment"]["user_information"] += " " + text
    items[0]["target"] += " " + text
    (root / "persuasion").mkdir(parents=True, exist_ok=True)
    (root / "persuasion" / "eval.json").write_text(json.dumps(items), encoding="utf-8")
    trace = json.loads((SAMPLE_DIRS["proactivebench"] / "coding_01.json").read_text(encoding="utf-8"))
    trace[0]["observation"]["event"] += " " + text
    (root / "proactivebench").mkdir(parents=True, exist_ok=True)
    (root / "proactivebench" / "hostile.json").write_text(json.dumps(trace), encoding="utf-8")
    sample = ROOT / "sample_envs" / "proactbench" / "final_dialogues_sample.jsonl"
    row = next(r for r in map(json.loads, sample.read_text(encoding="utf-8").splitlines())
               if f"proactbench/{r['unique_id_eval']}" == RUNS["proactbench"].env_id)
    row["unique_id_eval"] = "hostile"
    first = min(row["trigger_points"], key=lambda t: t["turn"])
    first["evaluation_rubric"]["pass_criteria"] += " " + text
    said = next(t for t in row["turn_records"] if t["turn"] == first["turn"])
    said["user_message"] = text + " " + said["user_message"]  # first: `envs show` cuts a long message
    (root / "proactbench").mkdir(parents=True, exist_ok=True)
    (root / "proactbench" / "hostile.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    return {"chronos": "chronos/hostile/negative", "proactiveeval": "proactiveeval/persuasion/eval/0",
            "proactivebench": "proactivebench/hostile", "proactbench": "proactbench/hostile"}


FREE_TEXT_KEYS = ("reasoning", "thought", "Purpose", "Thoughts", "Response", "response_text", "rationale")


def with_text(responder: Responder, text: str) -> Responder:
    """`responder` with `text` added to everything a model writes freely: a plain reply, and the
    reasoning/response fields of a structured one (never an enum, a number or a "null" task)."""

    def respond(body: dict) -> str:
        reply = responder(body)
        try:
            data = json.loads(reply)
        except ValueError:
            return reply + " " + text
        if isinstance(data, dict):
            for key in FREE_TEXT_KEYS:
                if isinstance(data.get(key), str) and data[key] != "null":
                    data[key] += " " + text
            return json.dumps(data)
        return reply

    return respond
