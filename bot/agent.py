"""The agent loop: the model calls the three retrieval tools, then answers in JSON; the answer is
checked against what the tools actually returned. With no model, or when it fails, times out or
never finishes, the same retrieval runs as a fixed plan and the answer is extractive."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from bot import messages
from bot.answer import Answer, Finding, Source, Step, Trace
from bot.context import IncidentContext
from bot.extractive import abstain, abstention, extractive_answer
from bot.llm import LLM, ChatMessage, LLMError
from bot.tools import RunbookTools
from guardrails.answers import check_citations, command_in_text, should_abstain
from prompts.render import render
from retrieval.search import SearchResult, hybrid_search
from retrieval.sections import document_sections

log = logging.getLogger(__name__)
MAX_CALLS_PER_ROUND = 4


@dataclass(frozen=True)
class AgentLimits:
    """Step, time and confidence limits of one answer."""

    max_steps: int = 6
    call_timeout_s: float = 30.0
    total_timeout_s: float = 60.0
    min_confidence: float = 0.65  # below: a closest match, shown as one
    min_plausible: float = 0.27  # below: abstain


class DraftStep(BaseModel):
    """A step as the model writes it (citations are `c123` ids)."""

    instruction: str
    rationale: str | None = None
    commands: list[str] = Field(default_factory=list)
    priority: Literal["now", "next", "later"] = "next"
    citations: list[str | int] = Field(default_factory=list)

    @field_validator("priority", mode="before")
    @classmethod
    def _lenient_priority(cls, value: object) -> str:
        return value if value in ("now", "next", "later") else "next"


class DraftAnswer(BaseModel):
    """The model's final JSON reply."""

    summary: str = ""
    steps: list[DraftStep] = Field(default_factory=list)
    abstain: bool = False


class _Unfinished(Exception):
    """The model used every round without giving a valid answer."""


def system_prompt(limits: AgentLimits) -> str:
    """The system prompt, from prompts/system.md."""
    return render("system", max_steps=limits.max_steps)


async def run_agent(
    question: str, context: IncidentContext, *, llm: LLM | None, tools: RunbookTools, limits: AgentLimits,
) -> Answer:
    """Answer a question with the model driving the tools, or extractively without one."""
    trace = Trace()
    started = time.perf_counter()
    if llm is None:
        answer = await extractive_plan(question, context, tools, why=messages.NO_LLM_CONFIGURED)
    else:
        try:
            async with asyncio.timeout(limits.total_timeout_s):
                answer = await _loop(question, context, llm, tools, limits, trace)
        except TimeoutError:
            answer = await _fallback(question, context, tools, trace, messages.LLM_TIMED_OUT, "llm: timed out")
        except LLMError as exc:
            why = messages.LLM_FAILED.format(detail=str(exc)[:160])
            answer = await _fallback(question, context, tools, trace, why, f"llm: {exc}")
        except _Unfinished:
            why = messages.LLM_UNFINISHED.format(steps=limits.max_steps)
            answer = await _fallback(question, context, tools, trace, why, "llm: unfinished")
    trace.retrieved_chunk_ids = _retrieved(tools)
    trace.retrieval_ms = round(tools.retrieval_ms, 1)
    trace.generation_ms = round(max((time.perf_counter() - started) * 1000 - tools.retrieval_ms, 0.0), 1)
    trace.errors += tools.errors
    answer.trace = trace
    return answer


async def _fallback(
    question: str, context: IncidentContext, tools: RunbookTools, trace: Trace, why: str, error: str,
) -> Answer:
    trace.errors.append(error)
    log.warning("answering extractively: %s", error)
    return await extractive_plan(question, context, tools, why=why)


async def extractive_plan(question: str, context: IncidentContext, tools: RunbookTools, *, why: str) -> Answer:
    """The fixed plan without a model: search, read the best runbook, quote its procedure; a
    closest match below the confident threshold is shown as one; nothing plausible: abstain."""
    t0 = time.perf_counter()
    result = await hybrid_search(tools.pool, tools.embedder, context.search_query(question), k=5,
                                 filters=context.filters, config=tools.config, feedback=tools.feedback,
                                 reranker=tools.reranker, pinned=tools.pinned)
    tools.searches.append(result)
    if not result.chunks or not result.plausible:
        tools.retrieval_ms += (time.perf_counter() - t0) * 1000
        return abstention(question, result, mode="extractive")
    sections = await document_sections(tools.pool, result.chunks[0].document_id)
    shown = [replace(s, text=tools.show(s.text)) for s in sections]
    tools.retrieval_ms += (time.perf_counter() - t0) * 1000
    return extractive_answer(question, result, shown, why=why, tentative=not result.confident)


