"""One filters model for every way a question names metadata filters (the API body, the CLI options,
the model's hybrid_search arguments), down to retrieval's `SearchFilters`, and how the model's
filters combine with the configured ones."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from retrieval.search_types import SearchFilters


class Filters(BaseModel):
    """Optional metadata filters: empty fields do not filter."""

    model_config = ConfigDict(extra="forbid")
    service: list[str] = Field(default_factory=list, description="Only runbooks of these services")
    environment: list[str] = Field(default_factory=list, description="e.g. production, staging")
    tags: list[str] = Field(default_factory=list, description="Runbooks with any of these tags")
    source: list[str] = Field(default_factory=list, description="Only these runbook collections")

    def to_search(self) -> SearchFilters | None:
        """The retrieval filter object, or None when nothing filters."""
        filters = SearchFilters(tuple(self.source), tuple(self.service), tuple(self.environment), tuple(self.tags))
        return None if filters.is_empty() else filters


def narrowed(base: SearchFilters | None, asked: SearchFilters | None) -> SearchFilters | None:
    """The model's filters applied within the configured ones: they can narrow a search, never widen
    it past what the channel or the operator allows (where both name values, only shared ones count;
    where they share none, the configured ones stand)."""
    if asked is None or asked.is_empty():
        return base
    if base is None or base.is_empty():
        return asked

    def pick(mine: tuple[str, ...], theirs: tuple[str, ...]) -> tuple[str, ...]:
        if not mine or not theirs:
            return mine or theirs
        wanted = {v.casefold() for v in theirs}
        return tuple(v for v in mine if v.casefold() in wanted) or mine

    return SearchFilters(pick(base.sources, asked.sources), pick(base.services, asked.services),
                         pick(base.environments, asked.environments), pick(base.tags, asked.tags), base.paths)


def describe(filters: SearchFilters) -> str:
    """`service=a,b environment=prod` for a message."""
    named = {"source": filters.sources, "service": filters.services, "environment": filters.environments,
             "tag": filters.tags}
    return " ".join(f"{name}={','.join(values)}" for name, values in named.items() if values)
