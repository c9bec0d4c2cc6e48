"""ProactBench's human studies in the store (issue 34): the rating study imported as sessions and
labels, its figures computed back from the store's labels equal to the published analysis, the
pairwise study's pairs as blind comparisons and its votes as votes; both imports idempotent, and a
bad row one line while the rest imports.

The published figures are the study's `analysis_stats.json` (boson-ai/ProactBench commit
4e6f4955; the kit leaves the file out on purpose), quoted here as tests/test_human_study.py quotes
them: that test reads the rating files directly, this one reads the labels back out of a store.
The full analysis (10,000 resamples per interval, as the study) runs once, in a module fixture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proactive_tui.cli.main import main
from proactive_tui.services.compare import pairwise_study, study_comparison_id, vote
from proactive_tui.core.verdicts import verdicts_of
from proactive_tui.services.labels import rating_studies, rating_study
from proactive_tui.evalrun import human_study as hs
from proactive_tui.families.proactbench import study as pstudy
from proactive_tui.store import open_store
from proactive_tui.store.db import LabelRow, Store
from proactive_tui.store.queries import load_record

PUBLISHED = {
    "EMERGENT": dict(n_items=20, n_ratings=83, alpha=(0.170, -0.052, 0.339), kappa=(0.545, 0.257, 0.835),
                     confusion=[[3, 1, 0], [1, 4, 0], [2, 2, 7]]),
    "CRITICAL": dict(n_items=19, n_ratings=83, alpha=(0.158, -0.028, 0.287), kappa=(0.269, -0.025, 0.556),
                     confusion=[[4, 1, 0], [0, 0, 1], [2, 5, 6]]),
    "RECOVERY": dict(n_items=20, n_ratings=109, alpha=(0.278, 0.049, 0.447), kappa=(0.552, 0.228, 0.841),
                     confusion=[[6, 2, 0], [0, 4, 3], [0, 1, 4]]),
}
STUDY_JUDGE = "gpt-5.4 (study, imported)"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("study") / "sessions.db")
    report = rating_study("proactbench").import_study(store)
    assert (report.sessions_new, report.labels_new, report.files, report.problems) == (60, 275, 18, [])
    yield store
    store.close()


@pytest.fixture(scope="module")
def full(store: Store) -> list:
    return rating_study("proactbench").analyse(store, overall=False)


def test_the_study_figures_from_the_store_equal_the_published_analysis(full: list) -> None:
    (fig,) = full
    assert (fig.judge, fig.kind, fig.raters, fig.items, fig.left_out, fig.deviations) == (
        STUDY_JUDGE, "trigger verdict", 18, 60, 0, [])
    assert fig.resamples == 10_000 and fig.categories == ["Fail", "Partial", "Pass"]
    assert [g.group for g in fig.groups] == list(PUBLISHED)
    for g in fig.groups:
        want = PUBLISHED[g.group]
        assert (g.n_items, g.n_ratings) == (want["n_items"], want["n_ratings"])
        assert tuple(round(x, 3) for x in (g.alpha, g.alpha_low, g.alpha_high)) == want["alpha"], g.group
        assert tuple(round(x, 3) for x in (g.kappa, g.kappa_low, g.kappa_high)) == want["kappa"], g.group
        assert [[g.confusion[h][j] for j in fig.categories] for h in fig.categories] == want["confusion"]


def test_the_imported_verdicts_are_marked_as_the_studys(store: Store) -> None:
    items = {it.item_id: it for it in hs.load_items(hs.PACKAGED_STUDY / "sample_items.json")}
    first = next(iter(items.values()))
    record = load_record(store, pstudy.item_session_id(first.item_id))
    (verdict,) = verdicts_of(record)
    assert (verdict.key, verdict.judge, verdict.value) == ("trigger:1", STUDY_JUDGE, first.judge_score.upper())
    assert verdict.imported_from == "ProactBench human study"
    trigger = record.section.trigger(1)
    assert trigger.judged_by == "study" and trigger.response == first.model_response
    assert trigger.type == first.trigger_type and trigger.user_message == first.user_message
    assert len(record.section.recorded) == (first.turn_index or 1) - 1
    assert record.termination.reason == "imported"
    assert store.session(record.id).status == "finished"
    rows = [r for r in store.labels(record.id)]
    ratings, _ = hs.load_ratings(sorted((hs.PACKAGED_STUDY / "results").glob("A*.jsonl")))
    mine = sorted((r.annotator_id, r.score.upper()) for r in ratings if r.item_id == first.item_id)
    assert sorted((r.rater, r.value) for r in rows) == mine and all(r.kind == "trigger verdict" for r in rows)


def test_importing_again_adds_nothing(store: Store) -> None:
    again = rating_study("proactbench").import_study(store)
    assert (again.sessions_new, again.sessions_kept, again.labels_new, again.labels_kept) == (0, 60, 0, 275)
    assert len(store.labels()) == 275 and len(store.sessions(family="proactbench")) == 60


def test_the_options_are_deviations_and_match_the_files(store: Store) -> None:
    (fig,) = rating_study("proactbench").analyse(store, quadratic=True, exclude_raters=True, resamples=0)
    direct = hs.analyse(hs.load_study(), kappa_weights="quadratic", rater_exclusion=True, resamples=0)
    assert len(fig.deviations) == 3 and all(d.startswith("deviation:") for d in fig.deviations)
    assert fig.excluded_raters == direct.excluded_raters
    for g in fig.groups:
        assert (g.alpha, g.kappa, g.n_ratings) == (direct.groups[g.group].alpha.value, direct.groups[g.group].kappa.value,
                                                   direct.groups[g.group].n_ratings)
        assert g.alpha_low is None  # 0 resamples: no interval


def test_a_persons_own_labels_are_measured_per_judge(tmp_path: Path) -> None:
    """A person's labels on a trigger verdict of their own session give their own figures,
    apart from the study's judge."""
    store = Store(tmp_path / "sessions.db")
    items = hs.load_items(hs.PACKAGED_STUDY / "sample_items.json")
    events = pstudy.item_events(items[0])
    sid = events[0].session_id = "own1"
    judged = next(e for e in events if e.type == "proactbench.trigger_judged")
    judged.judge, judged.judged_by = "judge-m", "judge"
    assert pstudy._write_session(store, events) == ""
    store.put_label(LabelRow(session_id=sid, verdict="trigger:1", kind="trigger verdict", judge="judge-m",
                             judge_value=judged.result.score, agree=False, value="FAIL" if judged.result.score != "FAIL" else "PASS",
                             created_at="2026-01-01T00:00:00+00:00"))
    (fig,) = rating_study("proactbench").analyse(store, resamples=0)
    assert (fig.judge, fig.raters, fig.items) == ("judge-m", 1, 1)
    overall = next(g for g in fig.groups if g.group == "OVERALL")
    assert (overall.n_items, overall.n_ratings, overall.kappa) == (1, 1, 0.0)
    store.close()


