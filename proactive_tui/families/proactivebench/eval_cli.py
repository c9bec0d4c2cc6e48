"""`proactive-tui eval reward-judge` (ProactiveBench's own check): how well a model plays ProactiveBench's user-judge.

Runs the judge (the model that sits in the `user` seat of ProactiveBench sessions; the same
prompt) over the 120 human-labelled judgements and prints agreement per category and F1 against
the annotators' majority vote, so a person can see whether the judge's numbers in a session are
worth trusting before spending money on a batch.
"""

from __future__ import annotations

import argparse
from pathlib import Path


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
    rj.add_argument("--limit", type=int, metavar="N", help="only the first N items")
    rj.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls at once (default 4)")
    rj.add_argument("--out", metavar="FILE.json", help="write every item's verdict and the summary here")
    rj.set_defaults(func=run_reward_judge)


def run_reward_judge(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from proactive_tui.config import ConfigError, load_config
    from proactive_tui.core.participants import LLMParticipant
    from proactive_tui.families.proactivebench.reward_check import load_items, run_check
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import resolve_roles

    err = Console(stderr=True, highlight=False)
    if args.limit is not None and args.limit < 1:
        err.print(Text("error: --limit must be at least 1", style="red"))
        return 1
    path = Path(args.data) if args.data else default_reward_data()
    try:
        items = load_items(path, args.limit)
    except FileNotFoundError:
        err.print(Text(f"error: no reward data at {path} (use --data PATH)", style="red"))
        return 1
    except ValueError as exc:
        err.print(Text(f"error: {path}: {exc}", style="red"))
        return 1
    try:
        config = load_config()
        roles = resolve_roles(config.roles, cli={"user": {"model": args.judge, "api_base": args.api_base}})
    except (ConfigError, ValueError) as exc:
        err.print(Text(f"error: {exc}", style="red"))
        return 1
    settings = roles.user
    judge = LLMParticipant(Gateway(), settings)
    console = Console(highlight=False, soft_wrap=True)
    err.print(Text(f"judging {len(items)} items from {path} with {settings.model}", style="dim"))
    if settings.is_local:
        from proactive_tui.llm.local import LOCAL_MODEL_BLURB

        err.print(Text(f"local/smollm2 is {LOCAL_MODEL_BLURB}", style="yellow"))

    def progress(result) -> None:
        mark = "-" if result.judge is None else ("=" if result.agrees else "x")
        err.print(Text(f"  {mark} item {result.index + 1}: {result.category}", style="dim"))

    try:
        rep = asyncio.run(run_check(judge, items, concurrency=args.concurrency, on_result=progress))
    except ModelError as exc:
        err.print(Text(f"error: {exc.message}", style="red"))
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
        f"precision {pct(m.precision)} · recall {pct(m.recall)} · accuracy {pct(m.accuracy)} · F1 {pct(m.f1)}"
        + (f" · no usable verdict: {rep.failed}" if rep.failed else "")))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(rep.model_dump_json(indent=2), encoding="utf-8")
        err.print(Text(f"report written to {out}", style="dim"))
    return 0
