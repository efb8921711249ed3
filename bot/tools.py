"""The three retrieval tools the model may call. A tool is a typed function: its name, docstring
and signature are what the model sees; its arguments are validated before it runs; a ToolError
goes back to the model as text. Everything a tool shows is registered as citable evidence."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, get_type_hints

import psycopg
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from bot.evidence import Evidence, Ledger
from bot.filters import Filters, describe, narrowed
from bot.llm import ToolCall, ToolSpec
from prompts.render import render
from retrieval.access import Visibility
from retrieval.db import DatabaseUnavailable
from retrieval.embed import Embedder
from retrieval.feedback_model import FeedbackModel
from retrieval.search import hybrid_search
from retrieval.search_types import Reranker, ScoredChunk, SearchConfig, SearchFilters, SearchResult
from retrieval.sections import DocumentSection, document_sections, fetch_parent_section, get_runbook
from retrieval.tokens import count_tokens

log = logging.getLogger(__name__)
DEMOTED_DEPTH = 40  # chunks a search reads when some runbooks are demoted


class ToolError(Exception):
    """A tool call that failed in a way the model can fix; the message goes back to it."""


@dataclass
class Tool:
    """A function the model may call, with the schema derived from its signature."""

    name: str
    description: str
    params: type[BaseModel]
    fn: Callable[..., Awaitable[str]]

    def spec(self) -> ToolSpec:
        """The declaration sent to the model."""
        schema = self.params.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)

    async def __call__(self, arguments: str) -> str:
        """Validate raw JSON arguments, then run."""
        try:
            data = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments are not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise ToolError("arguments must be a JSON object")
        try:
            args = self.params.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ToolError(f"invalid arguments: {problems}") from None
        return await self.fn(**{name: getattr(args, name) for name in self.params.model_fields})


def tool(fn: Callable[..., Awaitable[str]]) -> Tool:
    """Make a Tool from an async function (or bound method): name, docstring, typed parameters."""
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hints[name], default)
    params = create_model(f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return Tool(fn.__name__, " ".join((inspect.getdoc(fn) or fn.__name__).split()), params, fn)


@dataclass
class ToolLimits:
    """How much tool output the model may see."""

    budget_tokens: int = 6000
    call_tokens: int = 2000
    timeout_s: float = 10.0
    max_k: int = 8


@dataclass
class RunbookTools:
    """The tools of one answer; what they show and run goes into the answer's ledger."""

    pool: AsyncConnectionPool
    embedder: Embedder
    filters: SearchFilters | None = None
    config: SearchConfig | None = None
    limits: ToolLimits = field(default_factory=ToolLimits)
    feedback: FeedbackModel | None = None  # engineers' votes as reranking boosts
    reranker: Reranker | None = None  # cross-encoder, when configured
    show: Callable[[str], str] = lambda text: text  # neutralises runbook text before the model sees it
    pinned: tuple[str, ...] = ()  # documents the incident's alert links to: searches put them first
    demoted: tuple[str, ...] = ()  # documents engineers marked wrong for the alert: searches put them last
    visibility: Visibility | None = None  # what the asker may see (restricted runbooks); None: everything
    ledger: Ledger = field(default_factory=Ledger)
    passed_over: set[str] = field(default_factory=set)  # the demoted documents a search moved down
    _ran: dict[tuple[str, int, SearchFilters | None], SearchResult] = field(default_factory=dict, repr=False)

    def tools(self) -> list[Tool]:
        """Exactly the three tools the model may call."""
        return [tool(self.hybrid_search), tool(self.fetch_parent_section), tool(self.get_runbook)]

    def specs(self) -> list[ToolSpec]:
        """Their declarations."""
        return [t.spec() for t in self.tools()]

    def call_key(self, request: ToolCall) -> tuple[str, str]:
        """What a call asks for, defaults filled in: the same call written differently has the same key."""
        chosen = {t.name: t for t in self.tools()}.get(request.name)
        try:
            data = json.loads(request.arguments or "{}")
            if chosen is not None and isinstance(data, dict):
                return request.name, chosen.params.model_validate(data).model_dump_json()
            return request.name, json.dumps(data, sort_keys=True)
        except (json.JSONDecodeError, ValidationError):
            return request.name, " ".join((request.arguments or "").split())

    async def call(self, request: ToolCall) -> str:
        """Run one tool call; any failure becomes an error message for the model."""
        chosen = {t.name: t for t in self.tools()}.get(request.name)
        if chosen is None:
            names = ", ".join(t.name for t in self.tools())
            return f"error: there is no tool named {request.name!r}; the tools are {names}"
        started = asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(chosen(request.arguments), self.limits.timeout_s)
        except ToolError as exc:
            return f"error: {exc}"
        except TimeoutError:
            self.ledger.errors.append(f"{request.name}: timed out")
            return f"error: {request.name} timed out after {self.limits.timeout_s:.0f}s"
        except (DatabaseUnavailable, psycopg.OperationalError) as exc:
            self.ledger.errors.append(f"{request.name}: database unavailable")
            raise DatabaseUnavailable(str(exc)) from exc
        except Exception as exc:  # a bug: log it with context, tell the model to move on
            log.exception("tool %s failed with arguments %s", request.name, request.arguments[:300])
            self.ledger.errors.append(f"{request.name}: {type(exc).__name__}")
            return f"error: {request.name} failed internally; try another query or answer with what you have"
        finally:
            self.ledger.retrieval_ms += (asyncio.get_running_loop().time() - started) * 1000

    async def hybrid_search(
        self,
        query: Annotated[str, Field(min_length=2, max_length=500, description="What to look for")],
        k: Annotated[int, Field(ge=1, le=8, description="How many chunks (1-8)")] = 5,
        filters: Filters | None = None,
    ) -> str:
        """Search the team's runbooks (keyword BM25 and semantic search combined). Use the
        engineer's words, exact error strings, alert names, service names or commands. Returns the
        best chunks, each headed by its citation id like [c123], runbook title, section and path,
        and a retrieval confidence: a low one means the runbooks may not cover the question."""
        asked = filters.to_search() if filters else None
        chosen = narrowed(self.filters, asked)
        k = min(k, self.limits.max_k)
        result = await self.search(query, k, chosen)
        dropped = ""
        if not result.chunks and asked is not None and not asked.is_empty():
            # Small models invent filters (an environment, the alert name as a tag) that match no
            # runbook; the search without them is what the engineer needs, said plainly.
            dropped = f"No runbook matched the filters {describe(asked)}; these results are without them. "
            result = await self.search(query, k, self.filters)
        self.ledger.used(result)
        if not result.chunks:
            return self._emit("hybrid_search", ["No runbook matched. Try other words, or answer that no runbook covers this."])
        head = (f"{dropped}retrieval confidence {result.confidence:.2f} "
                f"({'confident' if result.confident else 'LOW: the runbooks may not cover this'})")
        blocks = [self._chunk_block(hit) for hit in result.chunks]
        return self._emit("hybrid_search", blocks, head=head)

    async def search(self, query: str, k: int, filters: SearchFilters | None) -> SearchResult:
        """The one search entry of an answer, for the tool and the extractive plan alike: with this
        answer's ranking (config, votes, reranker, the alert's pinned runbooks); the same search
        twice in one answer (the model's first search, then the gate's extractive plan) runs once."""
        filters = SearchFilters.seen_by(filters, self.visibility)
        key = (query, k, filters)
        if key not in self._ran:
            # A demoted runbook's chunks can fill the head of the ranking: deep enough for the next ones.
            wanted = max(8 * k, DEMOTED_DEPTH) if self.demoted else k
            result = await hybrid_search(self.pool, self.embedder, query, k=wanted, filters=filters,
                                         config=self.config, feedback=self.feedback,
                                         reranker=self.reranker, pinned=self.pinned)
            self._ran[key] = self._demote(result, k)
        return self._ran[key]

    def _demote(self, result: SearchResult, k: int) -> SearchResult:
        """The demoted documents' hits moved below the others' (each side in its order), cut to k."""
        if not self.demoted:
            return result
        kept = [h for h in result.chunks if h.document_path not in self.demoted]
        down = [h for h in result.chunks if h.document_path in self.demoted]
        if kept and down and result.chunks[0].document_path in self.demoted:
            self.passed_over.add(result.chunks[0].document_path)
        return replace(result, chunks=(kept + down)[:k])

    async def sections(self, document_id: int) -> list[DocumentSection]:
        """A runbook's sections in order, their text made safe to show (the extractive plan's reading)."""
        t0 = asyncio.get_running_loop().time()
        try:
            sections = await document_sections(self.pool, document_id, self.visibility)
            return [replace(s, text=self.show(s.text)) for s in sections]
        finally:
            self.ledger.retrieval_ms += (asyncio.get_running_loop().time() - t0) * 1000

    async def fetch_parent_section(
        self, chunk_id: Annotated[int, Field(ge=1, description="A citation id's number: 123 for c123")],
    ) -> str:
        """Read the whole runbook section a chunk belongs to, when a search result is cut short
        (for example steps or commands continue past the chunk). Cite it with the same id."""
        section = await fetch_parent_section(self.pool, chunk_id, self.visibility)
        if section is None:
            raise ToolError(f"no chunk c{chunk_id}; use an id shown by hybrid_search")
        text = self.show(section.text)
        evidence = Evidence(chunk_id, section.document_id, section.document_title, section.document_path,
                            section.heading_path, text, source=section.source, link=section.link)
        return self._emit("fetch_parent_section", [(evidence, self._header(evidence) + "\n" + text)])

    async def get_runbook(
        self, doc: Annotated[str, Field(min_length=1, max_length=300, description="Document id or path")],
    ) -> str:
        """Read a whole runbook by its document id or path (as shown in search results), section
        by section, each section headed by the citation id to use for it. Long runbooks are cut
        to the tool output budget: prefer hybrid_search and fetch_parent_section."""
        key: int | str = int(doc) if doc.strip().isdigit() else doc.strip()
        runbook = await get_runbook(self.pool, key, self.visibility)
        if runbook is None:
            raise ToolError(f"no runbook {doc!r}; use a document id or path from hybrid_search")
        sections = await document_sections(self.pool, runbook.document_id, self.visibility)
        tags = ", ".join(map(str, runbook.metadata.get("tags") or [])) or "none"
        head = self.show(f"runbook {runbook.title} (doc {runbook.document_id}, {runbook.path}; tags: {tags})")
        blocks: list[tuple[Evidence, str] | str] = []
        for s in sections:
            text = self.show(s.text)
            ev = Evidence(s.first_chunk_id, runbook.document_id, runbook.title, runbook.path, s.heading_path,
                          text, source=runbook.source, link=runbook.link(s.heading_path))
            blocks.append((ev, self._header(ev) + "\n" + text))
        return self._emit("get_runbook", blocks, head=head)

    def _chunk_block(self, hit: ScoredChunk) -> tuple[Evidence, str]:
        text = self.show(hit.text)
        ev = Evidence(hit.chunk_id, hit.document_id, hit.document_title, hit.document_path, hit.heading_path,
                      text, source=hit.source, link=hit.link, relevance=round(hit.relevance, 4))
        return ev, self._header(ev) + f" relevance {hit.relevance:.2f}\n" + text

    def _header(self, ev: Evidence) -> str:
        """The citation line of a block; titles and headings are runbook text too, made safe like it."""
        section = " › ".join(ev.heading_path) or ev.document
        return self.show(f"[c{ev.chunk_id}] {ev.document} — {section} (doc {ev.document_id}, {ev.path})")

    def _emit(self, name: str, blocks: list[tuple[Evidence, str] | str], *, head: str = "") -> str:
        """Fit blocks into this call's and the answer's token budgets; register what is shown."""
        room = min(self.limits.call_tokens, self.limits.budget_tokens - self.ledger.used_tokens)
        if room <= 50:
            raise ToolError("the tool output budget for this answer is used up; answer with what you have")
        shown: list[str] = [head] if head else []
        used = count_tokens(head)
        for n, block in enumerate(blocks):
            ev, text = block if isinstance(block, tuple) else (None, block)
            cost = count_tokens(text)
            if used + cost > room:
                if n == 0:
                    text = _truncate(text, room - used)
                    cost = count_tokens(text)
                else:
                    shown.append(f"({len(blocks) - n} more omitted: tool output budget)")
                    break
            shown.append(text)
            used += cost
            if ev is not None:
                ev.text = text
                self.ledger.register(ev)
        self.ledger.used_tokens += used
        return render("tool_result", tool=name, body="\n\n".join(shown))


def _truncate(text: str, tokens: int) -> str:
    """Cut text to about `tokens` tokens, marking the cut."""
    if tokens <= 0:
        return ""
    words = text.split(" ")
    keep = max(1, int(len(words) * tokens / max(count_tokens(text), 1)))
    return " ".join(words[:keep]) + " …(cut: tool output budget)"
