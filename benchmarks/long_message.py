"""Key latency with a 1 MB reply in the transcript, side by side with a short one.

Run: .venv/bin/python benchmarks/long_message.py

Each run mounts a transcript (the playground's own widget) and streams messages into it as a model
would (64 KB chunks), then presses keys that scroll the transcript and measures, per key, the time
until the screen has settled again. The reference is an ordinary session's transcript, 30
messages of a few hundred characters (a screenful of text and more, so both runs draw full
screens); the subject is the same transcript with one 1 MB reply added. Alternating, in one
process, so machine load hits both alike. Printed: median and worst key latency for each, their
ratio (target <= 1.5x), and the peak RSS growth. Before folding (issue 15) a 1 MB reply cost
4.5-5.6 s per key and 841 MB RSS.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from textual.app import App, ComposeResult  # noqa: E402

from proactive_tui.ui.widgets.transcript import Transcript  # noqa: E402

ROUNDS = 3
KEYS = ["up", "down", "pageup", "pagedown", "home", "end"] * 3
HUGE = ("line of model output, wrapped at the screen's width like any long reply " * 14 + "\n") * 1000
ORDINARY = ["A reply of ordinary length: a few sentences, the kind a proactive agent writes each turn, "
            "asking a question and proposing the next step. " * 3] * 30


class TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


async def measure(texts: list[str]) -> list[float]:
    app = TranscriptApp()
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        for i, text in enumerate(texts):
            role = "agent" if i % 2 == 0 else "user"
            transcript.start_message(f"m{i}", role, i + 1, "model")
            for k in range(0, len(text), 65536):
                transcript.append(f"m{i}", text[k:k + 65536])
            transcript.finish(f"m{i}", role, i + 1, "model", text, False)
        await pilot.pause()
        transcript.focus()
        latencies = []
        for key in KEYS:
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            latencies.append(time.perf_counter() - start)
        return latencies


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main() -> None:
    base_rss = rss_mb()
    short, huge = [], []
    for _ in range(ROUNDS):
        short += await measure(ORDINARY)
        huge += await measure(ORDINARY[:15] + [HUGE] + ORDINARY[15:])
    grown = rss_mb() - base_rss
    med_s, med_h = statistics.median(short), statistics.median(huge)
    print(f"transcripts: {len(ORDINARY)} ordinary messages of {len(ORDINARY[0])} chars; the same plus one of "
          f"{len(HUGE):,} chars ({len(HUGE) / 1e6:.2f} MB)")
    print(f"key latency, ordinary:      median {med_s * 1000:.1f} ms, worst {max(short) * 1000:.1f} ms")
    print(f"key latency, with 1 MB:     median {med_h * 1000:.1f} ms, worst {max(huge) * 1000:.1f} ms")
    print(f"ratio (with 1 MB / ordinary): median {med_h / med_s:.2f}x, worst {max(huge) / max(short):.2f}x (target <= 1.5x)")
    print(f"peak RSS growth over both: {grown:.0f} MB")


if __name__ == "__main__":
    asyncio.run(main())
