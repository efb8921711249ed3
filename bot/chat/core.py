"""What the chat adapters (Slack, Teams) share, whatever the platform: the handlers' dependencies with the
search filters and source links of a conversation, the reply that is posted as a placeholder and then
edited into the answer, apologies with a reference the user can quote, and best-effort steps. No chat
SDK is imported here."""

from __future__ import annotations

import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from psycopg_pool import AsyncConnectionPool

from bot.chat.alerts import search_filters
from bot.answer import Answer
from bot.answering import Answerer
from bot.chat.background import DB_ERRORS, Tasks
from bot.observability import STAGE_SECONDS
from bot.chat.ratelimit import RateLimiter
from bot.records import events
from retrieval.links import document_link
from retrieval.search_types import SearchFilters

log = logging.getLogger(__name__)
Content = TypeVar("Content")


class SourcesConfig(Protocol):
    """The part of an adapter's configuration that says which runbooks a conversation searches and links to."""

    @property
    def channel_sources(self) -> Mapping[str, Sequence[str]]:
        """Conversation -> runbook sources; "*" for any other."""

    @property
    def source_links(self) -> Mapping[str, str]:
        """Runbook source -> base URL of its links."""

    @property
    def alert_filters(self) -> Sequence[str]:
        """Alert labels used as strict filters (service, environment)."""


Config = TypeVar("Config", bound=SourcesConfig)


def conversation_filters(conversation: str, alert: Mapping[str, str], *,
                         channel_sources: Mapping[str, Sequence[str]],
                         alert_filters: Sequence[str]) -> SearchFilters | None:
    """The conversation's runbook sources ("*" for any other) and, when configured, the alert's labels as filters."""
    sources = channel_sources.get(conversation) or channel_sources.get("*") or ()
    return search_filters(list(sources), dict(alert), alert_filters)


def source_links(links_by_source: Mapping[str, str], answer: Answer) -> dict[int, str]:
    """The link of each source of the answer (by citation number): under the base URL configured for its
    runbook source when there is one, else the link the search gave it."""
    out: dict[int, str] = {}
    for s in answer.sources:
        base = links_by_source.get(s.source or "")
        if link := document_link(base, s.path, s.heading_path) if base else s.link:
            out[s.id] = link
    return out


@dataclass
class ChatDeps(Generic[Config]):
    """What an adapter's handlers need: the answerer, the adapter's configuration, rate limits and tasks."""

    answerer: Answerer
    config: Config
    limiter: RateLimiter
    tasks: Tasks

    @property
    def pool(self) -> AsyncConnectionPool:
        """The database pool (events, answer messages, feedback)."""
        return self.answerer.pool

    def filters(self, conversation: str, alert: Mapping[str, str]) -> SearchFilters | None:
        """The conversation's runbook sources and, when configured, the alert's labels as filters."""
        return conversation_filters(conversation, alert, channel_sources=self.config.channel_sources,
                                    alert_filters=self.config.alert_filters)

    def links(self, answer: Answer) -> dict[int, str]:
        """Source links, under the per-source base URLs of the configuration."""
        return source_links(self.config.source_links, answer)


class PlaceholderReply(ABC, Generic[Content]):
    """A message the bot posts (the placeholder) and then edits into the answer; an adapter says how to post
    and edit `Content` on its platform."""

    def __init__(self, deps: ChatDeps[Any], platform: str, conversation: str, thread: str | None) -> None:
        self.deps, self.platform, self.conversation, self.thread = deps, platform, conversation, thread
        self.message_id: str | None = None  # the posted message's, once posted

    @abstractmethod
    async def _post(self, content: Content) -> str | None:
        """Post a new message; its id."""

    @abstractmethod
    async def _edit(self, message_id: str, content: Content) -> None:
        """Replace what the posted message shows."""

    async def _placeholder(self, content: Content) -> None:
        """Post the "Searching runbooks..." message."""
        with STAGE_SECONDS.labels(f"{self.platform}_post").time():
            self.message_id = await self._post(content)

    async def _show(self, content: Content, answer_id: int | None = None) -> None:
        """Edit the placeholder into `content` (or post it when there is none); remember which answer the
        message shows before it shows it, so an early reaction finds it."""
        if self.message_id is None:
            self.message_id = await self._post(content)
            await self._remember(answer_id)
            return
        await self._remember(answer_id)
        with STAGE_SECONDS.labels(f"{self.platform}_post").time():
            await self._edit(self.message_id, content)

    async def _remember(self, answer_id: int | None) -> None:
        """Best effort: without the mapping, reactions on the message are not votes (buttons still are)."""
        if answer_id is None or self.message_id is None:
            return
        try:
            await events.remember_message(self.deps.pool, self.platform, self.conversation, self.message_id, answer_id,
                                          self.thread)
        except Exception:
            log.warning("%s: could not record message %s as answer %s", self.platform, self.message_id, answer_id,
                        exc_info=True)


def failure_reference(exc: BaseException, what: str, platform: str) -> str:
    """Log a failure with a short reference, and return the reference for the user to quote."""
    ref = uuid.uuid4().hex[:8]
    log.error("%s: %s failed (ref %s)", platform, what, ref, exc_info=exc)
    return ref


def apology(exc: BaseException, what: str, *, platform: str, database_down: str, unexpected: str) -> str:
    """The apology for a failure: `database_down` when the database is unavailable, else `unexpected` with
    the reference of the logged failure as `{ref}`."""
    if isinstance(exc, DB_ERRORS):
        log.error("%s: %s failed, database unavailable: %s", platform, what, exc)
        return database_down
    return unexpected.format(ref=failure_reference(exc, what, platform))


async def quietly(work: Awaitable[Any], platform: str) -> None:
    """Await a best-effort step (a notice, a bookkeeping write); a failure is logged, not raised."""
    try:
        await work
    except Exception:
        log.exception("%s: a best-effort step failed", platform)
