"""The `eval` batch's progress on stderr: overall and per model, done/total, failures, retries,
tokens, cost and ETA.

Two feeds, neither of which knows about the display: the runner's `on_done` (one call per session
that ended: sessions are counted per agent model) and the gateway's `GatewayStats` (attempts,
retries, tokens and cost per model string, for every seat: agent, user and judge models alike).
`BatchProgress` turns them into typed rows (`ProgressRow`); the display only renders those rows,
so the numbers are tested without a terminal.

On a terminal the table is a Rich Live region redrawn a few times a second; otherwise (CI logs,
a pipe) it prints a plain status line at most every `PLAIN_EVERY_S` seconds and, at the end, one
summary line per model, so a log shows where a batch stood without cursor codes.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pydantic import BaseModel

from proactive_tui.llm.limits import GatewayStats

PLAIN_EVERY_S = 30.0
"""Seconds between two plain status lines when stderr is not a terminal."""
OVERALL = "all"


class ProgressRow(BaseModel):
    """One line of the display: a model (or `all`), its sessions and its calls so far."""

    model: str
    done: int = 0
    """Sessions ended (finished or failed) with this agent model."""
    total: int = 0
    """Sessions planned to run now with this agent model (0: the model seats only user or judge)."""
    failed: int = 0
    requests: int = 0
    retries: int = 0
    tokens: int = 0
    cost: float | None = None
    eta_s: float | None = None
    """Seconds left at this row's rate so far; None until a session ended or when all have."""

    def cells(self) -> list[str]:
        sessions = f"{self.done}/{self.total}" if self.total else "-"
        return [self.model, sessions, str(self.failed) if self.total else "-", str(self.requests), str(self.retries),
                f"{self.tokens:,}", "-" if self.cost is None else f"${self.cost:.4f}", format_eta(self.eta_s)]

    def line(self) -> str:
        """The row as one plain line (logs)."""
        model, sessions, failed, requests, retries, tokens, cost, eta = self.cells()
        return (f"{model}: done {sessions}, failed {failed}, calls {requests}, retries {retries}, tokens {tokens}, "
                f"cost {cost}, eta {eta}")


HEADER = ["model", "sessions", "failed", "calls", "retries", "tokens", "cost", "ETA"]


def format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class BatchProgress:
    """Counts sessions per agent model as they end and reads the gateway's counters per model."""

    def __init__(self, planned: list[Any], stats: GatewayStats, clock: Callable[[], float] = time.monotonic) -> None:
        self.stats = stats
        self.clock = clock
        self.started = clock()
        self.total: dict[str, int] = {}
        for item in planned:
            self.total[item.key.agent] = self.total.get(item.key.agent, 0) + 1
        self.done: dict[str, int] = {model: 0 for model in self.total}
        self.failed: dict[str, int] = {model: 0 for model in self.total}

    def record(self, agent: str, ok: bool) -> None:
        """One session of `agent` ended (`ok`: it finished and its record was kept)."""
        self.done[agent] = self.done.get(agent, 0) + 1
        if not ok:
            self.failed[agent] = self.failed.get(agent, 0) + 1

    def _eta(self, done: int, total: int) -> float | None:
        if not done or done >= total:
            return None
        return (self.clock() - self.started) / done * (total - done)

    def rows(self) -> list[ProgressRow]:
        """`all` first, then the agent models in plan order, then models that only seat user or judge."""
        models = list(self.total) + sorted(m for m in self.stats.models if m not in self.total)
        rows = []
        for model in models:
            counters = self.stats.models.get(model)
            done, total = self.done.get(model, 0), self.total.get(model, 0)
            rows.append(ProgressRow(
                model=model, done=done, total=total, failed=self.failed.get(model, 0),
                requests=counters.requests if counters else 0, retries=counters.retries if counters else 0,
                tokens=counters.tokens if counters else 0, cost=counters.cost if counters else None,
                eta_s=self._eta(done, total)))
        costs = [r.cost for r in rows if r.cost is not None]
        done, total = sum(self.done.values()), sum(self.total.values())
        overall = ProgressRow(model=OVERALL, done=done, total=total, failed=sum(self.failed.values()),
                              requests=sum(r.requests for r in rows), retries=sum(r.retries for r in rows),
                              tokens=sum(r.tokens for r in rows), cost=sum(costs) if costs else None,
                              eta_s=self._eta(done, total))
        return [overall, *rows]


class ProgressDisplay:
    """Renders a BatchProgress on stderr: a Live table on a terminal, plain lines elsewhere.
    `update()` after each session; `close()` once at the end (also after Ctrl-C/SIGTERM), which
    prints the final summary."""

    def __init__(self, console: Any, progress: BatchProgress) -> None:
        self.console = console
        self.progress = progress
        self.live: Any = None
        self._last_plain = progress.clock()
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(self._table(), console=console, refresh_per_second=4, transient=True,
                             get_renderable=self._table)
            self.live.start()

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(title="eval progress", title_justify="left")
        for i, column in enumerate(HEADER):
            table.add_column(column, justify="left" if i == 0 else "right")
        for row in self.progress.rows():
            table.add_row(*row.cells(), style="bold" if row.model == OVERALL else None)
        return table

    def update(self) -> None:
        if self.live is not None:
            return  # the Live region redraws itself from get_renderable
        now = self.progress.clock()
        if now - self._last_plain >= PLAIN_EVERY_S:
            self._last_plain = now
            self.console.print(f"progress {self.progress.rows()[0].line()}", highlight=False)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
            self.console.print(self._table())
            return
        for row in self.progress.rows():
            self.console.print(f"summary {row.line()}", highlight=False)
