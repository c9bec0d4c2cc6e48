"""ProactiveEval's tables in a batch report (`BatchPart.tables`).

The paper's main table has a row per model and a column per domain, for target planning and for
dialogue guidance apart; each figure is the mean over the domain's environments, each run at the
three agreeableness levels. Here each figure is computed per repeat and reported as mean ± std
over repeats (`evalrun.stats`), with its 95% interval over the environments resampled; "overall" is the mean over every session of the model, not the mean
of the domain means (domains hold different numbers of items).

The agreeableness level is a swept setting (`Family.sweeps`: every level runs unless
`--agreeableness` picks one), so the level is part of each session's key. The "by agreeableness
level" table shows how much the user's resistance costs (with how many sessions each mean has,
how many reached the target); the planning and guidance tables per level (rows per level,
columns per domain) are the per-level, per-domain tables the paper's protocol and the earlier
`eval proactiveeval` command printed. A session the judge did not score is left out of a mean
and counted in the "scored" columns, so a mean over fewer sessions than ran is visible.

Planning is judged once per environment, agent model and repeat, and the agreeableness levels
reuse that plan and its score (`shared_plan`; the paper's Table 4 counts 328 planning judgements
against 984 guidance ones). The planning table says how many plan and guidance judgements the
sessions hold (`judgement_counts`), so a reader sees the plan means are not over three times as
many plans.

A session **passes** (pass^k) when its guidance score is at least `PASS_GUIDANCE` (7). The paper
has no pass threshold: 7 is our choice, the lowest band of our guidance judge's scale that says
"clear progress toward the target and most standards met" (`prompts.GUIDANCE_BANDS`).
"""

from __future__ import annotations

from proactive_tui.core.family import BatchPart
from proactive_tui.families.proactiveeval.shared_plan import PlanShare

from collections.abc import Iterator
from typing import Any

from proactive_tui.evalrun.report import Column, ReportRow, ReportTable, Trial, consistency_table, interval, per_repeat
from proactive_tui.families.proactiveeval.env import DOMAINS

PASS_GUIDANCE = 7
LEVELS = ("low", "medium", "high")


def _domain(result: Any) -> str:
    return str((result.record.environment or {}).get("domain") or "-")


def _scores(result: Any) -> tuple[float | None, float | None]:
    """(plan score, guidance overall) of a session; None for what was not scored."""
    section = result.record.section
    plan = section.planning.score if section is not None else None
    guidance = section.guidance.overall if section is not None and section.guidance is not None else None
    return plan, guidance


def _level(result: Any) -> str:
    """The session's agreeableness level: its key's (the sweep's value)."""
    return str(result.key.settings.get("agreeableness", ""))


def _levels(results: list[Any]) -> list[str]:
    """The levels that ran, low to high (an unknown one, from an edited folder, last)."""
    present = {_level(r) for r in results}
    return [lv for lv in LEVELS if lv in present] + sorted(present - set(LEVELS))


def _by_model_and_level(results: list[Any], models: list[str]) -> Iterator[tuple[str, str, list[Any]]]:
    """(model, level, its sessions) for every level each model ran, models in order, levels low to high."""
    for model in models:
        own = [r for r in results if r.key.agent == model]
        for level in _levels(own):
            yield model, level, [r for r in own if _level(r) == level]


def _reached(result: Any) -> bool:
    termination = result.record.termination
    return termination is not None and termination.reason == "target_reached"


def _figure(results: list[Any], which: int) -> tuple[float | None, float | None]:
    """Mean ± std over repeats of the per-repeat mean of score `which` (0 plan, 1 guidance)."""
    by_repeat: dict[int, list[float]] = {}
    for r in results:
        value = _scores(r)[which]
        if value is not None:
            by_repeat.setdefault(r.key.repeat, []).append(float(value))
    return per_repeat({rep: sum(v) / len(v) for rep, v in by_repeat.items()})


def _interval(results: list[Any], which: int) -> tuple[float, float] | None:
    """The 95% interval of `_figure`'s mean over environments resampled (`evalrun.stats`): each
    session adds (1, scored, score) to its environment's counts, and a repeat's figure is the
    summed score over the summed scored sessions, as `_figure` computes it."""
    cells = []
    for r in results:
        value = _scores(r)[which]
        cells.append((r.key.env_id, r.key.repeat, [1.0, float(value is not None), float(value or 0.0)]))
    return interval(cells, lambda sums: sums[..., 2] / sums[..., 1])


def batch_trials(result: Any) -> list[Trial]:
    """The session as pass^k sees it: one task, passed when its guidance is at least `PASS_GUIDANCE`."""
    guidance = _scores(result)[1]
    return [Trial(model=result.key.agent, groups=[DOMAINS.get(_domain(result), _domain(result)), "overall"],
                  task=result.key.task, passed=None if guidance is None else guidance >= PASS_GUIDANCE,
                  score=None if guidance is None else float(guidance))]


