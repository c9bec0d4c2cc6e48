"""ProactiveBench's own `eval` checks.

`proactive-tui eval reward-judge`: how well a model plays ProactiveBench's user-judge. Runs the
judge (the model that sits in the `user` seat of ProactiveBench sessions; the same input, upstream's
reward-model layout) over the 120 human-labelled judgements and prints agreement per category and
F1 against the annotators' majority vote, so a person can see whether the judge's numbers in a
session are worth trusting before spending money on a batch.

`proactive-tui eval splits`: the benchmark's own numbers, per split (upstream's split names:
`real_average`, `real_coding`, `real_writing`), wherever more than one trace is scored: over the
session history (the latest run of each trace, or the sessions named) or over an exported folder,
read as upstream's `eval/calculate_agent_performance.py` reads it. A 0 from an empty denominator
is starred and its reason printed; runs that are not upstream's protocol are named.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from proactive_tui.textsafe import json_text, plain


def default_reward_data() -> Path:
    """The 120 human-labelled judgements shipped with the package (ProactiveBench's
    `reward_data/test_data.jsonl`, Apache-2.0; see the NOTICE.md beside it)."""
    from importlib.resources import files

    return Path(str(files("proactive_tui") / "families" / "proactivebench" / "data" / "reward_test.jsonl"))


def add_eval_commands(sub: argparse._SubParsersAction) -> None:
    """ProactiveBench's `eval` checks (the family adds them to `proactive-tui eval`)."""
    rj = sub.add_parser("reward-judge", help="agreement of a ProactiveBench user-judge with human majority votes")
    rj.add_argument("--judge", metavar="MODEL", help="litellm model for the judge (default: the user seat's model, local/smollm2)")
    rj.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for the judge")
    rj.add_argument("--data", metavar="PATH", help="reward test data (.jsonl); default: the shipped ProactiveBench set, proactive_tui/families/proactivebench/data/reward_test.jsonl")
    rj.add_argument("--labels-from-app", action="store_true",
                    help="score the judge against the proposal-verdict labels people made in the app "
                         "(`labels add`, the Verdicts modal) instead of the reward test data")
    rj.add_argument("--limit", type=int, metavar="N", help="only the first N items")
    rj.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls at once (default 4)")
    rj.add_argument("--out", metavar="FILE.json", help="write every item's verdict and the summary here")
    rj.set_defaults(func=run_reward_judge)

    sp = sub.add_parser("splits", help="ProactiveBench scores per split (real_average, real_coding, ...) over "
                                       "recorded sessions or an exported folder, counted as upstream's script")
    sp.add_argument("session_ids", nargs="*", metavar="ID",
                    help="sessions to score (unique id prefixes work); default: every ProactiveBench session, "
                         "the latest run of each trace")
    sp.add_argument("--env", metavar="ENV_ID", help="only sessions of this environment or id prefix "
                                                     "(e.g. proactivebench/real)")
    sp.add_argument("--dir", metavar="FOLDER", help="score a `proactivebench` export (or upstream judged traces) "
                                                   "instead: the folder's splits.json, else upstream's")
    sp.add_argument("--out", metavar="FILE.json", help="write the per-split numbers here")
    sp.set_defaults(func=run_splits)