def test_labels_import_and_agreement_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["labels", "import", "--study", "proactbench"]) == 0
    out = capsys.readouterr().out
    assert "60 new session(s)" in out and "275 new label(s)" in out
    assert main(["labels", "import", "--study", "proactbench"]) == 0
    assert "0 new session(s), 60 already here; 0 new label(s), 275 already here" in capsys.readouterr().out
    assert main(["labels", "agreement", "--resamples", "0", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (judge,) = document["judges"]
    assert (judge["judge"], judge["n"]) == (STUDY_JUDGE, 275)
    (fig,) = document["studies"]
    groups = {g["group"]: g for g in fig["groups"]}
    assert round(groups["RECOVERY"]["alpha"], 3) == 0.278 and round(groups["EMERGENT"]["kappa"], 3) == 0.545
    assert groups["OVERALL"]["n_ratings"] == 275
    assert main(["labels", "agreement", "--resamples", "0", "--quadratic", "--exclude-raters"]) == 0
    text = capsys.readouterr().out
    assert "deviation: Cohen's kappa quadratic-weighted" in text and "deviation: raters with at least 5" in text
    assert "EMERGENT" in text and "consensus (rows) x judge (columns)" in text
    assert "disagreement(s) by imported raters" in text and "disagreement: " not in text
    some = pstudy.item_session_id(hs.load_items(hs.PACKAGED_STUDY / "sample_items.json")[0].item_id)
    assert main(["labels", "verdicts", some]) == 0
    assert "(imported from the ProactBench human study)" in capsys.readouterr().out
    assert main(["labels", "import", "--study", "nope"]) == 1
    assert "'nope' has no human rating study" in capsys.readouterr().err


def test_a_bad_rating_row_is_one_line_and_the_rest_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "study"
    shutil.copytree(hs.PACKAGED_STUDY, folder, ignore=shutil.ignore_patterns("pairwise"))
    a03 = folder / "results" / "A03.jsonl"
    lines = a03.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["score"] = "Great"
    lines[1] = json.dumps(row)
    a03.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "results" / "A07.jsonl").write_bytes(b"\xff\xfe not text")
    assert main(["labels", "import", "--study", "proactbench", str(folder)]) == 1
    captured = capsys.readouterr()
    problems = captured.err.strip().splitlines()
    assert len(problems) == 2
    assert problems[0].startswith("warning: A03.jsonl line 2: field 'score':")
    assert "A07.jsonl" in problems[1] and "not UTF-8" in problems[1]
    a07 = sum(1 for line in (hs.PACKAGED_STUDY / "results" / "A07.jsonl").read_text().splitlines() if line.strip())
    assert f"{275 - 1 - a07} new label(s)" in captured.out and "17 rating file(s)" in captured.out


def test_the_pairwise_study_becomes_blind_pairs_and_votes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "import-study", "proactbench"]) == 0
    assert "80 new pair(s) to vote on" in capsys.readouterr().out
    with open_store() as store:
        rows = store.comparisons()
        mine = [r for r in rows if not r.voter]
        votes = [r for r in rows if r.voter]
        assert (len(mine), len(votes)) == (80, 146)
        assert all(r.blind and r.vote is None and r.shuffle_seed is not None for r in mine)
        folder = pstudy.PAIRWISE_FOLDER
        raw = [json.loads(line) for p in sorted((folder / "results").glob("P*.jsonl"))
               for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
        for study_vote in (next(v for v in raw if not v["ab_swap"] and v["chosen_case"] == "B"),
                           next(v for v in raw if v["ab_swap"] and v["chosen_case"] == "A"),
                           next(v for v in raw if v["chosen_case"] == "tie")):
            row = next(r for r in votes if r.id == study_comparison_id(study_vote["item_id"], study_vote["annotator_id"]))
            a, b = (pstudy.pair_session_id(study_vote["item_id"], c) for c in "AB")
            assert row.sessions == ([b, a] if study_vote["ab_swap"] else [a, b])  # as that voter saw them
            chosen = study_vote["chosen_case"]
            assert row.vote == ("tie" if chosen == "tie" else a if chosen == "A" else b)
            assert row.voter == study_vote["annotator_id"] and row.reason == study_vote["rationale"]
            side = {"left": 0, "right": 1}.get(study_vote["choice_side"])
            if side is not None:
                assert row.sessions[side] == row.vote  # the side clicked is the session voted for
        pair = mine[0]
        record = load_record(store, pair.sessions[0])
        assert record.section.triggers[0].judged is False  # no grade shown to a blind voter
        assert [m.role for m in record.messages] == ["agent"] and record.messages[0].content.strip()
        voted = vote(store, pair.id, "A", "more forward-looking")
    assert main(["compare", "import-study", "proactbench"]) == 0
    assert "0 new pair(s) to vote on, 80 already here; 0 new vote(s), 146 already here" in capsys.readouterr().out
    with open_store() as store:
        assert next(r for r in store.comparisons() if r.id == pair.id).vote == voted.vote  # the person's vote stays
    assert main(["compare", "list", "--unvoted"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 79
    assert main(["compare", "vote", mine[1].id, "tie", "--reason", "both fine"]) == 0
    assert "vote saved" in capsys.readouterr().out


def test_a_bad_vote_row_is_one_line_and_the_rest_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pairwise"
    shutil.copytree(pstudy.PAIRWISE_FOLDER, folder)
    p02 = folder / "results" / "P02.jsonl"
    lines = p02.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["chosen_case"] = "C"
    lines[2] = json.dumps(row)
    p02.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["compare", "import-study", "proactbench", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == ["warning: P02.jsonl line 3: field 'chosen_case': Value error, must be A, B or tie"]
    assert "145 new vote(s)" in captured.out


def test_only_proactbench_has_the_studies() -> None:
    assert [s.family for s in rating_studies()] == ["proactbench"]
    assert pairwise_study("proactbench").title == "ProactBench pairwise study"


def test_your_own_rating_of_a_study_verdict_is_named_as_a_deviation(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions.db")
    rating_study("proactbench").import_study(store)
    item = hs.load_items(hs.PACKAGED_STUDY / "sample_items.json")[0]
    from proactive_tui.services.labels import label_verdict

    label_verdict(store, pstudy.item_session_id(item.item_id), "trigger:1", agree=True)
    (fig,) = rating_study("proactbench").analyse(store, resamples=0)
    assert fig.raters == 19 and fig.deviations[-1] == (
        "deviation: 1 rating(s) of yours (rater 'you') counted beside the study's raters")
    assert sum(g.n_ratings for g in fig.groups if g.group != "OVERALL") == 276
    store.close()


def test_both_study_imports_share_one_summary_shape() -> None:
    """The rating and the pairwise import summaries are one base (source, files, problems) plus
    their own new / already-here counts, which the commands print by name."""
    from proactive_tui.services.compare import PairImport
    from proactive_tui.services.labels import StudyImport
    from proactive_tui.services.study_import import ImportSummary

    shared = ["source", "files", "problems"]
    assert list(ImportSummary.model_fields) == shared
    assert list(StudyImport.model_fields) == shared + ["sessions_new", "sessions_kept", "labels_new", "labels_kept", "notes"]
    assert list(PairImport.model_fields) == shared + ["pairs_new", "pairs_kept", "votes_new", "votes_kept"]
    for summary in (StudyImport(source="x"), PairImport(source="x")):
        assert isinstance(summary, ImportSummary) and summary.files == 0 and summary.problems == []
        summary.problems.append("a.jsonl line 1: field 'x'")
    assert StudyImport(source="y").problems == [] and PairImport(source="y").problems == []  # no shared list
