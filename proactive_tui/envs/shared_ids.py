"""Ids more than one source holds (`envs.sources` says the rule): pydantic models, kept apart from
`envs.sources` so that the playground's first frame, which needs the rule but not these, never
imports pydantic."""

from __future__ import annotations

from pydantic import BaseModel


class Holder(BaseModel):
    """One environment holding a shared natural id: the id it is listed under and its file."""

    id: str
    source: str


class SharedId(BaseModel):
    """A natural id held by environments of more than one source; the first holder keeps it."""

    natural: str
    holders: list[Holder]

    def render(self) -> str:
        kept, others = self.holders[0], self.holders[1:]
        also = "; ".join(f"{h.id} ({h.source})" for h in others)
        return f"id {self.natural} is in {len(self.holders)} sources: kept by {kept.source}; also listed as {also}"
