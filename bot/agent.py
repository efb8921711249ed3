"""The agent loop: the model calls the three retrieval tools, then answers in JSON; the answer is
checked against what the tools actually returned. With no model, or when it fails, times out or
never finishes, the same retrieval runs as a fixed plan and the answer is extractive."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from bot import messages
from bot.answer import Answer, Finding, Source, Step, Trace
from bot.context import IncidentContext
from bot.extractive import abstain, abstention, extractive_answer
from bot.llm import LLM, ChatMessage, Completion, LLMError, ToolCall, ToolSpec
from bot.textcalls import json_values, text_tool_calls
from bot.evidence import Evidence, Ledger
from bot.tools import RunbookTools
from guardrails import neutralise
from guardrails.answers import check_citations, command_in_text, should_abstain
from prompts.render import render

log = logging.getLogger(__name__)
MAX_CALLS_PER_ROUND = 4


@dataclass(frozen=True)
class AgentLimits:
    """Step, time and confidence limits of one answer."""

    max_steps: int = 6
    call_timeout_s: float = 30.0
    total_timeout_s: float = 60.0
    min_confidence: float = 0.65  # below: a closest match, shown as one
    min_plausible: float = 0.25  # below: abstain
    # The first round asks for a tool call: the bot answers from runbooks, so it searches first (and
    # a server that constrains tool calls by grammar, like llama.cpp's, then always gets a valid one).
    first_tool_choice: str | None = "required"
    # Show the extractive answer instead of the model's when the model's does not hold up against it
    # (model_falls_short): the bot never answers worse with a model than without one.
    gate: bool = True


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

    @model_validator(mode="before")
    @classmethod
    def _usual_names(cls, data: object) -> object:
        """What small models write instead: "name"/"action"/"description" for the instruction, one
        "command" string, "citation"/"sources" for the citations."""
        if not isinstance(data, dict):
            return {"instruction": str(data)} if isinstance(data, str) else data
        data = dict(data)
        for alias in ("action", "step", "description", "title", "name", "text"):
            if "instruction" not in data and isinstance(data.get(alias), str):
                data["instruction"] = data.pop(alias)
        if "commands" not in data and "command" in data:
            data["commands"] = data.pop("command")
        for alias in ("citation", "sources", "source", "cite"):
            if "citations" not in data and alias in data:
                data["citations"] = data.pop(alias)
        for key in ("commands", "citations"):
            if isinstance(data.get(key), (str, int)):
                data[key] = [data[key]]
        return data


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
            if limits.gate:
                answer = await _gated(question, context, tools, trace, answer)
        except TimeoutError:
            answer = await _fallback(question, context, tools, trace, messages.LLM_TIMED_OUT, "timeout", "llm: timed out")
        except LLMError as exc:
            why = messages.LLM_FAILED.format(detail=str(exc)[:160])
            answer = await _fallback(question, context, tools, trace, why, "llm_error", f"llm: {exc}")
        except _Unfinished:
            why = messages.LLM_UNFINISHED.format(steps=limits.max_steps)
            answer = await _fallback(question, context, tools, trace, why, "unfinished")
    ledger = tools.ledger
    trace.retrieved_chunk_ids = ledger.retrieved()
    trace.retrieval_ms = round(ledger.retrieval_ms, 1)
    trace.generation_ms = round(max((time.perf_counter() - started) * 1000 - ledger.retrieval_ms, 0.0), 1)
    trace.errors += ledger.errors
    answer.trace = trace
    return answer


async def _fallback(
    question: str, context: IncidentContext, tools: RunbookTools, trace: Trace, why: str, outcome: str,
    error: str | None = None,
) -> Answer:
    trace.outcomes.append(outcome)
    trace.errors.append(error or f"llm: {outcome}")
    log.warning("answering extractively: %s", error or outcome)
    return await extractive_plan(question, context, tools, why=why)


async def _gated(question: str, context: IncidentContext, tools: RunbookTools, trace: Trace, answer: Answer) -> Answer:
    """The model's answer, unless it falls short of the extractive one (then that, saying why)."""
    extractive = await extractive_plan(question, context, tools, why=messages.LLM_SET_ASIDE_WHY)
    why = model_falls_short(answer, extractive)
    if why is None:
        return answer
    trace.outcomes.append("extractive_preferred")
    extractive.notes.insert(0, messages.LLM_SET_ASIDE.format(reason=why))
    return extractive


