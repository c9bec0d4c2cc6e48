"""The batch report, computed from the run records of a folder (or of several shard folders) alone.

The shared part is here: which records count, the report's frame (what ran, what is missing,
whether it is partial) and the files (`report.json`, `report.csv`, `report.md`). The numbers come
from each family (`BatchPart.tables`, in the family's folder), as typed tables: rows of
(model, group) with named values and their standard deviation over repeats.

Everything but `timing` depends only on the manifest's sweep and the records, so an unsharded run
and its shards merged give equal reports apart from `timing`.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from proactive_tui.evalrun.folder import SessionResult, read_manifest, read_results, write_atomic
from proactive_tui.evalrun.plan import Manifest, SessionKey, SweepSpec
from proactive_tui.textsafe import json_text

Unit = Literal["score", "pct", "count", "ratio"]


class Column(BaseModel):
    key: str
    label: str
    unit: Unit = "score"


class ReportRow(BaseModel):
    model: str
    """The agent model."""
    group: str = ""
    """What the row covers within the model (a domain, a split, a tier, "overall")."""
    values: dict[str, int | float | None] = Field(default_factory=dict)
    """A count is an int (written "3", never "3.0"); a score or a rate a float."""
    std: dict[str, float | None] = Field(default_factory=dict)
    """Standard deviation over repeats of the value of the same key (absent or None: one repeat)."""
    interval: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """The 95% interval (low, high) of a headline figure of the same key: a percentile bootstrap
    over environments (`stats.bootstrap_interval`, `scipy.stats.bootstrap`); absent for the other
    figures and where there is nothing to resample (one environment)."""
    protocol: list[str] = Field(default_factory=list)
    """How the row's sessions differ from their family's protocol (`Family.deviations`: "feedback
    on (the paper's ablation)"), shown wherever the row's numbers are; empty: they do not."""


class ReportTable(BaseModel):
    id: str
    title: str
    group_label: str = ""
    """The heading of the `group` column ("" when the table has no groups)."""
    columns: list[Column]
    rows: list[ReportRow]
    notes: list[str] = Field(default_factory=list)


class Timing(BaseModel):
    generated_at: str


class Bootstrap(BaseModel):
    """How the report's 95% intervals were computed, so a reader can reproduce them."""

    method: str = "percentile bootstrap over environments (numpy default_rng)"
    """What computed the intervals. Reports written before `library` existed say
    "(numpy default_rng)": the same percentile bootstrap over the same unit, written with numpy;
    their intervals differ from today's by the resampling's draws only."""
    library: str | None = None
    """The library and release that computed the intervals ("scipy 1.17.1"), so a reader can
    reproduce them with the same draws; None in reports written before it was recorded."""
    unit: str = ("environment (Chronos: a branching sample's two branches together); a session's repeats "
                 "are resampled with its environment")
    seed: int
    resamples: int
    level: float


class BatchReport(SweepSpec):
    planned: int
    finished: int
    missing: list[str]
    """Planned keys with no finished record (interrupted, failed, or in a shard not merged)."""
    partial: bool
    families: dict[str, list[ReportTable]]
    timing: Timing
    bootstrap: Bootstrap | None = None
    """How the rows' `interval`s were computed (None in reports written before they were)."""

    def deviations(self) -> list[tuple[str, str, list[str]]]:
        """(family, model, labels) for every model whose sessions differ from the family's
        protocol, in the report's order (one line each wherever the report is shown)."""
        out: dict[tuple[str, str], list[str]] = {}
        for family, tables in self.families.items():
            for table in tables:
                for row in table.rows:
                    if row.protocol:
                        out.setdefault((family, row.model), row.protocol)
        return [(family, model, labels) for (family, model), labels in out.items()]


def build_report(manifest: Manifest, results: list[SessionResult], planned: list[str] | None = None) -> BatchReport:
    """The report of the planned keys' finished results (records of other keys are ignored);
    `planned` defaults to the manifest's."""
    from proactive_tui.core import registry

    wanted = set(manifest.planned if planned is None else planned)
    by_id = {r.key.id: r for r in results if r.key.id in wanted}
    families: dict[str, list[ReportTable]] = {}
    for name in manifest.families:
        own = [by_id[k] for k in sorted(by_id) if by_id[k].key.family == name]
        if own:
            family = registry.get(name)
            families[name] = family.batch.tables(own, manifest.repeats) if family.batch is not None else []
            label_deviations(families[name], own, family.deviations)
    missing = sorted(wanted - set(by_id))
    from proactive_tui.evalrun.stats import (BOOTSTRAP_METHOD, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE,
                                             bootstrap_library)

    return BatchReport(
        **manifest.sweep_spec(), planned=len(wanted), finished=len(by_id), missing=missing,
        partial=bool(missing) or len(wanted) < manifest.total, families=families,
        timing=Timing(generated_at=datetime.now(timezone.utc).isoformat(timespec="seconds")),
        bootstrap=Bootstrap(seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES, level=CONFIDENCE,
                            method=BOOTSTRAP_METHOD, library=bootstrap_library()),
    )


def label_deviations(tables: list[ReportTable], results: list[SessionResult], deviations: Any) -> None:
    """Set each row's `protocol`: how the sessions of its model differ from the family's protocol,
    from their run records' settings (`deviations(settings) -> labels`), each label once, in
    order. Per model, as a batch gives every model the same settings; from the records, so a
    folder says what its sessions actually ran with."""
    by_model: dict[str, list[str]] = {}
    for r in results:
        labels = by_model.setdefault(r.key.agent, [])
        labels += [label for label in deviations(r.record.settings) if label not in labels]
    for table in tables:
        for row in table.rows:
            row.protocol = list(by_model.get(row.model, []))


def report_of_folder(folder: Path) -> BatchReport:
    return build_report(read_manifest(folder), read_results(folder, transcripts=False))


# -- files ----------------------------------------------------------------------------------------


def show_value(value: float | None, unit: Unit, std: float | None = None,
               interval: tuple[float, float] | None = None) -> str:
    """A value as the tables print it: scores with 2 decimals, rates as percentages, counts as
    whole numbers, then "± std" over repeats and the 95% interval "[low, high]" when there are."""
    if value is None:
        return "n/a"
    if unit == "count":
        return str(round(value))
    scale, digits, mark = (100, 2, "%") if unit == "pct" else (1, 2 if unit == "score" else 3, "")
    text = f"{scale * value:.{digits}f}{mark}"
    if std is not None:
        text += f" ± {scale * std:.2f}"
    if interval is not None:
        text += f" [{scale * interval[0]:.{digits}f}, {scale * interval[1]:.{digits}f}]"
    return text


PROTOCOL_COLUMN = "protocol"
"""The column a table gains when a row's sessions differ from their protocol (`ReportRow.protocol`)."""


def protocol_text(row: ReportRow) -> str:
    """A row's protocol cell: what differs from the protocol, or that nothing does."""
    return "not the protocol: " + "; ".join(row.protocol) if row.protocol else "as the protocol"


def table_cells(table: ReportTable) -> tuple[list[str], list[list[str]]]:
    """(header, rows of text) for the terminal, markdown and the web page: model, group, the
    columns, and "protocol" when any row differs from its protocol (its numbers never appear
    without the label)."""
    labelled = any(row.protocol for row in table.rows)
    header = ["model"] + ([table.group_label] if table.group_label else []) + [c.label for c in table.columns]
    header += [PROTOCOL_COLUMN] if labelled else []
    rows = []
    for row in table.rows:
        cells = [row.model] + ([row.group] if table.group_label else [])
        cells += [show_value(row.values.get(c.key), c.unit, row.std.get(c.key), row.interval.get(c.key))
                  for c in table.columns]
        cells += [protocol_text(row)] if labelled else []
        rows.append(cells)
    return header, rows


def deviation_lines(report: BatchReport) -> list[str]:
    """One line per model whose numbers are not its family's protocol, for the top of every output."""
    return [f"{family} · {model}: not the protocol: {'; '.join(labels)}" for family, model, labels in report.deviations()]


def interval_note(report: BatchReport) -> str:
    """What the "[low, high]" after a headline figure is, and how to reproduce it ("" without)."""
    b = report.bootstrap
    if b is None:
        return ""
    method = f"{b.method}, {b.library}" if b.library else b.method
    return (f"[low, high]: {100 * b.level:g}% interval of a headline figure, {method}, {b.resamples} resamples, "
            f"seed {b.seed}; resampled unit: {b.unit}; none with fewer than two environments")


def status_line(report: BatchReport) -> str:
    text = f"{report.finished}/{report.planned} sessions finished"
    if report.partial:
        text += " (partial: " + (f"{len(report.missing)} not finished" if report.missing else "a shard of the sweep") + ")"
    return text


def to_markdown(report: BatchReport) -> str:
    lines = ["# Batch evaluation", "", f"Selectors: {', '.join(report.selectors)}  ",
             f"Agents: {', '.join(report.agents)}  ",
             f"Other seats: {', '.join(f'{k}: {v}' for k, v in report.models.items())}  ",
             f"Repeats: {report.repeats}; {status_line(report)}", ""]
    lines += [f"**{line}**  " for line in deviation_lines(report)] + ([""] if report.deviations() else [])
    lines += [f"_{interval_note(report)}_", ""] if report.bootstrap is not None else []
    for tables in report.families.values():
        for table in tables:
            header, rows = table_cells(table)
            lines += [f"## {table.title}", "", "| " + " | ".join(header) + " |",
                      "|" + "|".join(["---"] * len(header)) + "|"]
            lines += ["| " + " | ".join(cells) + " |" for cells in rows]
            lines += [""] + [f"_{note}_" for note in table.notes] + ([""] if table.notes else [])
    return "\n".join(lines).rstrip() + "\n"


def to_csv(report: BatchReport) -> str:
    """Long format, one line per value: family, table, model, group, measure, value, std, the 95%
    interval's ends (ci_low, ci_high; empty for a figure without one) and protocol (how the row's
    sessions differ from their protocol, "; "-separated; empty when they do not). A count is
    written as a whole number."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["family", "table", "model", "group", "measure", "value", "std", "ci_low", "ci_high", "protocol"])

    def number(value: float | None, unit: str = "") -> str:
        return "" if value is None else str(round(value)) if unit == "count" else repr(float(value))

    for family, tables in report.families.items():
        for table in tables:
            for row in table.rows:
                for c in table.columns:
                    low, high = row.interval.get(c.key, (None, None))
                    writer.writerow([family, table.id, row.model, row.group, c.key, number(row.values.get(c.key), c.unit),
                                     number(row.std.get(c.key)), number(low), number(high), "; ".join(row.protocol)])
    return out.getvalue()


def write_report(folder: Path, report: BatchReport) -> list[Path]:
    """`report.json`, `report.csv` and `report.md` in the folder, each written whole."""
    paths = [folder / "report.json", folder / "report.csv", folder / "report.md"]
    write_atomic(paths[0], json_text(report, indent=2))
    write_atomic(paths[1], to_csv(report))
    write_atomic(paths[2], to_markdown(report))
    return paths


# -- merging shards -------------------------------------------------------------------------------


class MergeError(ValueError):
    """Folders that are not shards of one sweep."""


def merge_folders(folders: list[Path], out: Path) -> BatchReport:
    """Combine shard folders into `out`: one manifest for the whole sweep, every finished record
    copied, and the report an unsharded run of the same sweep gives."""
    manifests = [read_manifest(f) for f in folders]
    first = manifests[0]
    for folder, m in zip(folders[1:], manifests[1:]):
        if m.sweep_fields() != first.sweep_fields():
            differ = sorted(k for k, v in m.sweep_fields().items() if first.sweep_fields().get(k) != v)
            raise MergeError(f"{folder} is not a shard of the sweep in {folders[0]} (differs in {', '.join(differ)})")
    keys: dict[str, SessionKey] = {}
    for m in manifests:
        keys.update({k.id: k for k in m.keys})
    planned = sorted(set().union(*(m.planned for m in manifests)))
    results: dict[str, SessionResult] = {}
    for folder in folders:
        results.update({r.key.id: r for r in read_results(folder)})
    merged = first.model_copy(update={"shard": None, "planned": planned, "keys": [keys[k] for k in sorted(keys)]})
    from proactive_tui.evalrun.folder import write_manifest, write_result

    out.mkdir(parents=True, exist_ok=True)
    write_manifest(out, merged)
    for result in results.values():
        write_result(out, result)
    report = build_report(merged, list(results.values()))
    write_report(out, report)
    return report


def load_report_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# -- helpers the families' tables share ---------------------------------------------------------


class Trial(BaseModel):
    """One session as pass^k and the variance over repeats see it (the family says what passed)."""

    model: str
    groups: list[str]
    """The rows it counts in (its domain, split or tier, and "overall")."""
    task: str
    passed: bool | None
    """None: the session has no verdict (left out)."""
    score: float | None = None
    """What the variance over repeats is taken of (the pass flag as 0/1 when None)."""


def consistency_table(trials: list[Trial], repeats: int, group_label: str, pass_rule: str,
                      title: str, total: str = "overall") -> ReportTable:
    """pass^1, pass^k (k = `repeats`) and the variance over repeats, per model and group
    (`evalrun.stats` says how each is computed); the `total` group comes last."""
    from proactive_tui.evalrun.stats import pass_hat_k, repeat_variance

    cells: dict[tuple[str, str], tuple[dict[str, list[bool]], dict[str, list[float]]]] = {}
    order: list[tuple[str, str]] = []
    for t in trials:
        if t.passed is None:
            continue
        for group in t.groups:
            if (t.model, group) not in cells:
                cells[(t.model, group)] = ({}, {})
                order.append((t.model, group))
            flags, scores = cells[(t.model, group)]
            flags.setdefault(t.task, []).append(t.passed)
            scores.setdefault(t.task, []).append(float(t.passed) if t.score is None else t.score)
    rows = []
    for model, group in sorted(order, key=lambda mg: (mg[0], mg[1] == total, mg[1])):
        flags, scores = cells[(model, group)]
        values: dict[str, int | float | None] = {"tasks": len(flags), "pass_1": pass_hat_k(flags, 1)}
        if repeats > 1:
            values["pass_k"] = pass_hat_k(flags, repeats)
        values["variance"] = repeat_variance(scores)
        rows.append(ReportRow(model=model, group=group, values=values))
    columns = [Column(key="tasks", label="tasks", unit="count"), Column(key="pass_1", label="pass^1", unit="pct")]
    # with one repeat pass^k is pass^1: one column, not the same one twice
    columns += [Column(key="pass_k", label=f"pass^{repeats}", unit="pct")] if repeats > 1 else []
    columns.append(Column(key="variance", label="variance over repeats", unit="ratio"))
    return ReportTable(id="consistency", title=title, group_label=group_label, columns=columns, rows=rows,
                       notes=[f"a session passes when {pass_rule}; pass^k: share of tasks whose k repeats all "
                              "pass (C(c,k)/C(n,k) per task); variance: per task over its repeats, averaged"])


def per_repeat(values: dict[int, float | None]) -> tuple[float | None, float | None]:
    """(mean, std) over repeats of a figure computed once per repeat."""
    from proactive_tui.evalrun.stats import mean_std

    return mean_std(values[r] for r in sorted(values))


def interval(cells: list[tuple[str, int, list[float]]], figure: Any) -> tuple[float, float] | None:
    """The 95% interval of a headline figure (`stats.bootstrap_interval`: `scipy.stats.bootstrap`)
    from its sessions' additive counts: `cells` holds (environment, repeat, counts) per session,
    counts[0] being 1 (the session) and the rest what `figure` reads (summed over environments:
    `[..., C]` -> the figure of each repeat, NaN where undefined). A unit's sessions are summed
    into one row (its repeats, and a Chronos branching sample's two branches, resampled as one).
    Environments are sorted by name, so the same sessions give the same interval in any order
    (shards merged, a report recomputed)."""
    from proactive_tui.evalrun.stats import bootstrap_interval

    if not cells:
        return None
    import numpy as np

    units = sorted({unit for unit, _, _ in cells})
    repeats = sorted({repeat for _, repeat, _ in cells})
    table = np.zeros((len(units), len(repeats), len(cells[0][2])))
    at_unit, at_repeat = {u: i for i, u in enumerate(units)}, {r: i for i, r in enumerate(repeats)}
    for unit, repeat, counts in cells:
        table[at_unit[unit], at_repeat[repeat]] += counts
    return bootstrap_interval(table, figure)
