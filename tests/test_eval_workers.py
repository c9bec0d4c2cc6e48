"""`eval --workers N`: sessions on worker processes, the parent the only writer (evalrun/workers.py).

Everything goes through the real litellm path to the project's fake server: in this process for
the comparisons, in a subprocess for the kills and signals (a worker is found as a child of the
command's process and killed there). Waits are for a condition, bounded only as hang guards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from batch_helpers import (
    assert_same_batch, assert_stored_as_in_folder, children, eval_argv, finished_keys, gone, one_process_argv,
    start_command, store_statuses, synth_run, wait_for, write_config,
)
from proactive_tui.cli.main import main
from proactive_tui.evalrun.folder import FAILED, SESSIONS
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder


def test_two_workers_give_the_folder_report_and_store_of_one_process(tmp_path, capsys) -> None:
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(one_process_argv(server, tmp_path / "one")) == 0
        one_err = capsys.readouterr().err
        assert main(eval_argv(server, tmp_path / "two", "--repeats", "2", "--concurrency", "4", "--workers", "2")) == 0
        two_err = capsys.readouterr().err
    assert "worker processes" not in one_err and "2 worker processes" in two_err
    assert_same_batch(tmp_path / "one", tmp_path / "two", sessions=8)
    assert_stored_as_in_folder(tmp_path / "two")  # the parent stored every worker's session whole


def test_per_model_limits_hold_across_all_workers_together(tmp_path) -> None:
    # two calls of `a` at once for the whole batch (each worker alone would allow two), and a
    # tokens-per-minute limit, so every call of `a` also takes and settles tokens at the parent
    write_config('[models."openai/a"]\nmax_parallel_requests = 2\ntpm = 100000000\n')
    # every session starts at once (12 at concurrency 12), so the six of `b` ask together
    with FakeOpenAIServer(responder=proactiveeval_responder(), latency=0.3) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--repeats", "6", "--concurrency", "12",
                     "--workers", "2", "--no-store", "--out", str(tmp_path / "out")])
        peaks = dict(server.max_in_flight)
    assert code == 0
    assert peaks["a"] == 2  # the bound holds over both workers, and is used
    assert peaks["b"] > 2  # a model with no limit runs as wide as the batch, over both workers


def test_workers_need_at_least_one(tmp_path, capsys) -> None:
    assert main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--workers", "0",
                 "--out", str(tmp_path / "out")]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


# -- in a subprocess: kills and signals ------------------------------------------------------------


def start_batch(server: FakeOpenAIServer, out: Path, **popen) -> subprocess.Popen:
    return start_command(eval_argv(server, out, "--repeats", "3", "--concurrency", "4", "--workers", "2"), **popen)


def resume(out: Path) -> int:
    return main(["eval", "resume", str(out)])


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers through /proc")


@needs_proc
def test_a_worker_killed_mid_run_loses_only_its_sessions_and_resume_finishes(tmp_path) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=proactiveeval_responder(), latency=0.15) as server:
        proc = start_batch(server, out)
        try:
            wait_for(lambda: len(children(proc.pid)) == 2, "two workers")
            workers = children(proc.pid)
            wait_for(lambda: finished_keys(out), "a first finished session")
            os.kill(workers[0], signal.SIGKILL)
            _, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 1, stderr  # the report is missing the lost sessions
        assert "Traceback" not in stderr and "worker process 0 ended (killed by signal 9)" in stderr
        lost = [json.loads(p.read_text()) for p in (out / FAILED).glob("*.json")]
        assert lost and all("the worker process running it ended (killed by signal 9)" == f["reason"] for f in lost)
        done = finished_keys(out)
        assert len(done) + len(lost) <= 12 and not {f["key_id"] for f in lost} & done
        assert gone(workers[1])  # the other worker ended with the batch
        assert "running" not in store_statuses()  # the killed worker's sessions are marked interrupted
        assert resume(out) == 0  # runs exactly what is missing: every session ends finished
    assert len(finished_keys(out)) == 12 and not list((out / FAILED).glob("*.json"))
    assert json.loads((out / "report.json").read_text())["partial"] is False


@needs_proc
@pytest.mark.parametrize(("signum", "code", "group"), [(signal.SIGTERM, 143, False), (signal.SIGTERM, 143, True),
                                                     (signal.SIGINT, 130, True)],
                         ids=["SIGTERM to the parent", "SIGTERM to the group", "Ctrl-C"])
def test_a_stop_signal_leaves_a_resumable_folder_and_no_worker(tmp_path, signum, code, group) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=proactiveeval_responder(), latency=0.15) as server:
        # its own process group, so Ctrl-C can reach every process of it as a terminal's does
        proc = start_batch(server, out, start_new_session=True)
        try:
            wait_for(lambda: len(children(proc.pid)) == 2, "two workers")
            workers = children(proc.pid)
            wait_for(lambda: finished_keys(out), "a first finished session")
            if group:  # the parent and both workers: a terminal's Ctrl-C, Slurm's scancel
                os.killpg(proc.pid, signum)
            else:  # the parent alone, as `kill` or `docker stop` sends it
                proc.send_signal(signum)
            _, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == code, stderr
        assert "Traceback" not in stderr and "eval resume" in stderr
        assert all(gone(pid) for pid in workers)
        report = json.loads((out / "report.json").read_text())
        assert report["partial"] is True and report["finished"] == len(finished_keys(out)) < 12
        assert not list((out / SESSIONS).glob(".*.tmp"))
        statuses = store_statuses()
        assert "running" not in statuses and "interrupted" in statuses  # the cut-off sessions, as in one process
        assert resume(out) == 0
    assert len(finished_keys(out)) == 12
    assert json.loads((out / "report.json").read_text())["partial"] is False


# -- synth -----------------------------------------------------------------------------------------


def test_synth_on_two_workers_writes_the_folder_of_one_process_byte_for_byte(tmp_path, capsys) -> None:
    from synth_fake import responder
    from synth_helpers import files

    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_run(tmp_path, server, tmp_path / "one", "--workers", "1", "--concurrency", "4")) == 0
        one_err = capsys.readouterr().err
        assert main(synth_run(tmp_path, server, tmp_path / "two", "--workers", "2", "--concurrency", "4")) == 0
        two_err = capsys.readouterr().err
    assert "worker processes" not in one_err and "2 worker processes" in two_err
    one, two = files(tmp_path / "one"), files(tmp_path / "two")
    assert one == two and "out/recommendation/fair.json" in one


@needs_proc
@pytest.mark.parametrize("how", ["kill -9 a worker", "SIGTERM"])
def test_synth_stopped_or_missing_a_worker_resumes_to_the_uninterrupted_result(tmp_path, how) -> None:
    from synth_fake import responder
    from synth_helpers import files

    cut, whole = tmp_path / "cut", tmp_path / "whole"
    with FakeOpenAIServer(responder=responder, latency=0.05) as server:
        proc = start_command(synth_run(tmp_path, server, cut, "--workers", "2"))
        try:
            wait_for(lambda: len(children(proc.pid)) == 2, "two workers")
            workers = children(proc.pid)
            wait_for(lambda: len(list((cut / "items").rglob("*.json"))) >= 30, "30 step files")  # of about 170
            if how == "SIGTERM":
                proc.send_signal(signal.SIGTERM)
            else:
                os.kill(workers[0], signal.SIGKILL)
            _, stderr = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert "Traceback" not in stderr
        if how == "SIGTERM":
            assert proc.returncode == 143 and "synth resume" in stderr
        else:  # the other worker finished its items; the lost ones are unfinished
            assert proc.returncode == 1 and "worker process 0 ended (killed by signal 9)" in stderr, stderr
        assert all(gone(pid) for pid in workers)
        assert main(["synth", "resume", str(cut)]) == 0
        assert main(synth_run(tmp_path, server, whole, "--workers", "1")) == 0
    assert files(cut) == files(whole)


def test_the_embedded_model_keeps_a_batch_in_one_process() -> None:
    """One copy of the model per process, and its one-call-at-a-time gate holds only within one:
    a seat on `local/...` runs the batch here, by default and when --workers asks for more."""
    import argparse

    from proactive_tui.cli.eval_batch import worker_count
    from proactive_tui.llm.settings import ModelSettings, RoleSettings

    def resolve(agent: str, seed: int) -> RoleSettings:
        return RoleSettings(agent=ModelSettings(model=agent), user=ModelSettings(model="openai/u"),
                            judge=ModelSettings(model="local/smollm2"))

    said: list[str] = []
    assert worker_count(argparse.Namespace(workers=None), ["openai/a"], resolve, False, said.append) == 1
    assert said == []
    assert worker_count(argparse.Namespace(workers=4), ["openai/a"], resolve, False, said.append) == 1
    assert said and "embedded model" in said[0]
    # --reference seats no model: the workers are free to run it
    assert worker_count(argparse.Namespace(workers=3), ["openai/a"], resolve, True, said.append) == 3
