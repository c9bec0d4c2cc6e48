"""Check a reward judge against people: ProactiveBench's 120 human-labelled judgements.

Each item (`reward_data/test_data.jsonl`) holds the observations, a predicted task (or null),
three annotators' accept/reject votes and a category (Missed-Need, Correct-Rejection,
Correct-Detection, False-Alarm). The judge under test sees exactly what the session's user-judge
sees: upstream's reward-model input (`format_reward_instruction` in thunlp/ProactiveAgent
`eval/reward_model_template.py`, Apache-2.0; `prompts.reward_messages`) over the item's `obs`
dicts as stored and its `pred_task`, as upstream's `eval/reward_model_scoring.py` sends them. Its
verdict is read as in a session (`judges.read_verdict`) and compared with the annotators' majority vote: agreement
per category, and the confusion (positive = accepted) with precision, recall, accuracy and F1,
through the same `metrics` function the sessions use. The paper's own reward model reaches
91.8% F1 here.

A verdict that never parsed counts as "not accepted" in the confusion (as upstream's scoring
script does) and as a disagreement in its category.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from proactive_tui.families.proactivebench import prompts
from proactive_tui.families.proactivebench.calls import ask
from proactive_tui.families.proactivebench.judges import JudgeVerdict, read_verdict
from proactive_tui.families.proactivebench.metrics import Confusion, Metrics, metrics
from proactive_tui.core.participants import Participant, ReplyRequest
from proactive_tui.llm.errors import ModelError


class RewardObservation(BaseModel):
    model_config = ConfigDict(extra="allow")

    time: str | float
    event: str


class RewardItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    obs: list[RewardObservation]
    pred_task: str | None = None
    valid: bool | None = None
    help_needed: bool | None = None
    annotation: list[bool] = Field(default_factory=list)
    category: str = ""
    _raw_obs: list[Any] = PrivateAttr(default_factory=list)
    """`obs` as the file holds it: the judge sees these dicts, key order and value types kept."""

    @property
    def raw_obs(self) -> list[Any]:
        return self._raw_obs or [o.model_dump() for o in self.obs]

    @property
    def majority(self) -> bool:
        """True when most annotators accepted (upstream's `valid` is the same vote)."""
        if not self.annotation:
            return bool(self.valid)
        return sum(self.annotation) * 2 > len(self.annotation)


class ItemResult(BaseModel):
    index: int
    category: str
    task: str | None
    human: bool
    judge: bool | None
    """None when the judge gave no usable verdict."""
    thought: str = ""
    error: str = ""

    @property
    def agrees(self) -> bool:
        return self.judge is not None and self.judge == self.human


class CategoryAgreement(BaseModel):
    category: str
    items: int
    agreed: int

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.items if self.items else None


class RewardReport(BaseModel):
    judge: str
    results: list[ItemResult]
    categories: list[CategoryAgreement]
    confusion: Confusion
    metrics: Metrics
    agreement: float | None
    failed: int


def load_items(path: Path, limit: int | None = None) -> list[RewardItem]:
    items = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            item = RewardItem.model_validate(data)
            item._raw_obs = list(data.get("obs") or [])
            items.append(item)
            if limit is not None and len(items) >= limit:
                break
    return items


async def judge_item(judge: Participant, item: RewardItem, index: int) -> ItemResult:
    system, *messages = prompts.reward_messages(item.raw_obs, item.pred_task)
    request = ReplyRequest(seat="user", system=system["content"], messages=messages)
    base = {"index": index, "category": item.category, "task": item.pred_task, "human": item.majority}
    try:
        verdict, _, _ = await ask(judge, request, read_verdict, JudgeVerdict)
    except ModelError as exc:
        if exc.kind != "structured":
            raise
        return ItemResult(**base, judge=None, error=exc.message)
    return ItemResult(**base, judge=verdict.judgement == "accepted", thought=verdict.thought)


def report(judge: str, results: list[ItemResult]) -> RewardReport:
    by_category: dict[str, CategoryAgreement] = {}
    confusion = Confusion()
    for r in results:
        cat = by_category.setdefault(r.category, CategoryAgreement(category=r.category, items=0, agreed=0))
        cat.items += 1
        cat.agreed += int(r.agrees)
        accepted = bool(r.judge)
        cell = ("TP" if r.human else "FP") if accepted else ("FN" if r.human else "TN")
        confusion = confusion.add(cell)  # type: ignore[arg-type]
    agreed = sum(r.agrees for r in results)
    return RewardReport(
        judge=judge, results=sorted(results, key=lambda r: r.index), categories=list(by_category.values()),
        confusion=confusion, metrics=metrics(confusion), agreement=agreed / len(results) if results else None,
        failed=sum(r.judge is None for r in results),
    )


async def run_check(judge: Participant, items: list[RewardItem], concurrency: int = 4,
                    on_result: Callable[[ItemResult], Any] | None = None) -> RewardReport:
    """Judge every item (at most `concurrency` calls at once) and compare with the human majority."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(i: int, item: RewardItem) -> ItemResult:
        async with gate:
            result = await judge_item(judge, item, i)
        if on_result is not None:
            on_result(result)
        return result

    results = await asyncio.gather(*(one(i, item) for i, item in enumerate(items)))
    return report(judge.info.label, list(results))


# -- the labels people made in the app (services.labels) ---------------------------------------------


def _label_category(task: str | None, accepted: bool) -> str:
    """Upstream's four categories, from the proposal and the person's verdict: a null proposal
    accepted is a Correct-Rejection (no help was needed), rejected a Missed-Need; a task accepted
    is a Correct-Detection, rejected a False-Alarm."""
    if task is None:
        return "Correct-Rejection" if accepted else "Missed-Need"
    return "Correct-Detection" if accepted else "False-Alarm"


def items_from_labels(store: Any) -> tuple[list[RewardItem], list[str]]:
    """Reward items from the proposal-verdict labels people made in the app: for each label, the
    observations of the session's trace up to the labelled event (what the session's judge saw),
    the candidate task it judged, and the person's value (their correction, or the judge's value
    they agreed with) as the single annotation. Also the labels that could not be read back (a
    session gone, an environment no longer readable), in words."""
    from proactive_tui.core.verdicts import verdicts_of
    from proactive_tui.store import StoreError, load_record
    from proactive_tui.store.queries import session_environment

    items: list[RewardItem] = []
    problems: list[str] = []
    cache: dict[str, Any] = {}
    for row in store.labels():
        if row.kind != "proposal verdict" or row.value not in ("accepted", "rejected"):
            continue
        try:
            if row.session_id not in cache:
                record = load_record(store, row.session_id)
                cache[row.session_id] = (record, session_environment(record), {v.key: v for v in verdicts_of(record)})
            record, env, verdicts = cache[row.session_id]
        except StoreError as exc:
            problems.append(f"{row.session_id} {row.verdict}: {exc}")
            continue
        try:
            _, index, attempt, candidate = row.verdict.split(":")
            index, attempt_no, candidate_no = int(index), int(attempt), int(candidate)
        except ValueError:
            problems.append(f"{row.session_id} {row.verdict}: not a proposal verdict key")
            continue
        ev = next((e for e in record.section.events if e.index == index), None)
        att = next((a for a in (ev.attempts if ev else []) if a.attempt == attempt_no), None)
        if att is None or row.verdict not in verdicts:
            problems.append(f"{row.session_id} {row.verdict}: the session has no such verdict")
            continue
        verdict = next((v for n, v in enumerate(att.verdicts)
                        if (v.candidate if v.candidate is not None else n) == candidate_no), None)
        task = verdict.task if verdict is not None else None
        raw_obs = [e.observation.model_dump() for e in env.events[:index]]
        accepted = row.value == "accepted"
        item = RewardItem(obs=[RewardObservation.model_validate(o) for o in raw_obs], pred_task=task,
                          valid=accepted, annotation=[accepted], category=_label_category(task, accepted),
                          source=f"{row.session_id} {row.verdict}")
        item._raw_obs = raw_obs
        items.append(item)
    return items, problems
