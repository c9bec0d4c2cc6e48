"""`eval --ray` and `synth --ray`: the batch's work units as Ray tasks, this process the only writer
(evalrun/ray_run.py).

One local Ray instance with 2 CPUs serves the whole module (`cluster`): the commands find it
initialised and join it instead of starting their own, and it is shut down at the end. Every model
call goes through the real litellm path, from Ray's worker processes, to the project's fake server.
Waits are for a condition, bounded only as hang guards; nothing asserts on time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is in the test lock (`pip install 'proactive-tui[ray]'`)")

from conftest import ROOT  # noqa: E402
from proactive_tui.cli.main import main  # noqa: E402
from proactive_tui.evalrun.folder import FAILED, SESSIONS  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder  # noqa: E402
from batch_helpers import (  # noqa: E402
    assert_same_batch, assert_stored_as_in_folder, eval_argv, finished_keys, folder_sessions, local_ray,
    one_process_argv, start_command, store_statuses, synth_run, wait_for, write_config,
)


cluster = local_ray(num_cpus=2)
"""One local Ray for the module: 2 CPUs, as CI has."""


def test_ray_gives_the_folder_report_and_store_of_one_process(tmp_path, capsys) -> None:
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(one_process_argv(server, tmp_path / "one")) == 0
        capsys.readouterr()
        assert main(eval_argv(server, tmp_path / "ray", "--repeats", "2", "--concurrency", "4", "--ray")) == 0
        ray_err = capsys.readouterr().err
    assert "Ray tasks on a local Ray instance (2 CPUs)" in ray_err and "Traceback" not in ray_err
    assert_same_batch(tmp_path / "one", tmp_path / "ray", sessions=8)
    assert_stored_as_in_folder(tmp_path / "ray")  # this process stored every task's session whole, once


def test_synth_on_ray_writes_the_folder_of_one_process_byte_for_byte(tmp_path, capsys) -> None:
    from synth_fake import responder
    from synth_helpers import files

    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_run(tmp_path, server, tmp_path / "one", "--workers", "1", "--concurrency", "2")) == 0
        capsys.readouterr()
        assert main(synth_run(tmp_path, server, tmp_path / "ray", "--ray", "--concurrency", "2")) == 0
        ray_err = capsys.readouterr().err
    assert "Ray tasks on a local Ray instance" in ray_err and "Traceback" not in ray_err
    one, on_ray = files(tmp_path / "one"), files(tmp_path / "ray")
    assert one == on_ray and "out/recommendation/fair.json" in one


def test_a_parallel_limit_holds_across_ray_tasks(tmp_path) -> None:
    # two calls of `a` at once for the whole cluster (each task alone would allow two), and a
    # tokens-per-minute limit, so every call of `a` also takes and settles tokens at the actor
    write_config('[models."openai/a"]\nmax_parallel_requests = 2\ntpm = 100000000\n')
    # `b`'s first calls wait at the server until three are in flight at once, which only a batch
    # that lets them run side by side gets to (else they go on after a minute, and the check
    # below fails): on a loaded machine Ray started `b`'s sessions far enough apart that, timed
    # alone, their calls once went two at a time
    replies, wide, arrived, lock = proactiveeval_responder(), threading.Event(), [0], threading.Lock()

    def responder(request):
        if request.get("model") == "b" and not wide.is_set():
            with lock:
                arrived[0] += 1
                if arrived[0] >= 3:
                    wide.set()
            wide.wait(timeout=60)
        return replies(request)

    with FakeOpenAIServer(responder=responder, latency=0.3) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--repeats", "4", "--concurrency", "8",
                     "--ray", "--no-store", "--out", str(tmp_path / "out")])
        peaks = dict(server.max_in_flight)
    assert code == 0
    assert peaks["a"] == 2  # the bound holds over every task, and is used
    assert peaks["b"] > 2  # a model with no limit runs as wide as the batch


def die_once(marker: Path) -> None:
    """Kill the Ray worker process running this, the first time only (the marker says it did)."""
    if not marker.exists():
        marker.write_text("died")
        os._exit(1)


def test_a_killed_ray_worker_is_retried_and_the_result_is_right(tmp_path) -> None:
    from ray import cloudpickle

    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.core.spec import build_session
    from proactive_tui.store import open_store

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray's workers need not import this file
    marker = tmp_path / "died"

    def build(spec, env, gateway):
        if env.id.endswith("/0") and spec.roles.agent.seed == 1:  # one session of one unit, after others ran
            die_once(marker)
        return build_session(spec, env, gateway)

    from proactive_tui.llm import model_flags
    from proactive_tui.cli.main import build_parser

    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(one_process_argv(server, tmp_path / "one")) == 0
        args = build_parser().parse_args(eval_argv(server, tmp_path / "ray", "--repeats", "2", "--concurrency", "4",
                                                   "--ray"))
        model_flags.apply(args)
        assert run_batch_eval(args, build=build) == 0
    assert marker.exists()  # a worker died mid-unit, and Ray ran the unit again
    assert folder_sessions(tmp_path / "one") == folder_sessions(tmp_path / "ray")
    assert not list((tmp_path / "ray" / FAILED).glob("*.json"))
    # the dead attempt wrote nothing: each session is stored once, finished
    saved = {json.loads(p.read_text())["record"]["id"] for p in (tmp_path / "ray" / SESSIONS).glob("*.json")}
    with open_store() as store:
        rows = store.sessions(env_id="proactiveeval/persuasion")
    ray_rows = [row for row in rows if row.id in saved]
    assert len(ray_rows) == 8 and all(row.status == "finished" for row in ray_rows)
    assert len(rows) == 16  # the one-process run's eight and these eight: no half-written ninth


def test_ray_not_installed_is_one_clear_line(tmp_path) -> None:
    # a fresh interpreter in which `import ray` fails, as where the extra is not installed
    code = ("import sys; sys.modules['ray'] = None\n"
            "from proactive_tui.cli.main import main\n"
            f"sys.exit(main(['eval', 'proactiveeval/persuasion/fair/0', '--agent', 'openai/a', '--ray', "
            f"'--out', {str(tmp_path / 'out')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --ray needs Ray, which is not installed: pip install 'proactive-tui[ray]'"
    assert not (tmp_path / "out").exists()


def test_importing_the_package_never_imports_ray() -> None:
    code = ("import sys\nimport proactive_tui, proactive_tui.cli.main, proactive_tui.cli.eval_batch, "
            "proactive_tui.cli.synth_cmd, proactive_tui.evalrun.ray_run\nprint('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_signal_cancels_the_ray_tasks_and_leaves_a_resumable_folder(tmp_path, signum, code) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=proactiveeval_responder(), latency=0.15) as server:
        # its own Ray instance (a subprocess): the module's is this process's
        proc = start_command(eval_argv(server, out, "--repeats", "3", "--concurrency", "2", "--ray"))
        try:
            wait_for(lambda: finished_keys(out), "a first finished session")
            proc.send_signal(signum)
            _, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == code, stderr
        assert "Traceback" not in stderr and "eval resume" in stderr
        report = json.loads((out / "report.json").read_text())
        assert report["partial"] is True and report["finished"] == len(finished_keys(out)) < 12
        assert "running" not in store_statuses()  # a cancelled task stored nothing
        assert main(["eval", "resume", str(out)]) == 0  # on the module's Ray (the folder's --ray)
    assert len(finished_keys(out)) == 12
    assert json.loads((out / "report.json").read_text())["partial"] is False


def test_a_ray_tasks_sessions_start_apart_as_a_workers_do(monkeypatch) -> None:
    """Sessions handed out together start a few milliseconds apart (`evalrun.spacing`), in a Ray
    task as in a worker process: each of the task's units waits its turn before its job starts."""
    import asyncio

    from proactive_tui.evalrun import ray_run

    log: list[str] = []

    class Spacing:
        async def wait_turn(self) -> float:
            log.append("turn")
            return 0.0

    class Remote:
        def __init__(self, value=None) -> None:
            self.value = value

        def remote(self, *args):  # what a Ray call gives: something to await, or to leave
            answer = asyncio.get_running_loop().create_future()
            answer.set_result(self.value)
            return answer

    class Limiter:
        begin, end, pauses = Remote({}), Remote(), Remote({})

    def make_job(worker):
        async def job(index: int):
            log.append(f"job {index}")
            await asyncio.sleep(0)
            return index
        return job

    monkeypatch.setattr(ray_run, "StartSpacing", Spacing)
    results, _, _ = ray_run.run_unit(make_job, [0, 1, 2], 3, {}, Limiter(), "task-1")
    assert [index for index, _ in results] == [0, 1, 2]
    assert log[:2] == ["turn", "job 0"] and log.count("turn") == 3
    assert all(log[log.index(f"job {i}") - 1] == "turn" for i in range(3))


