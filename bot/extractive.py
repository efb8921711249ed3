"""Extractive answers, with no LLM: the best runbook's procedure, in its order, cited; a closest
match shown as such; or "I don't have a runbook for that"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from bot import messages
from bot.answer import Answer, Source, Step
from bot.procedure import meaning, procedure
from retrieval.search_types import ScoredChunk, SearchResult
from retrieval.links import section_anchor
from retrieval.sections import DocumentSection

Mode = Literal["llm", "extractive"]
MAX_STEPS = 8
SEE_ALSO = 2  # other runbooks listed as sources (never as steps)


def extractive_answer(
    question: str, result: SearchResult, sections: Sequence[DocumentSection], *, why: str = "",
    tentative: bool = False,
) -> Answer:
    """The top hit's runbook as steps: its procedure (diagnosis, mitigation...) in the runbook's
    order, each step citing its section; other close runbooks follow as sources only. `sections`
    are the top runbook's, in order, their text already made safe to show. `tentative`: the match is
    the closest, not a confident one, and the answer says so."""
    top = result.chunks[0]
    matched = sorted({i for i, s in enumerate(sections) for h in result.chunks
                      if h.document_id == top.document_id and s.section_id == h.section_id})
    read = procedure([s.text for s in sections], matched, max_steps=MAX_STEPS)
    sources: dict[int, Source] = {}  # section index -> source
    steps: list[Step] = []
    for found in read:
        source = sources.get(found.section)
        if source is None:
            source = sources[found.section] = _section_source(len(sources) + 1, top, sections[found.section], result)
        steps.append(Step(instruction=found.instruction, commands=found.commands,
                          priority="now" if not steps else "next", citations=[source.id]))
    if not steps:  # nothing to quote as steps: point at the best matching section
        source = sources[0] = _hit_source(1, top)
        steps.append(Step(instruction=messages.SEE_SECTION.format(title=top.document_title, section=_section(top)),
                          priority="now", citations=[1]))
    cited = list(sources.values())
    cited += _see_also(result, top, start=len(cited) + 1)
    summary = _summary(top, [s.text for s in sections], tentative)
    notes = [messages.EXTRACTIVE_NOTE.format(why=why)]
    if tentative:
        notes.insert(0, messages.CLOSEST_MATCH_NOTE.format(confidence=result.confidence))
    if len(read) >= MAX_STEPS:
        notes.append(messages.MORE_IN_RUNBOOK.format(title=top.document_title))
    return Answer(question=question, answer=summary, steps=steps, sources=cited,
                  confidence=round(result.confidence, 3), mode="extractive", tentative=tentative, notes=notes)


def _summary(top: ScoredChunk, texts: Sequence[str], tentative: bool) -> str:
    what = meaning(texts)
    template = messages.CLOSEST_MATCH_SUMMARY if tentative else messages.RUNBOOK_SUMMARY
    return template.format(title=top.document_title, meaning=(" " + what) if what else "").strip()


def _section(hit: ScoredChunk) -> str:
    return " › ".join(hit.heading_path[1:]) or "overview"


def _section_source(number: int, top: ScoredChunk, section: DocumentSection, result: SearchResult) -> Source:
    """A source for a section of the top runbook: the best hit in it, else the section's first chunk."""
    hit = next((h for h in result.chunks if h.section_id == section.section_id), None)
    if hit is not None:
        return _hit_source(number, hit)
    return Source(id=number, chunk_id=section.first_chunk_id, document=top.document_title, path=top.document_path,
                  source=top.source, heading_path=list(section.heading_path),
                  link=_section_link(top.link, section.heading_path), relevance=round(top.relevance, 4))


def _hit_source(number: int, hit: ScoredChunk) -> Source:
    return Source(id=number, chunk_id=hit.chunk_id, document=hit.document_title, path=hit.document_path,
                  source=hit.source, heading_path=list(hit.heading_path), link=hit.link, relevance=round(hit.relevance, 4))


def _section_link(link: str | None, heading: Sequence[str]) -> str | None:
    """The top hit's link pointed at another section of the same runbook."""
    return link.split("#", 1)[0] + section_anchor(heading) if link else None


def _see_also(result: SearchResult, top: ScoredChunk, *, start: int) -> list[Source]:
    """The best hit of each other runbook among the results, as further sources."""
    seen = {top.document_id}
    out: list[Source] = []
    for hit in result.chunks[1:]:
        if hit.document_id in seen or len(out) >= SEE_ALSO:
            continue
        seen.add(hit.document_id)
        out.append(_hit_source(start + len(out), hit))
    return out


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
