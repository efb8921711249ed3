"""The answer the bot gives, whatever produced it (LLM or extractive)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field


class Source(BaseModel):
    """A runbook section an answer cites."""

    id: int = Field(description="Citation number as shown in the answer, 1-based")
    chunk_id: int
    document: str = Field(description="Runbook title")
    path: str
    heading_path: list[str]
    source: str | None = Field(default=None, description="The runbook source (collection) it comes from")
    link: str | None = None
    relevance: float


class Finding(BaseModel):
    """A guardrail finding about a command in an answer."""

    command: str
    rule: str
    severity: Literal["block", "warn", "info"]
    reason: str
    safer: str | None = None


class Step(BaseModel):
    """One thing to do, with the exact commands and where it comes from."""

    instruction: str
    rationale: str | None = None
    commands: list[str] = Field(default_factory=list)
    priority: Literal["now", "next", "later"] = "next"
    citations: list[int] = Field(default_factory=list, description="Source ids")
    findings: list[Finding] = Field(default_factory=list, description="Guardrail warnings")


class Trace(BaseModel):
    """How an answer was produced: for logs, the API and feedback."""

    retrieved_chunk_ids: list[int] = Field(default_factory=list)
    tool_calls: int = 0
    llm_rounds: int = 0
    retrieval_ms: float = 0.0
    generation_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    errors: list[str] = Field(default_factory=list)
    outcomes: list[str] = Field(default_factory=list, description="Labelled events of the agent loop")


class Answer(BaseModel):
    """A grounded answer, or an abstention naming the closest runbooks."""

    question: str
    answer: str
    steps: list[Step] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    confidence: float = 0.0
    abstained: bool = False
    tentative: bool = Field(default=False, description="Closest match, below the confident threshold")
    mode: Literal["llm", "extractive"] = "extractive"
    model_used: str | None = None
    closest_titles: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    trace: Trace = Field(default_factory=Trace)
    answer_id: int | None = Field(default=None, description="Row in the answers table, once stored")

    @property
    def cited_chunk_ids(self) -> list[int]:
        """The chunks the answer's steps cite."""
        by_id = {s.id: s.chunk_id for s in self.sources}
        return list(dict.fromkeys(by_id[c] for step in self.steps for c in step.citations if c in by_id))


def answer_citing(question: str, chunk_ids: Sequence[int], *, retrieved: Sequence[int] = (), summary: str = "",
                  confidence: float = 0.0, mode: Literal["llm", "extractive"] = "extractive") -> Answer:
    """A bare answer whose one step cites the given chunks, in order: a simulated answer (the feedback
    replay's) or one a test stores to vote on."""
    sources = [Source(id=n, chunk_id=c, document="", path="", heading_path=[], relevance=0.0)
               for n, c in enumerate(chunk_ids, 1)]
    step = Step(instruction=summary or question, citations=[s.id for s in sources])
    return Answer(question=question, answer=summary or question, steps=[step] if sources else [], sources=sources,
                  confidence=confidence, mode=mode, trace=Trace(retrieved_chunk_ids=list(retrieved or chunk_ids)))
