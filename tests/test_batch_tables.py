"""What a batch's tables say, in every output (issue 30): one pass^1 column with one repeat, counts
as whole numbers, ProactiveBench's Accept Rate, a seeded bootstrap 95% interval over environments
(`scipy.stats.bootstrap`) on every headline figure, and a run that is not its family's protocol labelled in report.md,
report.csv, report.json, `report show` and `report html`.

Sessions run with scripted seats (`test_eval_batch.Seats`) or are written by hand; nothing
reaches a network."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel

from proactive_tui.cli.main import main
from proactive_tui.core import registry
from test_eval_batch import Seats, result, row, run

FEEDBACK = "verdict feedback on (the paper's ablation)"
OWN_PLAN = "guides with own_plan, judged against it (the paper's: reference)"
STANDARD = "agent prompt standard (default guided)"
"""Chronos's basic prompt: the paper's guided one is the default (issue 30)."""


# -- the columns ------------------------------------------------------------------------------------


def _pe(env: str, repeat: int, plan: int, guidance: int):
    from proactive_tui.families.proactiveeval.events import GuidanceScore
    from proactive_tui.families.proactiveeval.record import PlanningRecord, ProactiveEvalSection

    g = GuidanceScore(reasoning="r", overall=guidance, effectiveness=1, personalization=1, tone=1, engagement=1,
                      naturalness=1, judge_model="j")
    return result("proactiveeval", env, repeat, ProactiveEvalSection(planning=PlanningRecord(score=plan), guidance=g),
                  environment={"domain": env.split("/")[1]}, settings={"agreeableness": "low"})


ENVS = [f"proactiveeval/persuasion/fair/{i}" for i in range(4)]


def test_one_repeat_gives_one_pass_1_column_in_every_family() -> None:
    from proactive_tui.families.chronos.events import SessionOutcome
    from proactive_tui.families.chronos.record import ChronosSection
    from proactive_tui.families.proactivebench.metrics import Confusion
    from proactive_tui.families.proactivebench.record import ProactiveBenchSection, TraceEventRecord

    chronos = ChronosSection(branch="positive", tier="simple", turns=[],
                             outcome=SessionOutcome(branch="positive", tier="simple", success=True, reason="r"))
    bench = ProactiveBenchSection(trace="a", splits=["s"], confusion=Confusion(tp=1),
                                  events=[TraceEventRecord(index=1, time="t", event="e", judgement="accepted")])
    for family, results in (("proactiveeval", [_pe(ENVS[0], 0, 5, 8)]),
                            ("chronos", [result("chronos", "chronos/x", 0, chronos)]),
                            ("proactivebench", [result("proactivebench", "proactivebench/a", 0, bench)])):
        table = next(t for t in registry.get(family).batch.tables(results, 1) if t.id == "consistency")
        assert [c.label for c in table.columns] == ["tasks", "pass^1", "variance over repeats"], family
        two = next(t for t in registry.get(family).batch.tables(results, 2) if t.id == "consistency")
        assert [c.label for c in two.columns] == ["tasks", "pass^1", "pass^2", "variance over repeats"], family


def test_proactivebench_has_accept_rate_as_eval_splits_does() -> None:
    from proactive_tui.families.proactivebench.metrics import Confusion
    from proactive_tui.families.proactivebench.record import ProactiveBenchSection

    section = ProactiveBenchSection(trace="a", splits=["s"], events=[],
                                    confusion=Confusion(tp=1, fp=1, tn=1, proposals=4, accepted_proposals=1))
    tables = registry.get("proactivebench").batch.tables([result("proactivebench", "proactivebench/a", 0, section)], 1)
    splits = next(t for t in tables if t.id == "splits")
    assert "Accept Rate" in [c.label for c in splits.columns]
    assert row(tables, "splits", "s")["values"]["accept_rate"] == pytest.approx(1 / 4)  # accepted / proposed tasks


# -- the interval ---------------------------------------------------------------------------------


def _guidance(results) -> tuple[str, tuple[float, float]]:
    from proactive_tui.evalrun.report import table_cells

    tables = registry.get("proactiveeval").batch.tables(results, 2)
    table = next(t for t in tables if t.id == "guidance")
    header, rows = table_cells(table)
    return rows[0][header.index("Overall")], table.rows[0].interval["overall"]


def test_a_headline_figure_shows_mean_std_and_a_reproducible_interval_that_moves_with_the_data() -> None:
    scores = [(6, 8), (4, 6), (8, 4), (8, 9), (5, 9), (7, 2), (3, 3), (9, 10)]
    results = [_pe(env, rep, 5, scores[2 * i + rep][0]) for i, env in enumerate(ENVS) for rep in (0, 1)]
    cell, interval = _guidance(results)
    assert re.fullmatch(r"\d+\.\d\d ± \d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", cell), cell
    low, high = interval
    mean = float(cell.split(" ")[0])
    assert low < mean < high and low >= 3 and high <= 9  # within the environments' own means
    assert _guidance(list(reversed(results)))[1] == interval  # seeded: the same sessions, the same interval
    changed = [_pe(env, rep, 5, 10 if env == ENVS[0] else scores[2 * i + rep][0])
               for i, env in enumerate(ENVS) for rep in (0, 1)]
    assert _guidance(changed)[1] != interval


def test_one_environment_has_no_interval_to_give() -> None:
    tables = registry.get("proactiveeval").batch.tables([_pe(ENVS[0], 0, 5, 6), _pe(ENVS[0], 1, 5, 8)], 2)
    assert next(t for t in tables if t.id == "guidance").rows[0].interval == {}


def _unscored(env: str, repeat: int):
    """A ProactiveEval session whose guidance was never judged: it adds no score to its environment."""
    from proactive_tui.families.proactiveeval.record import PlanningRecord, ProactiveEvalSection

    return result("proactiveeval", env, repeat, ProactiveEvalSection(planning=PlanningRecord(score=5)),
                  environment={"domain": env.split("/")[1]}, settings={"agreeableness": "low"})


def _scipy_interval(scores: dict[str, list[float | None]]) -> tuple[tuple[float, float], int]:
    """The guidance interval, computed here straight with `scipy.stats.bootstrap` on the same data
    and seed: environments (sorted) resampled by index, each repeat's figure its summed scores over
    its scored sessions, averaged over the repeats that have one; resamples with none left out
    (how many: the second value)."""
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    envs = sorted(scores)
    score = np.array([[s or 0.0 for s in scores[e]] for e in envs])  # [environment, repeat]
    scored = np.array([[s is not None for s in scores[e]] for e in envs], dtype=float)

    def mean_over_repeats(i, axis=-1):
        with np.errstate(divide="ignore", invalid="ignore"):
            per_repeat = score[i].sum(axis=-2) / scored[i].sum(axis=-2)  # i: [..., environment]; NaN: none scored
            return np.nanmean(per_repeat, axis=-1)

    args = dict(n_resamples=2000, method="percentile", confidence_level=0.95, vectorized=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN resamples (and nanmean of none): taken out below
        res = bootstrap((np.arange(len(envs)),), mean_over_repeats, rng=np.random.default_rng(BOOTSTRAP_SEED), **args)
    dist = res.bootstrap_distribution
    undefined = int(np.isnan(dist).sum())
    if undefined:
        kept = type("Kept", (), {"bootstrap_distribution": dist[~np.isnan(dist)]})()
        res = bootstrap((np.arange(len(envs)),), mean_over_repeats, bootstrap_result=kept, **{**args, "n_resamples": 0})
    return (float(res.confidence_interval.low), float(res.confidence_interval.high)), undefined


def test_the_interval_is_scipys_percentile_bootstrap_over_environments() -> None:
    """The interval is `scipy.stats.bootstrap`'s (method "percentile", seeded `default_rng`), with a
    session's repeats resampled together with its environment."""
    envs = [f"proactiveeval/persuasion/fair/{i}" for i in range(12)]  # enough for the draws to tell
    scores = {env: [float(1 + (3 * i + 5 * rep) % 10) for rep in (0, 1)] for i, env in enumerate(envs)}
    results = [_pe(env, rep, 5, int(s)) for env, values in scores.items() for rep, s in enumerate(values)]
    got = _guidance(results)[1]
    assert got == pytest.approx(_scipy_interval(scores)[0], abs=1e-12, rel=0)


