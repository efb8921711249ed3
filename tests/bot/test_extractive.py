"""Extractive answers: the top runbook's procedure, cited; a closest match says so."""

from __future__ import annotations

from bot.extractive import extractive_answer
from retrieval.search_types import ScoredChunk, SearchResult
from retrieval.sections import DocumentSection
from tests.bot.test_procedure import ALERT_RUNBOOK


def _hit(chunk_id: int, doc: int, section: int, path: str, title: str, score: float) -> ScoredChunk:
    return ScoredChunk(chunk_id=chunk_id, document_id=doc, section_id=section, position=0, document_path=path,
                       document_title=title, source="s", heading_path=(title,), text="x", text_hash=str(chunk_id),
                       token_count=10, score=score, link=f"https://git.example.com/{path}#x")


def _result(confidence: float) -> tuple[SearchResult, list[DocumentSection]]:
    head, diagnosis, mitigation = ALERT_RUNBOOK.split("## Diagnosis")[0], "## Diagnosis" + ALERT_RUNBOOK.split(
        "## Diagnosis")[1].split("## Mitigation")[0], "## Mitigation" + ALERT_RUNBOOK.split("## Mitigation")[1]
    sections = [DocumentSection(11, 101, ("WidgetQueueStalled",), head, 50),
                DocumentSection(12, 102, ("WidgetQueueStalled", "Diagnosis"), diagnosis, 80),
                DocumentSection(13, 104, ("WidgetQueueStalled", "Mitigation"), mitigation, 80)]
    hits = [_hit(102, 1, 12, "widgets/queue.md", "WidgetQueueStalled", 0.9),
            _hit(201, 2, 21, "widgets/broker.md", "Broker Down", 0.6),
            _hit(103, 1, 12, "widgets/queue.md", "WidgetQueueStalled", 0.5)]
    return SearchResult("q", hits, confidence, confidence >= 0.65, confidence >= 0.27, "neutral", [], {}), sections


def test_steps_follow_the_top_runbook_and_other_runbooks_are_sources_only() -> None:
    result, sections = _result(0.9)
    answer = extractive_answer("queue stalled", result, sections, why=" (no model)")
    assert answer.answer.startswith("Runbook *WidgetQueueStalled* [1]. The widget queue has not been drained")
    assert answer.steps[0].priority == "now" and answer.steps[0].commands
    assert [s.path for s in answer.sources] == ["widgets/queue.md", "widgets/queue.md", "widgets/broker.md"]
    assert {c for s in answer.steps for c in s.citations} == {1, 2}, "steps cite the top runbook's sections"
    assert answer.sources[1].heading_path == ["WidgetQueueStalled", "Mitigation"]
    assert answer.sources[1].link == "https://git.example.com/widgets/queue.md#mitigation"
    assert not answer.tentative and "no model" in answer.notes[-1]


def test_a_closest_match_is_shown_as_one() -> None:
    result, sections = _result(0.4)
    answer = extractive_answer("queue stalled", result, sections, tentative=True)
    assert answer.tentative and not answer.abstained
    assert answer.answer.startswith("Closest match: *WidgetQueueStalled* [1]. I'm not sure it covers this")
    assert "confidence 0.40" in answer.notes[0] and answer.steps
