"""Human labels on judge verdicts (`services.labels`): the verdicts each family lists, labelling with
its checks, Cohen's kappa against a fixture worked by hand, the `labels` commands, `eval
reward-judge --labels-from-app`, and labels carried through exports and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from family_runs import RUNS
from proactive_tui.cli.main import main
from proactive_tui.core.verdicts import ORACLE, LabelError, parse_value, verdicts_of
from proactive_tui.services.labels import agreement, cohen_kappa, label_verdict, note_label
from proactive_tui.core.run_record import read_record
from proactive_tui.store import open_store
from proactive_tui.store.db import LabelRow
from proactive_tui.store.queries import load_record
from proactive_tui.testing.fake_openai import FakeOpenAIServer
from test_regrade import run_session

TS = "2026-01-01T00:00:00+00:00"


def row(session: str, verdict: str, judge_value, value, judge: str = "m", kind: str = "turn check",
        note: str = "") -> LabelRow:
    return LabelRow(session_id=session, verdict=verdict, kind=kind, judge=judge, judge_value=judge_value,
                    agree=judge_value == value, value=value, note=note, created_at=TS)


# -- kappa and agreement, by hand ---------------------------------------------------------------


def test_kappa_and_accuracy_match_a_fixture_computed_by_hand() -> None:
    # Ten turn checks, judge (rows) x person (columns):
    #               person yes   person no
    #   judge yes        4           2        (6 judge yes)
    #   judge no         1           3        (4 judge no)
    #                    5           5
    # observed p_o = (4 + 3) / 10 = 0.7  (the accuracy)
    # expected p_e = (6/10)(5/10) + (4/10)(5/10) = 0.30 + 0.20 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    pairs = [(True, True)] * 4 + [(True, False)] * 2 + [(False, True)] * 1 + [(False, False)] * 3
    rows = [row(f"s{i}", f"turn_check:{i}", a, b, note="wrong" if a != b else "") for i, (a, b) in enumerate(pairs)]
    # and a second judge on scores: (7,7) (8,6) (6,6) -> p_o = 2/3;
    # judge marginals 6:1/3 7:1/3 8:1/3, person 6:2/3 7:1/3 8:0 -> p_e = 1/3*2/3 + 1/3*1/3 + 0 = 1/3
    # kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5
    rows += [row("p1", "dimension:tone", 7, 7, judge="j2", kind="dimension score"),
             row("p2", "dimension:tone", 8, 6, judge="j2", kind="dimension score"),
             row("p3", "dimension:tone", 6, 6, judge="j2", kind="dimension score")]
    (scores, checks) = agreement(rows)  # sorted by judge, then kind
    assert (checks.judge, checks.kind, checks.n) == ("m", "turn check", 10)
    assert checks.accuracy == pytest.approx(0.7) and checks.kappa == pytest.approx(0.4)
    assert checks.categories == ["yes", "no"]
    assert checks.confusion == {"yes": {"yes": 4, "no": 2}, "no": {"yes": 1, "no": 3}}
    assert len(checks.disagreements) == 3 and {d.note for d in checks.disagreements} == {"wrong"}
    assert (scores.judge, scores.n) == ("j2", 3)
    assert scores.accuracy == pytest.approx(2 / 3) and scores.kappa == pytest.approx(0.5)
    assert scores.categories == ["6", "7", "8"] and scores.confusion["8"]["6"] == 1
    assert [(d.session_id, d.judge_value, d.value) for d in scores.disagreements] == [("p2", 8, 6)]


def test_kappa_when_chance_agreement_is_certain() -> None:
    # both always "yes": p_e = 1, the ratio is undefined; defined as 1.0 (they agree every time)
    assert cohen_kappa([(True, True)] * 3) == 1.0
    assert cohen_kappa([]) is None
    # perfect disagreement on two categories: p_o = 0, p_e = 0.5 -> -1
    assert cohen_kappa([(True, False), (False, True)]) == pytest.approx(-1.0)


def test_values_are_checked_against_the_kind() -> None:
    assert parse_value("turn check", "yes") is True and parse_value("action check", "no") is False
    assert parse_value("plan score", "7") == 7
    assert parse_value("proposal verdict", "Rejected") == "rejected"
    with pytest.raises(LabelError, match="out of range"):
        parse_value("dimension score", "11")
    with pytest.raises(LabelError, match="accepted or rejected"):
        parse_value("proposal verdict", "skipped")
    with pytest.raises(LabelError, match="yes/no"):
        parse_value("turn check", "maybe")
    assert parse_value("reply reading", "Shift") == "shift"
    with pytest.raises(LabelError, match="confirm, refuse, shift, reply"):
        parse_value("reply reading", "maybe")


# -- the families' verdicts and labelling a stored session ------------------------------------------


def stored(family: str, tmp_path: Path) -> str:
    with FakeOpenAIServer(responder=RUNS[family].responder) as server:
        return run_session(family, server, tmp_path / f"{family}.json")


def test_each_family_lists_its_verdicts_and_labels_are_validated(tmp_path: Path) -> None:
    ids = {family: stored(family, tmp_path) for family in RUNS}
    with open_store() as store:
        pe = {v.key: v for v in verdicts_of(load_record(store, ids["proactiveeval"]))}
        pb = {v.key: v for v in verdicts_of(load_record(store, ids["proactivebench"]))}
        ch = {v.key: v for v in verdicts_of(load_record(store, ids["chronos"]))}
        assert {"plan_score", "turn_check:1", "dimension:tone", "dimension:overall"} <= set(pe)
        assert pe["plan_score"].kind == "plan score" and isinstance(pe["plan_score"].value, int)
        assert pe["turn_check:1"].judge == "openai/judge-m"
        assert pb and all(k.startswith("proposal:") and v.kind == "proposal verdict" for k, v in pb.items())
        assert all(len(k.split(":")) == 4 for k in pb)
        assert "action_check:1" in ch and ch["action_check:1"].judge == ORACLE
        pr = {v.key: v for v in verdicts_of(load_record(store, ids["proactbench"]))}  # --max-triggers 2
        assert [(k, v.kind, v.judge, v.value) for k, v in pr.items()] == [
            ("trigger:1", "trigger verdict", "openai/judge-m", "PARTIAL"),
            ("trigger:2", "trigger verdict", "openai/judge-m", "PARTIAL")]
        assert ch["status_check:1"].kind == "status check"
        # where the judge seat's model read the user's reply, that reading is a verdict too
        chronos = load_record(store, ids["chronos"])
        chronos.section.turns[0] = chronos.section.turns[0].model_copy(update={
            "user_read_as": "confirm", "user_read_by": "judge", "user_read_model": "openai/judge-m",
            "user_read_note": "they said yes"})
        reading = {v.key: v for v in verdicts_of(chronos)}[f"reading:{chronos.section.turns[0].turn}"]
        assert (reading.kind, reading.judge, reading.value, reading.detail) == (
            "reply reading", "openai/judge-m", "confirm", "they said yes")

        session = ids["proactiveeval"]
        judge_tone = pe["dimension:tone"].value
        corrected = 1 if judge_tone != 1 else 2
        label = label_verdict(store, session, "dimension:tone", agree=False, value=str(corrected), note="too kind")
        assert (label.judge_value, label.value, label.agree) == (judge_tone, corrected, False)
        label_verdict(store, session, "turn_check:1", agree=True)
        assert note_label(store, session, "turn_check:1", "fine").note == "fine"
        with pytest.raises(LabelError, match=rf"session {session} has no verdict 'turn_check:99'"):
            label_verdict(store, session, "turn_check:99", agree=True)
        with pytest.raises(LabelError, match=r"verdict plan_score: value 12 is out of range"):
            label_verdict(store, session, "plan_score", agree=False, value="12")
        with pytest.raises(LabelError, match="needs the corrected value \\(field 'value'\\)"):
            label_verdict(store, session, "plan_score", agree=False)
        with pytest.raises(LabelError, match="is the judge's own"):
            label_verdict(store, session, "dimension:tone", agree=False, value=str(judge_tone))
        key = next(iter(pb))
        flipped = "rejected" if pb[key].value == "accepted" else "accepted"
        label_verdict(store, ids["proactivebench"], key, agree=False, value=flipped)
        label_verdict(store, ids["chronos"], "action_check:1", agree=True)
        rows = store.labels()
    assert {(r.session_id, r.verdict) for r in rows} == {
        (session, "dimension:tone"), (session, "turn_check:1"), (ids["proactivebench"], key),
        (ids["chronos"], "action_check:1")}
    kinds = {(a.judge, a.kind) for a in agreement(rows)}
    assert (ORACLE, "action check") in kinds and ("openai/judge-m", "dimension score") in kinds


def test_the_labels_commands(tmp_path: Path, capsys) -> None:
    session = stored("proactiveeval", tmp_path)
    capsys.readouterr()
    assert main(["labels", "verdicts", session[:8]]) == 0
    listed = capsys.readouterr().out
    assert "turn_check:1" in listed and "dimension:tone" in listed and "openai/judge-m" in listed
    assert main(["labels", "add", session, "turn_check:1", "--agree", "--note", "right"]) == 0
    assert main(["labels", "add", session, "plan_score", "--disagree", "--value", "2", "--note", "vague"]) == 0
    out = capsys.readouterr().out
    assert "person agree" in out and "person disagree: 2" in out
    # errors are one line naming the session, verdict and field
    assert main(["labels", "add", session, "plan_score", "--disagree"]) == 1
    assert "--disagree needs --value" in capsys.readouterr().err
    assert main(["labels", "add", session, "nope:1", "--agree"]) == 1
    assert f"session {session} has no verdict 'nope:1'" in capsys.readouterr().err
    assert main(["labels", "add", session, "plan_score", "--disagree", "--value", "x"]) == 1
    assert f"session {session}, verdict plan_score: value 'x' is not a score" in capsys.readouterr().err
    assert main(["labels", "list", session, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_verdict = {d["verdict"]: d for d in lines}
    assert by_verdict["turn_check:1"]["agree"] is True and by_verdict["turn_check:1"]["note"] == "right"
    assert by_verdict["turn_check:1"]["value"] == by_verdict["turn_check:1"]["judge_value"]
    assert (by_verdict["plan_score"]["agree"], by_verdict["plan_score"]["value"]) == (False, 2)
    assert main(["labels", "agreement", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["studies"] == []  # no study's labels in this store
    by_kind = {r["kind"]: r for r in document["judges"]}
    assert by_kind["plan score"]["n"] == 1 and by_kind["plan score"]["accuracy"] == 0.0
    assert by_kind["plan score"]["disagreements"][0]["note"] == "vague"
    assert by_kind["turn check"]["accuracy"] == 1.0 and by_kind["turn check"]["kappa"] == 1.0
    assert main(["labels", "agreement"]) == 0
    text = capsys.readouterr().out
    assert "openai/judge-m" in text and "disagreement:" in text and "vague" in text
    assert main(["labels", "clear", session, "plan_score"]) == 0
    assert main(["labels", "clear", session, "plan_score"]) == 1


# -- exports and import ---------------------------------------------------------------------------


def test_labels_round_trip_through_export_and_import(tmp_path: Path, capsys) -> None:
    session = stored("proactiveeval", tmp_path)
    with open_store() as store:
        label_verdict(store, session, "plan_score", agree=False, value=1, note="no plan at all")
        label_verdict(store, session, "turn_check:1", agree=True)
        before = [r.model_dump(mode="json") for r in store.labels(session)]
    # the run-record export carries them, and reading the file back keeps them
    out = tmp_path / "rec.json"
    assert main(["export", session, "--format", "run-record", "--out", str(out)]) == 0
    record = read_record(out.read_text(encoding="utf-8"))
    assert record.human_labels == before
    # the dataset export's meta carries them as human annotations
    assert main(["export", session, "--format", "proactiveeval", "--out", str(tmp_path / "ds")]) == 0
    (dataset,) = (tmp_path / "ds").rglob("*.json")
    text = dataset.read_text(encoding="utf-8")
    assert '"human_labels"' in text and "no plan at all" in text
    # a record without labels is written as before: no empty field
    with open_store() as store:
        plain = load_record(store, session)
    assert "human_labels" not in plain.model_dump_json()
    # import: the labels of the file come back into the store (after they were cleared)
    with open_store() as store:
        for r in store.labels(session):
            store.delete_label(session, r.verdict)
    capsys.readouterr()
    assert main(["labels", "import", str(out)]) == 0
    assert "2 labels kept" in capsys.readouterr().out
    with open_store() as store:
        assert [r.model_dump(mode="json") for r in store.labels(session)] == before
    # a file of a session this store does not hold: said, nothing kept
    data = json.loads(out.read_text(encoding="utf-8"))
    data["id"] = "not-here"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    assert main(["labels", "import", str(other)]) == 1
    assert "session not-here is not in this store" in capsys.readouterr().err


def test_reward_judge_scores_a_model_against_the_app_labels(tmp_path: Path, capsys) -> None:
    bench = RUNS["proactivebench"]
    with FakeOpenAIServer(responder=bench.responder) as server:
        session = run_session("proactivebench", server, tmp_path / "b.json")
        with open_store() as store:
            verdicts = verdicts_of(load_record(store, session))
            first, *rest = [v for v in verdicts if v.value is not None]
            # the person disagrees with the first verdict, agrees with the others
            label_verdict(store, session, first.key, agree=False,
                          value="rejected" if first.value == "accepted" else "accepted")
            for v in rest:
                label_verdict(store, session, v.key, agree=True)
        capsys.readouterr()
        out = tmp_path / "rj.json"
        assert main(["eval", "reward-judge", "--labels-from-app", "--judge", "openai/judge-m",
                     "--api-base", server.base_url, "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    n = 1 + len(rest)
    assert len(report["results"]) == n
    # the same judge answers as in the session: it agrees with every label but the corrected one
    assert report["agreement"] == pytest.approx((n - 1) / n)
    assert main(["eval", "reward-judge", "--labels-from-app", "--data", "x.jsonl"]) == 2


def test_the_proactivebench_export_names_the_labels_in_its_sessions_file(tmp_path: Path) -> None:
    session = stored("proactivebench", tmp_path)
    with open_store() as store:
        key = next(v.key for v in verdicts_of(load_record(store, session)) if v.value is not None)
        label_verdict(store, session, key, agree=True, note="right call")
    assert main(["export", session, "--format", "proactivebench", "--out", str(tmp_path / "pb")]) == 0
    manifest = json.loads((tmp_path / "pb" / "proactivebench_sessions.json").read_text(encoding="utf-8"))
    (entry,) = manifest.values()
    assert [(d["verdict"], d["note"]) for d in entry["human_labels"]] == [(key, "right call")]
