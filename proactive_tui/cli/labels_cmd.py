"""`proactive-tui labels add|clear|list|verdicts|agreement|import`: a person's labels on judge verdicts.

The same engine as the playground's Verdicts modal (`services.labels`): `verdicts SESSION` lists the
keys a person can label with the judge's values; `add` keeps a label (agreeing, or disagreeing with
the corrected value); `agreement` compares every judge with the people, per judge and kind of
verdict. `import FILE...` keeps the labels that run-record files exported with them carry
(`export --format run-record`), for the sessions of this store they belong to;
`import --study FAMILY [FOLDER]` imports a family's published human rating study (the copy it
ships, or a folder holding the study's files): its items as sessions whose verdicts are the
study's judge's, marked as imported, and every rating as a label with its rater. `agreement` then
also gives each study's own figures, computed from the labels in the store the way the study
computes them (`services.labels.rating_studies`); `--quadratic` and `--exclude-raters` are the
paper's options, printed as deviations. Problems are one plain line (exit 1), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from proactive_tui.textsafe import json_text, say


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    labels = subparsers.add_parser("labels", help="label judge verdicts as a person, and see how often judges agree")
    sub = labels.add_subparsers(title="labels commands", metavar="ACTION", required=True)

    add = sub.add_parser("add", help="agree or disagree with one verdict of a session (a new label replaces the old)")
    add.add_argument("session_id", metavar="SESSION")
    add.add_argument("verdict", metavar="VERDICT_KEY", help="as `labels verdicts SESSION` lists them (turn_check:2)")
    which = add.add_mutually_exclusive_group(required=True)
    which.add_argument("--agree", action="store_true", help="the judge was right")
    which.add_argument("--disagree", action="store_true", help="the judge was wrong (give --value)")
    add.add_argument("--value", metavar="V", help="the corrected value: yes/no for a check, 1-10 for a score, "
                     "accepted/rejected for a proposal verdict")
    add.add_argument("--note", metavar="TEXT", default="", help="why")
    add.set_defaults(func=run_add)

    clear = sub.add_parser("clear", help="remove the label of one verdict")
    clear.add_argument("session_id", metavar="SESSION")
    clear.add_argument("verdict", metavar="VERDICT_KEY")
    clear.set_defaults(func=run_clear)

    listing = sub.add_parser("list", help="the labels of one session, or of every session")
    listing.add_argument("session_id", metavar="SESSION", nargs="?")
    listing.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    listing.set_defaults(func=run_list)

    verdicts = sub.add_parser("verdicts", help="the verdicts of a session a person can label, with the judge's values")
    verdicts.add_argument("session_id", metavar="SESSION")
    verdicts.add_argument("--json", action="store_true", help="print JSON lines")
    verdicts.set_defaults(func=run_verdicts)

    agreement = sub.add_parser("agreement", help="judge vs person over every label: accuracy, Cohen's kappa, confusion; "
                               "and each imported study's own figures")
    agreement.add_argument("--json", action="store_true",
                           help='print {"judges": [...], "studies": [...]} as JSON')
    agreement.add_argument("--quadratic", action="store_true",
                           help="studies: quadratic-weighted kappa (a deviation from the study's unweighted kappa)")
    agreement.add_argument("--exclude-raters", action="store_true",
                           help="studies: leave out raters with at least 5 ratings whose quadratic kappa against the "
                                "judge is below 0.10 (the paper's pre-registered exclusion; a deviation from its script)")
    agreement.add_argument("--resamples", type=int, metavar="N",
                           help="studies: bootstrap resamples (default the study's 10,000; 0 for no intervals; "
                                "any other count is a deviation)")
    agreement.set_defaults(func=run_agreement)

    imp = sub.add_parser("import", help="keep the labels carried by exported run-record files, or import a "
                         "family's human rating study (--study)")
    imp.add_argument("files", metavar="FILE", nargs="*",
                     help="run-record files; with --study, the study's folder (default: the copy the family ships)")
    imp.add_argument("--study", metavar="FAMILY",
                     help="import FAMILY's human rating study (proactbench): items as sessions, ratings as labels")
    imp.set_defaults(func=run_import)


def _fail(message: str) -> int:
    say(f"error: {message}", file=sys.stderr)
    return 1


def _open() -> Any:
    from proactive_tui.store import open_store

    return open_store()


def run_add(args: argparse.Namespace) -> int:
    from proactive_tui.core.verdicts import LabelError, value_text
    from proactive_tui.services.labels import label_verdict
    from proactive_tui.store import StoreError, resolve_id

    if args.agree and args.value is not None:
        return _fail("--agree keeps the judge's value; give --value only with --disagree")
    if args.disagree and args.value is None:
        return _fail("--disagree needs --value (the corrected value)")
    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            row = label_verdict(store, session_id, args.verdict, agree=bool(args.agree), value=args.value, note=args.note)
    except (StoreError, LabelError) as exc:
        return _fail(str(exc))
    mark = "agree" if row.agree else f"disagree: {value_text(row.value)}"
    say(f"{row.session_id} {row.verdict}: judge {value_text(row.judge_value)}, person {mark}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    from proactive_tui.store import StoreError, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            removed = store.delete_label(session_id, args.verdict)
    except StoreError as exc:
        return _fail(str(exc))
    if not removed:
        return _fail(f"session {session_id} has no label on verdict {args.verdict!r}")
    say(f"{session_id} {args.verdict}: label removed")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from proactive_tui.core.verdicts import value_text
    from proactive_tui.store import StoreError, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id) if args.session_id else None
            rows = store.labels(session_id)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        for row in rows:
            say(json_text(row))
        return 0
    if not rows:
        say("no labels" + (f" on session {session_id}" if session_id else ""))
        return 0
    for row in rows:
        mark = "agree" if row.agree else f"disagree -> {value_text(row.value)}"
        note = f"  ({row.note})" if row.note else ""
        rater = f"  rater {row.rater}" if row.rater else ""
        say(f"{row.session_id}  {row.verdict}  {row.kind}  judge {row.judge}: {value_text(row.judge_value)}  "
            f"{mark}{rater}{note}")
    return 0


def run_verdicts(args: argparse.Namespace) -> int:
    from proactive_tui.core.verdicts import verdicts_of, value_text
    from proactive_tui.store import StoreError, load_record, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            record = load_record(store, session_id)
            labels = {row.verdict: row for row in store.labels(session_id) if row.rater == ""}
            raters: dict[str, int] = {}
            for row in store.labels(session_id):
                if row.rater:
                    raters[row.verdict] = raters.get(row.verdict, 0) + 1
    except StoreError as exc:
        return _fail(str(exc))
    verdicts = verdicts_of(record)
    if args.json:
        for v in verdicts:
            label = labels.get(v.key)
            say(json_text({**v.model_dump(mode="json"), "human": label.model_dump(mode="json") if label else None}))
        return 0
    if not verdicts:
        say(f"session {session_id} has no judge verdicts to label")
        return 0
    for v in verdicts:
        label = labels.get(v.key)
        human = "" if label is None else ("  [agree]" if label.agree else f"  [disagree: {value_text(label.value)}]")
        imported = f"  (imported from the {v.imported_from})" if v.imported_from else ""
        others = f"  [{raters[v.key]} rater label(s)]" if v.key in raters else ""
        say(f"{v.key:<22} {v.kind:<16} {value_text(v.value):<9} {v.judge}  {v.label}{imported}{human}{others}")
    return 0


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def study_figures(store: Any, args: argparse.Namespace) -> list[Any]:
    """Every family's rating-study figures from the store's labels (none without labels)."""
    from proactive_tui.services.labels import rating_studies

    out = []
    for study in rating_studies():
        out += study.analyse(store, quadratic=args.quadratic, exclude_raters=args.exclude_raters,
                             resamples=args.resamples)
    return out


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def print_study(fig: Any) -> None:
    """One study's figures for one judge: per group, n, alpha and kappa with their 95% bootstrap
    intervals; then each group's confusion matrix (human consensus down, judge across)."""
    say(f"\n{fig.study} · judge {fig.judge} · {fig.kind}: {fig.raters} raters, {fig.items} verdicts")
    for line in fig.deviations:
        say(f"  {line}")
    if fig.left_out:
        say(f"  {fig.left_out} label(s) left out: the judge gave no grade there (SKIPPED)")
    ci = f"95% bootstrap interval, {fig.resamples:,} resamples" if fig.resamples else "no intervals (0 resamples)"
    say(f"  alpha: {fig.alpha_label}; kappa: {fig.kappa_label}; [{ci}]")
    say(f"  {'group':<10} {'items':>5} {'ratings':>7}  {'alpha':<25} kappa")
    for g in fig.groups:
        say(f"  {g.group:<10} {g.n_items:>5} {g.n_ratings:>7}  {_interval(g.alpha, g.alpha_low, g.alpha_high):<25} "
            f"{_interval(g.kappa, g.kappa_low, g.kappa_high)}")
    if any(g.group == "OVERALL" for g in fig.groups):
        say("  OVERALL pools every type, computed the same way (the study's script reports per type only)")
    width = max(len(c) for c in fig.categories) + 1
    for g in fig.groups:
        say(f"  {g.group}: consensus (rows) x judge (columns)")
        say("  " + " " * (width + 2) + " ".join(f"{c:>{width}}" for c in fig.categories))
        for h in fig.categories:
            say(f"  {h:>{width}}  " + " ".join(f"{g.confusion.get(h, {}).get(j, 0):>{width}}" for j in fig.categories))


