"""A user's own data is never hidden: ids are unique by source (`envs.sources`).

A copy of upstream's ProactiveEval in its own layout has the ids of the built-in samples
(`proactiveeval/<domain>/<tier>/<n>`); so may a ProactiveBench trace or a Chronos scenario named
like a sample. The user's record keeps the id and is what `envs list`, `envs validate`, the
picker, `run` and `eval` find under it; the sample stays reachable as `builtin:<id>`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE_DIRS
from proactive_tui.envs import load_default
from proactive_tui.paths import user_envs_dir

SAMPLE_FAIR = json.loads((SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json").read_text())


def upstream_items(n: int) -> list[dict]:
    return [{"environment": {"user_information": f"Reader {i} of the real dataset", "trigger_factor": f"Trigger {i}"},
             "target": f"Target {i}", "sub_target": [f"Step {i}"], "topic": f"Upstream topic {i}"} for i in range(n)]


def upstream_folder(root: Path, n: int = 3) -> Path:
    """A user's copy of upstream's dataset (`<domain>/<tier>.json`) with `n` persuasion/fair items."""
    (root / "persuasion").mkdir(parents=True)
    (root / "persuasion" / "fair.json").write_text(json.dumps(upstream_items(n)), encoding="utf-8")
    return root


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proactive_tui", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180, env={**os.environ, "COLUMNS": "200"})


def test_envs_list_and_validate_keep_every_record_of_a_users_upstream_copy(tmp_path: Path) -> None:
    dataset = upstream_folder(tmp_path / "dataset")
    proc = cli("envs", "list", "--json", "--envs", str(dataset), "--domain", "persuasion")
    assert proc.returncode == 0, proc.stderr
    rows = {row["id"]: row for row in map(json.loads, proc.stdout.splitlines())}
    for i in range(3):  # all three of the user's records, under upstream's position ids
        assert rows[f"proactiveeval/persuasion/fair/{i}"]["title"] == f"Upstream topic {i}"
        assert rows[f"proactiveeval/persuasion/fair/{i}"]["source"] == "dataset"
    for i in range(len(SAMPLE_FAIR)):  # the samples they share ids with, still listed
        assert rows[f"builtin:proactiveeval/persuasion/fair/{i}"]["source"] == "builtin"
    assert "note: id proactiveeval/persuasion/fair/0 is in 2 sources" in proc.stderr
    assert "duplicate" not in proc.stderr
    table = cli("envs", "list", "--envs", str(dataset), "--domain", "persuasion").stdout  # a wide table names the source
    row = next(line for line in table.splitlines() if "Upstream topic 2" in line)
    assert "proactiveeval/persuasion/fair/2" in row and "│ dataset " in row and "┃ source " in table

    proc = cli("envs", "validate", str(dataset))
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines()[-1] == ("OK: 3 environment(s) loaded from 1 file(s), 0 problem(s), "
                                            f"{len(SAMPLE_FAIR)} id(s) shared with other sources (notes above)")
    assert "also listed as builtin:proactiveeval/persuasion/fair/1" in proc.stdout

    proc = cli("envs", "show", "proactiveeval/persuasion/fair/0", "--envs", str(dataset))
    assert "Reader 0 of the real dataset" in proc.stdout
    proc = cli("envs", "show", "builtin:proactiveeval/persuasion/fair/0", "--envs", str(dataset), "--json")
    assert json.loads(proc.stdout)["item"]["target"] == SAMPLE_FAIR[0]["target"]


def test_the_registry_the_picker_uses_resolves_both_holders(tmp_path: Path) -> None:
    dataset = upstream_folder(tmp_path / "dataset")
    envset = load_default([str(dataset)])
    assert envset.problems == []
    assert [envset.get(f"proactiveeval/persuasion/fair/{i}").item.target for i in range(3)] == [
        "Target 0", "Target 1", "Target 2"]
    sample = envset.get("builtin:proactiveeval/persuasion/fair/0")
    assert sample.item.target == SAMPLE_FAIR[0]["target"] and sample.origin.kind == "builtin"
    assert len({env.id for env in envset.environments}) == len(envset.environments)
    # `<source>:<id>` names an environment whether or not its id is shared
    assert envset.get("dataset:proactiveeval/persuasion/fair/2").item.target == "Target 2"
    assert envset.get("builtin:proactiveeval/persuasion/hard/0").id == "proactiveeval/persuasion/hard/0"
    # a session stored on the sample recorded the plain id and the sample's file: it finds the sample
    assert envset.get("proactiveeval/persuasion/fair/0", source=sample.source) is sample
    # without the user's data the samples keep their ids (stored sessions and docs name them)
    alone = load_default()
    assert alone.get("proactiveeval/persuasion/fair/0").item.target == SAMPLE_FAIR[0]["target"]
    assert not alone.shared


def test_the_users_envs_folder_keeps_the_id_and_the_sample_stays_reachable() -> None:
    upstream_folder(user_envs_dir() / "proactiveeval", n=1)
    envset = load_default()
    mine = envset.get("proactiveeval/persuasion/fair/0")
    assert mine.item.target == "Target 0" and mine.origin.kind == "envs_folder"
    assert envset.get("builtin:proactiveeval/persuasion/fair/0").item.target == SAMPLE_FAIR[0]["target"]
    assert envset.get("proactiveeval/persuasion/fair/1").item.target == SAMPLE_FAIR[1]["target"]  # not shared
    # ...and a --envs folder with the same id is listed as <folder>:<id> after the envs folder's
    later = upstream_folder(user_envs_dir().parent / "later", n=1)
    both = load_default([str(later)])
    assert [h.id for h in both.shared[0].holders] == ["proactiveeval/persuasion/fair/0", "later:proactiveeval/persuasion/fair/0",
                                                       "builtin:proactiveeval/persuasion/fair/0"]


def clashing_folder(mine: Path) -> Path:
    """A folder of one's own holding an environment with a sample's id in each family."""
    upstream_folder(mine)
    (mine / "proactivebench").mkdir(parents=True)
    trace = json.loads((SAMPLE_DIRS["proactivebench"] / "coding_01.json").read_text())
    trace[0]["observation"]["event"] = "My own first event"
    (mine / "proactivebench" / "coding_01.json").write_text(json.dumps(trace))
    (mine / "chronos").mkdir()
    scenario = json.loads((SAMPLE_DIRS["chronos"] / "car-purchase.json").read_text())
    scenario["title"] = "My own car purchase"
    (mine / "chronos" / "car-purchase.json").write_text(json.dumps(scenario))
    return mine


def test_proactivebench_and_chronos_clashes_keep_both(tmp_path: Path) -> None:
    envset = load_default([str(clashing_folder(tmp_path / "mine"))])
    assert envset.problems == []
    assert envset.get("proactivebench/coding_01").events[0].observation.event == "My own first event"
    assert envset.get("builtin:proactivebench/coding_01").events[0].observation.event != "My own first event"
    for branch in ("positive", "negative"):
        assert envset.get(f"chronos/car-purchase/{branch}").title == "My own car purchase"
        sample = envset.get(f"builtin:chronos/car-purchase/{branch}")
        assert sample.title != "My own car purchase"
        # the paired-sample metric pairs a sample's branches by sample_id: the two pairs stay apart
        assert sample.sample_id == "builtin:chronos/car-purchase"
        assert envset.get(f"chronos/car-purchase/{branch}").sample_id == "chronos/car-purchase"


@pytest.mark.parametrize("env_id", ["proactiveeval/persuasion/fair/0", "proactivebench/coding_01", "chronos/car-purchase/positive"])
def test_a_sample_listed_as_builtin_saved_as_new_is_yours_under_its_plain_id(tmp_path: Path, env_id: str) -> None:
    """"What if" → Save as new environment on a sample whose id your data shares: the saved file is
    yours (the envs folder), named by the plain id, and reads back as `<id>~whatif-1`."""
    from proactive_tui.envs.what_if import save_as_new

    envset = load_default([str(clashing_folder(tmp_path / "mine"))])
    sample = envset.get(f"builtin:{env_id}")
    assert sample.id == f"builtin:{env_id}"
    saved = save_as_new(sample, taken={env.id for env in envset.environments})
    assert saved.env.id == f"{env_id}~whatif-1" and saved.path.is_relative_to(user_envs_dir())
    assert saved.env.origin.kind == "envs_folder"
    assert load_default([str(tmp_path / "mine")]).get(f"{env_id}~whatif-1") is not None


def test_run_addresses_the_users_record_and_the_sample(tmp_path: Path) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.testing.fake_openai import FakeOpenAIServer
    from test_run_command import judge_aware_responder

    dataset = upstream_folder(tmp_path / "dataset")
    with FakeOpenAIServer(responder=judge_aware_responder) as server:
        for env_id, target in (("proactiveeval/persuasion/fair/2", "Target 2"),
                               ("builtin:proactiveeval/persuasion/fair/0", SAMPLE_FAIR[0]["target"])):
            out = tmp_path / "run.json"
            proc = cli("run", env_id, "--envs", str(dataset), "--api-base", server.base_url, "--agent", "openai/a",
                       "--user", "openai/u", "--judge", "openai/j", "--max-turns", "1", "--agreeableness", "low",
                       "--out", str(out))
            assert proc.returncode == 0, proc.stderr
            record = RunRecord.model_validate_json(out.read_text())
            assert record.env_id == env_id and record.environment["item"]["target"] == target


def test_eval_selects_the_users_records_by_id_and_the_samples_by_builtin(tmp_path: Path) -> None:
    from test_eval_batch import Seats, run

    class Seen(Seats):
        def __call__(self, spec, env, gateway):
            self.targets = getattr(self, "targets", {}) | {spec.env_id: env.item.target}
            return super().__call__(spec, env, gateway)

    dataset = upstream_folder(tmp_path / "dataset")
    seats = Seen()
    common = ["--envs", str(dataset), "--agreeableness", "low", "--max-turns", "1", "--no-store"]
    assert run(["proactiveeval/persuasion/fair", *common, "--out", str(tmp_path / "a")], seats) == 0
    assert seats.targets == {f"proactiveeval/persuasion/fair/{i}": f"Target {i}" for i in range(3)}
    seats = Seen()
    assert run(["builtin:proactiveeval/persuasion/fair", *common, "--out", str(tmp_path / "b")], seats) == 0
    builtin = {f"builtin:proactiveeval/persuasion/fair/{i}": item["target"] for i, item in enumerate(SAMPLE_FAIR)}
    assert seats.targets == builtin
    # the folder as a selector (no --envs) beside the samples: five sessions, none under another's id
    seats = Seen()
    assert run([str(dataset), "builtin:proactiveeval/persuasion/fair", *common[2:], "--out", str(tmp_path / "c")], seats) == 0
    assert seats.targets == {f"proactiveeval/persuasion/fair/{i}": f"Target {i}" for i in range(3)} | builtin


async def test_the_picker_shows_where_each_environment_comes_from(tmp_path: Path, monkeypatch) -> None:
    from proactive_tui.ui.app import ProactiveApp
    from proactive_tui.ui.env_index import Group
    from textual.widgets import Static

    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")
    dataset = upstream_folder(tmp_path / "dataset")
    app = ProactiveApp(extra_envs=[str(dataset)])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        tree = app.screen.tree
        tops = [node.label.plain for node in tree.root.children]
        # the family with two sources has a branch for each, the user's first; the others are as before
        assert tops[:2] == ["dataset:proactiveeval (3)", f"builtin:proactiveeval ({len(load_default().filtered('proactiveeval'))})"]
        assert tops[2].startswith("proactivebench (")
        ids = [leaf.data.id for leaf in tree.leaves()]
        assert ids[:3] == [f"proactiveeval/persuasion/fair/{i}" for i in range(3)]
        assert "builtin:proactiveeval/persuasion/fair/0" in ids and len(set(ids)) == len(ids)
        assert tree.cursor_node.data.id == "proactiveeval/persuasion/fair/0"  # the user's data first
        preview = "\n".join(s.visual.plain for s in app.screen.preview.query(Static))
        assert "Reader 0 of the real dataset" in preview and str(dataset / "persuasion" / "fair.json") in preview
        tree.move_cursor(tree.root.children[0])
        await pilot.pause()
        assert isinstance(tree.cursor_node.data, Group)
        preview = "\n".join(s.visual.plain for s in app.screen.preview.query(Static))
        assert "dataset:proactiveeval\n3 environment(s)\nsource: " in preview and "(--envs or the config's envs)" in preview
        sample = next(leaf for leaf in tree.leaves() if leaf.data.id == "builtin:proactiveeval/persuasion/fair/0")
        tree.move_cursor(sample)
        await pilot.pause()
        preview = "\n".join(s.visual.plain for s in app.screen.preview.query(Static))
        assert "builtin:proactiveeval/persuasion/fair/0" in preview and "source: built-in sample, " in preview


def test_a_session_stored_on_a_sample_finds_the_sample_when_its_copy_cannot_be_read() -> None:
    """A stored session keeps its environment; when that copy no longer validates (an older
    schema), the environment is looked up by the recorded id, and the recorded file decides which
    holder: the sample the session ran, not the user's record that holds the plain id today."""
    from types import SimpleNamespace

    from proactive_tui.store.queries import session_environment

    sample = load_default().get("proactiveeval/persuasion/fair/0")
    stored = sample.model_dump(mode="json") | {"field_of_an_older_version": 1}
    record = SimpleNamespace(id="s1", family="proactiveeval", env_id="proactiveeval/persuasion/fair/0", environment=stored)
    upstream_folder(user_envs_dir() / "proactiveeval", n=1)  # the user's copy now holds the plain id
    found = session_environment(record)
    assert found.item.target == SAMPLE_FAIR[0]["target"] and found.id == "builtin:proactiveeval/persuasion/fair/0"
