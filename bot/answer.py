"""The answer the bot gives, whatever produced it (LLM or extractive)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Source(BaseModel):
    """A runbook section an answer cites."""

    id: int = Field(description="Citation number as shown in the answer, 1-based")
    chunk_id: int
    document: str = Field(description="Runbook title")
    path: str
    heading_path: list[str]
    link: str | None = None
    relevance: float


class Step(BaseModel):
    """One thing to do, with the exact commands and where it comes from."""

    instruction: str
    rationale: str | None = None
    commands: list[str] = Field(default_factory=list)
    priority: Literal["now", "next", "later"] = "next"
    citations: list[int] = Field(default_factory=list, description="Source ids")


class Answer(BaseModel):
    """A grounded answer, or an abstention naming the closest runbooks."""

    question: str
    answer: str
    steps: list[Step] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    confidence: float = 0.0
    abstained: bool = False
    mode: Literal["llm", "extractive"] = "extractive"
    model_used: str | None = None
    closest_titles: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
