"""One question in, one guarded answer out: the path every entry point (CLI, API, Slack) takes."""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field

from psycopg_pool import AsyncConnectionPool

from bot import messages
from bot.access import AccessConfig
from bot.agent import AgentLimits, run_agent, system_prompt
from bot.answer import Answer
from bot.context import IncidentContext
from bot.evidence import Ledger
from bot.guarding import guard_answer, guard_chunk
from bot.llm import LLM
from bot.records.answers import record_answer
from bot.records.corrections import NewCorrection, add_correction
from bot.observability import AGENT_OUTCOMES, CITATIONS, CITED_RELEVANCE, COST, FINDINGS, QUESTIONS, TOKENS, TOOL_CALLS, observe_stage
from bot.tools import RunbookTools, ToolLimits
from guardrails import Policy
from guardrails.inputs import normalise_question
from retrieval.access import Visibility, visibility
from retrieval.corrections import Chosen, CorrectionsCache, applying_to, choose
from retrieval.embed import Embedder, embed_query
from retrieval.search import hybrid_search
from retrieval.sections import get_runbook
from retrieval.feedback_alerts import Demoted, demoted
from retrieval.feedback_model import FeedbackModel
from retrieval.links import linked_documents
from retrieval.search_types import Reranker, SearchConfig, SearchFilters
from retrieval.weights import WeightsCache

log = logging.getLogger(__name__)


class EmptyQuestion(ValueError):
    """Nothing left to answer after normalisation; reply with help."""


