"""`proactive-tui synth proactiveeval`: the paper's data pipeline on the synth engine, against the
fake OpenAI-compatible server (tests/synth_fake.py scripts every stage by the item's leaf topic)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from synth_fake import FATES, responder, role_args, tree
from synth_helpers import files, run_and_kill
from proactive_tui.cli.main import main
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, proactiveeval_responder, schema_name

HANG_GUARD_S = 300


def write_tree(tmp_path: Path, fates: tuple[str, ...] = FATES) -> Path:
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(tree(fates=fates)))
    return path


def synth_argv(out: Path, tree_file: Path, base_url: str, *extra: str, n: int = len(FATES), seed: int = 3) -> list[str]:
    return ["synth", "proactiveeval", "--domain", "recommendation", "--n", str(n), "--seed", str(seed),
            "--out", str(out), "--tree", str(tree_file), *role_args(base_url), *extra]


def fate_of(item_dir: Path) -> str:
    step = json.loads((item_dir / "environment.json").read_text())
    return step["input"][-1]["content"].split("Topic: Recommendation / ", 1)[1].split("\n", 1)[0]


def outcomes(out: Path) -> dict[str, dict]:
    """fate -> the item's result.json."""
    found = {}
    for item in sorted((out / "items").iterdir()):
        found[fate_of(item)] = json.loads((item / "result.json").read_text())
    return found


def test_every_stage_decides_the_fate_the_rules_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(out, write_tree(tmp_path), server.base_url)) == 0
        requests = len(server.requests)
    got = outcomes(out)
    assert set(got) == set(FATES)  # every leaf used once: n items over n leaves
    kept = {fate: (r["tier"], r["record"]["synth"]) for fate, r in got.items() if r["status"] == "kept"}
    rejected = {fate: r["reason"] for fate, r in got.items() if r["status"] == "rejected"}
    # the tier rule: none right -> hard, exactly one -> fair, two or more after the cap -> too easy
    assert kept["hard"][0] == "hard" and kept["fair"][0] == "fair" and rejected["easy"] == "too_easy"
    # two right, one refinement round, then one: fair, after that round
    assert kept["soften"][0] == "fair" and kept["soften"][1]["refinement_rounds"] == 1
    # the validators: 3 of 5 keeps, 2 of 5 rejects
    assert kept["narrow"][0] == "hard" and kept["narrow"][1]["validator_votes"] == 3
    assert rejected["split"] == "validators" and "2 of 5" in got["split"]["detail"]
    # bad model output is a rejection with its reason, never a crash
    assert rejected["schema"] == "schema_invalid" and "EnvironmentDraft" in got["schema"]["detail"]
    assert rejected["blank"] == "empty"
    assert rejected["easyrewrite"] == "target_rewritten_away"
    assert rejected["badjudge"] == "schema_invalid" and "ProbeVerdict" in got["badjudge"]["detail"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kept"] == {"fair": 2, "hard": 2}
    assert summary["rejected"] == {"empty": 1, "schema_invalid": 2, "target_rewritten_away": 1,
                                   "too_easy": 1, "validators": 1}
    assert summary["tried"] == 10 and summary["unfinished"] == 0
    assert summary["calls"] == requests  # every request counted once, re-asks of the bad reply included
    assert summary["prompt_tokens"] > 0 and summary["cost"] is None
    # the upstream layout, items by id, each with its provenance
    fair = json.loads((out / "out" / "recommendation" / "fair.json").read_text())
    assert sorted(r["topic"] for r in fair) == ["fair", "soften"]
    assert [r["synth"]["item_id"] for r in fair] == sorted(r["synth"]["item_id"] for r in fair)
    for record in fair:
        assert set(record) == {"environment", "target", "sub_target", "topic", "synth"}
        assert record["synth"]["models"]["validator3"] == "openai/v3" and record["synth"]["run"].startswith("synth-")
    printed = capsys.readouterr()
    assert "kept" in printed.out and "too_easy 1" in printed.out


def test_refinement_stops_at_five_rounds(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(out, write_tree(tmp_path, ("easy",)), server.base_url, n=1)) == 0
    item = out / "items" / "recommendation-0000"
    judged = sorted(p.name for p in item.glob("judge-r*.json"))
    assert judged == [f"judge-r{r}.json" for r in range(6)]  # the first probe and one after each of 5 rounds
    rewrites = sorted(p.name for p in item.glob("*-r*.json") if p.name.startswith(("obfuscate", "noise")))
    assert len(rewrites) == 4 * 5 and not list(item.glob("*-r6.json"))
    result = json.loads((item / "result.json").read_text())
    assert result["reason"] == "too_easy" and "after 5 refinement rounds" in result["detail"]
    # the cap is a setting: --max-rounds 1 stops after one round
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(tmp_path / "one", write_tree(tmp_path, ("easy",)), server.base_url, "--max-rounds", "1",
                               n=1)) == 0
    assert sorted(p.name for p in (tmp_path / "one" / "items" / "recommendation-0000").glob("judge-r*.json")) == [
        "judge-r0.json", "judge-r1.json"]


