"""Chronos fidelity to the paper's protocol (arXiv 2601.09382): each test has a scripted agent
break, or keep, one rule, so it fails if the rule is not enforced."""

from __future__ import annotations

import json

import pytest

from chronos_helpers import chronos_env, make_session, play
from proactive_tui.families.chronos.export import sample
from proactive_tui.families.chronos.report import TASK_NOT_RESET, turn_blocks
from proactive_tui.families.chronos.testing import OracleAgent

CT = "COMPLETE_TASK"


def keep_task_on_completion(session, reply):
    """COMPLETE_TASK with the right status, but intention and constraints left in place."""
    if reply.proactive_action != CT:
        return None
    data = reply.model_dump()
    data["task_description"].update(intention=session.state.intention, constraints={"budget": "low"})
    return data


# -- 1. COMPLETE_TASK nulls the task ---------------------------------------------------------------

async def test_complete_task_with_nulled_task_is_right_and_the_final_task_is_null() -> None:
    _, record = await play(make_session("car-purchase/positive"))
    last = record.section.turns[-1]
    assert last.action == CT and last.task_reset is True and last.status_correct
    o = record.section.outcome
    assert o.success is True and o.status_accuracy == 1.0 and o.task is None
    assert all(t.task_reset is None for t in record.section.turns[:-1])


async def test_complete_task_keeping_the_task_is_a_status_error() -> None:
    _, record = await play(make_session("car-purchase/positive", agent=OracleAgent(override=keep_task_on_completion)))
    turns = record.section.turns
    last = turns[-1]
    assert last.action == CT and last.status == "COMPLETED"
    assert last.task_reset is False and last.status_correct is False and last.action_correct is True
    o = record.section.outcome
    # success is the paper's criterion (COMPLETE_TASK + COMPLETED after confirmation); the slip costs status accuracy
    assert o.success is True and o.status_accuracy == pytest.approx((len(turns) - 1) / len(turns))
    # the task state as recorded and exported after COMPLETE_TASK is null, whatever the reply held
    assert o.task is None
    exported = sample(record)
    assert exported["outcome"]["task"] is None
    # the assistant message stays what the model wrote
    assert json.loads(exported["messages"][-1]["content"])["task_description"]["intention"]
    assert any(TASK_NOT_RESET in getattr(b, "text", "") for b in turn_blocks(record))


async def test_negative_branch_keeps_the_task_open_in_the_record() -> None:
    _, record = await play(make_session("car-purchase-towing/negative"))
    o = record.section.outcome
    assert o.success is True and o.task is not None and o.task["intention"]


# -- 2. the "guided" prompt variant ----------------------------------------------------------------

def _agent_systems(server) -> list[str]:
    return [r.body["messages"][0]["content"] for r in server.requests if r.body.get("response_format")]


@pytest.mark.parametrize("variant", ["standard", "guided", None])
async def test_prompt_variant_reaches_the_model_and_the_record(variant: str | None) -> None:
    """None: the default, which is the paper's guided prompt (issue 30: the paper reports every
    closed model with it)."""
    from chronos_helpers import chronos_env, scripted_agent_responder
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.core.run_record import fold
    from proactive_tui.families.chronos import prompts
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
    from proactive_tui.families.chronos.settings import ChronosSettings
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        gateway = Gateway()
        settings = ModelSettings(model="openai/fake", api_base=server.base_url)
        seats = ChronosSeats(agent=LLMParticipant(gateway, settings), user=LLMParticipant(gateway, settings))
        session = ChronosSession(chronos_env("car-purchase-towing/negative"), seats,
                                 ChronosSettings(max_turns=3, **({} if variant is None else {"prompt_variant": variant})))
        record = fold([e async for e in session.events()])
        systems = _agent_systems(server)
    variant = variant or "guided"
    assert systems and all(s == prompts.agent_system(variant) for s in systems)
    assert (prompts.GUIDANCE in systems[0]) is (variant == "guided")
    assert record.settings["prompt_variant"] == variant
    assert record.versions["prompts"] == prompts.PROMPT_VERSION
    assert sample(record)["messages"][0]["content"] == prompts.agent_system(variant)