@dataclass
class Answerer:
    """What answering needs, built once by bot.app and shared by every entry point."""

    pool: AsyncConnectionPool
    embedder: Embedder
    llm: LLM | None
    policy: Policy
    limits: AgentLimits = field(default_factory=AgentLimits)
    tool_limits: ToolLimits = field(default_factory=ToolLimits)
    search_config: SearchConfig = field(default_factory=SearchConfig)
    secrets: tuple[str, ...] = ()
    max_question_chars: int = 2000
    record: bool = True
    weights: WeightsCache | None = None  # feedback weights, re-read when a new version is active
    reranker: Reranker | None = None
    access: AccessConfig = field(default_factory=AccessConfig)  # restricted runbooks and who may see them
    corrections: CorrectionsCache | None = None  # engineers' "this runbook was right", None: not applied

    async def answer(self, question: str, context: IncidentContext | None = None) -> Answer:
        """Validate the question, run the agent, apply the guardrails, log and store the answer."""
        context = context or IncidentContext()
        checked = normalise_question(question, max_chars=self.max_question_chars)
        if checked.empty:
            raise EmptyQuestion(messages.EMPTY_QUESTION)
        started = time.perf_counter()
        steer = await self._steered(checked.text, context)
        pinned = tuple(p for p in await self._linked(context) if p not in steer.demoted_paths)
        if steer.chosen is not None:
            pinned = (steer.chosen.path, *(p for p in pinned if p != steer.chosen.path))
        ledger = Ledger()
        tools = RunbookTools(self.pool, self.embedder, filters=context.filters, config=self.search_config,
                             limits=self.tool_limits, feedback=await self._feedback(), reranker=self.reranker,
                             show=lambda text: guard_chunk(text, secrets=self.secrets),
                             pinned=pinned, demoted=steer.demoted_paths, ledger=ledger,
                             visibility=await self._visibility(context))
        try:
            answer = await run_agent(checked.text, context, llm=self.llm, tools=tools, limits=self.limits)
        except Exception:
            QUESTIONS.labels(context.entry_point, "error").inc()
            raise
        answer = guard_answer(answer, self.policy.for_channel(context.channel), secrets=self.secrets,
                              system_prompt=system_prompt(self.limits))
        if checked.truncated:
            answer.notes.append(messages.QUESTION_TRUNCATED.format(limit=self.max_question_chars))
        steer.explain(answer, tools.passed_over)
        answer_id = await self._store(answer, context)
        total_ms = (time.perf_counter() - started) * 1000
        _observe(answer, context, ledger, total_ms)
        _log(answer, context, answer_id, total_ms)
        return answer

    async def _visibility(self, context: IncidentContext) -> Visibility | None:
        """What the asker of `context` may see (None: everything)."""
        return await visibility(self.pool, self.access.audience(context), self.access.restricted_sources)

    async def _steered(self, question: str, context: IncidentContext) -> Steering:
        """What engineers said applies to this question: the runbook their corrections put first, and
        those their votes on the same alert put last (unless a correction names them)."""
        if self.corrections is None:
            return Steering()
        try:
            found, votes = await self.corrections.current(), await self.corrections.alert_votes()
            alertname = context.alert.get("alertname")
            vector = await embed_query(self.embedder, context.search_query(question)) if found else None
            kept = {c.path for c in applying_to(found, alertname, vector)}  # a correction names them
            return Steering(choose(found, alertname, vector), tuple(demoted(votes, alertname, kept=kept)))
        except Exception:  # answering without corrections beats not answering
            log.exception("could not read the corrections and votes; answering without them")
            return Steering()

    async def alternatives(self, question: str, context: IncidentContext, *, shown: str | None = None,
                           n: int = 5) -> list[tuple[str, str]]:
        """The runbooks a 👎 offers, as (path, title), other than the one `shown`: those closest to
        the question, taken in turn with those closest to the alert's name and labels (what the alert
        itself points at, when the question's words lead elsewhere)."""
        filters = SearchFilters.seen_by(context.filters, await self._visibility(context))
        rankings = []
        for query in dict.fromkeys(q for q in (context.search_query(question), alert_words(context.alert)) if q):
            result = await hybrid_search(self.pool, self.embedder, query, k=4 * n, filters=filters,
                                         config=self.search_config)
            rankings.append([(h.document_path, h.document_title) for h in result.chunks])
        return taken_in_turn(rankings, skip=shown)[:n]

    async def correct(self, given: str, question: str, context: IncidentContext, *, platform: str, user_id: str,
                      user_name: str | None = None, answer_id: int | None = None) -> str | None:
        """Record that the runbook `given` (a path or a link) answers `question` in `context`; the
        runbook's path, or None when it names no runbook the asker may see."""
        found = await linked_documents(self.pool, [given.strip()])
        if not found:
            return None
        if await get_runbook(self.pool, found[0], await self._visibility(context)) is None:
            return None
        asked = context.search_query(question)
        correction = NewCorrection(platform=platform, user_id=user_id, user_name=user_name, question=asked,
                                   path=found[0], channel=context.channel, answer_id=answer_id,
                                   alertname=context.alert.get("alertname"), labels=dict(context.alert))
        await add_correction(self.pool, correction, await embed_query(self.embedder, asked))
        self.feedback_changed()
        return found[0]

    def feedback_changed(self) -> None:
        """A vote or correction was just made: the next question reads them again."""
        if self.corrections is not None:
            self.corrections.invalidate()

    async def _linked(self, context: IncidentContext) -> tuple[str, ...]:
        """The runbooks of the corpus that the incident's alert links to."""
        links = context.runbook_links()
        if not links:
            return ()
        try:
            return tuple(await linked_documents(self.pool, links))
        except Exception:  # a link that cannot be resolved only loses its boost
            log.exception("could not resolve the alert's runbook links %s", links)
            return ()

    async def _feedback(self) -> FeedbackModel | None:
        if self.weights is None:
            return None
        try:
            return await self.weights.current()
        except Exception:  # answering without feedback beats not answering
            log.exception("could not load feedback weights; answering without them")
            return None

    async def _store(self, answer: Answer, context: IncidentContext) -> int | None:
        if not self.record:
            return None
        try:
            answer.answer_id = await record_answer(self.pool, answer, entry_point=context.entry_point,
                                                   channel=context.channel, user_id=context.user,
                                                   alert=context.alert)
        except Exception:  # losing the history row must not lose the answer
            log.exception("could not store the answer to %r", answer.question[:80])
            return None
        return answer.answer_id


