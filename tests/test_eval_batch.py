"""The batch `eval SELECTOR...` command and its report (issue 16, without the Router limits and the
progress display): selectors, the plan (environments x agents x settings grid x repeats), shards,
resume after an interruption, shard merge equal to one unsharded run, and the report's numbers
recomputed by hand on small fixtures of run records for every family.

Sessions run with scripted seats (a `build` hook) or against the local fake OpenAI server; nothing
reaches the internet, and nothing waits on a clock.
"""

from __future__ import annotations

import json
import math
import os
import signal
from pathlib import Path

import pytest

from conftest import SAMPLE_DIRS
from engine_helpers import scripted_agent, scripted_judge, scripted_user
from proactive_tui.cli.eval_batch import build_plan, run_batch_eval
from proactive_tui.cli.main import build_parser, main
from proactive_tui.core import registry
from proactive_tui.core.run_record import RunRecord, Termination
from proactive_tui.envs import load_default, load_paths
from proactive_tui.evalrun.folder import SESSIONS, SessionResult, finished_ids
from proactive_tui.evalrun.plan import SessionKey, Shard, grid_points, plan_keys, select, shard_keys
from proactive_tui.llm.settings import RoleSettings
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

ENVS = load_default().environments


def ids(envs) -> list[str]:
    return [e.id for e in envs]


# -- selectors -------------------------------------------------------------------------------------


def test_selectors_pick_by_family_prefix_glob_id_and_path() -> None:
    bench = select(ENVS, ["proactivebench"]).environments
    assert bench and all(e.family == "proactivebench" for e in bench)
    assert len(bench) == sum(e.family == "proactivebench" for e in ENVS)
    persuasion = ids(select(ENVS, ["proactiveeval/persuasion"]).environments)
    assert persuasion and all(i.startswith("proactiveeval/persuasion/") for i in persuasion)
    hard = ids(select(ENVS, ["proactiveeval/*/hard"]).environments)
    assert hard and all(i.split("/")[2] == "hard" for i in hard)
    assert hard == ids(select(ENVS, ["proactiveeval/*/hard/*"]).environments)
    one = "proactiveeval/persuasion/fair/0"
    assert ids(select(ENVS, [one]).environments) == [one]
    # a prefix matches whole parts: persuasion/fair/1 is not picked by .../fair/1x
    assert select(ENVS, ["proactiveeval/persuasion/fair/0x"]).unmatched == ["proactiveeval/persuasion/fair/0x"]
    # overlapping selectors give each environment once, sorted
    both = ids(select(ENVS, ["proactiveeval/persuasion", one]).environments)
    assert both == persuasion == sorted(set(persuasion))
    path = SAMPLE_DIRS["proactivebench"] / "coding_01.json"
    picked = select(ENVS, [str(path)], load_path=lambda p: load_paths([p]).environments)
    assert [e.family for e in picked.environments] == ["proactivebench"] and not picked.unmatched
    nothing = select(ENVS, ["proactiveeval/nowhere", "chronos/*/sideways", one])
    assert nothing.unmatched == ["proactiveeval/nowhere", "chronos/*/sideways"]


