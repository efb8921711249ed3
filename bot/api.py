"""The HTTP API: POST /api/rag/ask. Payloads are pydantic models; errors are JSON with a message.

A caller authenticates with a bearer key (`Authorization: Bearer ...`, API_KEYS); a key is scoped to
sources and carries groups, which decide the restricted runbooks it may see. Without a key the API
answers only on loopback, and only from runbooks nobody restricted."""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field
from typing import Any

import psycopg
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot import messages
from bot.answer import Answer
from bot.answering import Answerer, EmptyQuestion
from bot.context import IncidentContext
from bot.filters import Filters
from bot.guarding import guard_source_text
from bot.observability import new_request_id
from retrieval.access import Audience
from retrieval.db import DatabaseUnavailable
from retrieval.sections import chunk_texts

log = logging.getLogger(__name__)
ANSWERER = web.AppKey("answerer", Answerer)


@dataclass(frozen=True)
class ApiKeyScope:
    """One bearer key: its name (for logs), what it may search, the groups it counts as."""

    name: str
    key: str = field(repr=False)
    sources: tuple[str, ...] | None = None
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApiConfig:
    """The API's keys; `require_key` when the server listens beyond loopback."""

    keys: tuple[ApiKeyScope, ...] = ()
    require_key: bool = False

    def scope(self, token: str) -> ApiKeyScope | None:
        """The key a bearer token is, compared in constant time, or None."""
        found = None
        for key in self.keys:
            if hmac.compare_digest(key.key.encode(), token.encode()):
                found = key
        return found


API = web.AppKey("api", ApiConfig)


class AskContext(BaseModel):
    """Optional incident context: thread messages and alert labels."""

    model_config = ConfigDict(extra="forbid")
    thread: list[str] = Field(default_factory=list, max_length=200)
    alert: dict[str, str] = Field(default_factory=dict)


class AskRequest(BaseModel):
    """The body of POST /api/rag/ask."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=50_000)
    max_results: int = Field(default=5, ge=1, le=20, description="Sources returned at most")
    include_sources: bool = True
    filters: Filters | None = None
    context: AskContext | None = None

    def incident(self) -> IncidentContext:
        """The platform-neutral context for the agent."""
        ctx = self.context or AskContext()
        return IncidentContext(thread=ctx.thread, alert=ctx.alert,
                               filters=self.filters.to_search() if self.filters else None, entry_point="api")


def _error(status: int, message: str, request_id: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, "request_id": request_id, **extra}, status=status)


async def ask(request: web.Request) -> web.Response:
    """Answer a question: the Answer model plus sources with their text."""
    request_id = new_request_id(request.headers.get("X-Request-Id"))
    audience = _audience(request)
    if isinstance(audience, str):
        return _error(401, audience, request_id)
    try:
        body = AskRequest.model_validate_json(await request.read())
    except ValidationError as exc:
        problems = [{"field": ".".join(map(str, e["loc"])), "problem": e["msg"]} for e in exc.errors()]
        return _error(400, messages.BAD_REQUEST.format(detail="invalid JSON body"), request_id, problems=problems)
    try:
        context = body.incident()
        context.audience = audience
        answer = await request.app[ANSWERER].answer(body.question, context)
        payload = await _payload(request.app[ANSWERER], answer, body, request_id)
    except EmptyQuestion as exc:
        return _error(400, str(exc), request_id)
    except (DatabaseUnavailable, psycopg.OperationalError) as exc:
        log.error("database unavailable (request %s): %s", request_id, exc)
        return _error(503, messages.DATABASE_DOWN.format(detail="try again shortly"), request_id)
    except Exception:
        log.exception("answering failed (request %s)", request_id)
        return _error(500, messages.INTERNAL_ERROR.format(request_id=request_id), request_id)
    return web.json_response(payload, headers={"X-Request-Id": request_id})


async def _payload(answerer: Answerer, answer: Answer, body: AskRequest, request_id: str) -> dict[str, Any]:
    out = answer.model_dump(mode="json", exclude={"sources"})
    out["request_id"] = request_id
    if body.include_sources:
        shown = answer.sources[: body.max_results]
        texts = await chunk_texts(answerer.pool, [s.chunk_id for s in shown])
        policy = answerer.policy.for_channel(body.incident().channel)

        def shown_text(chunk_id: int) -> str:
            return guard_source_text(texts.get(chunk_id, ""), policy, secrets=answerer.secrets)

        out["sources"] = [{**s.model_dump(mode="json"), "text": shown_text(s.chunk_id)} for s in shown]
    return out


def _audience(request: web.Request) -> Audience | str:
    """Who the caller is, from its bearer key; a message saying why not when it may not ask."""
    header = request.headers.get("Authorization", "")
    token = header[7:].strip() if header[:7].lower() == "bearer " else ""
    config = request.app[API]
    if token:
        scope = config.scope(token)
        if scope is None:
            log.warning("api: a request with an unknown key from %s", request.remote)
            return messages.API_BAD_KEY
        return Audience(groups=scope.groups, sources=scope.sources)
    if config.require_key:
        return messages.API_KEY_REQUIRED
    return Audience()  # loopback without a key: the runbooks nobody restricted


def add_routes(app: web.Application, answerer: Answerer, config: ApiConfig | None = None) -> None:
    """Mount the API on an aiohttp application."""
    app[ANSWERER] = answerer
    app[API] = config or ApiConfig()
    app.router.add_post("/api/rag/ask", ask)