async def _loop(
    question: str, context: IncidentContext, llm: LLM, tools: RunbookTools, limits: AgentLimits, trace: Trace,
) -> Answer:
    conversation = [
        ChatMessage(role="system", content=system_prompt(limits)),
        ChatMessage(role="user", content=render("question", question=question, context=context.describe())),
    ]
    specs = tools.specs()
    for step in range(limits.max_steps):
        last = step == limits.max_steps - 1
        if last:
            conversation.append(ChatMessage(role="user", content=render("final_round")))
        completion = await asyncio.wait_for(llm.complete(conversation, [] if last else specs), limits.call_timeout_s)
        trace.llm_rounds += 1
        _count(trace, completion.usage)
        if completion.tool_calls and not last:
            conversation.append(ChatMessage(role="assistant", content=completion.content,
                                            tool_calls=completion.tool_calls))
            for n, call in enumerate(completion.tool_calls):
                trace.tool_calls += 1
                result = (await tools.call(call) if n < MAX_CALLS_PER_ROUND
                          else f"error: at most {MAX_CALLS_PER_ROUND} tool calls per round")
                conversation.append(ChatMessage(role="tool", tool_call_id=call.id, content=result))
            continue
        draft, problem = parse_draft(completion.content)
        if draft is None:
            conversation.append(ChatMessage(role="assistant", content=completion.content))
            conversation.append(ChatMessage(role="user", content=render("repair", problem=problem)))
            continue
        return ground(question, draft, tools, limits, completion.model)
    raise _Unfinished


def _count(trace: Trace, usage: object) -> None:
    trace.prompt_tokens += getattr(usage, "prompt_tokens", 0)
    trace.completion_tokens += getattr(usage, "completion_tokens", 0)
    trace.cost_usd = round(trace.cost_usd + getattr(usage, "cost_usd", 0.0), 6)


_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_draft(content: str) -> tuple[DraftAnswer | None, str]:
    """The model's JSON answer (fences and chatter around it tolerated), or why it is not one."""
    text = content.strip()
    if not text:
        return None, "the reply was empty"
    fenced = _FENCED.search(text)
    if fenced:
        text = fenced[1].strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object found"
    try:
        return DraftAnswer.model_validate(json.loads(text[start : end + 1])), ""
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg})"
    except ValidationError as exc:
        return None, "JSON does not match the answer format: " + "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])


def best_confidence(searches: list[SearchResult]) -> float | None:
    """The best retrieval confidence of the answer's searches (None if it never searched)."""
    return max((s.confidence for s in searches), default=None)


def ground(question: str, draft: DraftAnswer, tools: RunbookTools, limits: AgentLimits, model: str) -> Answer:
    """Keep only what retrieved text supports; abstain when too little is left."""
    report = check_citations([s.citations for s in draft.steps], tools.evidence.keys())
    confidence = best_confidence(tools.searches)
    reason = should_abstain(confidence=confidence, threshold=min(limits.min_plausible, limits.min_confidence),
                            grounded_steps=report.grounded_steps, model_abstained=draft.abstain)
    if reason:
        titles = _closest_titles(tools)
        return abstain(question, titles, confidence=confidence or 0.0, mode="llm", model_used=model, reason=reason)
    sources: dict[int, Source] = {}
    steps: list[Step] = []
    for draft_step, ids in zip(draft.steps, report.valid):
        if not ids:
            continue
        for chunk_id in ids:
            if chunk_id not in sources:
                sources[chunk_id] = _source(tools, chunk_id, len(sources) + 1)
        texts = [tools.evidence[c].text for c in ids]
        findings = [
            Finding(command=cmd, rule="unverified-command", severity="info", reason=messages.UNVERIFIED_COMMAND)
            for cmd in draft_step.commands if not command_in_text(cmd, texts)
        ]
        steps.append(Step(instruction=draft_step.instruction, rationale=draft_step.rationale,
                          commands=draft_step.commands, priority=draft_step.priority,
                          citations=[sources[c].id for c in ids], findings=findings))
    notes = []
    if report.unknown:
        notes.append(messages.DROPPED_CITATIONS.format(ids=", ".join(map(str, report.unknown))))
    if report.uncited_steps:
        notes.append(messages.DROPPED_STEPS.format(count=len(report.uncited_steps)))
    share = report.grounded_steps / max(len(draft.steps), 1)
    tentative = confidence is not None and confidence < limits.min_confidence
    if tentative:
        notes.insert(0, messages.CLOSEST_MATCH_NOTE.format(confidence=confidence))
    return Answer(question=question, answer=draft.summary or steps[0].instruction, steps=steps,
                  sources=list(sources.values()), confidence=round((confidence or 1.0) * share, 3),
                  mode="llm", model_used=model, notes=notes, tentative=tentative)


def _source(tools: RunbookTools, chunk_id: int, number: int) -> Source:
    ev = tools.evidence[chunk_id]
    return Source(id=number, chunk_id=chunk_id, document=ev.document, path=ev.path,
                  heading_path=list(ev.heading_path), link=ev.link, relevance=ev.relevance)


def _closest_titles(tools: RunbookTools) -> list[str]:
    titles = [t for s in tools.searches for t in s.closest_titles]
    titles += [ev.document for ev in tools.evidence.values()]
    return list(dict.fromkeys(titles))[:3]


def _retrieved(tools: RunbookTools) -> list[int]:
    ids = [h.chunk_id for s in tools.searches for h in s.chunks] + list(tools.evidence)
    return list(dict.fromkeys(ids))