def test_guidance_covers_the_papers_points_in_our_words() -> None:
    from proactive_tui.families.chronos import prompts

    g = prompts.GUIDANCE
    for point in ("COMPLETE_TASK", "COMPLETED", "NO_ACTION", 'source="tool_call"', "FOLLOW_UP", "KEEP_SILENT", "JSON"):
        assert point in g
    assert prompts.agent_system("standard") == prompts.AGENT_SYSTEM
    with pytest.raises(ValueError):
        prompts.agent_system("fancy")


def test_prompt_variant_setting_is_validated() -> None:
    from pydantic import ValidationError
    from proactive_tui.families.chronos.settings import ChronosSettings

    assert ChronosSettings().prompt_variant == "guided"  # the paper's, for closed models (issue 30)
    assert "Appendix D.2" in (ChronosSettings.model_fields["prompt_variant"].description or "")
    with pytest.raises(ValidationError):
        ChronosSettings(prompt_variant="fancy")


# -- 3. success per branch and tier ----------------------------------------------------------------

def test_by_tier_pairs_branches_within_each_tier() -> None:
    from proactive_tui.families.chronos.metrics import SessionSample, by_tier

    T, F = True, False
    samples = [
        SessionSample(branch="positive", tier="simple", success=T, action_correct=[T, T], status_correct=[T, T]),
        SessionSample(branch="positive", tier="simple", success=F, action_correct=[F], status_correct=[T]),
        SessionSample(branch="negative", tier="simple", success=T, action_correct=[T], status_correct=[F]),
        SessionSample(branch="positive", tier="complex", success=T, action_correct=[T], status_correct=[T]),
        SessionSample(branch="negative", tier="complex", success=None, action_correct=[F], status_correct=[F]),
    ]
    m = by_tier(samples)
    assert list(m) == ["simple", "complex"]
    assert (m["simple"].positive_success, m["simple"].negative_success, m["simple"].overall_success) == (0.5, 1.0, 0.75)
    assert m["simple"].action_accuracy == pytest.approx(3 / 4) and m["simple"].status_accuracy == pytest.approx(3 / 4)
    # the complex tier has no scored negative session: no overall, and it says which branch is missing
    assert m["complex"].positive_success == 1.0 and m["complex"].overall_success is None
    assert m["complex"].missing_branch == "negative"


def _batch(argv: list[str], build=None) -> int:
    """`proactive-tui eval ARGV` (the batch command), with `build` seating scripted participants."""
    from proactive_tui.cli.eval_batch import run_batch_eval
    from proactive_tui.cli.main import build_parser

    args = build_parser().parse_args(["eval", *argv])
    args.envs = list(getattr(args, "sub_envs", []) or [])
    return run_batch_eval(args, build=build)


def _tiers(folder) -> dict[str, dict]:
    """The batch report's Chronos per-tier values (one agent), by tier: the rates of the per-tier
    table with the branch counts of the branches table."""
    report = json.loads((folder / "report.json").read_text())
    out: dict[str, dict] = {}
    for table in report["families"]["chronos"]:
        if table["id"] in ("tiers", "branches"):
            for row in table["rows"]:
                out.setdefault(row["group"], {}).update(row["values"])
    return out


def _batch_row(out: str, tier: str) -> str:
    """The printed row of a tier in the batch's per-tier table (the first table with tier rows)."""
    return next(line for line in out.splitlines() if f" {tier} " in line and "%" in line)


def test_eval_sessions_with_a_deviating_agent_score_per_tier(tmp_path) -> None:
    from chronos_helpers import when
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
    from proactive_tui.families.chronos.settings import ChronosSettings
    from proactive_tui.families.chronos.testing import ScriptedPersona

    def build(spec, env, gateway):
        # keeps silent on every trigger: right on the negative branch, a missed offer on the positive one
        agent = when(lambda s: s.pending.action == "FOLLOW_UP", "KEEP_SILENT",
                     "IN_PROGRESS")
        return ChronosSession(env, ChronosSeats(agent=agent, user=ScriptedPersona()), ChronosSettings(**spec.settings))

    names = ["car-purchase/positive", "car-purchase-towing/negative", "house-hunting/positive", "car-purchase-shift/positive"]
    assert _batch([*(f"chronos/{n}" for n in names), "--out", str(tmp_path / "b")], build=build) == 0
    result = _tiers(tmp_path / "b")
    simple, complex_ = result["simple"], result["complex"]
    assert (simple["positive_sessions"], simple["negative_sessions"]) == (2, 1)
    assert (simple["positive_success"], simple["negative_success"], simple["overall_success"]) == (0.0, 1.0, 0.5)
    assert complex_["positive_success"] == 0.0 and complex_["overall_success"] is None
    assert complex_["negative_sessions"] == 0  # the missing branch