def test_selectors_that_match_nothing_stop_the_command_and_are_listed(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["eval", "proactiveeval/nowhere", "chronos/nope", "proactiveeval/persuasion/fair/0", "--out", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "no environment matches proactiveeval/nowhere, chronos/nope" in err
    assert not out.exists()


def test_the_batch_options_may_come_before_the_selectors(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["eval", "--agent", "openai/x", "--repeats", "2", "--out", str(out), "proactiveeval/nowhere"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "no environment matches proactiveeval/nowhere" in err  # not openai/x: the option's value


def test_a_flag_no_selected_family_takes_is_an_error_naming_it(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["eval", "chronos/car-purchase/positive", "--retries", "2", "--out", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "--retries is not a setting of the selected families (chronos)" in err
    assert "proactivebench" in err and not out.exists()
    # a flag one of the selected families takes is fine (ProactiveBench takes --retries)
    assert main(["eval", "chronos/car-purchase/positive", "proactivebench/coding_01", "--retries", "2",
                 "--shard", "9/2", "--out", str(out)]) == 2
    assert "--shard 9/2" in capsys.readouterr().err


def test_the_checks_keep_their_names_and_a_family_name_is_a_batch() -> None:
    parser = build_parser()
    assert parser.parse_args(["eval", "splits"]).func.__name__ == "run_splits"
    assert parser.parse_args(["eval", "reward-judge"]).func.__name__ == "run_reward_judge"
    # one name for one thing: `eval proactiveeval` and `eval chronos` are the batch of the family
    for family in ("proactiveeval", "chronos"):
        args = parser.parse_args(["eval", family, "--agent", "a"])
        assert args.func is run_batch_eval and args.selectors == [family]
    assert parser.parse_args(["eval", "chronos", "--reference"]).reference
    batch = parser.parse_args(["eval", "proactivebench", "--agent", "a"])
    assert batch.func is run_batch_eval and batch.selectors == ["proactivebench"]
    spelled = parser.parse_args(["eval", "run", "proactiveeval", "chronos/car-purchase"])
    assert spelled.func is run_batch_eval and spelled.selectors == ["proactiveeval", "chronos/car-purchase"]


def test_the_old_spellings_get_a_clear_error(tmp_path, capsys) -> None:
    """`eval chronos ENV...` once ran only ENV; as selectors `chronos` picks the whole family, so
    narrower selectors after it are refused rather than run bigger than meant. `--out FILE.json`
    (the old commands' file) and `--stored` say what replaced them."""
    with pytest.raises(SystemExit) as exc:
        main(["eval", "proactiveeval", "proactiveeval/persuasion", "--agent", "a"])
    err = " ".join(capsys.readouterr().err.split())
    assert exc.value.code == 2 and "`proactiveeval` selects every proactiveeval environment" in err
    assert "`eval proactiveeval/persuasion ...`" in err
    out = tmp_path / "eval.json"
    assert main(["eval", "proactiveeval/persuasion/fair/0", "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--out is now the batch folder" in err and f"--out {tmp_path / 'eval'}" in err and not out.exists()
    assert main(["eval", "chronos", "--stored"]) == 2
    assert "report show DIR" in " ".join(capsys.readouterr().err.split())


def test_reference_seats_need_a_family_that_has_them(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["eval", "proactiveeval/persuasion/fair/0", "--reference", "--out", str(out)]) == 2
    assert "--reference: proactiveeval has no reference seats" in capsys.readouterr().err and not out.exists()
    assert main(["eval", "chronos/car-purchase/positive", "--reference", "--agent", "m", "--out", str(out)]) == 2
    assert "give no --agent with it" in capsys.readouterr().err


# -- the plan and its shards -----------------------------------------------------------------------


def plan_of(argv: list[str]):
    args = build_parser().parse_args(["eval", *argv])

    def resolve(agent: str, seed: int) -> RoleSettings:
        return RoleSettings.model_validate({"agent": {"model": agent, "seed": seed}, "user": {"model": "u"},
                                            "judge": {"model": "j"}})

    return build_plan(args, ENVS, lambda p: load_paths([p]).environments, "default-agent", resolve)


def test_sessions_planned_are_envs_x_agents_x_grid_x_repeats() -> None:
    manifest, planned = plan_of(["proactiveeval/persuasion/fair", "chronos/car-purchase/positive", "--agent", "a1",
                                 "--agent", "a2", "--repeats", "3"])
    pe = select(ENVS, ["proactiveeval/persuasion/fair"]).environments
    assert len(planned) == manifest.total == len(pe) * 2 * 3 * 3 + 1 * 2 * 1 * 3
    assert manifest.sweeps == {"chronos": {}, "proactiveeval": {"agreeableness": ["low", "medium", "high"]}}
    assert len({p.key.id for p in planned}) == len(planned)
    for p in planned:  # seeds derived from the repeat, recorded, and sent by every seat
        assert p.seed == p.key.repeat and p.spec.roles.agent.seed == p.key.repeat
        assert p.spec.roles.agent.model == p.key.agent
        if p.key.family == "proactiveeval":
            assert p.spec.settings["agreeableness"] == p.key.settings["agreeableness"]
            assert p.spec.settings["seed"] == p.key.repeat
    one_level, planned = plan_of(["proactiveeval/persuasion/fair/0", "--agreeableness", "low", "--max-turns", "1"])
    assert [p.key.settings for p in planned] == [{"agreeableness": "low"}]
    assert planned[0].spec.settings["max_turns"] == 1 and planned[0].key.agent == "default-agent"
    assert one_level.settings["proactiveeval"]["max_turns"] == 1


def test_shards_partition_the_plan_whatever_the_order() -> None:
    envs = select(ENVS, ["proactiveeval/persuasion", "chronos/car-purchase"]).environments
    keys = plan_keys(envs, ["a", "b"], {"proactiveeval": grid_points({"agreeableness": ["low", "high"]})}, 2)
    for n in (1, 2, 3, 7):
        slices = [shard_keys(keys, Shard(index=i, count=n)) for i in range(n)]
        flat = [k.id for s in slices for k in s]
        assert len(flat) == len(set(flat)) == len(keys) and set(flat) == {k.id for k in keys}
        # a group (an environment, agent and repeat at every level) stays on one shard: the shards
        # hold within one group of each other (issue 30: the levels share one plan)
        groups = [len({k.group for k in s}) for s in slices]
        assert max(groups) - min(groups) <= 1
        assert [k.id for k in shard_keys(list(reversed(keys)), Shard(index=n - 1, count=n))] == [k.id for k in slices[-1]]
    assert Shard.parse("3/8") == Shard(index=3, count=8)
    for bad in ("8/8", "1", "-1/2", "0/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


def test_a_key_id_is_stable_and_file_safe() -> None:
    key = SessionKey(family="proactiveeval", env_id="proactiveeval/persuasion/fair/0", agent="openai/gpt:4o",
                     settings={"agreeableness": "low"}, repeat=2)
    assert key.id == SessionKey.model_validate(json.loads(key.model_dump_json())).id
    assert "/" not in key.id and ":" not in key.id and key.id.startswith("proactiveeval_persuasion_fair_0__openai_gpt_4o")
    alike = key.model_copy(update={"agent": "openai_gpt_4o"})
    assert alike.id != key.id  # the slugs agree; the hash tells them apart


# -- running with scripted seats -------------------------------------------------------------------


def bench_agent():
    from proactive_tui.core.participants import ScriptedParticipant

    def structured(request, schema):
        task = "task" if request.turn == 1 else "null"
        return {"Purpose": "p", "Thoughts": "t", "Proactive Task": task, "Response": "offer" if task != "null" else None}

    return ScriptedParticipant([], structured=structured, label="scripted-agent")


def bench_judge():
    from proactive_tui.core.participants import ScriptedParticipant
    from proactive_tui.families.proactivebench.judges import JudgeVerdict

    def structured(request, schema):
        proposed = json.loads(request.messages[-1]["content"]).get("Proposed Task")
        return JudgeVerdict(thought="t", judgement="accepted" if proposed else "rejected")

    return ScriptedParticipant([], structured=structured, label="scripted-judge")


class Seats:
    """A `build` hook seating scripted participants (no model); counts the sessions it started and
    can stop the batch (SIGTERM to this process) when the n-th starts."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.started: list[tuple[str, int | None]] = []
        self.stop_at = stop_at

    def __call__(self, spec, env, gateway):
        from proactive_tui.core.spec import build_session

        self.started.append((spec.env_id, spec.roles.agent.seed))
        if self.stop_at is not None and len(self.started) == self.stop_at:
            os.kill(os.getpid(), signal.SIGTERM)
        if env.family == "chronos":
            from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
            from proactive_tui.families.chronos.settings import ChronosSettings
            from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona

            return ChronosSession(env, ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()),
                                  ChronosSettings(**spec.settings))
        if env.family == "proactivebench":
            seats = {"agent": bench_agent(), "user": bench_judge()}
        else:
            seats = {"agent": scripted_agent(), "user": scripted_user(), "judge": scripted_judge()}
        return build_session(spec, env, gateway, seats=seats)


def run(argv: list[str], seats: Seats) -> int:
    args = build_parser().parse_args(["eval", *argv])
    args.envs = list(getattr(args, "sub_envs", []) or [])
    return run_batch_eval(args, build=seats)


def report_json(folder: Path) -> dict:
    data = json.loads((folder / "report.json").read_text())
    data.pop("timing")
    return data


MIXED = ["proactiveeval/persuasion/fair/0", "chronos/car-purchase/positive", "proactivebench/coding_01",
         "--agent", "m1", "--agent", "m2", "--agreeableness", "all", "--repeats", "2", "--max-turns", "1",
         "--max-events", "2", "--no-store", "--concurrency", "3"]


def test_shards_merged_give_the_report_of_one_unsharded_run(tmp_path, capsys) -> None:
    whole = tmp_path / "whole"
    assert run([*MIXED, "--out", str(whole)], Seats()) == 0
    planned = json.loads((whole / "manifest.json").read_text())["total"]
    assert planned == (3 + 1 + 1) * 2 * 2 and len(finished_ids(whole)) == planned
    shard_dirs = [tmp_path / f"shard{i}" for i in range(2)]
    counts = []
    for i, folder in enumerate(shard_dirs):
        seats = Seats()
        assert run([*MIXED, "--shard", f"{i}/2", "--out", str(folder)], seats) == 0
        counts.append(len(seats.started))
        assert report_json(folder)["partial"] is True  # a shard alone is part of the sweep
    assert sum(counts) == planned and all(counts)
    merged = tmp_path / "merged"
    assert main(["report", "merge", *map(str, shard_dirs), "--out", str(merged)]) == 0
    assert report_json(merged) == report_json(whole)
    assert report_json(whole)["partial"] is False and set(report_json(whole)["families"]) == {
        "proactiveeval", "chronos", "proactivebench"}
    for name in ("report.csv", "report.md"):
        assert (merged / name).read_text() == (whole / name).read_text()
    # `report show` recomputes the tables from the records of either folder
    capsys.readouterr()
    assert main(["report", "show", str(merged)]) == 0
    shown = capsys.readouterr().out
    for title in ("ProactiveEval: dialogue guidance", "ProactiveBench: per split", "Chronos: per tier",
                  "Chronos: consistency over repeats"):
        assert title in shown
    # shards of another sweep do not merge
    other = tmp_path / "other"
    assert run([*MIXED[:1], "--agent", "m1", "--agreeableness", "low", "--no-store", "--out", str(other)], Seats()) == 0
    assert main(["report", "merge", str(shard_dirs[0]), str(other), "--out", str(tmp_path / "bad")]) == 1


def test_resume_after_a_stop_runs_exactly_what_did_not_finish(tmp_path) -> None:
    out = tmp_path / "out"
    argv = ["proactiveeval/persuasion/fair/0", "--agreeableness", "low", "--repeats", "4", "--max-turns", "1",
            "--concurrency", "1", "--no-store", "--out", str(out)]
    first = Seats(stop_at=3)  # SIGTERM as the third session starts
    assert run(argv, first) == 143
    done = finished_ids(out)
    assert 1 <= len(done) < 4 and not list((out / SESSIONS).glob(".*.tmp"))
    partial = report_json(out)
    assert partial["partial"] is True and partial["finished"] == len(done) and len(partial["missing"]) == 4 - len(done)
    # the folder holds a batch: running into it again without --resume is refused
    assert run(argv, Seats()) == 1
    again = Seats()
    assert run([*argv, "--resume"], again) == 0
    assert len(again.started) == 4 - len(done)
    ran_seeds = sorted(seed for _, seed in first.started[:len(done)])
    assert sorted(seed for _, seed in again.started) == sorted(set(range(4)) - set(ran_seeds))
    assert len(finished_ids(out)) == 4 and report_json(out)["partial"] is False
    # a record deleted is run again, and only it
    victim = sorted((out / SESSIONS).glob("*.json"))[1]
    victim.unlink()
    third = Seats()
    assert run([*argv, "--resume"], third) == 0
    assert len(third.started) == 1 and victim.exists()
    nothing = Seats()
    assert run([*argv, "--resume"], nothing) == 0 and nothing.started == []
    # --resume with another command names what differs
    assert run([*argv[:-2], "--repeats", "5", "--out", str(out), "--resume"], Seats()) == 1


# -- through the fake server and the store ---------------------------------------------------------


def test_eval_through_the_fake_server_stores_sessions_and_writes_the_report(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--out", str(out)])
        first = len(server.requests)
        seeds = {r.body.get("seed") for r in server.requests}
        assert main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--agent", "openai/b",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--out", str(out), "--resume"]) == 0
        assert len(server.requests) == first  # nothing left to run: no call made
    assert code == 0 and first > 0 and seeds == {0}
    assert not any(r.body.get("stream") for r in server.requests)  # a batch asks for whole replies by default
    progress = capsys.readouterr().err
    assert "Guidance (overall) 8/10" in progress and "Plan " in progress  # each headline score by its name
    report = report_json(out)
    guidance = next(t for t in report["families"]["proactiveeval"] if t["id"] == "guidance")
    assert [(r["model"], r["values"]["persuasion"], r["values"]["overall"]) for r in guidance["rows"]] == [
        ("openai/a", 8.0, 8.0), ("openai/b", 8.0, 8.0)]
    csv_lines = (out / "report.csv").read_text().splitlines()
    assert csv_lines[0] == "family,table,model,group,measure,value,std,ci_low,ci_high,protocol"
    # one environment: nothing to resample, so no interval; --max-turns 1 is not the paper's 6
    assert "proactiveeval,guidance,openai/a,,persuasion,8.0,,,,max turns 1 (the paper's: 6)" in csv_lines
    assert "| openai/a | 8.00 | 8.00 | not the protocol: max turns 1 (the paper's: 6) |" in (out / "report.md").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["agents"] == ["openai/a", "openai/b"] and manifest["models"] == {"user": "openai/u", "judge": "openai/j"}
    from proactive_tui.store import load_record, open_store

    with open_store() as store:
        for path in (out / SESSIONS).glob("*.json"):
            saved = json.loads(path.read_text())
            assert load_record(store, saved["record"]["id"]).env_id == "proactiveeval/persuasion/fair/0"


def test_eval_resume_runs_the_folders_own_command_from_where_it_ran(tmp_path, monkeypatch, capsys) -> None:
    """`eval resume DIR` needs no command line: relative paths mean what they meant, the sweep is
    the folder's, and only what has no finished record runs."""
    work = tmp_path / "work"
    (work / "mine" / "persuasion").mkdir(parents=True)
    sample = json.loads((SAMPLE_DIRS["proactiveeval"] / "persuasion" / "fair.json").read_text())
    (work / "mine" / "persuasion" / "fair.json").write_text(json.dumps(sample[:1]))
    monkeypatch.chdir(work)
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        argv = ["eval", "mine", "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j",
                "--api-base", server.base_url, "--agreeableness", "low", "--repeats", "2", "--max-turns", "1",
                "--out", "out", "--no-store"]
        assert main(argv) == 0
        victim = sorted((work / "out" / SESSIONS).glob("*.json"))[0]
        seed = json.loads(victim.read_text())["seed"]
        victim.unlink()
        monkeypatch.chdir(tmp_path)  # elsewhere: the folder's command still finds `mine` and `out`
        before = len(server.requests)
        assert main(["eval", "resume", str(work / "out"), "--concurrency", "3"]) == 0
        resumed = server.requests[before:]
        assert victim.exists() and resumed and {r.body.get("seed") for r in resumed} == {seed}
        assert main(["eval", "resume", str(work / "out")]) == 0 and len(server.requests) == before + len(resumed)
    command = json.loads((work / "out" / "command.json").read_text())
    assert command["cwd"] == str(work) and command["options"]["selectors"] == ["mine"]
    assert command["options"]["concurrency"] == 3  # how it ran last; the sweep itself never changes
    assert report_json(work / "out")["partial"] is False
    assert main(["eval", "resume", str(tmp_path)]) == 1
    assert "holds no command.json (not a batch folder)" in capsys.readouterr().err


def test_eval_stream_asks_the_providers_for_streamed_replies(tmp_path) -> None:
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        assert main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--user", "openai/u",
                     "--judge", "openai/j", "--api-base", server.base_url, "--agreeableness", "low",
                     "--max-turns", "1", "--out", str(tmp_path / "out"), "--no-store", "--stream"]) == 0
        dialogue = [r.body for r in server.requests if r.body.get("model") in ("a", "u")
                    and "response_format" not in r.body]  # the agent's plan is structured: never streamed
    assert dialogue and all(body.get("stream") is True for body in dialogue)
    assert report_json(tmp_path / "out")["families"]["proactiveeval"]


# -- the report's numbers, by hand -----------------------------------------------------------------


def record(family: str, env_id: str, section, environment: dict | None = None) -> RunRecord:
    return RunRecord(format_version=2, id=f"{env_id}-{id(section)}", family=family, env_id=env_id, environment=environment or {},
                     mode="watch", human_seats=[], seats={}, settings={}, section=section,
                     termination=Termination(reason="max_turns"))


def result(family: str, env_id: str, repeat: int, section, environment=None, settings=None) -> SessionResult:
    key = SessionKey(family=family, env_id=env_id, agent="m", settings=settings or {}, repeat=repeat)
    return SessionResult(key=key, seed=repeat, record=record(family, env_id, section, environment))


def row(tables, table_id: str, group: str = "") -> dict:
    table = next(t for t in tables if t.id == table_id)
    r = next(r for r in table.rows if r.model == "m" and r.group == group)
    return {"values": r.values, "std": r.std}


def close(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b, abs_tol=1e-9))


def test_proactiveeval_report_by_hand() -> None:
    from proactive_tui.families.proactiveeval.events import GuidanceScore
    from proactive_tui.families.proactiveeval.record import PlanningRecord, ProactiveEvalSection

    def pe(env: str, repeat: int, plan: int, guidance: int) -> SessionResult:
        g = GuidanceScore(reasoning="r", overall=guidance, effectiveness=1, personalization=1, tone=1, engagement=1,
                          naturalness=1, judge_model="j")
        domain = env.split("/")[1]
        return result("proactiveeval", env, repeat, ProactiveEvalSection(planning=PlanningRecord(score=plan), guidance=g),
                      environment={"domain": domain}, settings={"agreeableness": "low"})

    p0, p1, r0 = "proactiveeval/persuasion/fair/0", "proactiveeval/persuasion/fair/1", "proactiveeval/recommendation/fair/0"
    results = [pe(p0, 0, 6, 8), pe(p0, 1, 4, 6), pe(p1, 0, 8, 4), pe(p1, 1, 8, 8), pe(r0, 0, 5, 9), pe(r0, 1, 7, 9)]
    tables = registry.get("proactiveeval").batch.tables(results, 2)
    g, p = row(tables, "guidance"), row(tables, "planning")
    # persuasion guidance: repeat 0 (8+4)/2 = 6, repeat 1 (6+8)/2 = 7 -> 6.5 ± sqrt(0.5)
    assert close(g["values"]["persuasion"], 6.5) and close(g["std"]["persuasion"], math.sqrt(0.5))
    assert close(g["values"]["recommendation"], 9.0) and close(g["std"]["recommendation"], 0.0)
    # overall: repeat 0 (8+4+9)/3 = 7, repeat 1 (6+8+9)/3 = 23/3
    assert close(g["values"]["overall"], (7 + 23 / 3) / 2) and close(g["std"]["overall"], (23 / 3 - 7) / math.sqrt(2))
    # planning: persuasion (6+8)/2 = 7 and (4+8)/2 = 6; overall 19/3 both repeats
    assert close(p["values"]["persuasion"], 6.5) and close(p["std"]["persuasion"], math.sqrt(0.5))
    assert close(p["values"]["overall"], 19 / 3) and close(p["std"]["overall"], 0.0)
    # pass = guidance >= 7: p0 [T, F], p1 [F, T], r0 [T, T]
    c = row(tables, "consistency", "overall")["values"]
    assert c["tasks"] == 3 and close(c["pass_1"], (0.5 + 0.5 + 1) / 3) and close(c["pass_k"], 1 / 3)
    # variance of guidance over repeats: p0 var(8, 6) = 2, p1 var(4, 8) = 8, r0 0
    assert close(c["variance"], (2 + 8 + 0) / 3)
    persuasion = row(tables, "consistency", "Persuasion")["values"]
    assert close(persuasion["pass_1"], 0.5) and close(persuasion["pass_k"], 0.0) and close(persuasion["variance"], 5.0)
    low = row(tables, "agreeableness", "low")
    assert low["values"]["sessions"] == 6 and close(low["values"]["guidance"], g["values"]["overall"])


def test_proactiveeval_per_level_tables_by_hand() -> None:
    """What the earlier `eval proactiveeval` printed per agreeableness level (rows per domain; the
    sessions behind each mean, the scored ones, the targets reached) is in the batch report."""
    from proactive_tui.families.proactiveeval.events import GuidanceScore
    from proactive_tui.families.proactiveeval.record import PlanningRecord, ProactiveEvalSection

    def pe(env: str, level: str, repeat: int, plan: int | None, guidance: int | None, reached: bool = False):
        g = None if guidance is None else GuidanceScore(
            reasoning="r", overall=guidance, effectiveness=1, personalization=1, tone=1, engagement=1, naturalness=1,
            judge_model="j")
        r = result("proactiveeval", env, repeat, ProactiveEvalSection(planning=PlanningRecord(score=plan), guidance=g),
                   environment={"domain": env.split("/")[1]}, settings={"agreeableness": level})
        if reached:
            r.record.termination = Termination(reason="target_reached")
        return r

    p0, r0 = "proactiveeval/persuasion/fair/0", "proactiveeval/recommendation/fair/0"
    results = [pe(p0, "low", 0, 6, 4), pe(p0, "low", 1, 8, 6), pe(r0, "low", 0, 5, None),
               pe(r0, "low", 1, None, 9, reached=True), pe(p0, "high", 0, 2, 2), pe(p0, "high", 1, 4, 3)]
    tables = registry.get("proactiveeval").batch.tables(results, 2)
    assert [r.group for r in next(t for t in tables if t.id == "guidance_by_level").rows] == ["low", "high"]
    low, high = row(tables, "guidance_by_level", "low"), row(tables, "guidance_by_level", "high")
    # low persuasion guidance: 4 and 6 -> 5 ± sqrt(2); low recommendation only repeat 1 scored: 9
    assert close(low["values"]["persuasion"], 5.0) and close(low["std"]["persuasion"], math.sqrt(2))
    assert close(low["values"]["recommendation"], 9.0) and low["std"]["recommendation"] is None
    # low overall: repeat 0 (4)/1 = 4, repeat 1 (6+9)/2 = 7.5
    assert close(low["values"]["overall"], (4 + 7.5) / 2)
    assert close(high["values"]["persuasion"], 2.5) and high["values"]["recommendation"] is None
    plan_low = row(tables, "planning_by_level", "low")
    assert close(plan_low["values"]["persuasion"], 7.0) and close(plan_low["values"]["recommendation"], 5.0)
    level = row(tables, "agreeableness", "low")["values"]
    assert (level["sessions"], level["plan_n"], level["guidance_n"], level["reached"]) == (4, 3, 3, 1)
    assert row(tables, "agreeableness", "high")["values"]["reached"] == 0


def test_proactivebench_report_by_hand() -> None:
    from proactive_tui.families.proactivebench.metrics import Confusion
    from proactive_tui.families.proactivebench.record import ProactiveBenchSection, TraceEventRecord

    def pb(trace: str, splits: list[str], repeat: int, counts: tuple[int, int, int, int], verdicts) -> SessionResult:
        tp, fp, tn, fn = counts
        events = [TraceEventRecord(index=i, time="t", event="e", judgement=v) for i, v in enumerate(verdicts, 1)]
        section = ProactiveBenchSection(trace=trace, splits=splits, events=events,
                                        confusion=Confusion(tp=tp, fp=fp, tn=tn, fn=fn))
        return result("proactivebench", f"proactivebench/{trace}", repeat, section)

    results = [pb("a", ["s1"], 0, (2, 1, 1, 0), ["accepted", "accepted"]),
               pb("b", ["s1", "s2"], 0, (0, 1, 2, 1), ["rejected", None]),
               pb("a", ["s1"], 1, (1, 0, 1, 1), ["accepted", "rejected"]),
               pb("b", ["s1", "s2"], 1, (1, 1, 1, 0), ["rejected", "accepted"])]
    tables = registry.get("proactivebench").batch.tables(results, 2)
    s1 = row(tables, "splits", "s1")
    # s1 repeat 0: TP 2 FP 2 TN 3 FN 1; repeat 1: TP 2 FP 1 TN 2 FN 1
    recall = (2 / 3, 2 / 3)
    precision = (2 / 4, 2 / 3)
    accuracy = (5 / 8, 4 / 6)
    false_alarm = (2 / 4, 1 / 3)
    f1 = tuple(2 * p * r / (p + r) for p, r in zip(precision, recall))
    for key, pair in (("recall", recall), ("precision", precision), ("accuracy", accuracy),
                      ("false_alarm", false_alarm), ("f1", f1)):
        assert close(s1["values"][key], sum(pair) / 2), key
        assert close(s1["std"][key], abs(pair[0] - pair[1]) / math.sqrt(2)), key
    s2 = row(tables, "splits", "s2")  # b alone: repeat 0 TP 0 FP 1 TN 2 FN 1; repeat 1 TP 1 FP 1 TN 1 FN 0
    assert close(s2["values"]["recall"], (0 + 1) / 2) and close(s2["values"]["false_alarm"], (1 + 0.5) / 2)
    assert close(s2["values"]["f1"], (0 + 2 * 0.5 * 1 / 1.5) / 2)
    assert close(s2["values"]["accuracy"], (2 / 4 + 2 / 3) / 2)
    assert close(row(tables, "splits", "all traces")["values"]["f1"], s1["values"]["f1"])  # every trace is in s1
    # events: a#1 [T, T], a#2 [T, F], b#1 [F, F], b#2 [-, T] (one counted repeat: not in pass^2)
    c = row(tables, "consistency", "all traces")["values"]
    assert c["tasks"] == 4 and close(c["pass_1"], (1 + 0.5 + 0 + 1) / 4) and close(c["pass_k"], (1 + 0 + 0) / 3)
    assert close(c["variance"], (0 + 0.5 + 0) / 3)


def test_chronos_report_by_hand() -> None:
    from proactive_tui.families.chronos.events import SessionOutcome, TurnOutcome
    from proactive_tui.families.chronos.record import ChronosSection

    def turn(i: int, action: bool, status: bool) -> TurnOutcome:
        return TurnOutcome(turn=i, input_kind="user", clock="t", state_index=0, monitoring=False,
                           expected_action="NO_ACTION", acceptable_actions=["NO_ACTION"], expected_status="PENDING",
                           action_correct=action, status_correct=status)

    def ch(env: str, branch: str, tier: str, repeat: int, success: bool, marks) -> SessionResult:
        section = ChronosSection(branch=branch, tier=tier, turns=[turn(i, a, s) for i, (a, s) in enumerate(marks, 1)],
                                 outcome=SessionOutcome(branch=branch, tier=tier, success=success, reason="r"))
        return result("chronos", f"chronos/{env}", repeat, section)

    results = [ch("pos1", "positive", "simple", 0, True, [(True, True), (True, False)]),
               ch("pos1", "positive", "simple", 1, False, [(False, True)]),
               ch("neg1", "negative", "simple", 0, True, [(True, True)]),
               ch("neg1", "negative", "simple", 1, True, [(True, False), (False, False)]),
               ch("pos2", "positive", "complex", 0, False, [(True, True)]),
               ch("pos2", "positive", "complex", 1, False, [(True, True)])]
    tables = registry.get("chronos").batch.tables(results, 2)
    simple = row(tables, "tiers", "simple")
    # repeat 0: positive 1, negative 1, overall 1, action 3/3, status 2/3
    # repeat 1: positive 0, negative 1, overall 0.5, action 1/3, status 1/3
    expected = {"positive_success": (1.0, 0.0), "negative_success": (1.0, 1.0), "overall_success": (1.0, 0.5),
                "action_accuracy": (1.0, 1 / 3), "status_accuracy": (2 / 3, 1 / 3)}
    for key, (a, b) in expected.items():
        assert close(simple["values"][key], (a + b) / 2), key
        assert close(simple["std"][key], abs(a - b) / math.sqrt(2)), key
    assert simple["values"]["sessions"] == 4
    complex_ = row(tables, "tiers", "complex")
    assert close(complex_["values"]["positive_success"], 0.0) and complex_["values"]["negative_success"] is None
    assert complex_["values"]["overall_success"] is None and close(complex_["values"]["action_accuracy"], 1.0)
    # pass = success: pos1 [T, F], neg1 [T, T], pos2 [F, F]
    c = row(tables, "consistency", "overall")["values"]
    assert c["tasks"] == 3 and close(c["pass_1"], 0.5) and close(c["pass_k"], 1 / 3)
    assert close(c["variance"], (0.5 + 0 + 0) / 3)
    assert close(row(tables, "consistency", "simple")["values"]["pass_k"], 0.5)
    # what each rate rests on, as the earlier `eval chronos` printed it: 2 positive and 2 negative
    # sessions in the simple tier, none negative in the complex one (hence no overall)
    simple_b, complex_b = row(tables, "branches", "simple")["values"], row(tables, "branches", "complex")["values"]
    assert (simple_b["positive_sessions"], simple_b["negative_sessions"]) == (2, 2)
    assert (complex_b["positive_sessions"], complex_b["negative_sessions"]) == (2, 0)
    assert simple_b["paired_samples"] == 0 and simple_b["paired_success"] is None


def test_chronos_paired_samples_by_hand() -> None:
    """A branching sample with both branches run counts as a pair; both right when both succeeded."""
    from proactive_tui.families.chronos.events import SessionOutcome
    from proactive_tui.families.chronos.record import ChronosSection

    def ch(env: str, branch: str, repeat: int, success: bool) -> SessionResult:
        section = ChronosSection(branch=branch, tier="simple", turns=[],
                                 outcome=SessionOutcome(branch=branch, tier="simple", success=success, reason="r"))
        return result("chronos", f"chronos/{env}/{branch}", repeat, section, environment={"sample_id": env})

    results = [ch("a", "positive", 0, True), ch("a", "negative", 0, True), ch("b", "positive", 0, True),
               ch("b", "negative", 0, False), ch("a", "positive", 1, True), ch("a", "negative", 1, False)]
    simple = row(registry.get("chronos").batch.tables(results, 2), "branches", "simple")
    # repeat 0: pairs a (both right), b (not); repeat 1: pair a (not) -> 0.5 and 0.0
    assert simple["values"]["paired_samples"] == 3
    assert close(simple["values"]["paired_success"], 0.25) and close(simple["std"]["paired_success"], 0.5 / math.sqrt(2))


def test_pass_hat_k_is_the_unbiased_estimate() -> None:
    from proactive_tui.evalrun.stats import pass_hat_k, repeat_variance

    # 3 repeats, 2 passed: pass^1 = 2/3, pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0
    trials = {"t": [True, True, False]}
    assert [pass_hat_k(trials, k) for k in (1, 2, 3)] == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
    assert pass_hat_k(trials, 4) is None and repeat_variance({"t": [1.0]}) is None


def test_the_evalrun_package_stays_headless() -> None:
    import subprocess
    import sys

    from conftest import ROOT

    probe = ("import json, sys\nimport proactive_tui.evalrun.plan, proactive_tui.evalrun.folder, "
             "proactive_tui.evalrun.report, proactive_tui.evalrun.runner, proactive_tui.evalrun.stats\n"
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'textual'})))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_a_failed_session_is_kept_apart_and_run_again_on_resume(tmp_path) -> None:
    out = tmp_path / "out"
    argv = ["proactiveeval/persuasion/fair/0", "--agreeableness", "low", "--repeats", "3", "--max-turns", "1",
            "--no-store", "--out", str(out)]

    class Failing(Seats):
        def __call__(self, spec, env, gateway):
            if spec.roles.agent.seed == 1:
                raise RuntimeError("the model went away")
            return super().__call__(spec, env, gateway)

    assert run(argv, Failing()) == 1
    failed = list((out / "failed").glob("*.json"))
    assert len(failed) == 1 and "the model went away" in json.loads(failed[0].read_text())["reason"]
    assert len(finished_ids(out)) == 2 and report_json(out)["missing"] == [failed[0].stem]
    again = Seats()
    assert run([*argv, "--resume"], again) == 0
    assert [seed for _, seed in again.started] == [1] and not list((out / "failed").glob("*.json"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert "agreeableness" not in manifest["settings"]["proactiveeval"]
    assert manifest["sweeps"]["proactiveeval"] == {"agreeableness": ["low"]}
