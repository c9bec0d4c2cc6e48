"""The `synth FAMILY ...` command line, defined once in the pipeline layer.

Why here: the CLI's `synth` command adds these arguments to its parser, and the studio (a form that
builds a `synth` command) parses what it builds with the same definitions, so the form never accepts
what the command refuses; neither front end imports the other (`.importlinter`'s layers).
"""

from __future__ import annotations

import argparse
import contextlib
import io

from proactive_tui.synth.setup import generator, synth_families


def add_family_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """Every option of `synth NAME`: the run's own, then the family's pipeline's."""
    from proactive_tui.llm import model_flags

    parser.add_argument("--n", type=int, required=True, metavar="N", help="items to try (per domain or template)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="the run's seed; every item's and call's seed derives from it (default 0)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the run folder (every stage of every item)")
    parser.add_argument("--role", action="append", default=[], metavar="ROLE=MODEL",
                        help="a litellm model for a role (repeatable; a numbered group at once: probe=MODEL); an "
                             "unknown role is refused with the list; unnamed roles take the session defaults")
    parser.add_argument("--api-base", metavar="URL", help="OpenAI-compatible base URL for every role")
    parser.add_argument("--concurrency", type=int, default=4, metavar="C", help="model calls at once (default 4)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes running the items, sharing --concurrency and the per-model limits; this one "
                             "alone writes the folder (default: the usable cores; 1 when a role is the embedded model)")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="run the items as Ray tasks: on the cluster at ADDRESS (`auto`, `ray://HOST:10001`), or "
                             "on a Ray instance started for this command when no address is given; this process alone "
                             "writes the folder (needs `pip install 'proactive-tui[ray]'`)")
    parser.add_argument("--shard", metavar="I/N", help="run slice I (0-based) of N of the items; `synth merge` "
                                                       "combines the folders")
    parser.add_argument("--out-only", action="store_true",
                        help="keep the kept items in DIR/out only (default: also install them in the environments "
                             "folder)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out (same as `synth resume DIR`)")
    generator(name).arguments(parser)
    model_flags.add_structured_mode(parser)
    parser.set_defaults(synth_family=name)


def parse_family_command(argv: list[str]) -> argparse.Namespace:
    """`argv` (`synth FAMILY ...`, as a form builds it) parsed by the same definitions as the CLI's
    `synth FAMILY`; a refusal becomes a ValueError carrying argparse's own line."""
    parser = argparse.ArgumentParser(prog="proactive-tui")
    commands = parser.add_subparsers(metavar="synth")
    synth = commands.add_parser("synth")
    sub = synth.add_subparsers(metavar="FAMILY")
    for name in synth_families():
        add_family_arguments(sub.add_parser(name), name)
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            args = parser.parse_args(argv)
    except SystemExit:
        lines = [x for x in captured.getvalue().splitlines() if x.strip()]
        raise ValueError(lines[-1] if lines else "the options were refused") from None
    if getattr(args, "synth_family", None) is None:
        raise ValueError(f"not a `synth FAMILY` command: {' '.join(argv[:2])}")
    return args
