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
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is in the test lock (`pip install 'proactive-tui[ray]'`)")

from conftest import ROOT  # noqa: E402
from proactive_tui.cli.main import main  # noqa: E402
from proactive_tui.evalrun.folder import FAILED, SESSIONS  # noqa: E402
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder  # noqa: E402
from test_eval_workers import eval_argv, folder_sessions, normalized, synth_run, write_config  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local Ray for the module: 2 CPUs, as CI has; its workers inherit this environment
    (PYTHONPATH reaches the package and this module, a test's config path is sent as an argument)."""
    import logging

    paths = [str(ROOT), str(Path(__file__).parent), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(paths) if p)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    yield
    ray.shutdown()


def reports_of(*folders: Path) -> list[dict]:
    reports = [json.loads((folder / "report.json").read_text()) for folder in folders]
    for report in reports:
        report.pop("timing")
    return reports


def test_ray_gives_the_folder_report_and_store_of_one_process(tmp_path, capsys) -> None:
    from proactive_tui.store import load_record, open_store

    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(eval_argv(server, tmp_path / "one", "--repeats", "2", "--concurrency", "4", "--workers", "1")) == 0
        capsys.readouterr()
        assert main(eval_argv(server, tmp_path / "ray", "--repeats", "2", "--concurrency", "4", "--ray")) == 0
        ray_err = capsys.readouterr().err
    assert "Ray tasks on a local Ray instance (2 CPUs)" in ray_err and "Traceback" not in ray_err
    one, on_ray = folder_sessions(tmp_path / "one"), folder_sessions(tmp_path / "ray")
    assert len(one) == 8 and one == on_ray
    first, second = reports_of(tmp_path / "one", tmp_path / "ray")
    assert first == second
    # this process stored every task's session whole, once: the store's record is the folder's
    with open_store() as store:
        for path in sorted((tmp_path / "ray" / SESSIONS).glob("*.json")):
            saved = json.loads(path.read_text())["record"]
            stored = load_record(store, saved["id"]).model_dump(mode="json")
            assert normalized(stored, {}) == normalized(saved, {})
            assert store.session(saved["id"]).status == "finished"
