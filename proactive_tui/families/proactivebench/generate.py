"""ProactiveBench's `generate` part: `proactive-tui synth proactivebench` and the studio (the
paper's environment gym, `synth.ProactiveBenchPipeline`, imported when a run is built)."""

from __future__ import annotations

import argparse
from typing import Any

from proactive_tui.core.family import GeneratePart
from proactive_tui.families.proactivebench.synth_prompts import SCENES


class ProactiveBenchGenerate(GeneratePart):
    """`proactive-tui synth proactivebench`: the paper's environment gym (`synth.ProactiveBenchPipeline`),
    imported when a run is built."""

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        """`synth proactivebench`'s own options (upstream's gym numbers are the defaults)."""
        parser.add_argument("--scene", action="append", default=[], metavar="SCENE",
                            help=f"a scene to generate traces in (repeatable; default all: {', '.join(SCENES)})")
        parser.add_argument("--batches", type=int, default=7, metavar="B",
                            help="activities (event batches) per trace at most (default 7, upstream's action_times)")
        parser.add_argument("--judge", choices=("user", "reward"), default="user",
                            help="who accepts or rejects each proposal: the simulated user (default, upstream's gym) "
                                 "or a reward-model judge seat fed upstream's reward-model input (--role judge=MODEL)")

    def options(self, args: argparse.Namespace) -> dict[str, Any]:
        scenes = [s.replace("-", "_") for s in (args.scene or [])] or list(SCENES)
        return {"scenes": list(dict.fromkeys(scenes)), "n": args.n, "batches": args.batches, "judge": args.judge}

    def targets(self) -> tuple[str, str, list[str]]:
        return ("--scene", "Scene", list(SCENES))

    def pipeline(self, options: dict[str, Any]) -> Any:
        from proactive_tui.families.proactivebench.synth import ProactiveBenchPipeline, SynthOptions

        return ProactiveBenchPipeline(SynthOptions(**options))


GENERATE = ProactiveBenchGenerate()