def test_same_seed_and_replies_give_byte_identical_folders(tmp_path: Path) -> None:
    tree_file = write_tree(tmp_path)
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(tmp_path / "a", tree_file, server.base_url, "--concurrency", "8", "--out-only")) == 0
        assert main(synth_argv(tmp_path / "b", tree_file, server.base_url, "--concurrency", "2", "--out-only")) == 0
        assert main(synth_argv(tmp_path / "c", tree_file, server.base_url, "--out-only", seed=4)) == 0
    a, b = files(tmp_path / "a"), files(tmp_path / "b")
    assert a == b and "out/recommendation/fair.json" in a
    seeds = {json.loads(a["items/recommendation-0000/environment.json"])["seed"],
             json.loads(files(tmp_path / "c")["items/recommendation-0000/environment.json"])["seed"]}
    assert len(seeds) == 2  # another run seed, other call seeds


def test_cancelled_mid_run_then_resumed_calls_only_what_is_missing(tmp_path: Path) -> None:
    from synth_helpers import cancel_then_resume

    with FakeOpenAIServer(responder=responder, latency=0.01) as server:
        before = cancel_then_resume("proactiveeval", {"domains": ["recommendation"], "n": len(FATES), "tree": tree()}, role_args(server.base_url)[3::2], server,
                                    tmp_path / "cut", tmp_path / "whole", cancel_after=40)
    assert 40 <= len(before) < 150


def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path: Path) -> None:
    tree_file = write_tree(tmp_path)
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    with FakeOpenAIServer(responder=responder, latency=0.05) as server:
        argv = synth_argv(killed, tree_file, server.base_url, "--out-only")
        run_and_kill(argv, tmp_path, killed, 30, server, HANG_GUARD_S)  # well into the run (170 calls)
        assert not (killed / "summary.json").exists()
        assert main(["synth", "resume", str(killed)]) == 0
        assert main(synth_argv(whole, tree_file, server.base_url, "--out-only")) == 0
    assert files(killed) == files(whole)


def test_a_failed_call_leaves_the_item_unfinished_and_resume_finishes_it(tmp_path: Path) -> None:
    tree_file = write_tree(tmp_path, ("fair", "hard"))
    out = tmp_path / "run"
    broken = {"on": True}

    def flaky(request: dict) -> str | Reply:
        if broken["on"] and schema_name(request) == "TargetEnsemble":
            return Reply.error(400, "the server refuses this request")
        return responder(request)

    with FakeOpenAIServer(responder=flaky) as server:
        assert main(synth_argv(out, tree_file, server.base_url, n=2)) == 1
        assert not list((out / "items").rglob("result.json"))  # no half-made environment anywhere
        assert not (out / "out").exists() or not list((out / "out").rglob("*.json"))
        summary = json.loads((out / "summary.json").read_text())
        assert summary["unfinished"] == 2 and summary["tried"] == 0
        broken["on"] = False
        sent = len(server.requests)
        assert main(["synth", "resume", str(out)]) == 0
        # only the ensembles and what follows them: environments and candidates were on disk
        resumed = [schema_name(r.body) for r in server.requests[sent:]]
        assert "EnvironmentDraft" not in resumed and "TargetDraft" not in resumed and resumed.count("TargetEnsemble") == 2
    assert json.loads((out / "summary.json").read_text())["kept"] == {"fair": 1, "hard": 1}