def run_reward_judge(args: argparse.Namespace) -> int:
    import asyncio

    from rich.table import Table
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.families.proactivebench.metrics import show
    from proactive_tui.families.proactivebench.reward_check import load_items, run_check
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import resolve_roles

    err = SafeConsole(stderr=True, highlight=False)
    if args.limit is not None and args.limit < 1:
        err.print(Text("error: --limit must be at least 1", style="red"))
        return 1
    from proactive_tui.evalrun.options import shared_option_problem

    problem = shared_option_problem(args)
    if problem:
        err.print(Text(plain(f"error: {problem}"), style="red"))
        return 2
    if getattr(args, "labels_from_app", False):
        if args.data:
            err.print(Text("error: --labels-from-app and --data are two sources of labels; give one", style="red"))
            return 2
        from proactive_tui.families.proactivebench.reward_check import items_from_labels
        from proactive_tui.store import StoreError, open_store

        try:
            with open_store() as store:
                items, problems = items_from_labels(store)
        except StoreError as exc:
            err.print(Text(plain(f"error: {exc}"), style="red"))
            return 1
        for problem in problems:
            err.print(Text(plain(f"warning: label skipped: {problem}"), style="yellow"))
        if not items:
            err.print(Text("error: no proposal-verdict labels in the app yet (label ProactiveBench verdicts with "
                           "`labels add` or the Verdicts modal, L)", style="red"))
            return 1
        items = items[:args.limit] if args.limit else items
        path: Any = "the app's labels"
    else:
        path = Path(args.data) if args.data else default_reward_data()
        try:
            items = load_items(path, args.limit)
        except FileNotFoundError:
            err.print(Text(plain(f"error: no reward data at {path} (use --data PATH)"), style="red"))
            return 1
        except ValueError as exc:
            err.print(Text(plain(f"error: {path}: {exc}"), style="red"))
            return 1
    try:
        config = load_config()
        roles = resolve_roles(config.roles, cli={"user": {"model": args.judge, "api_base": args.api_base}})
    except (ConfigError, ValueError) as exc:
        err.print(Text(plain(f"error: {exc}"), style="red"))
        return 1
    settings = roles.user
    judge = LLMParticipant(Gateway(), settings)
    console = SafeConsole(highlight=False, soft_wrap=True)
    err.print(Text(plain(f"judging {len(items)} items from {path} with {settings.model}"), style="dim"))
    if settings.is_local:
        from proactive_tui.llm.local import LOCAL_MODEL_BLURB

        err.print(Text(plain(f"local/smollm2 is {LOCAL_MODEL_BLURB}"), style="yellow"))

    def progress(result) -> None:
        mark = "-" if result.judge is None else ("=" if result.agrees else "x")
        err.print(Text(plain(f"  {mark} item {result.index + 1}: {result.category}"), style="dim"))

    try:
        rep = asyncio.run(run_check(judge, items, concurrency=args.concurrency, on_result=progress))
    except ModelError as exc:
        err.print(Text(plain(f"error: {exc.message}"), style="red"))
        return 1
    except KeyboardInterrupt:
        return 130

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.2f}%"

    table = Table(title=f"agreement with the human majority ({rep.judge})", title_justify="left")
    table.add_column("category")
    table.add_column("items", justify="right")
    table.add_column("agreement", justify="right")
    for cat in rep.categories:
        table.add_row(cat.category, str(cat.items), pct(cat.agreement))
    table.add_row("overall", str(len(rep.results)), pct(rep.agreement))
    console.print(table)
    c, m = rep.confusion, rep.metrics
    console.print(Text(
        f"judge accepted / human accepted: TP {c.tp} · FP {c.fp} · TN {c.tn} · FN {c.fn}   "
        f"precision {show(m, 'precision')} · recall {show(m, 'recall')} · accuracy {show(m, 'accuracy')} · "
        f"F1 {show(m, 'f1')}"
        + (f" · no usable verdict: {rep.failed}" if rep.failed else "")))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json_text(rep, indent=2), encoding="utf-8")
        err.print(Text(plain(f"report written to {out}"), style="dim"))
    return 0


# -- eval splits --------------------------------------------------------------------------------