def judgement_counts(results: list[Any]) -> tuple[int, int, int]:
    """(plan judgements, sessions whose plan score was reused from another, guidance judgements)
    over the finished sessions: a reused plan score is not a judgement of its own."""
    planned = reused = guided = 0
    for r in results:
        section = r.record.section
        if section is None:
            continue
        if section.planning.score is not None:
            if section.planning.score_reused_from is None:
                planned += 1
            else:
                reused += 1
        guided += section.guidance is not None
    return planned, reused, guided


def counts_note(results: list[Any]) -> str:
    """"planning judged 8 times (16 sessions reused a plan's score), guidance 24"."""
    planned, reused, guided = judgement_counts(results)

    def times(n: int) -> str:
        return "once" if n == 1 else f"{n} times"

    reuse = f" ({reused} {'session' if reused == 1 else 'sessions'} reused a plan's score)" if reused else ""
    if not planned and not reused:
        return f"no plan judged, guidance {guided}"
    return f"planning judged {times(planned)}{reuse}, guidance {guided}: one plan per environment, agent and repeat"


def batch_groups(result: Any) -> list[str]:
    """The rows a session counts in: its domain (by name, as the consistency table's rows say it)
    and its agreeableness level."""
    domain = _domain(result)
    return [DOMAINS.get(domain, domain), result.key.settings.get("agreeableness", "")]


def batch_tables(results: list[Any], repeats: int) -> list[ReportTable]:
    models = sorted({r.key.agent for r in results})
    domains = [d for d in DOMAINS if any(_domain(r) == d for r in results)]
    domains += sorted({_domain(r) for r in results} - set(domains))
    columns = [Column(key=d, label=DOMAINS.get(d, d)) for d in domains] + [Column(key="overall", label="Overall")]
    tables = []
    for which, table_id, title in ((0, "planning", "ProactiveEval: target planning (1-10)"),
                                   (1, "guidance", "ProactiveEval: dialogue guidance (1-10)")):
        rows = []
        for model in models:
            own = [r for r in results if r.key.agent == model]
            row = ReportRow(model=model)
            for key, at in [(d, [r for r in own if _domain(r) == d]) for d in domains] + [("overall", own)]:
                row.values[key], row.std[key] = _figure(at, which)
                found = _interval(at, which)
                if found is not None:
                    row.interval[key] = found
            rows.append(row)
        notes = ["mean ± std over repeats [95% interval over environments]; each repeat's "
                 "figure is the mean over its sessions (at every agreeableness level that ran)"]
        if table_id == "planning":
            notes.append(counts_note(results))
        tables.append(ReportTable(id=table_id, title=title, columns=columns, rows=rows, notes=notes))
    rows = []
    for model, level, at in _by_model_and_level(results, models):
        row = ReportRow(model=model, group=level)
        for key, which in (("plan", 0), ("guidance", 1)):
            row.values[key], row.std[key] = _figure(at, which)
        row.values["sessions"] = len(at)
        row.values["plan_n"] = sum(_scores(r)[0] is not None for r in at)
        row.values["guidance_n"] = sum(_scores(r)[1] is not None for r in at)
        row.values["reached"] = sum(_reached(r) for r in at)
        rows.append(row)
    tables.append(ReportTable(id="agreeableness", title="ProactiveEval: by agreeableness level", group_label="level",
                              columns=[Column(key="sessions", label="sessions", unit="count"),
                                       Column(key="plan", label="planning"), Column(key="guidance", label="guidance"),
                                       Column(key="plan_n", label="plan scored", unit="count"),
                                       Column(key="guidance_n", label="guidance scored", unit="count"),
                                       Column(key="reached", label="target reached", unit="count")],
                              rows=rows,
                              notes=["sessions, scored and target reached count every repeat; a mean is over the "
                                     "scored sessions only"]))
    for which, table_id, title in ((0, "planning_by_level", "ProactiveEval: target planning per agreeableness level"),
                                   (1, "guidance_by_level", "ProactiveEval: dialogue guidance per agreeableness level")):
        rows = []
        for model, level, at in _by_model_and_level(results, models):
            row = ReportRow(model=model, group=level)
            for d in domains:
                row.values[d], row.std[d] = _figure([r for r in at if _domain(r) == d], which)
            row.values["overall"], row.std["overall"] = _figure(at, which)
            rows.append(row)
        tables.append(ReportTable(id=table_id, title=title, group_label="level", columns=columns, rows=rows,
                                  notes=["mean ± std over repeats of the sessions at that level"]))
    trials = [t for r in results for t in batch_trials(r)]
    tables.append(consistency_table(trials, repeats, "domain", f"its guidance score is at least {PASS_GUIDANCE}/10 "
                                    "(our threshold; the paper has none)", "ProactiveEval: consistency over repeats"))
    return tables


class ProactiveEvalBatch(BatchPart):
    """ProactiveEval's figures of a batch: the functions above, as the family's batch part."""

    tables = staticmethod(batch_tables)
    trials = staticmethod(batch_trials)
    groups = staticmethod(batch_groups)

    def share(self, finished: list[Any]) -> PlanShare:
        """One plan per (environment, agent, repeat) for every agreeableness level (`shared_plan`)."""
        share = PlanShare()
        share.seed([r for r in finished if r.key.family == "proactiveeval"])
        return share


BATCH = ProactiveEvalBatch()