def test_a_resume_or_merge_under_another_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree_file = write_tree(tmp_path, ("fair", "hard"))
    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(tmp_path / "a", tree_file, server.base_url, "--out-only", n=2)) == 0
        capsys.readouterr()
        assert main(synth_argv(tmp_path / "a", tree_file, server.base_url, "--resume", "--candidates", "3", n=2)) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "another config (it differs in config)" in err
        assert main(synth_argv(tmp_path / "a", tree_file, server.base_url, n=2)) == 1
        assert "synth resume" in capsys.readouterr().err
        assert main(synth_argv(tmp_path / "s0", tree_file, server.base_url, "--shard", "0/2", n=2)) == 0
        assert main(synth_argv(tmp_path / "s1", tree_file, server.base_url, "--shard", "1/2", n=2, seed=9)) == 0
        capsys.readouterr()
        assert main(["synth", "merge", "--out", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1")]) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "made under another config" in err
        # a shard needs a tree every shard shares
        assert main(["synth", "proactiveeval", "--n", "2", "--out", str(tmp_path / "x"), "--shard", "0/2",
                     *role_args(server.base_url)]) == 2
        assert "--tree" in capsys.readouterr().err


def test_shards_merged_equal_the_whole_run(tmp_path: Path) -> None:
    tree_file = write_tree(tmp_path)
    with FakeOpenAIServer(responder=responder) as server:
        for i in range(3):
            assert main(synth_argv(tmp_path / f"s{i}", tree_file, server.base_url, "--shard", f"{i}/3")) == 0
        assert not (Path(os.environ["PROACTIVE_TUI_DATA"]) / "envs").exists()  # a shard installs nothing
        assert main(["synth", "merge", "--out", str(tmp_path / "merged"), *(str(tmp_path / f"s{i}") for i in range(3))]) == 0
        assert main(synth_argv(tmp_path / "whole", tree_file, server.base_url)) == 0
    merged, whole = files(tmp_path / "merged"), files(tmp_path / "whole")
    assert {k: v for k, v in merged.items() if k.startswith(("items/", "out/"))} == {
        k: v for k, v in whole.items() if k.startswith(("items/", "out/"))}
    assert merged["summary.json"] == whole["summary.json"]


def test_kept_items_load_and_play_a_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.envs import load_default

    with FakeOpenAIServer(responder=responder) as server:
        assert main(synth_argv(tmp_path / "run", write_tree(tmp_path, ("fair", "hard")), server.base_url, n=2)) == 0
    catalog = load_default([])
    made = [e for e in catalog.environments if "/synth-" in e.id]
    assert sorted(e.tier for e in made) == ["fair", "hard"] and not catalog.problems
    assert {e.id for e in made}.isdisjoint({"proactiveeval/recommendation/fair/0", "proactiveeval/recommendation/hard/0"})
    fair = next(e for e in made if e.tier == "fair")
    assert fair.item.environment.trigger_factor == "It is 9 am; FATE-fair happens."
    record_file = tmp_path / "session.json"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(["run", fair.id, "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                     "--api-base", server.base_url, "--max-turns", "1", "--out", str(record_file)]) == 0
    record = RunRecord.model_validate_json(record_file.read_text())
    assert record.env_id == fair.id and record.section.guidance is not None and record.section.guidance.overall == 8


def test_the_topic_tree_drops_near_duplicates_and_is_reused(tmp_path: Path) -> None:
    def topics(request: dict) -> str:
        text = request["messages"][-1]["content"]
        if "first-level" in text:
            return json.dumps({"topics": ["Home cooking", "home  Cooking!", "Travel planning", ""]})
        last = text.split("Topic: ", 1)[1].split("\n", 1)[0].rsplit(" > ", 1)[-1]
        return json.dumps({"topics": [f"{last}: weekday routines", f"{last}: weekday routine", f"{last}: with kids"]})

    with FakeOpenAIServer(responder=topics) as server:
        assert main(["synth", "proactiveeval", "--domain", "persuasion", "--n", "1", "--out", str(tmp_path / "t"),
                     "--tree-only", *role_args(server.base_url)]) == 0
        calls = len(server.requests)
    made = json.loads((tmp_path / "t" / "tree.json").read_text())["persuasion"]
    assert [c["topic"] for c in made["children"]] == ["Home cooking", "Travel planning"]
    assert [g["topic"] for g in made["children"][0]["children"]] == ["Home cooking: weekday routines",
                                                                      "Home cooking: with kids"]
    assert calls == 3  # the root and its two kept children (depth 2)
    # an edited tree is reused as it is, and is part of the config
    made["children"][1]["children"] = [{"topic": "Rail passes", "children": []}]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({"persuasion": made}))
    from proactive_tui.core import registry

    pipeline = registry.get("proactiveeval").generate.pipeline({"domains": ["persuasion"], "n": 1,
                                                             "tree": json.loads(edited.read_text())})
    from proactive_tui.families.proactiveeval.synth import TopicNode

    leaves = TopicNode.model_validate(pipeline.options.tree["persuasion"]).leaves()
    assert leaves[-1] == "Persuasion / Travel planning / Rail passes" and len(leaves) == 3


def test_roles_take_the_session_defaults_unless_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proactive_tui.cli.synth_cmd import resolve_roles

    names = ["generator", "probe1", "probe2", "probe3", "judge", "validator1", "validator2"]
    monkeypatch.setenv("PROACTIVE_TUI_MODEL", "openai/default")
    roles = resolve_roles(names, ["probe=openai/p", "probe2=openai/p2", "judge=openai/j"], "http://127.0.0.1:9/v1", None)
    assert {n: s.model for n, s in roles.items()} == {
        "generator": "openai/default", "probe1": "openai/p", "probe2": "openai/p2", "probe3": "openai/p",
        "judge": "openai/j", "validator1": "openai/default", "validator2": "openai/default"}
    assert {s.api_base for s in roles.values()} == {"http://127.0.0.1:9/v1"}
    with pytest.raises(ValueError, match="not a role of this pipeline"):
        resolve_roles(names, ["critic=openai/x"], None, None)


def test_unnamed_probes_default_to_three_seats_so_three_models_where_they_differ(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper probes with three different models: unnamed, probe1..probe3 take the agent, user
    and judge seats' models, so a config that seats them apart gives three probes by default."""
    from proactive_tui.cli.synth_cmd import resolve_roles
    from proactive_tui.llm.settings import ModelSettings, RoleSettings

    for var in ("PROACTIVE_TUI_MODEL", "PROACTIVE_TUI_AGENT_MODEL", "PROACTIVE_TUI_USER_MODEL", "PROACTIVE_TUI_JUDGE_MODEL"):
        monkeypatch.delenv(var, raising=False)
    seats = RoleSettings(agent=ModelSettings(model="openai/big"), user=ModelSettings(model="openai/mid"),
                         judge=ModelSettings(model="openai/small"))
    roles = resolve_roles(["generator", "probe1", "probe2", "probe3", "judge"], [], None, seats)
    assert [roles[f"probe{i}"].model for i in (1, 2, 3)] == ["openai/big", "openai/mid", "openai/small"]
    assert roles["generator"].model == "openai/big" and roles["judge"].model == "openai/small"


def test_the_config_files_synth_table_seats_roles_under_the_command_line(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`[synth]` in the config file names a model per role or per numbered group; `--role` wins
    over it, and it wins over the seat defaults (PROACTIVE_TUI_MODEL included); a role no
    pipeline has is one clear line, naming where it came from; the table survives the app's
    own rewrite of the config (a theme change)."""
    from proactive_tui.cli.synth_cmd import resolve_roles
    from proactive_tui.config import load_config, save_config

    path = tmp_path / "config.toml"
    path.write_text('theme = "proactive-light"\n\n[synth]\ngenerator = "openai/from-config"\n'
                    'probe = "openai/probe-config"\nvalidator2 = "openai/v2-config"\n')
    config = load_config(path)
    save_config(config.model_copy(update={"theme": "proactive-dark"}), path)  # what ctrl+t does
    config = load_config(path)
    assert config.synth == {"generator": "openai/from-config", "probe": "openai/probe-config",
                            "validator2": "openai/v2-config"}
    names = ["generator", "probe1", "probe2", "judge", "validator1", "validator2"]
    monkeypatch.setenv("PROACTIVE_TUI_MODEL", "openai/default")
    roles = resolve_roles(names, ["probe2=openai/p2-cli"], None, config.roles, config.synth)
    assert {n: s.model for n, s in roles.items()} == {
        "generator": "openai/from-config", "probe1": "openai/probe-config", "probe2": "openai/p2-cli",
        "judge": "openai/default", "validator1": "openai/default", "validator2": "openai/v2-config"}
    with pytest.raises(ValueError, match=r"the config file's \[synth\] critic: not a role of this pipeline"):
        resolve_roles(names, [], None, config.roles, {"critic": "openai/x"})


def test_one_item_end_to_end_on_the_embedded_model(tmp_path: Path) -> None:
    """Every role on local/smollm2, the fewest calls the pipeline can make (a one-leaf tree, one
    candidate, no refinement, one validator: 9 calls at most, each capped by the seat's token cap).
    Its replies are junk, so the item may be kept or rejected; what is checked is that every stage
    ran on the embedded model and the run ended with an outcome and its summary."""
    out = tmp_path / "local"
    proc = subprocess.run(
        [sys.executable, "-m", "proactive_tui", "synth", "proactiveeval", "--domain", "recommendation", "--n", "1",
         "--depth", "1", "--branching", "1", "--candidates", "1", "--max-rounds", "0", "--validators", "1",
         "--out", str(out), "--out-only"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "135M-parameter offline demo model" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tried"] == 1 and summary["unfinished"] == 0 and 4 <= summary["calls"] <= 9 * 3
    assert set(summary["models"].values()) == {"local/smollm2"}
    steps = [json.loads(p.read_text()) for p in out.rglob("*.json") if p.parent.parent.name in ("items", "shared")
             and p.name != "result.json"]
    assert steps and {s["model"] for s in steps} == {"local/smollm2"} and all(s["calls"] >= 1 for s in steps)
    result = json.loads((out / "items" / "recommendation-0000" / "result.json").read_text())
    assert (result["status"] == "kept") == bool(summary["kept"]) and (result["status"] == "kept" or result["reason"])


def test_progress_counts_calls_per_stage_and_outcomes() -> None:
    from io import StringIO

    from rich.console import Console

    from proactive_tui.cli.synth_cmd import ProgressView, SynthProgress
    from proactive_tui.synth.engine import Event, Outcome

    log = StringIO()
    view = ProgressView(Console(file=log, width=200), SynthProgress(("environment", "probe"), planned=3))
    for kind, stage, cached in (("call_start", "environment", False), ("call_end", "environment", False),
                                ("call_end", "probe", True), ("call_start", "probe", False)):
        view.event(Event(kind=kind, stage=stage, cached=cached))
    view.event(Event(kind="item_end", outcome=Outcome(item="a-0000", status="kept", tier="hard")))
    view.event(Event(kind="item_end", outcome=Outcome(item="a-0001", status="rejected", reason="too_easy",
                                                      detail="3 of 3")))
    progress = view.progress
    assert (progress.calls, progress.in_flight, progress.cached) == (
        {"environment": 1, "probe": 0}, {"environment": 0, "probe": 1}, {"environment": 0, "probe": 1})
    assert progress.line() == "items 2/3: kept hard 1; rejected too_easy 1; failed 0; calls 1, in flight 1"
    # not a terminal: a log line per item, the model's words shown literally
    assert "item a-0000: kept (hard)" in log.getvalue() and "item a-0001: rejected (too_easy: 3 of 3)" in log.getvalue()


def test_a_generated_item_has_its_own_id_and_its_exports_and_what_ifs_theirs() -> None:
    from proactive_tui.families.proactiveeval.env import record_id

    synth = {"run": "synth-1a2b3c4d", "item_id": "persuasion-0003"}
    mine = "proactiveeval/persuasion/hard/synth-1a2b3c4d-persuasion-0003"
    assert record_id({"synth": synth}, "persuasion", "hard", 0) == mine
    # an exported session of it, or a "What if" of it, keeps the `synth` key and is told apart by its meta
    assert record_id({"synth": synth, "meta": {"session_id": "s1", "env_id": mine}}, "persuasion", "hard", 0) == f"{mine}@s1"
    assert record_id({"synth": synth, "meta": {"what_if": "whatif-1", "env_id": mine}}, "persuasion", "hard", 0) == (
        f"{mine}~whatif-1")
    assert record_id({"synth": {"run": 3}}, "persuasion", "hard", 2) == "proactiveeval/persuasion/hard/2"


def test_chosen_leaves_are_the_only_topics_items_draw_from(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=responder) as server:
        # one leaf named with the root's title, one without: both spell a leaf of the tree
        assert main(synth_argv(out, write_tree(tmp_path), server.base_url, "--leaf", "recommendation/Recommendation / fair",
                               "--leaf", "recommendation/hard", n=4)) == 0
    got = [fate_of(item) for item in sorted((out / "items").iterdir())]
    assert len(got) == 4 and set(got) == {"fair", "hard"}  # four items over the two chosen leaves only
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["options"]["leaves"] == ["recommendation/Recommendation / fair", "recommendation/hard"]
    # without --leaf the config is what it was before the option (old runs keep their hash)
    from proactive_tui.families.proactiveeval.synth import ProactiveEvalPipeline, SynthOptions

    plain = ProactiveEvalPipeline(SynthOptions(domains=["recommendation"], n=1, tree=tree()))
    assert "leaves" not in plain.config()["options"]


def test_an_unknown_leaf_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(synth_argv(out, write_tree(tmp_path), "http://127.0.0.1:9", "--leaf",
                           "recommendation/Recommendation / nowhere")) != 0
    err = capsys.readouterr().err
    assert "nowhere" in err and "no such leaf" in err and len(err.strip().splitlines()) == 1
    assert not (out / "items").exists()
    # a leaf without a tree to choose it from is refused too
    assert main(["synth", "proactiveeval", "--domain", "recommendation", "--n", "1", "--out", str(tmp_path / "b"),
                 "--leaf", "recommendation/x", *role_args("http://127.0.0.1:9")]) != 0
    assert "--leaf needs --tree" in capsys.readouterr().err
