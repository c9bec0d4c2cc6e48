"""What the batch tests share (`eval` / `synth` on worker processes, on Ray, on a Ray cluster, and
the collector test): the command lines against the fake server, a run folder read without what
differs between two runs of the same sessions, the check that two folders hold the same batch and
that the store holds the folder's sessions, and the subprocess helpers of the kill and signal tests.

A helper module, not a test module: the batch tests import it instead of each other (importing a
test module from another re-collects nothing, but ties one file's tests to another's internals).
Waits are for a condition, bounded only as hang guards; nothing asserts on time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from proactive_tui.evalrun.folder import SESSIONS
from proactive_tui.testing.fake_openai import FakeOpenAIServer

VOLATILE = {"id", "started_at", "finished_at", "ended_at", "wall_time_s", "ts", "session_id", "elapsed_s",
            "created_at", "updated_at"}
"""What differs between two runs of the same session whatever runs it: ids and clock readings."""
MESSAGE_ID = re.compile(r"^([a-z]+-\d+)-[0-9a-f]{6}$")


def normalized(value: Any, ids: dict[str, str]) -> Any:
    """`value` without its volatile fields; a record id it quotes (a reused plan's source) as the
    key of that record's session, a message id without its random tail."""
    if isinstance(value, dict):
        return {k: normalized(v, ids) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v, ids) for v in value]
    if isinstance(value, str):
        if value in ids:
            return ids[value]
        match = MESSAGE_ID.match(value)
        return match.group(1) if match else value
    return value


def folder_sessions(out: Path) -> dict[str, dict]:
    files = {p.stem: json.loads(p.read_text()) for p in sorted((out / SESSIONS).glob("*.json"))}
    ids = {data["record"]["id"]: key for key, data in files.items()}
    return {key: normalized(data, ids) for key, data in files.items()}


def reports_of(*folders: Path) -> list[dict]:
    """Each folder's report.json without its timing (the one part a clock decides)."""
    reports = [json.loads((folder / "report.json").read_text()) for folder in folders]
    for report in reports:
        report.pop("timing")
    return reports


def assert_same_batch(one: Path, other: Path, sessions: int) -> None:
    """Two run folders of the same batch hold the same sessions (`sessions` of them) and report."""
    first, second = folder_sessions(one), folder_sessions(other)
    assert len(first) == sessions and first == second
    report_one, report_other = reports_of(one, other)
    assert report_one == report_other


def assert_stored_as_in_folder(out: Path) -> None:
    """The parent stored every session of the folder whole, once, finished: the store's record is
    the folder's."""
    from proactive_tui.store import load_record, open_store

    with open_store() as store:
        for path in sorted((out / SESSIONS).glob("*.json")):
            saved = json.loads(path.read_text())["record"]
            stored = load_record(store, saved["id"]).model_dump(mode="json")
            assert normalized(stored, {}) == normalized(saved, {})
            assert store.session(saved["id"]).status == "finished"


def eval_argv(server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    """The batch of these tests: ProactiveEval's persuasion tasks, two turns, against `server`."""
    return ["eval", "proactiveeval/persuasion", "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
            "--api-base", server.base_url, "--agreeableness", "low", "--max-turns", "2", "--out", str(out), *extra]


def one_process_argv(server: FakeOpenAIServer, out: Path) -> list[str]:
    """The batch the parallel runs are compared with: two repeats (eight sessions) in this process."""
    return eval_argv(server, out, "--repeats", "2", "--concurrency", "4", "--workers", "1")


def write_config(text: str) -> None:
    """The test's own config file (conftest points PROACTIVE_TUI_CONFIG at a temporary one)."""
    path = Path(os.environ["PROACTIVE_TUI_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def synth_run(tmp_path: Path, server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    """A ProactiveEval synth run on the scripted tree of `synth_fake` (every item's fate fixed)."""
    from synth_fake import FATES, role_args, tree

    tree_file = tmp_path / "tree.json"
    tree_file.write_text(json.dumps(tree(fates=FATES)))
    return ["synth", "proactiveeval", "--domain", "recommendation", "--n", str(len(FATES)), "--seed", "3",
            "--out", str(out), "--tree", str(tree_file), *role_args(server.base_url), "--out-only", *extra]


def local_ray(num_cpus: int) -> Any:
    """A module's autouse fixture: one local Ray instance of `num_cpus` CPUs for the whole module
    (assign it to a module-level name), shut down at its end. The commands the tests run find it
    initialised and join it instead of starting their own. Its workers inherit this environment, so
    PYTHONPATH is made to reach the package and the tests' folder (a task's job may be a function of
    a test module) for the module's life; a test's config path is sent as an argument."""

    @pytest.fixture(scope="module", autouse=True)
    def cluster():
        import logging

        import ray

        before = os.environ.get("PYTHONPATH")
        paths = [str(ROOT), str(Path(__file__).parent), *(before or "").split(os.pathsep)]
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(paths) if p)
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        try:
            yield
        finally:
            ray.shutdown()
            if before is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = before

    return cluster


# -- in a subprocess: kills and signals ------------------------------------------------------------


def start_command(argv: list[str], **popen: Any) -> subprocess.Popen:
    """`proactive-tui ARGV` in a subprocess (wide lines, output captured), for a test to signal."""
    return subprocess.Popen([sys.executable, "-m", "proactive_tui", *argv], cwd=ROOT,
                            env={**os.environ, "COLUMNS": "200"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **popen)


def wait_for(condition, what: str, guard_s: float = 120.0) -> None:
    deadline = time.monotonic() + guard_s  # a hang guard only
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def finished_keys(out: Path) -> set[str]:
    return {p.stem for p in (out / SESSIONS).glob("*.json")} if (out / SESSIONS).is_dir() else set()


def store_statuses() -> list[str]:
    from proactive_tui.store import open_store

    with open_store() as store:
        return [row.status for row in store.sessions()]