def model_falls_short(model: Answer, extractive: Answer) -> str | None:
    """Why the extractive answer serves an engineer better than the model's, or None. Decided from
    the incident figures (README, "A real model in the loop"): a model that abstains where the
    search found a runbook (even a closest match: the small models gave up on answerable questions
    the extractive answer got right), follows another runbook than the search's best (where they
    differed, the search was right more often, confident or not), invents commands, or gives fewer
    grounded steps than the runbook has."""
    if extractive.abstained:
        return None
    if model.abstained:
        return ("it found no runbook where the search did" if not extractive.tentative
                else "it gave up where the search found a close match")
    if model.sources and model.sources[0].path != extractive.sources[0].path:
        return f"it followed {model.sources[0].document}, not the best match {extractive.sources[0].document}"
    invented = [f.command for step in model.steps for f in step.findings if f.rule == "unverified-command"]
    if invented:
        return f"it wrote {len(invented)} command(s) that are not in the cited runbook text"
    if len(model.steps) < min(2, len(extractive.steps)):
        return "it gave fewer steps than the runbook has"
    return None


async def extractive_plan(question: str, context: IncidentContext, tools: RunbookTools, *, why: str) -> Answer:
    """The fixed plan without a model: search, read the best runbook, quote its procedure; a
    closest match below the confident threshold is shown as one; nothing plausible: abstain. When a
    model searched before failing, its best search counts too (the evidence it gathered)."""
    gathered = [s for s in tools.ledger.searches if s.chunks]
    t0 = time.perf_counter()
    result = await tools.search(context.search_query(question), 5, context.filters)
    tools.ledger.retrieval_ms += (time.perf_counter() - t0) * 1000
    tools.ledger.used(result)
    result = max([result, *gathered], key=lambda r: r.confidence)
    if not result.chunks or not result.plausible:
        return abstention(question, result, mode="extractive")
    sections = await tools.sections(result.chunks[0].document_id)
    return extractive_answer(question, result, sections, why=why, tentative=not result.confident)


async def _loop(
    question: str, context: IncidentContext, llm: LLM, tools: RunbookTools, limits: AgentLimits, trace: Trace,
) -> Answer:
    # The question, the thread and the alert can carry text someone else wrote (an alert's
    # annotations, a pasted log): instruction-like spans reach the model as markers only.
    asked, in_question = neutralise(question)
    described, in_context = neutralise(context.describe())
    if in_question or in_context:
        trace.outcomes.append("question_neutralised")
    conversation = [
        ChatMessage(role="system", content=system_prompt(limits)),
        ChatMessage(role="user", content=render("question", question=asked, context=described)),
    ]
    specs = tools.specs()
    known = {spec.name for spec in specs}
    seen: set[tuple[str, str]] = set()
    answer_now = False  # the model only repeats calls: its evidence is in, ask for the answer
    for step in range(limits.max_steps):
        last = answer_now or step == limits.max_steps - 1
        if last:
            conversation.append(ChatMessage(role="user", content=render("final_round")))
        completion = await _complete(llm, conversation, [] if last else specs, limits, trace)
        calls, said = completion.tool_calls or text_tool_calls(completion.content), completion.content
        if calls and not completion.tool_calls:
            trace.outcomes.append("text_tool_call")
        if calls and last:
            trace.outcomes.append("tool_call_in_final_round")
            raise _Unfinished
        if not calls and not last and trace.tool_calls == 0:
            # Told to search first, the model answered from nothing (some servers do not enforce a
            # required tool call): the search it skipped is run for it, and it answers from that.
            trace.outcomes.append("search_seeded")
            arguments = json.dumps({"query": context.search_query(question)[:500]})
            calls, said = [ToolCall(id="seeded_search", name="hybrid_search", arguments=arguments)], ""
        if calls:
            calls = _distinct(calls, trace)
            conversation.append(ChatMessage(role="assistant", content=said, tool_calls=calls))
            fresh = await _run_calls(calls, tools, known, seen, conversation, trace)
            answer_now = fresh == 0
            continue
        draft, problem = parse_draft(completion.content)
        if draft is None and "repair" in trace.outcomes:  # one repair round, then what the tools found
            trace.outcomes.append("not_an_answer")
            raise _Unfinished
        if draft is None:
            trace.outcomes.append("repair")
            conversation.append(ChatMessage(role="assistant", content=completion.content))
            conversation.append(ChatMessage(role="user", content=render("repair", problem=problem)))
            continue
        if problem:
            trace.outcomes.append("answer_salvaged")
        return ground(question, draft, tools.ledger, limits, completion.model)
    raise _Unfinished


