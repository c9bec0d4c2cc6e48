"""ProactiveEval's `generate` part: `proactive-tui synth proactiveeval` and the studio (the
paper's data pipeline, `synth.ProactiveEvalPipeline`, imported when a run is built)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from proactive_tui.core.family import GeneratePart


class ProactiveEvalGenerate(GeneratePart):
    """`proactive-tui synth proactiveeval`: the paper's data pipeline (`synth.ProactiveEvalPipeline`),
    imported when a run is built."""

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        """`synth proactiveeval`'s own options (the paper's numbers are the defaults)."""
        from proactive_tui.families.proactiveeval.env import DOMAINS

        parser.add_argument("--domain", action="append", default=[], metavar="DOMAIN",
                            help=f"a domain to generate for (repeatable; default all six: {', '.join(DOMAINS)})")
        parser.add_argument("--depth", type=int, default=2, metavar="D", help="topic tree depth below the domain (default 2)")
        parser.add_argument("--branching", type=int, default=3, metavar="B", help="children per topic node (default 3)")
        parser.add_argument("--candidates", type=int, default=5, metavar="K",
                            help="target candidates per item (default 5, the paper's; other values are a deviation)")
        parser.add_argument("--max-rounds", type=int, default=5, metavar="R",
                            help="refinement rounds at most (default 5, the paper's)")
        parser.add_argument("--validators", type=int, default=5, metavar="V",
                            help="final-check votes (default 5, the paper's; kept on a strict majority)")
        parser.add_argument("--tree", metavar="FILE", help="reuse a topic tree (a run's DIR/tree.json, edited or not) "
                                                           "instead of generating one; shards need one")
        parser.add_argument("--leaf", action="append", default=[], metavar="DOMAIN/PATH",
                            help='draw the items only from this leaf of the --tree (repeatable), e.g. '
                                 '"recommendation/Recommendation / Home cooking / Weeknight meals"; '
                                 "a domain with no chosen leaf uses all of its leaves")
        parser.add_argument("--tree-only", action="store_true", help="make the topic tree (DIR/tree.json) and stop")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The pipeline's options from the command's (a `--tree` file is read here, so its content,
        not its path, is what the run's config hash covers)."""
        from proactive_tui.families.proactiveeval.env import DOMAIN_ALIASES, DOMAINS

        tree = None
        if getattr(args, "tree", None):
            path = Path(args.tree).expanduser()
            try:
                tree = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"--tree {path}: {exc}") from None
            if not isinstance(tree, dict):
                raise ValueError(f"--tree {path}: expected an object of domain -> topic tree")
        domains = [DOMAIN_ALIASES.get(d, d) for d in (args.domain or [])] or list(DOMAINS)
        options = {"domains": list(dict.fromkeys(domains)), "n": args.n, "depth": args.depth,
                   "branching": args.branching, "candidates": args.candidates, "max_rounds": args.max_rounds,
                   "validators": args.validators, "tree": tree}
        if getattr(args, "leaf", None):
            options["leaves"] = list(dict.fromkeys(args.leaf))  # only when given: older runs' options stay as they were
        return options

    def targets(self) -> tuple[str, str, list[str]]:
        from proactive_tui.families.proactiveeval.env import DOMAINS

        return ("--domain", "Domain", list(DOMAINS))

    def pipeline(self, options: dict[str, Any]) -> Any:
        from proactive_tui.families.proactiveeval.synth import ProactiveEvalPipeline, SynthOptions

        return ProactiveEvalPipeline(SynthOptions(**options))


GENERATE = ProactiveEvalGenerate()
