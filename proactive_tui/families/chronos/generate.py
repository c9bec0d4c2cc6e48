"""Chronos's `generate` part: `proactive-tui synth chronos` and the studio (the paper's
scenario pipeline, `synth.ChronosPipeline`, imported when a run is built, not when the command
line is parsed)."""

from __future__ import annotations

import argparse
from typing import Any

from proactive_tui.core.family import GeneratePart
from proactive_tui.families.chronos.synth_prompts import TEMPLATES


class ChronosGenerate(GeneratePart):
    """`proactive-tui synth chronos`: the paper's pipeline (`synth.ChronosPipeline`), imported
    when a run is built, not when the command line is parsed."""

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        """`synth chronos`'s own options (the paper's threshold is the default)."""
        parser.add_argument("--template", action="append", default=[], metavar="TEMPLATE",
                            help=f"a scenario template (repeatable; default all six: {', '.join(TEMPLATES)})")
        parser.add_argument("--tier", action="append", default=[], choices=["simple", "complex"],
                            help="a tier to make (repeatable; default both; complex adds the intention shift)")
        parser.add_argument("--threshold", type=int, default=75, metavar="T",
                            help="critic score (0-100) an utterance must reach to be kept (default 75, the paper's)")
        parser.add_argument("--max-attempts", type=int, default=3, metavar="K",
                            help="drafts per utterance at most before the item is rejected (default 3, ours: the "
                                 "paper states none)")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"templates": list(dict.fromkeys(args.template)) or list(TEMPLATES),
                "tiers": list(dict.fromkeys(args.tier)) or ["simple", "complex"], "n": args.n,
                "threshold": args.threshold, "max_attempts": args.max_attempts}

    def targets(self) -> tuple[str, str, list[str]]:
        return ("--template", "Template", list(TEMPLATES))

    def pipeline(self, options: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        from proactive_tui.families.chronos.synth import ChronosPipeline, SynthOptions

        try:
            return ChronosPipeline(SynthOptions(**options))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ValueError(f"--{'-'.join(str(p) for p in error['loc']).replace('_', '-')}: {error['msg']}") from None


GENERATE = ChronosGenerate()