async def _complete(llm: LLM, conversation: list[ChatMessage], specs: list[ToolSpec], limits: AgentLimits,
                    trace: Trace) -> Completion:
    """One model round. A server that rejects what the model produced (llama.cpp answers 500 when
    the output is neither a parsable tool call nor plain text) gets one more try: before any tool
    call, told that one is required; after, asked for the answer with no tools on offer."""
    searched = trace.tool_calls > 0
    choice = None if searched or not specs else limits.first_tool_choice
    trace.llm_rounds += 1
    try:
        completion = await asyncio.wait_for(llm.complete(conversation, specs, tool_choice=choice),
                                            limits.call_timeout_s)
    except LLMError:
        if not specs:
            raise
        trace.outcomes.append("server_error_retried")
        trace.llm_rounds += 1
        if searched:
            conversation.append(ChatMessage(role="user", content=render("final_round")))
            completion = await asyncio.wait_for(llm.complete(conversation, []), limits.call_timeout_s)
        else:
            completion = await asyncio.wait_for(llm.complete(conversation, specs, tool_choice="required"),
                                                limits.call_timeout_s)
    _count(trace, completion.usage)
    return completion


def _distinct(calls: list[ToolCall], trace: Trace) -> list[ToolCall]:
    """A round's calls without repeats, at most MAX_CALLS_PER_ROUND (the rest are dropped, not answered)."""
    unique = list({(c.name, " ".join(c.arguments.split())): c for c in calls}.values())
    if len(unique) > MAX_CALLS_PER_ROUND or len(unique) < len(calls):
        trace.outcomes.append("calls_dropped")
    return unique[:MAX_CALLS_PER_ROUND]


async def _run_calls(calls: list[ToolCall], tools: RunbookTools, known: set[str], seen: set[tuple[str, str]],
                     conversation: list[ChatMessage], trace: Trace) -> int:
    """Run a round's tool calls, answer each in the conversation; returns how many were new."""
    fresh = 0
    for call in calls:
        trace.tool_calls += 1
        key = tools.call_key(call)
        if key in seen:
            trace.outcomes.append("repeated_call")
            result = render("repeated_call", tool=call.name)
        else:
            seen.add(key)
            fresh += 1
            if call.name not in known:
                trace.outcomes.append("unknown_tool")
            result = await tools.call(call)
        conversation.append(ChatMessage(role="tool", tool_call_id=call.id, content=result))
    return fresh


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
        data = json.loads(text[start : end + 1])
        if not isinstance(data, dict) or not {"summary", "steps", "abstain"} & data.keys():
            return None, "the JSON object has no summary, steps or abstain"
        return DraftAnswer.model_validate(data), ""
    except json.JSONDecodeError as exc:
        salvaged = _salvage(text[start : end + 1])
        if salvaged is not None:
            return salvaged, f"salvaged from invalid JSON ({exc.msg})"
        return None, f"invalid JSON ({exc.msg})"
    except ValidationError as exc:
        return None, "JSON does not match the answer format: " + "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])


_SUMMARY = re.compile(r'"summary"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _salvage(text: str) -> DraftAnswer | None:
    """The steps of an answer whose JSON is broken around them (small models close the steps list
    after every step: `}], {`), each step whole, with the summary if it reads; else None."""
    steps = []
    found = [v for value in json_values(text) for v in (value if isinstance(value, list) else [value])]
    for value in found:
        if isinstance(value, dict) and "summary" not in value:
            try:
                steps.append(DraftStep.model_validate(value))
            except ValidationError:
                continue
    if not steps:
        return None
    summary = _SUMMARY.search(text)
    try:
        return DraftAnswer(summary=json.loads(f'"{summary[1]}"') if summary else "", steps=steps)
    except (json.JSONDecodeError, ValidationError):
        return None


def ground(question: str, draft: DraftAnswer, ledger: Ledger, limits: AgentLimits, model: str) -> Answer:
    """Keep only what retrieved text supports; abstain when too little is left."""
    report = check_citations([s.citations for s in draft.steps], ledger.evidence.keys())
    confidence = ledger.best_confidence()
    reason = should_abstain(confidence=confidence, threshold=min(limits.min_plausible, limits.min_confidence),
                            grounded_steps=report.grounded_steps, model_abstained=draft.abstain)
    if reason:
        return abstain(question, ledger.closest_titles(), confidence=confidence or 0.0, mode="llm", model_used=model, reason=reason)
    sources: dict[int, Source] = {}
    steps: list[Step] = []
    for draft_step, ids in zip(draft.steps, report.valid):
        if not ids:
            continue
        for chunk_id in ids:
            if chunk_id not in sources:
                sources[chunk_id] = _source(ledger.evidence[chunk_id], len(sources) + 1)
        texts = [ledger.evidence[c].text for c in ids]
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


def _source(ev: Evidence, number: int) -> Source:
    return Source(id=number, chunk_id=ev.chunk_id, document=ev.document, path=ev.path, source=ev.source,
                  heading_path=list(ev.heading_path), link=ev.link, relevance=ev.relevance)