def test_eval_chronos_reference_run_then_report_show(capsys, tmp_path) -> None:
    from proactive_tui.cli.main import main

    out = tmp_path / "eval"
    assert main(["eval", "chronos/car-purchase/", "chronos/car-purchase-shift/positive", "--reference",
                 "--max-turns", "30", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    simple = _batch_row(printed, "simple")
    assert simple.startswith("│ reference") and simple.count("100.00%") == 5
    complex_ = _batch_row(printed, "complex")
    assert complex_.count("100.00%") == 3 and complex_.count("n/a") == 2  # no negative branch: no overall
    report = json.loads((out / "report.json").read_text())
    assert report["agents"] == ["reference"] and report["settings"]["chronos"]["max_turns"] == 30
    assert report["models"] == {"user": "reference", "judge": "reference"}  # no configured model ran
    assert report["finished"] == 3 and not report["missing"]
    tiers = _tiers(out)
    assert tiers["simple"]["overall_success"] == 1.0 and tiers["complex"]["overall_success"] is None
    assert (tiers["complex"]["positive_sessions"], tiers["complex"]["negative_sessions"]) == (1, 0)

    # the same figures from the folder's records, without running anything
    assert main(["report", "show", str(out)]) == 0
    again = capsys.readouterr().out
    assert _batch_row(again, "simple") == simple and _batch_row(again, "complex") == complex_


def test_eval_chronos_through_the_fake_server(tmp_path) -> None:
    import os
    import subprocess
    import sys

    from chronos_helpers import scripted_agent_responder
    from conftest import ROOT
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "eval", "chronos/car-purchase-towing/negative",
             "--agent", "openai/agent-m", "--user", "openai/user-m", "--judge", "openai/judge-m",
             "--api-base", server.base_url, "--prompt-variant", "guided", "--out", str(tmp_path / "e")],
            cwd=ROOT, env={**os.environ, "COLUMNS": "160"}, capture_output=True, text=True, timeout=300)
        systems = _agent_systems(server)
    assert proc.returncode == 0, proc.stderr
    from proactive_tui.families.chronos import prompts

    assert systems and all(prompts.GUIDANCE in s for s in systems)
    simple = _tiers(tmp_path / "e")["simple"]
    assert simple["negative_success"] == 1.0 and simple["negative_sessions"] == 1
    assert simple["positive_success"] is None and simple["overall_success"] is None
    assert "openai/agent-m" in _batch_row(proc.stdout, "simple")
    report = json.loads((tmp_path / "e" / "report.json").read_text())
    assert report["agents"] == ["openai/agent-m"]
    assert report["models"] == {"user": "openai/user-m", "judge": "openai/judge-m"}
    from proactive_tui.evalrun.folder import read_results

    [session] = read_results(tmp_path / "e", transcripts=False)
    assert session.record.settings["prompt_variant"] == "guided"


# -- 4. one sample, two branches -------------------------------------------------------------------