@dataclass(frozen=True)
class Steering:
    """How engineers' corrections and votes steer one answer, and the notes that say so."""

    chosen: Chosen | None = None  # the runbook a correction puts first
    demoted: tuple[Demoted, ...] = ()  # the runbooks votes on the same alert put last

    @property
    def demoted_paths(self) -> tuple[str, ...]:
        """The paths of the demoted runbooks."""
        return tuple(d.path for d in self.demoted)

    def explain(self, answer: Answer, passed_over: set[str]) -> None:
        """Say so in the answer when a correction led it, or when it skipped a runbook marked wrong."""
        if not answer.sources or answer.abstained:
            return
        first = answer.sources[0].path
        skipped = next((d for d in self.demoted if d.path in passed_over and d.path != first), None)
        if skipped is not None:
            who = messages.DEMOTED_BY.format(count=skipped.down) if skipped.down > 1 else ""
            answer.notes.insert(0, messages.DEMOTED.format(path=skipped.path, date=skipped.at.date().isoformat(),
                                                           who=who))
        chosen = self.chosen
        if chosen is not None and first == chosen.path:
            others = messages.CORRECTED_OTHERS.format(count=chosen.backers) if chosen.backers > 1 else ""
            answer.notes.insert(0, messages.CORRECTED.format(by=chosen.by, date=chosen.at.date().isoformat(),
                                                             others=others))


_NAMING_LABELS = ("service", "component", "job", "type", "app", "container")  # labels that say what is alerting
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-.:/]+")


def alert_words(alert: dict[str, str]) -> str:
    """An alert's name and naming labels as words (`KubePodCrashLooping` -> `Kube Pod Crash Looping`)."""
    values = [alert.get("alertname") or "", *(alert.get(k) or "" for k in _NAMING_LABELS)]
    return " ".join(" ".join(_WORD_BREAK.split(v)).strip() for v in values if v.strip())[:300].strip()


def taken_in_turn(rankings: list[list[tuple[str, str]]], *, skip: str | None = None) -> list[tuple[str, str]]:
    """Several rankings of (path, title) merged by taking each one's next runbook in turn, each runbook
    once, `skip` left out."""
    documents = [list({p: t for p, t in r if p != skip}.items()) for r in rankings]  # each at its best rank
    merged: dict[str, str] = {}
    for rank in range(max((len(d) for d in documents), default=0)):
        for ranked in documents:
            if rank < len(ranked):
                merged.setdefault(*ranked[rank])
    return list(merged.items())


def _observe(answer: Answer, context: IncidentContext, ledger: Ledger, total_ms: float) -> None:
    """Metrics of one answer."""
    findings = [f for step in answer.steps for f in step.findings]
    outcome = ("abstained" if answer.abstained else
               "blocked" if any(f.severity == "block" for f in findings) else "answered")
    QUESTIONS.labels(context.entry_point, outcome).inc()
    observe_stage("embed", ledger.search_ms("embed"))
    observe_stage("search", ledger.search_ms("total"))
    if answer.trace.llm_rounds:
        observe_stage("llm", [answer.trace.generation_ms])
    observe_stage("answer", [total_ms])
    TOOL_CALLS.observe(answer.trace.tool_calls)
    for outcome in answer.trace.outcomes:
        AGENT_OUTCOMES.labels(outcome).inc()
    CITATIONS.observe(len(answer.sources))
    for source in answer.sources:
        CITED_RELEVANCE.observe(source.relevance)
    for f in findings:
        FINDINGS.labels(f.rule, f.severity).inc()
    TOKENS.labels("prompt").inc(answer.trace.prompt_tokens)
    TOKENS.labels("completion").inc(answer.trace.completion_tokens)
    COST.inc(answer.trace.cost_usd)


def _log(answer: Answer, context: IncidentContext, answer_id: int | None, total_ms: float) -> None:
    """One structured line per question (no runbook text, no secrets)."""
    t = answer.trace
    log.info("answer %s", json.dumps({
        "answer_id": answer_id, "entry_point": context.entry_point, "question": answer.question[:300],
        "mode": answer.mode, "model": answer.model_used, "abstained": answer.abstained,
        "confidence": answer.confidence, "retrieved": t.retrieved_chunk_ids, "cited": answer.cited_chunk_ids,
        "retrieval_ms": t.retrieval_ms, "generation_ms": t.generation_ms, "total_ms": round(total_ms, 1),
        "tool_calls": t.tool_calls, "prompt_tokens": t.prompt_tokens, "completion_tokens": t.completion_tokens,
        "cost_usd": t.cost_usd, "errors": t.errors,
    }))
