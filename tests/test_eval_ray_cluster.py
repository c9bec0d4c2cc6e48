"""`eval --ray auto` and `eval --ray ray://HOST:PORT` against a real head started by `ray start --head`
(the README's recipe), not a Ray the test process started itself (tests/test_eval_ray.py).

The head runs in its own session (`setsid`) with its own temp dir, ports and auth token file, so it
shares nothing with another Ray on the machine (another test's, another user's): it is stopped by
ending its process group, never by `ray stop`, which stops every Ray of the user. Token auth stays
on, as `ray start --head` sets it up by default: the command reaches the head with the token file
given in `RAY_AUTH_TOKEN_PATH`, as a user's shell would. The eval command runs as a subprocess, as
a user runs it; its model calls go from the head's worker processes through the real litellm path
to the project's fake server. Waits are for a condition, bounded only as hang guards.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (`pip install 'proactive-tui[ray]'`; it is in the test lock)")

from conftest import ROOT  # noqa: E402
from proactive_tui.cli.main import main  # noqa: E402
from proactive_tui.evalrun.folder import SESSIONS  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder  # noqa: E402
from batch_helpers import assert_same_batch, eval_argv, one_process_argv  # noqa: E402

CLIENT_SERVER = importlib.util.find_spec("grpc") is not None
"""Ray's client server (what `ray://` reaches) needs grpcio, which `ray[client]` brings: the
`[ray]` extra and the test lock have it, a bare `pip install ray` does not."""
HEAD_GUARD_S = 90.0
"""A hang guard for the head to come up, not a figure: it takes 5-10 s on a quiet machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_alive(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (a zombie is not alive)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


class Head:
    """A Ray head of `ray start --head --block`, in its own session; `stop()` ends its processes only."""

    def __init__(self) -> None:
        # short: Ray puts its unix sockets under the temp dir (a socket path has ~107 bytes)
        self.dir = Path(tempfile.mkdtemp(prefix="pt-ray-", dir="/tmp"))
        token = self.dir / "token"
        token.write_text(secrets.token_hex(32))
        self.port = free_port()
        self.client_port = free_port()
        self.ray_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
                        "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)] if p)}
        """What a shell that reaches this head has set (the eval commands get it too)."""
        env = {**os.environ, **self.ray_env}
        env.pop("RAY_ADDRESS", None)
        argv = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", "--num-cpus=2",
                f"--port={self.port}", "--node-ip-address=127.0.0.1", f"--temp-dir={self.dir}",
                "--include-dashboard=false", "--dashboard-port=0", f"--dashboard-agent-listen-port={free_port()}",
                "--disable-usage-stats"]
        if CLIENT_SERVER:
            argv.append(f"--ray-client-server-port={self.client_port}")
        self.log = open(self.dir / "head.log", "w")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_ready(self) -> None:
        """Until the head has written its address file (its GCS is up) and says it started."""
        deadline = time.monotonic() + HEAD_GUARD_S
        while "Ray runtime started" not in (self.dir / "head.log").read_text():
            assert self.proc.poll() is None, f"ray start --head ended: {(self.dir / 'head.log').read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"the head never started: {(self.dir / 'head.log').read_text()[-2000:]}"
            time.sleep(0.2)

    def client_server_logs(self) -> str:
        """The tail of each Ray Client server log of this head (the proxy's and each client's own
        server): why a `ray://` connection failed, shown with the command's error."""
        tails = []
        for log in sorted((self.dir / "session_latest" / "logs").glob("ray_client_server*")):
            text = log.read_text(errors="replace").strip()
            tails.append(f"--- {log.name}\n{text[-1500:]}")
        return "\n".join(tails) or "(no Ray Client server log)"

    def stop(self) -> None:
        """End every process of the head's session (raylet, GCS, agents, workers): they share its
        process group. Not `ray stop`, which would stop every Ray of this user on the machine."""
        pgid = self.proc.pid
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 5.0
            while group_alive(pgid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not group_alive(pgid):
                break
        self.proc.wait(timeout=10)
        self.log.close()
        assert not group_alive(pgid), "a process of the test's Ray head outlived it"
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def head():
    started = Head()
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


def run_on(head: Head, server: FakeOpenAIServer, out: Path, ray_address: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "proactive_tui", *eval_argv(server, out, "--repeats", "2", "--concurrency", "4",
                                                              "--ray", ray_address)]
    return subprocess.run(argv, cwd=ROOT, env={**os.environ, **head.ray_env, **env, "COLUMNS": "200"}, capture_output=True, text=True,
                          timeout=300)


def the_same_as_one_process(tmp_path: Path, server: FakeOpenAIServer, out: Path, capsys) -> None:
    assert main(one_process_argv(server, tmp_path / "one")) == 0
    capsys.readouterr()
    assert_same_batch(tmp_path / "one", out, sessions=8)
    from proactive_tui.store import open_store

    with open_store() as store:  # the command stored each task's session once, finished
        for path in sorted((out / SESSIONS).glob("*.json")):
            assert store.session(json.loads(path.read_text())["record"]["id"]).status == "finished"


def test_eval_ray_auto_reaches_a_started_head_and_gives_the_folder_of_one_process(head, tmp_path, capsys) -> None:
    out = tmp_path / "auto"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        done = run_on(head, server, out, "auto", {"RAY_ADDRESS": f"127.0.0.1:{head.port}"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Ray tasks on the Ray cluster at auto (2 CPUs)" in done.stderr and "Traceback" not in done.stderr
        the_same_as_one_process(tmp_path, server, out, capsys)


@pytest.mark.skipif(not CLIENT_SERVER, reason="this ray has no client server for ray:// (it needs grpcio, from "
                                              "`ray[client]`, which the `[ray]` extra and the test lock bring)")
def test_eval_ray_client_address_gives_the_folder_of_one_process(head, tmp_path, capsys) -> None:
    out = tmp_path / "client"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        address = f"ray://127.0.0.1:{head.client_port}"
        done = run_on(head, server, out, address, {})
        assert done.returncode == 0, f"{done.stderr[-3000:]}\n{head.client_server_logs()}"
        assert f"Ray tasks on the Ray cluster at {address}" in done.stderr and "Traceback" not in done.stderr
        the_same_as_one_process(tmp_path, server, out, capsys)