def run_agreement(args: argparse.Namespace) -> int:
    from proactive_tui.core.verdicts import value_text
    from proactive_tui.services.labels import agreement
    from proactive_tui.store import StoreError

    if args.resamples is not None and args.resamples < 0:
        return _fail("--resamples must be 0 or more")
    try:
        with _open() as store:
            rows = agreement(store.labels())
            studies = study_figures(store, args)
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        say(json_text({"judges": [r.model_dump(mode="json") for r in rows],
                       "studies": [f.model_dump(mode="json") for f in studies]}, indent=2))
        return 0
    if not rows:
        say("no labels yet: label verdicts with `labels add` or the playground's Verdicts (L), "
            "or import a study with `labels import --study proactbench`")
        return 0
    say(f"{'judge':<28} {'kind':<17} {'n':>4} {'accuracy':>9} {'kappa':>7}")
    for r in rows:
        kappa = "-" if r.kappa is None else f"{r.kappa:.3f}"
        say(f"{r.judge:<28} {r.kind:<17} {r.n:>4} {_pct(r.accuracy):>9} {kappa:>7}")
    for r in rows:
        say(f"\n{r.judge} · {r.kind}: confusion (rows: judge, columns: person)")
        width = max([len(c) for c in r.categories] + [5])
        say(" " * (width + 2) + " ".join(f"{c:>{width}}" for c in r.categories))
        for a in r.categories:
            say(f"{a:>{width}}  " + " ".join(f"{r.confusion[a][b]:>{width}}" for b in r.categories))
        for d in r.disagreements:
            if d.rater:  # an imported study's raters: counted below, listed in --json
                continue
            note = f"  ({d.note})" if d.note else ""
            say(f"  disagreement: {d.session_id} {d.verdict}: judge {value_text(d.judge_value)}, "
                f"person {value_text(d.value)}{note}")
        rated = sum(1 for d in r.disagreements if d.rater)
        if rated:
            say(f"  {rated} disagreement(s) by imported raters (`labels list --json` or --json lists them)")
    for fig in studies:
        print_study(fig)
    return 0