def upstream_splits() -> dict[str, Any]:
    """The shipped splits.json (upstream's `dataset/test_data/splits.json`, unmodified)."""
    import json
    from importlib.resources import files

    path = Path(str(files("proactive_tui") / "families" / "proactivebench" / "data" / "real" / "splits.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def splits_from_folder(folder: Path) -> tuple[list[Any], list[str]]:
    """Per-split scores of a folder of judged traces, read as upstream's
    `calculate_agent_performance.py` reads it: each split's listed files, concatenated, counted by
    `calculate_scores`; a split with a file missing is left out (upstream: `valid_set = False`),
    and said so. Returns (scores, notes)."""
    import json

    from proactive_tui.families.proactivebench.metrics import confusion_from_trace, metrics, split_stems
    from proactive_tui.families.proactivebench.record import SplitScore

    index = folder / "splits.json"
    splits = json.loads(index.read_text(encoding="utf-8")) if index.exists() else upstream_splits()
    scores, notes = [], []
    for name, split in splits.items():
        stems = split_stems(split)
        missing = [s for s in stems if not (folder / f"{s}.json").exists()]
        if missing:
            notes.append(f"{name}: left out, as upstream's script does: no {', '.join(m + '.json' for m in missing)}")
            continue
        events: list[Any] = []
        for stem in stems:
            events += json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
        confusion = confusion_from_trace(events)
        scores.append(SplitScore(split=name, traces=stems, sessions=[], events=len(events), confusion=confusion,
                                 metrics=metrics(confusion)))
    return scores, notes


def run_splits(args: argparse.Namespace) -> int:

    from rich.table import Table
    from rich.text import Text

    from proactive_tui.cli.printer import SafeConsole
    from proactive_tui.families.proactivebench.metrics import METRIC_LABELS, reasons, show
    from proactive_tui.families.proactivebench.record import metrics_by_split, runs_by_trace
    from proactive_tui.store import StoreError, list_sessions, load_record, open_store, resolve_id

    err = SafeConsole(stderr=True, highlight=False)
    console = SafeConsole(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a file or a pipe: the whole table, never cut to 80 columns
        console = SafeConsole(highlight=False, soft_wrap=True, width=160)
    notes: list[str] = []
    if args.dir:
        folder = Path(args.dir)
        if not folder.is_dir():
            err.print(Text(plain(f"error: {folder} is not a folder"), style="red"))
            return 1
        try:
            scores, notes = splits_from_folder(folder)
        except (OSError, ValueError) as exc:
            err.print(Text(plain(f"error: {folder}: {exc}"), style="red"))
            return 1
        source = str(folder)
    else:
        try:
            with open_store() as store:
                if args.session_ids:
                    ids = [resolve_id(store, text) for text in args.session_ids]
                else:
                    ids = [row.id for row in list_sessions(store, env_id=args.env, family="proactivebench")]
                records = []
                for session_id in ids:
                    try:
                        records.append(load_record(store, session_id))
                    except StoreError:
                        if args.session_ids:
                            raise
        except StoreError as exc:
            err.print(Text(plain(f"error: {exc}"), style="red"))
            return 1
        records = [r for r in records if r.family == "proactivebench"]
        for name, runs in sorted(runs_by_trace(records).items()):
            if runs.others:
                notes.append(f"{name}: {len(runs.others) + 1} sessions; scored {runs.chosen.id} (the latest), "
                             f"not {', '.join(r.id for r in runs.others)}")
        scores = list(metrics_by_split(records).values())
        traces = len(runs_by_trace(records))
        source = f"{traces} trace{'s' * (traces != 1)} from the session history"
    if not scores:
        err.print(Text("error: nothing to score: no ProactiveBench traces with splits"
                       + (f" ({'; '.join(notes)})" if notes else ""), style="red"))
        return 1
    table = Table(title=f"ProactiveBench per split ({source})", title_justify="left")
    for column in ("Category", "traces", *[label for _, label in METRIC_LABELS], "Total Events"):
        table.add_column(column, justify="left" if column == "Category" else "right")
    for score in scores:
        table.add_row(score.split, str(len(score.traces)), *[show(score.metrics, key, why=False) for key, _ in METRIC_LABELS],
                      str(score.events))
    console.print(table)
    why = sorted({r for score in scores for r in reasons(score.metrics).split("; ") if r})
    if why:
        console.print(Text(plain(f"* 0 by upstream's rule (x / (0 + eps)): {'; '.join(why)}"), style="dim"))
    for score in scores:
        if score.ablations:
            runs = ", ".join(f"{trace} ({tag})" for trace, tag in sorted(score.ablations.items()))
            console.print(Text(f"{score.split}: not upstream's protocol in {len(score.ablations)} of "
                               f"{len(score.traces)} traces: {runs}", style="yellow"))
    for note in notes:
        err.print(Text(plain(f"note: {note}"), style="yellow"))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json_text([s.model_dump(mode="json") for s in scores], indent=2),
                       encoding="utf-8")
        err.print(Text(plain(f"written to {out}"), style="dim"))
    return 0