def test_resamples_without_a_defined_figure_are_left_out_without_a_warning() -> None:
    """Four of eight environments were never judged: a resample of only those (1 in 256) has no
    guidance; it is left out of the distribution, and no warning reaches the caller."""
    import warnings

    envs = [f"proactiveeval/persuasion/fair/{i}" for i in range(8)]
    scores = {envs[0]: [9.0, 7.0], envs[1]: [3.0, 4.0], envs[2]: [6.0, 10.0], envs[3]: [5.0, 8.0],
              **{env: [None, None] for env in envs[4:]}}
    results = [_pe(env, rep, 5, int(s)) if s is not None else _unscored(env, rep)
               for env, values in scores.items() for rep, s in enumerate(values)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _guidance(results)[1]
    want, undefined = _scipy_interval(scores)
    assert undefined > 0 and got == pytest.approx(want, abs=1e-12, rel=0)
    assert 3.5 <= got[0] < got[1] <= 8.0  # within the judged environments' own means


def test_a_degenerate_sample_gives_a_point_interval_without_a_warning() -> None:
    """Every environment alike: every resample is the sample, so the interval is the figure itself."""
    import warnings

    from proactive_tui.evalrun.stats import bootstrap_interval

    results = [_pe(env, rep, 5, 7) for env in ENVS for rep in (0, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _guidance(results)[1] == (7.0, 7.0)
        # ... and one whose figure is undefined everywhere has no interval at all
        assert bootstrap_interval([[[1.0, 0.0]]] * 3, lambda sums: sums[..., 1] / sums[..., 1]) is None


def test_a_chronos_branching_sample_is_resampled_with_both_its_branches() -> None:
    """Chronos's overall success pairs a sample's positive and negative branch: scipy resamples
    the branching samples (both branches at once), not the two environments apart."""
    import numpy as np
    from scipy.stats import bootstrap

    from proactive_tui.families.chronos.events import SessionOutcome
    from proactive_tui.families.chronos.record import ChronosSection

    samples = [f"s{i:02d}" for i in range(31)]
    won = {(s, branch): (i * 7 + (3 if branch == "negative" else 0)) % 5 < 3
           for i, s in enumerate(samples) for branch in ("positive", "negative")}
    results = []
    for (sample, branch), success in won.items():
        section = ChronosSection(branch=branch, tier="simple", turns=[], outcome=SessionOutcome(
            branch=branch, tier="simple", success=success, reason="r"))
        results.append(result("chronos", f"chronos/{sample}/{branch}", 0, section, environment={"sample_id": sample}))
    tiers = next(t for t in registry.get("chronos").batch.tables(results, 1) if t.id == "tiers")
    got = tiers.rows[0].interval["overall_success"]

    positive = np.array([float(won[s, "positive"]) for s in samples])  # samples sorted, as the report sorts units
    negative = np.array([float(won[s, "negative"]) for s in samples])
    res = bootstrap((positive, negative), lambda p, n, axis=-1: (p.mean(axis=axis) + n.mean(axis=axis)) / 2,
                    paired=True, vectorized=True, n_resamples=2000, method="percentile", confidence_level=0.95,
                    rng=np.random.default_rng(BOOTSTRAP_SEED))
    assert got == pytest.approx((res.confidence_interval.low, res.confidence_interval.high), abs=1e-12, rel=0)


def test_the_bootstrap_figures_are_the_tables_own() -> None:
    """The vectorised figures a resample computes equal the family's metrics on the same counts."""
    import numpy as np

    from proactive_tui.families.proactivebench.batch import COUNTED, _figures
    from proactive_tui.families.proactivebench.metrics import Confusion, metrics

    rng = np.random.default_rng(1)
    for _ in range(50):
        c = Confusion(**{k: int(v) for k, v in zip(COUNTED, rng.integers(0, 3, len(COUNTED)))})
        sums = np.array([1.0] + [float(getattr(c, k)) for k in COUNTED])
        got, want = _figures(sums), metrics(c)
        for key in got:
            assert float(got[key]) == pytest.approx(getattr(want, key)), (key, c)


# -- one batch off the protocol in every family, and its outputs ------------------------------------


@pytest.fixture(scope="module")
def deviating(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A batch with ProactiveBench's verdict feedback, ProactiveEval guiding with its own plan
    and Chronos's basic (unguided) prompt (one repeat, so one pass^1 column)."""
    import os

    home = tmp_path_factory.mktemp("home")
    saved = {k: os.environ.get(k) for k in ("PROACTIVE_TUI_CONFIG", "PROACTIVE_TUI_DATA")}
    os.environ["PROACTIVE_TUI_CONFIG"], os.environ["PROACTIVE_TUI_DATA"] = str(home / "c.toml"), str(home / "d")
    out = tmp_path_factory.mktemp("batch") / "out"
    try:
        assert run(["proactiveeval/persuasion/fair/0", "proactivebench/coding_01", "chronos/car-purchase/positive",
                    "--agent", "m1", "--agreeableness", "low", "--own-plan", "--feedback", "--prompt-variant", "standard",
                    "--max-events", "3", "--no-store", "--concurrency", "1", "--out", str(out)], Seats()) == 0
    finally:
        for k, v in saved.items():
            if v is not None:
                os.environ[k] = v
    return out


BOOTSTRAP_SEED = 30
"""`evalrun.stats.BOOTSTRAP_SEED`, as documented (a report says which seed made its intervals)."""

EXPECTED = {"proactiveeval": [OWN_PLAN], "proactivebench": [FEEDBACK, "first 3 events of each trace only"],
            "chronos": [STANDARD]}


def test_report_json_labels_every_row_and_records_the_bootstrap(deviating) -> None:
    report = json.loads((deviating / "report.json").read_text())
    assert report["bootstrap"]["seed"] == BOOTSTRAP_SEED and report["bootstrap"]["level"] == 0.95
    assert report["bootstrap"]["resamples"] == 2000 and "scipy.stats.bootstrap" in report["bootstrap"]["method"]
    import scipy

    assert report["bootstrap"]["library"] == f"scipy {scipy.__version__}"  # the release that drew the resamples
    for family, tables in report["families"].items():
        for table in tables:
            assert all(r["protocol"] == EXPECTED[family] for r in table["rows"]), (family, table["id"])
    splits = next(t for t in report["families"]["proactivebench"] if t["id"] == "splits")
    assert all(isinstance(r["values"]["events"], int) for r in splits["rows"])  # a count, never 3.0


def test_report_csv_labels_every_line_and_writes_counts_as_integers(deviating) -> None:
    lines = list(csv.DictReader(io.StringIO((deviating / "report.csv").read_text())))
    assert lines and all(line["protocol"] == "; ".join(EXPECTED[line["family"]]) for line in lines)
    events = [line for line in lines if line["measure"] == "events"]
    tasks = [line for line in lines if line["measure"] == "tasks"]
    assert events and tasks and all(re.fullmatch(r"\d+", line["value"]) for line in events + tasks)
    assert not any(line["measure"] == "pass_k" for line in lines)  # one repeat: pass^1 alone


def test_report_md_and_report_show_label_the_numbers(deviating, capsys) -> None:
    md = (deviating / "report.md").read_text()
    for family, labels in EXPECTED.items():
        assert f"**{family} · m1: not the protocol: {'; '.join(labels)}**" in md
    assert "| model | split | Recall | Precision | Accuracy | False-Alarm | F1 | Accept Rate | judged events | protocol |" in md
    assert md.count("| tasks | pass^1 | variance over repeats | protocol |") == 3
    assert f"seed {BOOTSTRAP_SEED}" in md
    capsys.readouterr()
    assert main(["report", "show", str(deviating)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    for family, labels in EXPECTED.items():
        assert f"{family} · m1: not the protocol: {'; '.join(labels)}" in shown
    assert "not the protocol: verdict feedback on" in shown and "Accept Rate" in shown


def test_report_html_labels_the_numbers(deviating, tmp_path) -> None:
    from proactive_tui.export.viewer import read_payload

    assert main(["report", "html", str(deviating), "--out", str(tmp_path / "r.html")]) == 0
    data = read_payload((tmp_path / "r.html").read_text())["report"]
    assert f"proactivebench · m1: not the protocol: {FEEDBACK}; first 3 events of each trace only" in data["deviations"]
    for table in data["tables"]:
        assert table["header"][-1] == "protocol" and table["align"][-1] == "left"
        assert all(cells[-1].startswith("not the protocol: ") for cells in table["rows"]), table["id"]
    assert "seed" in data["interval_note"]


# -- the labels: derived from the settings models ---------------------------------------------------


def test_each_family_names_its_deviations_and_its_defaults_have_none() -> None:
    for name in ("proactiveeval", "proactivebench", "chronos"):
        family = registry.get(name)
        assert family.deviations(family.settings_model().model_dump()) == [], name
        assert family.deviations({}) == [], name
    bench = registry.get("proactivebench")
    assert bench.deviations({"feedback": True, "candidates": 3}) == ["3 candidates (the paper's ablation)", FEEDBACK]
    assert bench.deviations({"agent_temperature": 0.5}) == []  # upstream's own temperature, said explicitly
    assert registry.get("proactiveeval").deviations({"guide_with": "own_plan", "agreeableness": "high"}) == [OWN_PLAN]
    assert registry.get("chronos").deviations({"prompt_variant": "standard"}) == [STANDARD]
    assert registry.get("chronos").deviations({"prompt_variant": "guided"}) == []


def test_a_setting_is_labelled_by_declaring_it_and_follows_its_default() -> None:
    from proactive_tui.core.deviations import Deviation, deviations

    class Settings(BaseModel):  # a family's settings model, as another setting would be added to it
        without_target: Annotated[bool, Deviation("without the target {value} (an ablation)")] = False
        variant: Annotated[str, Deviation("prompt {value} (default {default})")] = "guided"
        seed: int | None = None

    assert deviations(Settings, {"without_target": True, "seed": 3}) == ["without the target on (an ablation)"]
    # the default moved to "guided": the other value is now the one labelled
    assert deviations(Settings, {"variant": "standard"}) == ["prompt standard (default guided)"]
    assert deviations(Settings, {"variant": "guided"}) == []
