"""Extractive answers: the best sections' steps and commands, cited, with no LLM."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Literal

from bot import messages
from bot.answer import Answer, Source, Step
from retrieval.search import ScoredChunk, SearchResult

Mode = Literal["llm", "extractive"]
_FENCE = re.compile(r"^(```|~~~)")
_NUMBERED = re.compile(r"^(\d+)[.)]\s+(.*)")  # top-level steps only; sub-items stay inside
MAX_STEPS = 8


def sources_from(result: SearchResult, limit: int = 5) -> list[Source]:
    """Number the top hits as citable sources."""
    return [
        Source(
            id=i, chunk_id=h.chunk_id, document=h.document_title, path=h.document_path,
            heading_path=list(h.heading_path), link=h.link, relevance=round(h.score, 4),
        )
        for i, h in enumerate(result.chunks[:limit], start=1)
    ]


def extract_steps(text: str) -> list[tuple[str, list[str]]]:
    """Numbered steps with the commands in the code fences that follow each (top level only)."""
    steps: list[tuple[str, list[str]]] = []
    fence: list[str] | None = None
    loose_commands: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if _FENCE.match(stripped):
            if fence is None:
                fence = []
                continue
            command = textwrap.dedent("\n".join(fence)).strip()
            fence = None
            if command:
                (steps[-1][1] if steps else loose_commands).append(command)
            continue
        if fence is not None:
            fence.append(line.rstrip())
            continue
        match = _NUMBERED.match(line)
        if match:
            steps.append((_plain(match[2]), []))
    if not steps and loose_commands:
        steps.append(("", loose_commands))
    return steps


def _plain(text: str) -> str:
    return re.sub(r"\*\*|__|`", "", text).strip()


def extractive_answer(
    question: str, result: SearchResult, *, why: str = "", expanded: Mapping[int, str] | None = None
) -> Answer:
    """Answer from retrieved text alone (a chunk's whole parent section where `expanded` has it),
    or abstain when retrieval is not confident."""
    if not result.chunks or not result.confident:
        return abstention(question, result, mode="extractive")
    sources = sources_from(result)
    steps: list[Step] = []
    for source, hit in zip(sources, result.chunks):
        text = (expanded or {}).get(hit.chunk_id, hit.text)
        for instruction, commands in extract_steps(text):
            if len(steps) >= MAX_STEPS:
                break
            steps.append(Step(
                instruction=instruction or _section_pointer(hit),
                commands=commands, priority="now" if not steps else "next",
                citations=[source.id],
            ))
    top = result.chunks[0]
    summary = f"Best match: {top.document_title} › {' › '.join(top.heading_path[1:]) or 'overview'} [1]."
    return Answer(
        question=question, answer=summary, steps=steps, sources=sources,
        confidence=round(result.confidence, 3), mode="extractive",
        notes=[messages.EXTRACTIVE_NOTE.format(why=why)],
    )


def _section_pointer(hit: ScoredChunk) -> str:
    return messages.SEE_SECTION.format(
        title=hit.document_title, section=" › ".join(hit.heading_path[1:]) or "overview"
    )


def abstention(question: str, result: SearchResult, *, mode: Mode = "extractive") -> Answer:
    """"I don't have a runbook for that", naming the closest runbooks."""
    return abstain(question, result.closest_titles, confidence=result.confidence, mode=mode)


def abstain(
    question: str, titles: Sequence[str], *, confidence: float, mode: Mode,
    model_used: str | None = None, reason: str | None = None,
) -> Answer:
    """An abstention with the closest runbook titles and, if known, why."""
    text = messages.NO_RUNBOOK
    if titles:
        text += " " + messages.CLOSEST.format(titles=", ".join(titles))
    return Answer(
        question=question, answer=text, abstained=True, confidence=round(confidence, 3), mode=mode,
        model_used=model_used, closest_titles=list(titles),
        notes=[messages.ABSTAIN_REASON.format(reason=reason)] if reason else [],
    )