def test_ray_client_is_tried_again_only_when_its_server_failed_to_start() -> None:
    """Ray's client proxy sometimes loses the server it forks for a new connection (an open Ray
    bug, ray-project/ray#63202): `ray://` is tried again then, up to three times; any other
    failure, or any other address, is said at once."""
    from proactive_tui.evalrun import ray_run

    started = ConnectionAbortedError("Initialization failure from server:\nRuntimeError: Starting Ray client "
                                     "server failed. See ray_client_server_23000.err for detailed logs.")

    class FakeRay:
        def __init__(self, failures: list[BaseException]) -> None:
            self.failures, self.calls = list(failures), []

        def init(self, **options) -> None:
            self.calls.append("init")
            if self.failures:
                raise self.failures.pop(0)

        def shutdown(self) -> None:
            self.calls.append("shutdown")

    client = {"address": "ray://127.0.0.1:10001"}
    fake = FakeRay([started, started])
    ray_run.join(fake, client)
    assert fake.calls == ["init", "shutdown", "init", "shutdown", "init"]
    for options, failures in ((client, [started] * 3), ({"address": "auto"}, [started]),
                              (client, [ConnectionAbortedError("the token is wrong")])):
        fake = FakeRay(failures)
        with pytest.raises(ConnectionAbortedError):
            ray_run.join(fake, options)
        assert fake.calls.count("init") == (3 if len(failures) == 3 else 1)
