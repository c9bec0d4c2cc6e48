"""`proactive-tui labels add|clear|list|verdicts|agreement|import`: a person's labels on judge verdicts.

The same engine as the playground's Verdicts modal (`core.labels`): `verdicts SESSION` lists the
keys a person can label with the judge's values; `add` keeps a label (agreeing, or disagreeing with
the corrected value); `agreement` compares every judge with the people, per judge and kind of
verdict. `import FILE...` keeps the labels that run-record files exported with them carry
(`export --format run-record`), for the sessions of this store they belong to. Problems are one
plain line (exit 1), never a traceback.
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

    agreement = sub.add_parser("agreement", help="judge vs person over every label: accuracy, Cohen's kappa, confusion")
    agreement.add_argument("--json", action="store_true", help="print the table as JSON")
    agreement.set_defaults(func=run_agreement)

    imp = sub.add_parser("import", help="keep the labels carried by exported run-record files")
    imp.add_argument("files", metavar="FILE", nargs="+")
    imp.set_defaults(func=run_import)


def _fail(message: str) -> int:
    say(f"error: {message}", file=sys.stderr)
    return 1


def _open() -> Any:
    from proactive_tui.store import open_store

    return open_store()


def run_add(args: argparse.Namespace) -> int:
    from proactive_tui.core.labels import LabelError, label_verdict, value_text
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
    from proactive_tui.core.labels import value_text
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
        say(f"{row.session_id}  {row.verdict}  {row.kind}  judge {row.judge}: {value_text(row.judge_value)}  "
            f"{mark}{note}")
    return 0


def run_verdicts(args: argparse.Namespace) -> int:
    from proactive_tui.core.labels import verdicts_of, value_text
    from proactive_tui.store import StoreError, load_record, resolve_id

    try:
        with _open() as store:
            session_id = resolve_id(store, args.session_id)
            record = load_record(store, session_id)
            labels = {row.verdict: row for row in store.labels(session_id)}
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
        say(f"{v.key:<22} {v.kind:<16} {value_text(v.value):<9} {v.judge}  {v.label}{human}")
    return 0


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def run_agreement(args: argparse.Namespace) -> int:
    from proactive_tui.core.labels import agreement, value_text
    from proactive_tui.store import StoreError

    try:
        with _open() as store:
            rows = agreement(store.labels())
    except StoreError as exc:
        return _fail(str(exc))
    if args.json:
        say(json_text([r.model_dump(mode="json") for r in rows], indent=2))
        return 0
    if not rows:
        say("no labels yet: label verdicts with `labels add` or the playground's Verdicts (L)")
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
            note = f"  ({d.note})" if d.note else ""
            say(f"  disagreement: {d.session_id} {d.verdict}: judge {value_text(d.judge_value)}, "
                f"person {value_text(d.value)}{note}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from proactive_tui.core.labels import import_labels
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