def _shipped(name: str) -> dict:
    from chronos_helpers import CHRONOS_DIR

    return json.loads((CHRONOS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def _forked(name: str, positive_meets: bool = True) -> dict:
    """A shipped branching sample, its positive continuation optionally spoiled (no state meets the needs)."""
    raw = _shipped(name)
    if not positive_meets:
        raw["branches"]["positive"] = [{**st, "meets_needs": False} for st in raw["branches"]["positive"]]
    return raw


def _one_branch(name: str, branch: str) -> dict:
    """One branch of a shipped sample written as a one-branch file (`branch` + the whole timeline)."""
    raw = _shipped(name)
    states = raw.pop("branches")[branch]
    where = raw["intention_shift"] if "intention_shift" in raw else raw
    where["timeline"] = where["timeline"] + states
    return {**raw, "branch": branch}


def test_every_shipped_sample_branches_into_both_continuations() -> None:
    """The paper's samples fork: each shipped file is one sample whose two branches share a prefix."""
    from chronos_helpers import CHRONOS_DIR
    from proactive_tui.envs import load_paths

    loaded = load_paths([CHRONOS_DIR])
    assert not loaded.problems
    by_sample: dict[str, list[str]] = {}
    for env in loaded.environments:
        assert env.sample_id is not None, env.id
        by_sample.setdefault(env.sample_id, []).append(env.scenario.branch)
    files = sorted(p.stem for p in CHRONOS_DIR.glob("*.json"))
    assert sorted(by_sample) == [f"chronos/{f}" for f in files] and len(files) == 9
    assert all(sorted(b) == ["negative", "positive"] for b in by_sample.values())
    tiers = {env.sample_id: env.tier for env in loaded.environments}
    assert sorted(tiers.values()).count("complex") == 3


def _load(tmp_path, files: dict):
    from proactive_tui.envs import load_paths

    for stem, data in files.items():
        (tmp_path / f"{stem}.json").write_text(json.dumps(data), encoding="utf-8")
    return load_paths([tmp_path])


async def test_a_branching_sample_loads_as_two_paired_environments(tmp_path) -> None:
    from proactive_tui.families.chronos.metrics import by_tier, samples_from_records
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession
    from proactive_tui.families.chronos.testing import OracleAgent, ScriptedPersona

    loaded = _load(tmp_path, {"fork": _forked("car-purchase"), "shift-fork": _forked("car-purchase-shift"),
                              "plain": _one_branch("house-hunting-bungalow", "negative")})
    assert not loaded.problems
    ids = sorted(e.id for e in loaded.environments)
    assert ids == ["chronos/fork/negative", "chronos/fork/positive", "chronos/plain",
                   "chronos/shift-fork/negative", "chronos/shift-fork/positive"]
    pos, neg = loaded.get("chronos/fork/positive"), loaded.get("chronos/fork/negative")
    assert (pos.scenario.branch, neg.scenario.branch) == ("positive", "negative")
    assert pos.sample_id == neg.sample_id == "chronos/fork" and loaded.get("chronos/plain").sample_id is None
    shared = len(_shipped("car-purchase")["timeline"])
    assert pos.scenario.timeline[:shared] == neg.scenario.timeline[:shared]  # the shared prefix
    assert pos.scenario.timeline[shared:] != neg.scenario.timeline[shared:]
    shift_neg = loaded.get("chronos/shift-fork/negative").scenario
    assert shift_neg.tier == "complex" and not any(s.meets_needs for s in shift_neg.intention_shift.timeline)

    records = []
    for env_id in ids:
        session = ChronosSession(loaded.get(env_id), ChronosSeats(agent=OracleAgent(), user=ScriptedPersona()))
        records.append((await play(session))[1])
    assert all(r.section.outcome.success for r in records)
    assert [sample(r)["sample_id"] for r in records] == ["chronos/fork", "chronos/fork", None,
                                                         "chronos/shift-fork", "chronos/shift-fork"]
    tiers = by_tier(samples_from_records(records))
    assert (tiers["simple"].paired_samples, tiers["simple"].paired_success) == (1, 1.0)
    assert (tiers["complex"].paired_samples, tiers["complex"].overall_success) == (1, 1.0)


def test_a_branching_sample_is_checked_per_branch(tmp_path) -> None:
    bad = _forked("car-purchase", positive_meets=False)  # the positive continuation never meets the needs
    with_branch = {**_forked("car-purchase"), "branch": "positive"}
    one_key = {**_forked("car-purchase")}
    one_key["branches"] = {"positive": one_key["branches"]["positive"]}
    loaded = _load(tmp_path, {"bad": bad, "with-branch": with_branch, "one-key": one_key})
    assert [e.id for e in loaded.environments] == ["chronos/bad/negative"]
    messages = " | ".join(p.message for p in loaded.problems)
    assert "positive branch" in messages and "no branch field" in messages and "exactly the keys" in messages


def test_paired_success_needs_both_branches_right() -> None:
    from proactive_tui.families.chronos.metrics import SessionSample, chronos_metrics

    def s(branch, ok, sample):
        return SessionSample(branch=branch, tier="simple", success=ok, sample_id=sample)

    m = chronos_metrics([s("positive", True, "a"), s("negative", False, "a"), s("positive", True, "b"),
                         s("negative", True, "b"), s("positive", True, "c"), s("negative", True, None)])
    assert (m.paired_samples, m.paired_success) == (2, 0.5)


# -- 5 (part). who read the user's decisive message ------------------------------------------------

async def test_the_reading_of_the_users_confirmation_names_its_reader() -> None:
    from proactive_tui.families.chronos.report import READ_BY

    _, record = await play(make_session("car-purchase-shift/positive"))  # no judge seat
    read = [(t.turn, t.user_read_as, t.user_read_by) for t in record.section.turns if t.user_read_by]
    # the shift is taken from the brief; the thanks after the last offer is read by the keyword check
    assert [r[1:] for r in read] == [("shift", "brief"), ("confirm", "keywords")]
    assert record.section.turns[-1].user_read_note == "no judge seat"
    assert record.section.turns[-1].user_read_as == "confirm"
    texts = [getattr(b, "text", "") for b in turn_blocks(record)]
    assert any(f"read as confirm ({READ_BY['keywords']}; no judge seat)" in t for t in texts)


async def test_a_persons_command_is_named_as_the_reader() -> None:
    from test_chronos_engine import drive

    from proactive_tui.core.participants import HumanParticipant

    session = make_session("car-purchase-shift/positive", user=HumanParticipant())
    _, record, _ = await drive(session, {"user": ["My budget is £8,000.", "Under 70k miles.", "/shift", "/confirm"]})
    assert record.section.outcome.success is True
    read = [(t.user_read_as, t.user_read_by) for t in record.section.turns if t.user_read_by]
    assert read == [("shift", "command"), ("confirm", "command")]


# -- 5. the judge seat reads the user's reply to an offer ---------------------------------------------

def _judge(reading: str | Exception, label: str = "judge-m"):
    """A judge seat answering `reading` (or raising it), recording what it was sent."""
    from proactive_tui.core.participants import ScriptedParticipant
    from proactive_tui.families.chronos.protocol import ReplyReading

    def answer(request, schema):
        if isinstance(reading, Exception):
            raise reading
        return ReplyReading(reasoning=f"the person's words read as {reading}", reading=reading)

    return ScriptedParticipant([], structured=answer, label=label)


async def test_the_judge_seat_reads_the_confirmation_and_is_named() -> None:
    from proactive_tui.families.chronos import prompts
    from proactive_tui.families.chronos.report import READ_BY

    judge = _judge("confirm")
    events, record = await play(make_session("car-purchase/positive", judge=judge))
    assert record.section.outcome.success is True
    last = record.section.turns[-1]
    assert (last.user_read_as, last.user_read_by, last.user_read_model) == ("confirm", "judge", "judge-m")
    assert last.user_read_note == "the person's words read as confirm"
    # the judge read the offer and the reply, nothing else (not the user's brief)
    [request] = judge.calls
    assert request.seat == "judge" and request.system == prompts.CONFIRMATION_JUDGE_SYSTEM
    [message] = request.messages
    offer = next(t.reply.response_text for t in reversed(record.section.turns) if t.action == "FOLLOW_UP")
    assert offer in message["content"] and prompts.SCRIPTED_CONFIRM in message["content"]
    assert prompts.OFFER_MEETS_INSTRUCTION not in message["content"]
    texts = [getattr(b, "text", "") for b in turn_blocks(record)]
    assert any(f"read as confirm ({READ_BY['judge']} judge-m: the person's words" in t for t in texts)
    assert [e.purpose for e in events if e.type == "usage_recorded"] == [f"turn {last.turn} reply reading"]


async def test_the_judges_reading_decides_not_the_keywords() -> None:
    """The scripted persona thanks for the match (the keyword check reads confirm); a judge that
    reads it as a refusal fails the task: the judge, not the keywords, decided."""
    _, record = await play(make_session("car-purchase/positive", judge=_judge("refuse")))
    o = record.section.outcome
    assert (o.success, o.reason) == (False, "user_refused")
    assert (record.section.turns[-1].user_read_as, record.section.turns[-1].user_read_by) == ("refuse", "judge")


async def test_a_reading_of_other_is_neither_confirmation_nor_refusal() -> None:
    _, record = await play(make_session("car-purchase/positive", judge=_judge("other"), max_turns=12))
    read = [(t.user_read_as, t.user_read_by) for t in record.section.turns if t.user_read_by]
    assert read and read[0] == ("reply", "judge")
    assert record.section.outcome.reason != "completed"  # an unread thanks completes nothing


async def test_a_failed_judge_falls_back_to_the_keyword_check_and_says_so() -> None:
    from proactive_tui.llm.errors import ModelError

    events, record = await play(make_session("car-purchase/positive",
                                             judge=_judge(ModelError("no valid reading after 3 tries", "structured"))))
    assert record.section.outcome.success is True
    last = record.section.turns[-1]
    assert (last.user_read_as, last.user_read_by) == ("confirm", "keywords")
    assert "the judge failed: no valid reading after 3 tries" in last.user_read_note
    errors = [e for e in events if e.type == "error" and e.seat == "judge"]
    assert errors and not errors[0].fatal and "the keyword check reads it" in errors[0].message


async def test_the_keyword_reader_setting_makes_no_judge_call() -> None:
    judge = _judge("refuse")
    _, record = await play(make_session("car-purchase/positive", judge=judge, confirmation_reader="keywords"))
    assert judge.calls == [] and record.section.outcome.success is True
    last = record.section.turns[-1]
    assert (last.user_read_by, last.user_read_note) == ("keywords", "the keyword check is the chosen reader")


async def test_a_persons_plain_reply_to_an_offer_is_read_by_the_judge() -> None:
    from test_chronos_engine import drive

    from proactive_tui.core.participants import HumanParticipant

    session = make_session("house-hunting/positive", user=HumanParticipant(), judge=_judge("confirm"))
    _, record, _ = await drive(session, {"user": ["rent up to 900", "from September", "that one is lovely"]})
    assert record.section.outcome.success is True  # "that one is lovely": no keyword, the judge read it
    assert record.section.turns[-1].user_read_by == "judge"


def test_the_factory_seats_the_judge_and_the_scripted_persona_as_settings_say() -> None:
    from proactive_tui.core.participants import HumanParticipant, ScriptedParticipant
    from proactive_tui.core.spec import SessionSpec
    from proactive_tui.families.chronos.persona import ScriptedPersona
    from proactive_tui.families.chronos.protocol import build_chronos_session

    env = chronos_env("car-purchase/positive")
    seats = {"agent": ScriptedParticipant([]), "user": ScriptedParticipant([]), "judge": _judge("confirm")}
    default = build_chronos_session(SessionSpec(env_id=env.id), env, dict(seats), None)
    assert default.seats.judge is seats["judge"] and default.seats.user is seats["user"]
    offline = build_chronos_session(SessionSpec(env_id=env.id, settings={"user_simulator": "scripted",
                                                                          "confirmation_reader": "keywords"}),
                                    env, dict(seats), None)
    assert isinstance(offline.seats.user, ScriptedPersona) and offline.seats.judge is None
    assert offline.models["user"]["model"] == "scripted-user" and "judge" not in offline.seats.present
    person = build_chronos_session(SessionSpec(env_id=env.id, settings={"user_simulator": "scripted"}), env,
                                   {**seats, "user": HumanParticipant()}, None)
    assert isinstance(person.seats.user, HumanParticipant)  # a person playing the user is never replaced


async def test_the_judge_seat_reads_through_the_real_litellm_path() -> None:
    """The oracle agent and the scripted persona, the judge a model behind the fake server: its
    request carries the reading schema and the two texts, and its reading completes the task."""
    from chronos_helpers import scripted_agent_responder
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        judge = LLMParticipant(Gateway(), ModelSettings(model="openai/judge-m", api_base=server.base_url))
        _, record = await play(make_session("car-purchase/positive", judge=judge))
        requests = list(server.requests)
    [request] = requests
    assert request["response_format"]["json_schema"]["name"] == "ReplyReading"
    assert "The person replied:" in request["messages"][-1]["content"]
    last = record.section.turns[-1]
    assert record.section.outcome.success is True
    assert (last.user_read_as, last.user_read_by, last.user_read_model) == ("confirm", "judge", "openai/judge-m")
    assert last.user_read_note == "fake judge: read by its words"
