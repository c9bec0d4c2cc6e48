"""ProactBench's human study (issue 34): the shipped rating files read into typed records, and the
agreement figures computed as the study's analysis script computes them.

The figures on the shipped files are checked against the study's published analysis (upstream
`dataset/human_eval/analysis_stats.json`, boson-ai/ProactBench commit 4e6f4955, which the kit
leaves out on purpose; the numbers are quoted below), to 3 decimals, bootstrap intervals included.
The library usage is checked by a second route: a brute-force ordinal alpha from the coincidence
matrix and a kappa from the confusion table, written here only as a check.

Cost: the full analysis (10,000 resamples per interval, as the study) runs once per module
(`published`, three trigger types, no pooled row); scikit-learn's per-call input checks make the
kappa bootstrap the slow part (several seconds per type). Every other test uses few or no resamples.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from collections import Counter
from itertools import permutations
from pathlib import Path

import pytest

from conftest import ROOT
from proactive_tui.evalrun import human_study as hs

# The study's published figures (analysis_stats.json, per_trigger_type): alpha, its interval,
# kappa (consensus vs judge), its interval, the confusion matrix rows Fail/Partial/Pass.
PUBLISHED = {
    "EMERGENT": dict(n_items=20, n_ratings=83, alpha=(0.170, -0.052, 0.339), kappa=(0.545, 0.257, 0.835),
                     confusion=[[3, 1, 0], [1, 4, 0], [2, 2, 7]]),
    "CRITICAL": dict(n_items=19, n_ratings=83, alpha=(0.158, -0.028, 0.287), kappa=(0.269, -0.025, 0.556),
                     confusion=[[4, 1, 0], [0, 0, 1], [2, 5, 6]]),
    "RECOVERY": dict(n_items=20, n_ratings=109, alpha=(0.278, 0.049, 0.447), kappa=(0.552, 0.228, 0.841),
                     confusion=[[6, 2, 0], [0, 4, 3], [0, 1, 4]]),
}


@pytest.fixture(scope="module")
def study() -> hs.Study:
    return hs.load_study()


@pytest.fixture(scope="module")
def published(study: hs.Study) -> hs.Analysis:
    return hs.analyse(study, overall=False)


def test_the_shipped_files_are_the_kits_unchanged(study: hs.Study) -> None:
    folder = hs.PACKAGED_STUDY
    assert folder.is_relative_to(ROOT / "proactive_tui" / "families" / "proactbench" / "data")
    notice = (folder.parent / "NOTICE.md").read_text(encoding="utf-8")
    for name in ("LICENSE", "human_eval/sample_items.json"):
        digest = hashlib.sha256((folder.parent / name).read_bytes()).hexdigest()
        assert f"`{name}`" in notice and digest in notice, name
    assert "Apache License" in (folder.parent / "LICENSE").read_text(encoding="utf-8")
    assert study.files == [f"A{n:02d}.jsonl" for n in range(1, 19)]
    assert (len(study.items), len(study.ratings), study.skipped_lines, study.unknown_item_ratings) == (60, 275, 0, 0)
    assert Counter(it.trigger_type for it in study.items) == {"EMERGENT": 20, "CRITICAL": 20, "RECOVERY": 20}
    first = study.ratings[0]
    assert (first.annotator_id, first.file, first.line, first.score) == ("A01", "A01.jsonl", 1, "Partial")
    assert all(it.rubric and it.rubric.pass_criteria and it.model_response for it in study.items)


def test_the_figures_equal_the_published_analysis(published: hs.Analysis) -> None:
    assert published.deviations == [] and list(published.groups) == list(hs.TRIGGER_TYPES)
    for name, want in PUBLISHED.items():
        got = published.groups[name]
        assert (got.n_items, got.n_ratings) == (want["n_items"], want["n_ratings"])
        for figure, (value, low, high) in (("alpha", want["alpha"]), ("kappa", want["kappa"])):
            interval = getattr(got, figure)
            assert (round(interval.value, 3), round(interval.low, 3), round(interval.high, 3)) == (value, low, high), (
                name, figure, interval)
            assert interval.resamples_used == hs.RESAMPLES
        assert [[got.confusion[h][j] for j in hs.SCORES] for h in hs.SCORES] == want["confusion"], name
    assert published.coverage.model_dump() == {
        "total_items": 60, "items_with_3_ratings": 8, "items_with_2_ratings": 5, "items_with_1_rating": 9,
        "items_with_0_ratings": 1, "total_ratings": 275}
    assert published.agreement_levels == {"all_3_agree": 7, "2_agree_1_differ": 4, "only_1_rating": 9,
                                          "2_agree_only_2_ratings": 2, "2_differ_only_2_ratings": 3, "all_differ": 1}
    assert published.ratings_per_annotator["A01"] == 2 and published.ratings_per_annotator["A05"] == 1


def brute_force_ordinal_alpha(units: list[list[int]]) -> float:
    """Krippendorff's alpha, ordinal, straight from its definition: the coincidence matrix (each
    ordered pair of values within a unit weighted 1/(m_u - 1)), the ordinal distance
    (sum of n_g from c to k minus (n_c + n_k)/2, squared), 1 - (n - 1) * sum o*d / sum n_c n_k d."""
    units = [u for u in units if len(u) >= 2]
    o: Counter[tuple[int, int]] = Counter()
    for u in units:
        for a, b in permutations(range(len(u)), 2):
            o[(u[a], u[b])] += 1 / (len(u) - 1)
    values = sorted({v for u in units for v in u})
    n_v = {c: sum(o[(c, k)] for k in values) for c in values}
    n = sum(n_v.values())

    def d(c: int, k: int) -> float:
        lo, hi = min(c, k), max(c, k)
        return (sum(n_v[g] for g in values if lo <= g <= hi) - (n_v[c] + n_v[k]) / 2) ** 2

    observed = sum(o[(c, k)] * d(c, k) for c in values for k in values)
    expected = sum(n_v[c] * n_v[k] * d(c, k) for c in values for k in values)
    return 1 - (n - 1) * observed / expected


def test_ordinal_alpha_is_the_definition_on_a_toy_matrix() -> None:
    nan = float("nan")
    matrix = [[0, 1, 2, 2, nan, 0, 1],     # rater 1
              [0, 2, 2, 1, 1, nan, nan],   # rater 2
              [1, 1, 2, nan, 1, 0, 2]]     # rater 3: one item rated once only
    units = [[int(r[j]) for r in matrix if not math.isnan(r[j])] for j in range(7)]
    want = brute_force_ordinal_alpha(units)
    assert hs.ordinal_alpha(matrix) == pytest.approx(want, abs=1e-12)
    assert 0 < want < 1
    # ordinal, not interval: the figure differs from the same data's interval alpha
    import krippendorff
    assert abs(krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval") - want) > 1e-3
    # one value everywhere: the package refuses the matrix; the script's rule gives 1.0 ...
    assert hs.ordinal_alpha([[2, 2, nan], [2, 2, 2]]) == 1.0
    # ... or NaN when fewer than two items are rated twice
    assert math.isnan(hs.ordinal_alpha([[2, nan], [2, 2]]))
    assert math.isnan(hs.ordinal_alpha([[0, nan], [nan, 2]]))


def test_kappa_is_the_confusion_table_figure(published: hs.Analysis) -> None:
    for name in hs.TRIGGER_TYPES:
        cm = published.groups[name].confusion
        n = sum(sum(row.values()) for row in cm.values())
        p_o = sum(cm[c][c] for c in hs.SCORES) / n
        p_e = sum(sum(cm[c].values()) * sum(cm[h][c] for h in hs.SCORES) for c in hs.SCORES) / n / n
        assert published.groups[name].kappa.value == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-12)
    assert hs.kappa(["Pass"] * 3, ["Pass"] * 3) == 1.0 and math.isnan(hs.kappa([], []))


@pytest.mark.parametrize(("labels", "want"), [
    (["Pass", "Pass", "Fail"], "Pass"),
    (["Fail", "Fail", "Pass"], "Fail"),
    (["Fail", "Partial", "Pass"], "Partial"),
    (["Pass", "Partial"], "Partial"),
    (["Fail", "Pass"], "Pass"),
    (["Fail", "Partial"], "Partial"),
    (["Fail", "Fail", "Pass", "Pass", "Partial"], "Pass"),
])
def test_the_tie_rule(labels: list[str], want: str) -> None:
    assert hs.majority_consensus(labels) == want
    assert hs.majority_consensus(list(reversed(labels))) == want


# -- toy studies on disk ----------------------------------------------------------------------------


def item(item_id: str, trigger: str = "EMERGENT", judge: str = "Pass") -> dict:
    return {"item_id": item_id, "trigger_type": trigger, "judge_score": judge}


def rating(annotator: str, item_id: str, score: str) -> str:
    return json.dumps({"annotator_id": annotator, "item_id": item_id, "score": score})


def write_study(folder: Path, items: list[dict], files: dict[str, list[str]]) -> Path:
    (folder / "results").mkdir(parents=True)
    (folder / "sample_items.json").write_text(json.dumps(items), encoding="utf-8")
    for name, lines in files.items():
        (folder / "results" / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_bad_rating_line_is_named_and_junk_lines_are_skipped(tmp_path: Path) -> None:
    items = [item("i1"), item("i2")]
    folder = write_study(tmp_path / "ok", items, {"A01.jsonl": [
        rating("A01", "i1", "Pass"), "", "not json {", rating("A01", "ghost", "Fail"), rating("A01", "i2", "Fail")]})
    study = hs.load_study(folder)
    assert [(r.item_id, r.line) for r in study.ratings] == [("i1", 1), ("i2", 5)]
    assert (study.skipped_lines, study.unknown_item_ratings) == (2, 1)

    # U+2028 raw inside a JSON string is not a line break (the script reads lines as Python's text files do)
    odd = write_study(tmp_path / "odd", items, {"A01.jsonl": [
        json.dumps({"annotator_id": "A01", "item_id": "i1", "score": "Pass", "rationale": "a\u2028b"},
                   ensure_ascii=False)]})
    assert [r.rationale for r in hs.load_study(odd).ratings] == ["a\u2028b"]

    bad = write_study(tmp_path / "bad", items, {"A01.jsonl": [rating("A01", "i1", "Pass")],
                                                "A02.jsonl": ["", rating("A02", "i1", "Great")]})
    with pytest.raises(hs.HumanStudyError) as err:
        hs.load_study(bad)
    message = str(err.value)
    assert message.startswith("A02.jsonl line 2: field 'score'") and "Great" in message and "\n" not in message

    missing = write_study(tmp_path / "missing", items, {"A01.jsonl": ['{"annotator_id": "A01", "score": "Pass"}']})
    with pytest.raises(hs.HumanStudyError, match=r"^A01.jsonl line 1: field 'item_id': Field required$"):
        hs.load_study(missing)
    listed = write_study(tmp_path / "listed", items, {"A01.jsonl": ["[1, 2]"]})
    with pytest.raises(hs.HumanStudyError, match=r"^A01.jsonl line 1: expected a JSON object, got list$"):
        hs.load_study(listed)
    bad_item = write_study(tmp_path / "item", [item("i1"), item("i2", trigger="LATE")], {"A01.jsonl": []})
    with pytest.raises(hs.HumanStudyError, match=r"^sample_items.json item 2: field 'trigger_type'"):
        hs.load_study(bad_item)
    fifo = write_study(tmp_path / "fifo", items, {})
    os.mkfifo(fifo / "results" / "A01.jsonl")
    with pytest.raises(hs.HumanStudyError, match=r"A01.jsonl: not a regular file$"):
        hs.load_study(fifo)
    with pytest.raises(hs.HumanStudyError, match="no rating files"):
        hs.load_study(write_study(tmp_path / "none", items, {}))


def test_a_later_duplicate_fills_the_matrix_cell_and_ties_follow_the_rule(tmp_path: Path) -> None:
    items = [item("i1", judge="Fail"), item("i2", judge="Partial"), item("i3", judge="Pass")]
    folder = write_study(tmp_path / "s", items, {
        "A01.jsonl": [rating("A01", "i1", "Pass"), rating("A01", "i2", "Fail"), rating("A01", "i3", "Pass")],
        "A02.jsonl": [rating("A02", "i1", "Fail"), rating("A02", "i2", "Pass"), rating("A02", "i3", "Pass"),
                      rating("A02", "i2", "Fail")],  # A02 re-rates i2: the later row wins in the alpha matrix
    })
    result = hs.analyse(hs.load_study(folder), resamples=0)
    group = result.groups["EMERGENT"]
    # consensus over every row, as the script: i1 Pass/Fail -> Pass; i2 Fail, Pass, Fail -> Fail
    assert group.consensus == {"i1": "Pass", "i2": "Fail", "i3": "Pass"}
    assert group.n_ratings == 7 and group.alpha.low is None
    # the matrix: A01 (2, 0, 2), A02 (0, 0, 2) -- the later Fail, not the earlier Pass
    assert group.alpha.value == pytest.approx(brute_force_ordinal_alpha([[2, 0], [0, 0], [2, 2]]), abs=1e-12)
    assert result.deviations == ["deviation: 0 bootstrap resamples (the study's script: 10000)"]


def test_the_deviations_are_labelled_and_change_the_figures(study: hs.Study, published: hs.Analysis) -> None:
    plain = hs.analyse(study, resamples=0)
    quadratic = hs.analyse(study, kappa_weights="quadratic", resamples=0)
    assert any("quadratic-weighted" in d for d in quadratic.deviations)
    for name in hs.TRIGGER_TYPES:
        assert plain.groups[name].kappa.value == published.groups[name].kappa.value
        assert quadratic.groups[name].kappa.value != pytest.approx(plain.groups[name].kappa.value, abs=1e-3)
        assert quadratic.groups[name].alpha.value == plain.groups[name].alpha.value  # alpha has no weights option

    excluded = hs.analyse(study, rater_exclusion=True, resamples=0)
    # the paper: one rater excluded under the pre-registered criterion, 258 of 275 ratings kept
    assert list(excluded.excluded_raters) == ["A08"] and excluded.excluded_raters["A08"] < hs.EXCLUSION_KAPPA
    assert excluded.coverage.total_ratings == 258 and "A08" not in excluded.ratings_per_annotator
    assert "A01" not in excluded.rater_kappas and "A05" not in excluded.rater_kappas  # under 5 ratings: not tested
    assert {"A01", "A05"} <= set(excluded.ratings_per_annotator)
    assert any("A08" in d and "below 0.10" in d for d in excluded.deviations)
    for name in hs.TRIGGER_TYPES:
        assert excluded.groups[name].alpha.value != pytest.approx(plain.groups[name].alpha.value, abs=1e-3)
    assert plain.groups[hs.OVERALL].n_ratings == 275 and plain.groups[hs.OVERALL].n_items == 59


def test_nothing_here_loads_the_statistics_libraries_until_a_figure_is_asked_for() -> None:
    code = ("import sys\n"
            "from proactive_tui.evalrun import human_study\n"
            "from proactive_tui.services import labels\n"
            "study = human_study.load_study()\n"
            "before = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'krippendorff'})\n"
            "labels.cohen_kappa([('yes', 'yes'), ('no', 'yes')])\n"
            "human_study.ordinal_alpha([[0, 1], [1, 1]])\n"
            "print(before, sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'krippendorff'}))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "[] ['krippendorff', 'sklearn']", proc.stdout + proc.stderr
