"""Extractive answers: the best sections' steps and commands, cited, with no LLM."""

from __future__ import annotations

import re
import textwrap

from bot import messages
from bot.answer import Answer, Source, Step
from retrieval.search import ScoredChunk, SearchResult

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


def extractive_answer(question: str, result: SearchResult, *, why: str = "") -> Answer:
    """Answer from retrieved chunks alone, or abstain when retrieval is not confident."""
    if not result.chunks or not result.confident:
        return abstention(question, result, mode="extractive")
    sources = sources_from(result)
    steps: list[Step] = []
    for source, hit in zip(sources, result.chunks):
        for instruction, commands in extract_steps(hit.text):
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


def abstention(question: str, result: SearchResult, *, mode: str = "extractive") -> Answer:
    """"I don't have a runbook for that", naming the closest runbooks."""
    text = messages.NO_RUNBOOK
    if result.closest_titles:
        text += " " + messages.CLOSEST.format(titles=", ".join(result.closest_titles))
    return Answer(
        question=question, answer=text, abstained=True, confidence=round(result.confidence, 3),
        mode=mode, closest_titles=result.closest_titles,  # type: ignore[arg-type]
    )