def run_study_import(args: argparse.Namespace) -> int:
    """`labels import --study FAMILY [FOLDER...]`: each folder (or the shipped copy) imported;
    a bad row or file is one warning line and the rest still imports (exit 1 if any)."""
    from proactive_tui.core.verdicts import LabelError
    from proactive_tui.services.labels import rating_study
    from proactive_tui.store import StoreError

    try:
        study = rating_study(args.study)
    except LabelError as exc:
        return _fail(str(exc))
    problems = 0
    try:
        with _open() as store:
            for source in args.files or [None]:
                report = study.import_study(store, source)
                say(f"{study.title} ({report.source}): {report.sessions_new} new session(s), {report.sessions_kept} "
                    f"already here; {report.labels_new} new label(s), {report.labels_kept} already here; "
                    f"{report.files} rating file(s)")
                for note in report.notes:
                    say(f"note: {note}")
                for problem in report.problems:
                    say(f"warning: {problem}", file=sys.stderr)
                problems += len(report.problems)
    except StoreError as exc:
        return _fail(str(exc))
    if not problems:
        say("the verdicts are the study's judge's, imported as the study recorded them; see `labels agreement`")
    return 1 if problems else 0


def run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.study:
        return run_study_import(args)
    if not args.files:
        return _fail("give run-record files to import labels from, or --study FAMILY")

    from proactive_tui.services.labels import import_labels
    from proactive_tui.core.run_record import read_record
    from proactive_tui.store import StoreError

    total, problems = 0, []
    try:
        with _open() as store:
            for name in args.files:
                try:
                    record = read_record(Path(name).read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    problems.append(f"{name}: not a run record ({str(exc).splitlines()[0]})")
                    continue
                if store.session(record.id) is None:
                    problems.append(f"{name}: session {record.id} is not in this store; its labels were not kept")
                    continue
                count = import_labels(store, record)
                total += count
                say(f"{name}: {count} label{'s' * (count != 1)} kept for session {record.id}")
    except StoreError as exc:
        return _fail(str(exc))
    for problem in problems:
        say(f"warning: {problem}", file=sys.stderr)
    return 0 if not problems else 1
